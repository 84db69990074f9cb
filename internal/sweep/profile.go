package sweep

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/frame"
)

// DefaultRules are the keeper rules a sweep scores when Options.Rules is empty: the
// manifest's default (earliest) and the two that move false removals most.
func DefaultRules() []cluster.Rule {
	return []cluster.Rule{
		{By: []cluster.Criterion{cluster.Earliest}},
		{By: []cluster.Criterion{cluster.Longest}},
		{By: []cluster.Criterion{cluster.Shortest}},
	}
}

// binner puts pairs of documents in the model's bins: bin b of the scheme, or
// identicalBin for two documents whose normalized texts are identical.
type binner struct {
	sets   *frame.Sets
	scheme frame.Scheme

	// kept remembers, per keeper rule and document, the bin of the document's pair with
	// its last keeper under that rule (see keptBin); made on first use.
	keptOnce sync.Once
	kept     [][]atomic.Uint64

	// memo remembers the bins of candidate pairs, at most DefaultBinMemo of them (the
	// highest bins first): the bins are those of the model's representation, whatever
	// representation proposed the pairs, so the shapes of every representation propose
	// many of the same pairs again. Read by a merge with a shape's sorted candidates: a
	// locked map of them (frame.Sets.Counts) cost more to search than the sets to
	// intersect, and 280 MB at 100,000 documents.
	mu   sync.Mutex
	memo sortedMemo[uint8]
}

// DefaultBinMemo bounds the candidate pairs a binner remembers (9 bytes each).
const DefaultBinMemo = 1 << 24

// known returns the remembered bins of keys (sorted, distinct), and the keys not
// remembered with their indexes in keys (sortedMemo.known).
func (b *binner) known(keys []uint64) (out []uint8, missing []uint64, at []int32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.memo.known(keys)
}

// remember adds bins of keys (sorted, distinct, none remembered) to the memo.
func (b *binner) remember(keys []uint64, bins []uint8) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.memo.remember(keys, bins)
}

// ofOnce is of without frame.Sets' map of remembered pairs: modelBins remembers
// candidates itself.
func (b *binner) ofOnce(x, y int) int {
	if b.sets.Identical(x, y) {
		return b.identicalBin()
	}
	return b.scheme.Bin(b.sets.CountsOnce(x, y))
}

func (b *binner) bins() int { return b.scheme.Bins() }

// identicalBin is the index after the scheme's bins: pairs with identical normalized
// text, certain duplicates.
func (b *binner) identicalBin() int { return b.scheme.Bins() }

func (b *binner) of(x, y int) int {
	if b.sets.Identical(x, y) {
		return b.identicalBin()
	}
	return b.sets.Bin(b.scheme, x, y)
}

// keptBin is of(d, k) for document d removed in favour of keeper k under rule r of
// rules, remembered per rule and document: one clustering after another (thresholds,
// shapes, verifications and policies under the same rule) keeps most documents under
// the same keeper, and binning a pair (exact Jaccard of two shingle sets through a
// locked map) was the largest part of counting removals by bin. Safe for concurrent
// use: a slot holds the keeper and its bin in one word.
func (b *binner) keptBin(rules, r int, d, k int32) int {
	b.keptOnce.Do(func() {
		b.kept = make([][]atomic.Uint64, rules)
		for i := range b.kept {
			b.kept[i] = make([]atomic.Uint64, b.sets.Docs())
		}
	})
	slot := &b.kept[r][d]
	if v := slot.Load(); uint32(v>>8) == uint32(k)+1 {
		return int(uint8(v))
	}
	bin := b.of(int(d), int(k))
	slot.Store(uint64(uint32(k)+1)<<8 | uint64(uint8(bin)))
	return bin
}

