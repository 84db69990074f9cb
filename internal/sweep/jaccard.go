package sweep

import (
	"cmp"
	"context"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/par"
)

// Memory defaults of the exact-Jaccard engine.
const (
	// DefaultSetBudget bounds the bytes of shingle sets held at once (8 bytes per
	// distinct shingle, 4 while they are numbered): character 3-shingles of 100,000
	// documents of 2,000 bytes, numbered, take about 380 MB.
	DefaultSetBudget = 512 << 20
	// DefaultMemoPairs bounds the exact similarities remembered per representation
	// across shapes (16 bytes each).
	DefaultMemoPairs = 16 << 20
)

// shingleKey is the part of a Spec that decides shingle sets, and so exact Jaccard:
// everything but k and the seed (which only the permutations use).
func shingleKey(s lsh.Spec) lsh.Spec {
	s.Hashes, s.Seed = 1, 0
	return s
}

func pairKey(a, b int32) uint64 { return uint64(a)<<32 | uint64(uint32(b)) }

func unpair(k uint64) (a, b int32) { return int32(k >> 32), int32(uint32(k)) }

// exactJaccard computes exact Jaccard similarities of document pairs under one shingle
// key, within a memory budget. While every set it has needed fits the budget, sets are
// kept (resident mode: each document shingled once per representation). When they no
// longer fit, it drops them and works in blocks: for each run of pairs whose first
// documents' sets fill the budget the recent sets leave (blockJoin), it shingles each
// second document once and compares. Similarities already computed for the
// representation are remembered (up to memoCap pairs), so shapes that propose the same
// pairs pay once.
type exactJaccard struct {
	key    lsh.Spec
	text   func(int) string
	budget int64
	sets   [][]uint64
	// ids numbers the representation's distinct shingles when the sets of hashes pass
	// the budget and numbered they would fit (number), and while the distinct shingles
	// are few (at most maxShingleIDs: character 3-shingles of 100,000 documents have
	// about 350,000); sets32 then holds the resident sets as sorted ids, half the bytes
	// of the hashes: the same intersections (the numbering is one to one), and twice
	// the documents within the budget. nil otherwise, and once the numbered sets pass
	// the budget too (block mode).
	ids         *shingleIDs
	sets32      [][]uint32
	numberTried bool
	used        atomic.Int64
	block       bool
	hashers     chan *lsh.Hasher
	memo        sortedMemo[float64]
	// floor is the least similarity anyone will compare: pairs below it get some value
	// below it (computed no further than needed to know); 0 computes every value.
	floor float64
	// sims remembers the exact similarities of pairs no candidate of a shape covers,
	// which keeper-star and complete-link ask for (pair, through engine.simFunc): the
	// same pairs at every threshold, keeper rule and shape of the representation.
	sims pairMemo
	// recent holds the sets pair shingled once the sets no longer fit (block mode), in
	// half the budget: keeper-star compares each keeper with every member of its part,
	// and without it every comparison shingled both documents again (98% of the CPU of
	// character 3-shingles at 60,000 documents).
	recent setCache
}

// setCache keeps recently made shingle sets, one slot per document modulo the slots (a
// set takes its slot from the one there), and at most about budget bytes of them (a set
// that would pass the budget is not kept). It is safe for concurrent use.
type setCache struct {
	slots  []atomic.Pointer[cachedSet]
	used   atomic.Int64
	budget int64
}

type cachedSet struct {
	doc int
	set []uint64
}

func setBytes(s []uint64) int64 { return 8*int64(cap(s)) + 48 }

func (c *setCache) get(doc int) []uint64 {
	if len(c.slots) == 0 {
		return nil
	}
	if e := c.slots[doc%len(c.slots)].Load(); e != nil && e.doc == doc {
		return e.set
	}
	return nil
}

func newSetCache(budget, slots int64) setCache {
	return setCache{slots: make([]atomic.Pointer[cachedSet], max(1, slots)), budget: budget}
}

