package frame

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/par"
)

// Options tune Build; the zero value is usable.
type Options struct {
	// MaxPairs bounds the class pairs the banding may propose (DefaultMaxPairs when 0):
	// a dataset whose one-row banding proposes more is banded with two rows, and so on,
	// and the frame reaches less far down (Frame.Floor).
	MaxPairs int
	// MaxBucket bounds a band bucket (DefaultMaxBucket when 0); the frame counts the
	// collisions the bound left out (Frame.Skipped).
	MaxBucket int
}

// Defaults of Options.
const (
	DefaultMaxPairs  = 40 << 20
	DefaultMaxBucket = 20_000
)

// Entry is a pair of classes of equal shingle sets in one bin: every document of class
// A with every document of class B (A < B), or, when A == B, every two documents of the
// class whose normalized texts differ. Pairs counts those document pairs.
type Entry struct {
	A, B  int32
	Pairs int64
	// Inter and Union are the two classes' shared shingles and union.
	Inter, Union int32
}

// Jaccard returns the entry's exact Jaccard similarity.
func (e Entry) Jaccard() float64 {
	if e.Union == 0 {
		return 1
	}
	return float64(e.Inter) / float64(e.Union)
}

// Frame is a dataset's pairs of documents by bin of exact Jaccard similarity under one
// representation: the sampling frame labeling draws from, and the sizes estimates over
// the dataset scale up to.
//
// Pairs whose normalized texts are identical are certain duplicates and are in no bin:
// they are counted (Identical), never drawn. The others are found by banding the
// signatures of one document per class of equal shingle sets with Shape: a pair of
// similarity J collides with probability P(J) = 1-(1-J^r)^b, exactly known, so each bin's
// size in the dataset is estimated as Σ 1/P(J) over the pairs found (Horvitz-Thompson
// over the banding's hash functions: Sizes), and Listed counts what was found (what a
// draw can choose from). With one row per band over k = 128 values P(J) >= 0.999 from
// J = 0.053 up (Floor gives the lowest J where it is). Bin 0 (pairs that share no
// shingle, which banding never proposes) is the rest: Total minus the other bins and
// the identical pairs.
type Frame struct {
	Scheme Scheme
	Rep    lsh.Spec
	Docs   int
	Shape  lsh.Shape
	// Total is every pair of documents, Identical the pairs with identical normalized text.
	Total, Identical int64
	// Entries lists each bin's class pairs, sorted by (A, B); bin 0 has none.
	Entries [][]Entry
	// Listed is, per bin, the document pairs the entries hold; Sizes the estimate of the
	// bin's pairs in the dataset (Listed corrected for what the banding misses; bin 0:
	// the rest).
	Listed []int64
	Sizes  []float64
	// Skipped counts the (pair, band) collisions the bucket bound left out.
	Skipped int

	members [][]int32 // per class: its documents, ascending
	cum     [][]int64 // per bin: cumulative Pairs of Entries
	sets    *Sets
}

// Floor returns the lowest similarity at which the frame's banding finds a pair with
// probability at least p.
func (f *Frame) Floor(p float64) float64 {
	b, r := float64(f.Shape.Bands), float64(f.Shape.Rows)
	return math.Pow(1-math.Pow(1-p, 1/b), 1/r)
}

// Probability returns the banding's probability of finding a pair of similarity j.
func (f *Frame) Probability(j float64) float64 { return lsh.Probability(j, f.Shape) }