// keeperTracker follows a clustering as clusters merge (connected components, edges
// added from the highest threshold down) and keeps, for every keeper rule, each
// cluster's keeper and its (removed, keeper) pairs per bin. A rule is a total order, so
// the keeper of two clusters merged is the lesser of their keepers; only the members of
// the cluster whose keeper lost get a new keeper, and their pairs are binned again.
//
// Its state is in arrays by root document: a document alone is its own keeper under
// every rule with no pairs, and only clusters of two documents or more hold a slot of
// keepers and pair counts (a sweep merges millions of clusters, and a map of them with
// their counts allocated one by one took a third of the tracker's time).
type keeperTracker struct {
	b      *binner
	orders []cluster.Order
	next   []int32 // members as linked lists: next[d], -1 at the end
	// tail is the last member of each root's list (which starts at the root: merge
	// appends gone's list to keep's); slot is its cluster's slot, -1 for a document
	// alone.
	tail, slot []int32
	// Per slot: keepers (a keeper per rule) and pairs (per rule, per bin, identical
	// last); free lists the slots of clusters merged away.
	keepers []int32
	pairs   []int32
	free    []int32
	nb      int // bins + 1
	// totals[rule][bin] counts the removal pairs of every cluster.
	totals [][]int64
}

func newKeeperTracker(b *binner, orders []cluster.Order, n int) *keeperTracker {
	t := &keeperTracker{b: b, orders: orders, next: make([]int32, n), tail: make([]int32, n), slot: make([]int32, n), nb: b.bins() + 1}
	for i := range t.next {
		t.next[i], t.tail[i], t.slot[i] = -1, int32(i), -1
	}
	t.totals = make([][]int64, len(orders))
	for r := range t.totals {
		t.totals[r] = make([]int64, t.nb)
	}
	return t
}

// slotOf returns root's slot, taking one for a document alone (its own keeper under
// every rule, no pairs).
func (t *keeperTracker) slotOf(root int32) int32 {
	if s := t.slot[root]; s >= 0 {
		return s
	}
	var s int32
	if n := len(t.free); n > 0 {
		s, t.free = t.free[n-1], t.free[:n-1]
		clear(t.pairs[int(s)*len(t.orders)*t.nb : int(s+1)*len(t.orders)*t.nb])
	} else {
		s = int32(len(t.keepers) / len(t.orders))
		t.keepers = append(t.keepers, make([]int32, len(t.orders))...)
		t.pairs = append(t.pairs, make([]int32, len(t.orders)*t.nb)...)
	}
	for r := range t.orders {
		t.keepers[int(s)*len(t.orders)+r] = root
	}
	t.slot[root] = s
	return s
}

// pairsOf returns the pair counts of slot s under rule r.
func (t *keeperTracker) pairsOf(s int32, r int) []int32 {
	at := (int(s)*len(t.orders) + r) * t.nb
	return t.pairs[at : at+t.nb]
}

// merge joins the clusters whose roots are keep and gone (unionfind.Union's answer).
func (t *keeperTracker) merge(keep, gone int32) {
	sx := t.slotOf(keep)
	sy := t.slot[gone] // -1: gone is a document alone
	nr := len(t.orders)
	for r, o := range t.orders {
		kx, ky := t.keepers[int(sx)*nr+r], gone
		if sy >= 0 {
			ky = t.keepers[int(sy)*nr+r]
		}
		// The loser's members are binned again against the winner's keeper; the merged
		// cluster keeps keep's slot, so when gone wins, its counts move there first.
		px := t.pairsOf(sx, r)
		k, lose := kx, gone
		tot := t.totals[r]
		if o.Less(int(ky), int(kx)) {
			k, lose = ky, keep
			for bin, c := range px {
				tot[bin] -= int64(c)
			}
			if sy >= 0 {
				copy(px, t.pairsOf(sy, r))
			} else {
				clear(px)
			}
			t.keepers[int(sx)*nr+r] = k
		} else if sy >= 0 {
			for bin, c := range t.pairsOf(sy, r) {
				tot[bin] -= int64(c)
			}
		}
		for d := lose; d >= 0; d = t.next[d] {
			bin := t.b.keptBin(nr, r, d, k)
			px[bin]++
			tot[bin]++
		}
	}
	t.next[t.tail[keep]] = gone
	t.tail[keep] = t.tail[gone]
	if sy >= 0 {
		t.free = append(t.free, sy)
		t.slot[gone] = -1
	}
}