// put keeps set in doc's slot, in place of what the slot held, unless that would take
// the cache past its budget.
func (c *setCache) put(doc int, set []uint64) {
	if len(c.slots) == 0 {
		return
	}
	slot := &c.slots[doc%len(c.slots)]
	old := slot.Load()
	delta := setBytes(set)
	if old != nil {
		delta -= setBytes(old.set)
	}
	if c.used.Load()+delta > c.budget {
		return
	}
	if slot.CompareAndSwap(old, &cachedSet{doc, set}) {
		c.used.Add(delta)
	}
}

// DefaultSimMemo bounds the similarities a pairMemo remembers (about 40 bytes each in
// its maps): beyond it, pairs are computed again when asked again.
const DefaultSimMemo = 1 << 22

// pairMemo is a map of pair keys to similarities, safe for concurrent use, in shards so
// that the clusterings of concurrent policies do not queue on one lock; it holds at most
// DefaultSimMemo pairs.
type pairMemo struct{ shards lockedShards[float64] }

// lockedShards are 64 maps of 64-bit keys (pairs, shingle hashes), each behind its own
// lock on its own cache line, so that goroutines meet on one lock seldom.
type lockedShards[V any] [64]lockedShard[V]

type lockedShard[V any] struct {
	sync.Mutex
	m map[uint64]V
	_ [48]byte
}

// of returns key's shard.
func (s *lockedShards[V]) of(key uint64) *lockedShard[V] {
	return &s[int((key*0x9e3779b97f4a7c15)>>58)]
}

func (p *pairMemo) get(key uint64) (float64, bool) {
	sh := p.shards.of(key)
	sh.Lock()
	v, ok := sh.m[key]
	sh.Unlock()
	return v, ok
}

func (p *pairMemo) put(key uint64, v float64) {
	sh := p.shards.of(key)
	sh.Lock()
	if sh.m == nil {
		sh.m = map[uint64]float64{}
	}
	if len(sh.m) < DefaultSimMemo/len(p.shards) {
		sh.m[key] = v
	}
	sh.Unlock()
}

func newExactJaccard(key lsh.Spec, docs int, text func(int) string, budget int64, memoCap int) (*exactJaccard, error) {
	workers := runtime.GOMAXPROCS(0)
	x := &exactJaccard{key: key, text: text, budget: budget, sets: make([][]uint64, docs),
		hashers: make(chan *lsh.Hasher, workers), memo: sortedMemo[float64]{bound: memoCap}}
	for range workers {
		h, err := lsh.NewHasher(key)
		if err != nil {
			return nil, err
		}
		x.hashers <- h
	}
	return x, nil
}

// shingle returns document i's shingle set (the caller decides whether to keep it).
func (x *exactJaccard) shingle(i int) []uint64 {
	h := <-x.hashers
	s := h.ShingleSet(x.text(i))
	x.hashers <- h
	return s
}

// pair returns the exact Jaccard similarity of documents a and b: from the kept sets
// when both are at hand, else shingled for the call. Below floor it returns some value
// below floor, as of does: a sweep compares it with its thresholds alone (keeper-star's
// and complete-link's tests), never below the least of them. It is safe for concurrent
// use with itself (not with of).
func (x *exactJaccard) pair(a, b int) float64 {
	if x.sets32 != nil {
		sa, na := x.set32(a)
		sb, nb := x.set32(b)
		return jaccardAtLeast(sa, sb, na, nb, x.floor)
	}
	var sa, sb []uint64
	if !x.block && x.sets != nil {
		sa, sb = x.sets[a], x.sets[b]
	}
	if sa == nil {
		sa = x.recentSet(a)
	}
	if sb == nil {
		sb = x.recentSet(b)
	}
	return jaccardAtLeast(sa, sb, len(sa), len(sb), x.floor)
}