// Build enumerates the frame of a dataset: sigs are the documents' signatures under
// sets' representation (any k), sets their shingle sets.
func Build(ctx context.Context, sigs []lsh.Signature, sets *Sets, scheme Scheme, opt Options) (*Frame, error) {
	if opt.MaxPairs <= 0 {
		opt.MaxPairs = DefaultMaxPairs
	}
	if opt.MaxBucket <= 0 {
		opt.MaxBucket = DefaultMaxBucket
	}
	n := sets.Docs()
	if len(sigs) != n {
		return nil, fmt.Errorf("frame: %d signatures for %d documents", len(sigs), n)
	}
	f := &Frame{Scheme: scheme, Rep: sets.Rep(), Docs: n, Total: int64(n) * int64(n-1) / 2, sets: sets,
		Entries: make([][]Entry, scheme.Bins()), Listed: make([]int64, scheme.Bins()), Sizes: make([]float64, scheme.Bins())}
	f.members = make([][]int32, sets.Classes())
	for i := range n {
		c := sets.Class(i)
		f.members[c] = append(f.members[c], int32(i))
	}
	// Pairs inside one class of equal sets: J = 1; identical texts are certain.
	top := scheme.Bins() - 1
	textCount := map[int32]int64{}
	for c, ms := range f.members {
		m := int64(len(ms))
		if m < 2 {
			continue
		}
		clear(textCount)
		for _, d := range ms {
			textCount[sets.text[d]]++
		}
		var same int64
		for _, t := range textCount {
			same += t * (t - 1) / 2
		}
		f.Identical += same
		if rest := m*(m-1)/2 - same; rest > 0 {
			u := int32(len(sets.Set(c)))
			f.Entries[top] = append(f.Entries[top], Entry{A: int32(c), B: int32(c), Pairs: rest, Inter: u, Union: u})
		}
	}
	// Pairs of classes: banding over one signature per class.
	reps := make([]lsh.Signature, len(f.members))
	for c, ms := range f.members {
		reps[c] = sigs[ms[0]]
	}
	k := 0
	if len(reps) > 0 {
		k = len(reps[0])
	}
	var cands []uint64 // class pairs, A<<32 | B
	for r := 1; r <= max(k, 1); r++ {
		if k == 0 {
			break
		}
		sh := lsh.Shape{Bands: k / r, Rows: r}
		c, skipped, err := boundedCandidates(ctx, reps, sh, opt.MaxBucket, opt.MaxPairs)
		if err != nil {
			return nil, err
		}
		if c != nil || len(reps) < 2 {
			cands, f.Shape, f.Skipped = c, sh, skipped
			break
		}
	}
	// Each class pair is asked once here, so its intersection is not remembered (the
	// Sets' memo is for later questions); on every core.
	inters := make([]int32, len(cands))
	if err := par.Chunks(ctx, len(cands), 4096, func(lo, hi int) {
		for i, c := range cands[lo:hi] {
			inters[lo+i] = int32(lsh.Intersection(sets.sets[c>>32], sets.sets[uint32(c)]))
		}
	}); err != nil {
		return nil, err
	}
	for i, c := range cands {
		x, y := int32(c>>32), int32(uint32(c))
		inter := int(inters[i])
		union := len(sets.Set(int(x))) + len(sets.Set(int(y))) - inter
		b := scheme.Bin(inter, union)
		if b == 0 {
			continue // a collision of hashes with no shared shingle: the rest
		}
		f.Entries[b] = append(f.Entries[b], Entry{A: min(x, y), B: max(x, y), Pairs: int64(len(f.members[x])) * int64(len(f.members[y])),
			Inter: int32(inter), Union: int32(union)})
	}
	var listed float64
	f.cum = make([][]int64, len(f.Entries))
	for b := range f.Entries {
		es := f.Entries[b]
		slices.SortFunc(es, func(p, q Entry) int {
			if p.A != q.A {
				return int(p.A - q.A)
			}
			return int(p.B - q.B)
		})
		cum := make([]int64, len(es))
		var total int64
		var size float64
		for i, e := range es {
			total += e.Pairs
			cum[i] = total
			p := 1.0
			if e.A != e.B {
				p = f.Probability(e.Jaccard())
			}
			size += float64(e.Pairs) / p
		}
		f.cum[b], f.Listed[b], f.Sizes[b] = cum, total, size
		listed += size
	}
	f.Sizes[0] = max(0, float64(f.Total-f.Identical)-listed)
	return f, nil
}

// boundedCandidates returns the candidate class pairs of sh as sorted keys (A<<32 | B,
// A < B), nil when they are more than maxPairs. They are lsh.CandidatesBounded's pairs,
// made by lsh.CandidateKeys, which holds each distinct pair once: at one row per band a
// near-duplicate pair collides in most of the bands, and holding every collision took
// gigabytes where the distinct pairs take megabytes.
func boundedCandidates(ctx context.Context, sigs []lsh.Signature, sh lsh.Shape, maxBucket, maxPairs int) ([]uint64, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	if len(sigs) < 2 {
		return []uint64{}, 0, nil
	}
	// A quick upper bound from bucket sizes before the pairs are made: Σ over bands of
	// Σ_bucket m(m-1)/2 bounds the distinct pairs.
	var bound int64
	all := make([]uint64, 0, sh.Bands*len(sigs)) // [doc][band]
	for _, s := range sigs {
		all = sh.BandKeys(s, all)
	}
	keys := make(map[uint64]int32)
	for band := range sh.Bands {
		clear(keys)
		for d := range sigs {
			keys[all[d*sh.Bands+band]]++
		}
		for _, m := range keys {
			mm := int64(min(int(m), maxBucket))
			bound += mm * (mm - 1) / 2
		}
		if bound > int64(maxPairs)*int64(sh.Bands) {
			return nil, 0, nil
		}
	}
	c, skipped, err := lsh.CandidateKeysUpTo(ctx, sigs, sh, maxBucket, maxPairs)
	if errors.Is(err, lsh.ErrTooManyPairs) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	if c == nil {
		c = []uint64{}
	}
	return c, skipped, nil
}