// rules returns the removal pairs per rule as RuleProfiles (Rule names from names).
func (t *keeperTracker) rules(names []string, removals, clusters, largest int) []RuleProfile {
	out := make([]RuleProfile, len(t.orders))
	nb := t.b.bins()
	for r := range t.orders {
		out[r] = RuleProfile{Rule: names[r], Removals: removals, Clusters: clusters, Largest: largest,
			Pairs: slices.Clone(t.totals[r][:nb]), Identical: int(t.totals[r][nb])}
	}
	return out
}

// profileOfClusters bins the removal pairs of a clustering given as clusters with
// their keepers (internal/cluster's result) for one rule.
func (b *binner) profileOfClusters(rule string, res cluster.Result) RuleProfile {
	nb := b.bins()
	pairs := make([]int64, nb+1)
	largest := 0
	for _, c := range res.Clusters {
		largest = max(largest, len(c.Members))
		for _, rm := range c.Removed {
			pairs[b.of(rm.Doc, c.Keeper)]++
		}
	}
	return RuleProfile{Rule: rule, Removals: res.Removed, Clusters: len(res.Clusters), Largest: largest,
		Pairs: pairs[:nb], Identical: int(pairs[nb])}
}

// profileOfIDs bins the removal pairs of a clustering given as cluster ids per document,
// for each rule (the exact-hash baseline, complete-link's other rules and Clusterer
// policies).
func (b *binner) profileOfIDs(ids []int32, orders []cluster.Order, names []string) []RuleProfile {
	off, docs := groupsOf(ids)
	nb := b.bins()
	out := make([]RuleProfile, len(orders))
	removals, clusters, largest := 0, 0, 0
	for c := range len(off) - 1 {
		if m := int(off[c+1] - off[c]); m > 1 {
			removals += m - 1
			clusters++
			largest = max(largest, m)
		}
	}
	for r, o := range orders {
		pairs := make([]int64, nb+1)
		for c := range len(off) - 1 {
			ms := docs[off[c]:off[c+1]]
			if len(ms) < 2 {
				continue
			}
			k := ms[0]
			for _, d := range ms[1:] {
				if o.Less(int(d), int(k)) {
					k = d
				}
			}
			for _, d := range ms {
				if d != k {
					pairs[b.of(int(d), int(k))]++
				}
			}
		}
		out[r] = RuleProfile{Rule: names[r], Removals: removals, Clusters: clusters, Largest: largest, Pairs: pairs[:nb], Identical: int(pairs[nb])}
	}
	return out
}

// groupsOf groups documents by cluster id: group c holds docs[off[c]:off[c+1]], in
// ascending order, groups in no particular order. Ids within a range of a few times the
// documents are counted into place; others are numbered through a map first.
func groupsOf(ids []int32) (off, docs []int32) {
	if len(ids) == 0 {
		return []int32{0}, nil
	}
	lo, hi := ids[0], ids[0]
	for _, id := range ids {
		lo, hi = min(lo, id), max(hi, id)
	}
	var slot func(id int32) int32
	var groups int
	if span := int64(hi) - int64(lo) + 1; span <= 4*int64(len(ids))+64 {
		slot = func(id int32) int32 { return id - lo }
		groups = int(span)
	} else {
		number := make(map[int32]int32, 64)
		for _, id := range ids {
			if _, ok := number[id]; !ok {
				number[id] = int32(len(number))
			}
		}
		slot = func(id int32) int32 { return number[id] }
		groups = len(number)
	}
	off = make([]int32, groups+1)
	for _, id := range ids {
		off[slot(id)+1]++
	}
	for c := range groups {
		off[c+1] += off[c]
	}
	docs = make([]int32, len(ids))
	fill := slices.Clone(off[:groups])
	for d, id := range ids {
		c := slot(id)
		docs[fill[c]] = int32(d)
		fill[c]++
	}
	return off, docs
}