// set32 returns document i's resident set of ids and its size; for a document without
// one (no candidate pair named it), the ids of those of its shingles that have one and
// the number of its distinct shingles: a shingle without an id is in no resident set, so
// the intersection with a resident set is the same.
func (x *exactJaccard) set32(i int) ([]uint32, int) {
	if s := x.sets32[i]; s != nil {
		return s, len(s)
	}
	s := x.shingle(i)
	return x.ids.known(s), len(s)
}

// recentSet returns document i's shingle set from the cache of recent ones, shingling
// and caching it when it is not there.
func (x *exactJaccard) recentSet(i int) []uint64 {
	if s := x.recent.get(i); s != nil {
		return s
	}
	s := x.shingle(i)
	if s == nil {
		s = []uint64{}
	}
	x.recent.put(i, s)
	return s
}

// of returns the exact Jaccard similarity of each pair key, keys sorted and distinct.
func (x *exactJaccard) of(ctx context.Context, keys []uint64) ([]float64, error) {
	out, missing, at := x.memo.known(keys)
	if len(missing) == 0 {
		return out, nil
	}
	sims, err := x.compute(ctx, missing)
	if err != nil {
		return nil, err
	}
	for n, i := range at {
		out[i] = sims[n]
	}
	// Past its bound the memo keeps the most similar: those are the pairs every shape
	// proposes again, while the dissimilar ones come from the generous shapes alone.
	x.memo.remember(missing, sims)
	return out, nil
}

// sortedMemo remembers values of pair keys in two arrays sorted by key, read by a merge
// with the sorted keys a shape's candidates are: no hashing, no lock, 8 bytes a key
// beside the value. It holds at most bound pairs; past it, remember keeps those of the
// highest values. Not safe for concurrent use.
type sortedMemo[V cmp.Ordered] struct {
	keys  []uint64
	vals  []V
	bound int
}

// known returns the remembered values of keys (sorted, distinct) in out, and the keys
// not remembered with their indexes in keys.
func (m *sortedMemo[V]) known(keys []uint64) (out []V, missing []uint64, at []int32) {
	out = make([]V, len(keys))
	j := 0
	for i, k := range keys {
		for j < len(m.keys) && m.keys[j] < k {
			j++
		}
		if j < len(m.keys) && m.keys[j] == k {
			out[i] = m.vals[j]
			continue
		}
		missing = append(missing, k)
		at = append(at, int32(i))
	}
	return out, missing, at
}

// remember adds the values of keys (sorted, distinct, none remembered); when they do
// not all fit the bound, those of the highest values.
func (m *sortedMemo[V]) remember(keys []uint64, vals []V) {
	room := m.bound - len(m.keys)
	if room <= 0 || len(keys) == 0 {
		return
	}
	if len(keys) > room {
		idx := make([]int32, len(keys))
		for i := range idx {
			idx[i] = int32(i)
		}
		slices.SortStableFunc(idx, func(a, b int32) int { return cmp.Compare(vals[b], vals[a]) })
		idx = idx[:room]
		slices.Sort(idx)
		k, v := make([]uint64, room), make([]V, room)
		for n, i := range idx {
			k[n], v[n] = keys[i], vals[i]
		}
		keys, vals = k, v
	}
	m.keys, m.vals = mergeSorted(m.keys, m.vals, keys, vals)
}

// mergeSorted merges the sorted (bk, bv) into the sorted (ak, av), in place from the
// back (the arrays grow once; no second copy of the memo).
func mergeSorted[V any](ak []uint64, av []V, bk []uint64, bv []V) ([]uint64, []V) {
	i, j := len(ak)-1, len(bk)-1
	n := len(ak) + len(bk)
	ak, av = slices.Grow(ak, len(bk))[:n], slices.Grow(av, len(bv))[:n]
	for w := n - 1; j >= 0; w-- {
		if i >= 0 && ak[i] > bk[j] {
			ak[w], av[w] = ak[i], av[i]
			i--
		} else {
			ak[w], av[w] = bk[j], bv[j]
			j--
		}
	}
	return ak, av
}