// Members returns the documents of class c (not to be changed).
func (f *Frame) Members(c int) []int32 { return f.members[c] }

// Pair is a pair of documents A < B.
type Pair struct{ A, B int }

// Sample draws up to n document pairs of bin b uniformly without replacement (a simple
// random sample of the bin's listed pairs), skipping pairs skip reports (already
// drawn, already labeled); bin 0 is drawn from all pairs that share no shingle. It
// returns fewer than n when the bin runs out.
func (f *Frame) Sample(b, n int, rng *rand.Rand, skip func(a, b int) bool) []Pair {
	if n <= 0 {
		return nil
	}
	if b == 0 {
		return f.sampleRest(n, rng, skip)
	}
	total := f.Listed[b]
	if total == 0 {
		return nil
	}
	var out []Pair
	// Rejection from the whole bin while it is much larger than what is wanted;
	// otherwise every pair is listed and shuffled.
	if total > int64(4*n+1024) {
		taken := map[Pair]bool{}
		for tries := 0; len(out) < n && tries < 50*n+1000; tries++ {
			p := f.pairAt(b, rng.Int64N(total), rng)
			if taken[p] || skip != nil && skip(p.A, p.B) {
				continue
			}
			taken[p] = true
			out = append(out, p)
		}
		return out
	}
	all := make([]Pair, 0, total)
	for _, e := range f.Entries[b] {
		all = f.appendPairs(all, e)
	}
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	for _, p := range all {
		if len(out) == n {
			break
		}
		if skip != nil && skip(p.A, p.B) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// appendPairs appends every document pair of e.
func (f *Frame) appendPairs(dst []Pair, e Entry) []Pair {
	ma, mb := f.members[e.A], f.members[e.B]
	for i, x := range ma {
		for j, y := range mb {
			if e.A == e.B && (j <= i || f.sets.Identical(int(x), int(y))) {
				continue
			}
			dst = append(dst, Pair{int(min(x, y)), int(max(x, y))})
		}
	}
	return dst
}

// pairAt returns a document pair of the entry of bin b that holds its i-th pair: the
// i-th itself for a pair of classes; for an entry of one class (whose identical pairs
// are left out) a pair drawn uniformly from its pairs, by rejection, since the entry is
// chosen in proportion to its pairs either way.
func (f *Frame) pairAt(b int, i int64, rng *rand.Rand) Pair {
	cum := f.cum[b]
	e := sort.Search(len(cum), func(j int) bool { return cum[j] > i })
	en := f.Entries[b][e]
	off := i
	if e > 0 {
		off -= cum[e-1]
	}
	ma, mb := f.members[en.A], f.members[en.B]
	if en.A != en.B {
		x, y := int(ma[off/int64(len(mb))]), int(mb[off%int64(len(mb))])
		return Pair{min(x, y), max(x, y)}
	}
	for {
		x, y := int(ma[rng.IntN(len(ma))]), int(ma[rng.IntN(len(ma))])
		if x != y && !f.sets.Identical(x, y) {
			return Pair{min(x, y), max(x, y)}
		}
	}
}

// sampleRest draws pairs that share no shingle, uniformly, by rejection from all pairs.
func (f *Frame) sampleRest(n int, rng *rand.Rand, skip func(a, b int) bool) []Pair {
	return f.drawPairs(n, 200*n+1000, rng, func(p Pair) bool {
		if skip != nil && skip(p.A, p.B) {
			return false
		}
		inter, _ := f.sets.Counts(p.A, p.B)
		return inter == 0
	})
}

// Random draws up to n pairs of documents uniformly from all pairs whose normalized
// texts differ, skipping what skip reports.
func (f *Frame) Random(n int, rng *rand.Rand, skip func(a, b int) bool) []Pair {
	return f.drawPairs(n, 100*n+1000, rng, func(p Pair) bool {
		return !f.sets.Identical(p.A, p.B) && (skip == nil || !skip(p.A, p.B))
	})
}

// drawPairs draws up to n distinct pairs that keep accepts, uniformly, by rejection from
// all pairs, giving up after tries draws.
func (f *Frame) drawPairs(n, tries int, rng *rand.Rand, keep func(Pair) bool) []Pair {
	if f.Docs < 2 {
		return nil
	}
	taken := map[Pair]bool{}
	var out []Pair
	for try := 0; len(out) < n && try < tries; try++ {
		a, b := rng.IntN(f.Docs), rng.IntN(f.Docs)
		if a == b {
			continue
		}
		p := Pair{min(a, b), max(a, b)}
		if taken[p] || !keep(p) {
			continue
		}
		taken[p] = true
		out = append(out, p)
	}
	return out
}

// Sets returns the shingle sets the frame was built from.
func (f *Frame) Sets() *Sets { return f.sets }