func (x *exactJaccard) compute(ctx context.Context, keys []uint64) ([]float64, error) {
	if !x.block {
		var need []int
		seen := make(map[int32]bool)
		for _, k := range keys {
			a, b := unpair(k)
			for _, d := range [2]int32{a, b} {
				if x.sets[d] == nil && (x.sets32 == nil || x.sets32[d] == nil) && !seen[d] {
					seen[d] = true
					need = append(need, int(d))
				}
			}
		}
		slices.Sort(need)
		var full atomic.Bool // the numbering passed its bound
		err := par.Chunks(ctx, len(need), 8, func(lo, hi int) {
			for _, d := range need[lo:hi] {
				if x.used.Load() > x.budget || full.Load() {
					return
				}
				s := x.shingle(d)
				if s == nil {
					s = []uint64{}
				}
				if x.sets32 != nil {
					s32, ok := x.ids.number(s)
					if !ok {
						full.Store(true)
						return
					}
					x.sets32[d] = s32
					x.used.Add(4*int64(cap(s32)) + 24)
					continue
				}
				x.sets[d] = s
				x.used.Add(8*int64(cap(s)) + 24)
			}
		})
		if err != nil {
			return nil, err
		}
		if full.Load() {
			// Too many distinct shingles to number: block mode.
			x.used.Store(x.budget + 1)
		}
		if x.used.Load() > x.budget {
			held := 0
			for i, s := range x.sets {
				if s != nil || x.sets32 != nil && x.sets32[i] != nil {
					held++
				}
			}
			if !x.numberTried && x.used.Load()/2*int64(len(x.sets)) <= x.budget*int64(max(held, 1)) {
				// Numbered, the sets of every document would fit: number those held and go on.
				if err := x.number(ctx); err != nil {
					return nil, err
				}
				return x.compute(ctx, keys)
			}
			if x.sets32 != nil {
				// The ids took half the bytes of the hashes block mode holds.
				x.used.Store(2 * x.used.Load())
			}
			x.ids, x.sets32 = nil, nil
			// Half the budget, in about as many slots as sets of the sizes seen fit in it
			// (blockJoin holds what it leaves while of runs, and of never runs with pair).
			x.recent = newSetCache(x.budget/2, x.budget/2/max(1, x.used.Load()/int64(max(held, 1))))
			clear(x.sets)
			x.sets = nil
			x.used.Store(0)
			x.block = true
		} else {
			out := make([]float64, len(keys))
			err := par.Chunks(ctx, len(keys), 256, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					a, b := unpair(keys[i])
					if x.sets32 != nil {
						sa, sb := x.sets32[a], x.sets32[b]
						out[i] = jaccardAtLeast(sa, sb, len(sa), len(sb), x.floor)
						continue
					}
					sa, sb := x.sets[a], x.sets[b]
					out[i] = jaccardAtLeast(sa, sb, len(sa), len(sb), x.floor)
				}
			})
			return out, err
		}
	}
	return x.blockJoin(ctx, keys)
}

// number replaces the resident sets of hashes by sets of ids (see exactJaccard.ids);
// past maxShingleIDs it leaves them as they were. Numbering is tried once per
// representation, when the sets of hashes pass the budget.
func (x *exactJaccard) number(ctx context.Context) error {
	var held []int
	for i, s := range x.sets {
		if s != nil {
			held = append(held, i)
		}
	}
	ids := newShingleIDs(maxShingleIDs)
	sets32 := make([][]uint32, len(x.sets))
	var full atomic.Bool
	var used atomic.Int64
	if err := par.Chunks(ctx, len(held), 64, func(lo, hi int) {
		for _, d := range held[lo:hi] {
			if full.Load() {
				return
			}
			s32, ok := ids.number(x.sets[d])
			if !ok {
				full.Store(true)
				return
			}
			sets32[d] = s32
			used.Add(4*int64(cap(s32)) + 24)
		}
	}); err != nil {
		return err
	}
	x.numberTried = true
	if full.Load() {
		return nil
	}
	x.ids, x.sets32 = ids, sets32
	clear(x.sets)
	x.used.Store(used.Load())
	return nil
}

// blockJoin computes keys (sorted by (A, B)) in blocks: the sets of a run of first
// documents filling what of the budget the recent sets do not hold (about half once
// keeper-star has filled them), then each second document of the run's pairs shingled
// once, in parallel. The first call after the switch to block mode (every pair of the
// shape whose sets passed the budget, usually the largest call) finds the recent sets
// empty and takes the whole budget: half the blocks, and second documents shingled
// less often (the first call of character 6-shingles at 100,000 documents: 4 blocks and
// 197,000 second sets became 2 and 126,000). The resident sets just dropped may not be
// collected yet then: up to about twice the budget for a moment.
func (x *exactJaccard) blockJoin(ctx context.Context, keys []uint64) ([]float64, error) {
	out := make([]float64, len(keys))
	room := max(x.budget-x.recent.used.Load(), 1) // the recent sets hold at most half
	for pos := 0; pos < len(keys); {
		block := map[int32][]uint64{}
		var bytes int64
		end := pos
		for end < len(keys) && bytes < room {
			// The next (up to) 64 first documents, shingled in parallel.
			var as []int32
			stop := end
			for stop < len(keys) && len(as) < 64 {
				a, _ := unpair(keys[stop])
				if len(as) == 0 || as[len(as)-1] != a {
					as = append(as, a)
				}
				stop++
			}
			for stop < len(keys) {
				if a, _ := unpair(keys[stop]); a != as[len(as)-1] {
					break
				}
				stop++
			}
			sets := make([][]uint64, len(as))
			if err := par.Chunks(ctx, len(as), 4, func(lo, hi int) {
				for i := lo; i < hi; i++ {
					sets[i] = x.shingle(int(as[i]))
				}
			}); err != nil {
				return nil, err
			}
			for i, a := range as {
				block[a] = sets[i]
				bytes += 8*int64(cap(sets[i])) + 24
			}
			end = stop
		}
		// The run's pairs by second document.
		idx := make([]int, 0, end-pos)
		for i := pos; i < end; i++ {
			idx = append(idx, i)
		}
		slices.SortFunc(idx, func(i, j int) int {
			_, bi := unpair(keys[i])
			_, bj := unpair(keys[j])
			return cmp.Or(cmp.Compare(bi, bj), cmp.Compare(i, j))
		})
		var starts []int // group starts in idx, one group per second document
		for n, i := range idx {
			_, b := unpair(keys[i])
			if n == 0 {
				starts = append(starts, 0)
				continue
			}
			if _, prev := unpair(keys[idx[n-1]]); prev != b {
				starts = append(starts, n)
			}
		}
		starts = append(starts, len(idx))
		if err := par.Chunks(ctx, len(starts)-1, 4, func(lo, hi int) {
			for g := lo; g < hi; g++ {
				group := idx[starts[g]:starts[g+1]]
				_, b := unpair(keys[group[0]])
				sb, ok := block[b]
				if !ok {
					sb = x.shingle(int(b))
				}
				for _, i := range group {
					a, _ := unpair(keys[i])
					out[i] = jaccardAtLeast(block[a], sb, len(block[a]), len(sb), x.floor)
				}
			}
		}); err != nil {
			return nil, err
		}
		pos = end
	}
	return out, nil
}

// jaccardAtLeast returns the exact Jaccard similarity |A∩B|/|A∪B| of two sorted sets of
// distinct hashes (lsh.ExactJaccard's definition, two empty sets 1) when it is at least
// floor. Below floor it may stop early and return an upper bound that is still below
// floor: once the overlap found plus the most the rest could add cannot reach the
// overlap floor needs, the rest is not read (lsh.Overlap32 and Overlap64, with their
// AVX2 kernels). na and nb are the sets' sizes: len(a) and
// len(b), except for a set that lists only the shingles that can be shared (set32).
func jaccardAtLeast[T uint32 | uint64](a, b []T, na, nb int, floor float64) float64 {
	if na == 0 && nb == 0 {
		return 1
	}
	total := na + nb
	// J >= f  <=>  I >= f/(1+f) * (|A|+|B|).
	need := 0
	if floor > 0 {
		need = int(math.Ceil(floor / (1 + floor) * float64(total) * (1 - 1e-12)))
		if min(na, nb) < need {
			bound := float64(min(na, nb)) / float64(max(na, nb))
			return min(bound, math.Nextafter(floor, 0))
		}
	}
	inter := overlap(a, b, need)
	if inter < need {
		// Stopped early (or the whole overlap, under the floor either way).
		return min(float64(inter)/float64(total-inter), math.Nextafter(floor, 0))
	}
	return float64(inter) / float64(total-inter)
}

// overlap is lsh.Overlap32 or lsh.Overlap64, whichever T is.
func overlap[T uint32 | uint64](a, b []T, need int) int {
	switch a := any(a).(type) {
	case []uint32:
		return lsh.Overlap32(a, any(b).([]uint32), need)
	case []uint64:
		return lsh.Overlap64(a, any(b).([]uint64), need)
	}
	panic("unreachable")
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// maxShingleIDs bounds the distinct shingles shingleIDs numbers (about 20 bytes each in
// its maps).
const maxShingleIDs = 1 << 22

// shingleIDs numbers distinct shingle hashes 0, 1, 2, ... in the order met, up to a
// bound. Safe for concurrent use. Its shards go by a hash's top six bits (shingle hashes
// are uniform), so a sorted set takes each shard's lock once.
type shingleIDs struct {
	shards lockedShards[uint32]
	next   atomic.Int64
	bound  int64
}

func newShingleIDs(bound int64) *shingleIDs {
	ids := &shingleIDs{bound: bound}
	for i := range ids.shards {
		ids.shards[i].m = map[uint64]uint32{}
	}
	return ids
}

// number returns the ids of set's hashes, sorted, numbering those not met before; false
// when that would pass the bound.
func (ids *shingleIDs) number(set []uint64) ([]uint32, bool) {
	out := make([]uint32, len(set))
	ok := ids.byShard(set, func(m map[uint64]uint32, at int, run []uint64) bool {
		for i, h := range run {
			id, ok := m[h]
			if !ok {
				n := ids.next.Add(1) - 1
				if n >= ids.bound {
					return false
				}
				id = uint32(n)
				m[h] = id
			}
			out[at+i] = id
		}
		return true
	})
	if !ok {
		return nil, false
	}
	slices.Sort(out)
	return out, true
}

// known returns the ids of those of set's hashes (sorted) that have one, sorted.
func (ids *shingleIDs) known(set []uint64) []uint32 {
	var out []uint32
	ids.byShard(set, func(m map[uint64]uint32, _ int, run []uint64) bool {
		for _, h := range run {
			if id, ok := m[h]; ok {
				out = append(out, id)
			}
		}
		return true
	})
	slices.Sort(out)
	return out
}

// byShard calls f on each run of set (sorted) whose hashes fall in one shard, with the
// shard's map locked and the run's place in set, until f returns false (then so does
// byShard): the shards go by a hash's top bits, so a set takes each lock once.
func (ids *shingleIDs) byShard(set []uint64, f func(m map[uint64]uint32, at int, run []uint64) bool) bool {
	for i := 0; i < len(set); {
		top := set[i] >> 58
		j := i + 1
		for j < len(set) && set[j]>>58 == top {
			j++
		}
		sh := &ids.shards[top]
		sh.Lock()
		ok := f(sh.m, i, set[i:j])
		sh.Unlock()
		if !ok {
			return false
		}
		i = j
	}
	return true
}
