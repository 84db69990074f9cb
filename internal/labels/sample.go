package labels

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dedupstudio/dedupstudio/internal/frame"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// Plan says which pairs to draw for labeling. Recall and false-removal estimates need
// labels across the whole similarity range, not just the easy ends: pairs are drawn per
// bin of exact Jaccard similarity (a simple random sample of each bin's pairs in the
// dataset's frame, internal/frame), plus pairs near the decision boundary, plus
// uniformly random pairs (the negatives that LSH candidates never show).
type Plan struct {
	// PerBin pairs from every bin (or TargetBin only, when it is not -1), unless Counts
	// says how many to draw from each bin (a labeling plan: Counts[b] from bin b).
	PerBin    int
	TargetBin int
	Counts    []int
	Boundary  int     // pairs whose exact similarity is nearest the threshold
	Threshold float64 // the decision boundary
	Random    int     // uniformly random pairs of documents whose normalized texts differ
	Overlap   int     // labels wanted per pair (default 1)
	// DoubleShare: with Overlap 1, the share of pairs labeled twice, for agreement.
	DoubleShare float64
	Seed        uint64
}

// Drawn is a pair chosen for labeling (documents by index into the frame's documents).
type Drawn struct {
	A, B       int
	Estimate   float64 // MinHash estimate under the frame's representation
	Similarity float64 // exact Jaccard of the shingle sets
	Origin     string  // bin:<i>, boundary or random
	Wanted     int
	// Design, Stratum and FrameSize record the draw: a bin's pairs are a simple random
	// sample of the FrameSize (N_h) pairs the frame lists in that bin, Stratum its label;
	// boundary and random pairs record the design with their own strata ("boundary",
	// "random"): they were chosen by similarity, or at random, never by their answer.
	Design    string
	Stratum   string
	FrameSize int
}

// DrawDesign names the design of draws from f: its representation, its bin scheme and a
// fingerprint of the frame (documents and bin sizes). Draws from the same frame share
// the name and pool into one stratified sample (a simple random sample drawn without
// the pairs an earlier draw took is, with them, a simple random sample of their sum);
// draws from another frame (the dataset changed) have another name.
func DrawDesign(f *frame.Frame) string {
	h := fnv.New64a()
	fmt.Fprint(h, f.Docs, f.Identical)
	for _, n := range f.Listed {
		fmt.Fprint(h, " ", n)
	}
	return fmt.Sprintf("jdraw-%s-%s-%08x", f.Rep.ID(), f.Scheme, uint32(h.Sum64()))
}

// Draw samples pairs from the frame f; sigs are the documents' signatures under the
// frame's representation (for each drawn pair's estimate). existing reports pairs already
// in the campaign (by document index, a < b), never drawn again.
func Draw(f *frame.Frame, sigs []lsh.Signature, plan Plan, existing func(a, b int) bool) ([]Drawn, error) {
	bins := f.Scheme.Bins()
	if plan.Overlap <= 0 {
		plan.Overlap = 1
	}
	if plan.TargetBin >= bins {
		return nil, fmt.Errorf("bin %d: there are %d bins", plan.TargetBin, bins)
	}
	if plan.Counts != nil && len(plan.Counts) != bins {
		return nil, fmt.Errorf("a plan of %d bins for a frame of %d", len(plan.Counts), bins)
	}
	if f.Docs < 2 {
		return nil, fmt.Errorf("a dataset of %d documents has no pairs", f.Docs)
	}
	if len(sigs) != f.Docs {
		return nil, fmt.Errorf("%d signatures for %d documents", len(sigs), f.Docs)
	}
	rng := rand.New(rand.NewPCG(plan.Seed, 0x5eed))
	d := &drawer{sigs: sigs, existing: existing, taken: map[frame.Pair]bool{}, design: DrawDesign(f), sets: f.Sets()}
	skip := func(a, b int) bool { return d.taken[frame.Pair{A: a, B: b}] || existing != nil && existing(a, b) }
	// The draws share one random stream, in this order: the bins, the boundary, the
	// random pairs, then the overlap.
	for b := range bins {
		n := plan.PerBin
		switch {
		case plan.Counts != nil:
			n = plan.Counts[b]
		case plan.TargetBin >= 0 && b != plan.TargetBin:
			n = 0
		}
		size := f.Listed[b]
		if b == 0 {
			size = int64(f.Sizes[0])
		}
		for _, p := range f.Sample(b, n, rng, skip) {
			d.add(p, fmt.Sprintf("bin:%d", b), f.Scheme.Label(b), int(min(size, 1<<31-1)))
		}
	}
	d.boundary(f, plan, rng, skip)
	nonIdentical := f.Total - f.Identical
	for _, p := range f.Random(plan.Random, rng, skip) {
		d.add(p, "random", "random", int(min(nonIdentical, 1<<31-1)))
	}
	for i := range d.out {
		d.out[i].Wanted = plan.Overlap
		if plan.Overlap == 1 && rng.Float64() < plan.DoubleShare {
			d.out[i].Wanted = 2
		}
	}
	return d.out, nil
}

// drawer is one draw in progress: the pairs taken so far, in the order drawn.
type drawer struct {
	sigs     []lsh.Signature
	existing func(a, b int) bool
	taken    map[frame.Pair]bool
	design   string
	sets     *frame.Sets
	out      []Drawn
}

func (d *drawer) add(p frame.Pair, origin, stratum string, size int) {
	d.taken[p] = true
	d.out = append(d.out, Drawn{A: p.A, B: p.B, Estimate: lsh.Estimate(d.sigs[p.A], d.sigs[p.B]),
		Similarity: d.sets.Jaccard(p.A, p.B), Origin: origin, Design: d.design, Stratum: stratum, FrameSize: size})
}

// boundary draws the plan's Boundary pairs whose exact similarity is nearest the
// threshold, from the frame's bins around it (ties broken at random).
func (d *drawer) boundary(f *frame.Frame, plan Plan, rng *rand.Rand, skip func(a, b int) bool) {
	if plan.Boundary <= 0 {
		return
	}
	type cand struct {
		e    frame.Entry
		dist float64
		tie  uint64
	}
	var cands []cand
	for b := 1; b < f.Scheme.Bins(); b++ {
		if f.Scheme.Upper(b) < plan.Threshold-0.15 || f.Scheme.Lower(b) > plan.Threshold+0.15 {
			continue
		}
		for _, e := range f.Entries[b] {
			cands = append(cands, cand{e, math.Abs(e.Jaccard() - plan.Threshold), rng.Uint64()})
		}
	}
	slices.SortFunc(cands, func(x, y cand) int { return cmp.Or(cmp.Compare(x.dist, y.dist), cmp.Compare(x.tie, y.tie)) })
	n := 0
	for _, c := range cands {
		if n == plan.Boundary {
			return
		}
		ma, mb := f.Members(int(c.e.A)), f.Members(int(c.e.B))
		for _, x := range ma {
			for _, y := range mb {
				if n == plan.Boundary {
					return
				}
				p := frame.Pair{A: int(min(x, y)), B: int(max(x, y))}
				if p.A == p.B || d.sets.Identical(p.A, p.B) || skip(p.A, p.B) {
					continue
				}
				d.add(p, "boundary", "boundary", 0)
				n++
			}
		}
	}
}

// Bin returns the similarity bin of s among n bins over [0, 1].
func Bin(s float64, n int) int {
	return min(max(int(s*float64(n)), 0), n-1)
}

// Score computes a pair's exact Jaccard and MinHash estimate under spec.
func Score(h *lsh.Hasher, a, b string) (similarity, estimate float64) {
	similarity = lsh.ExactJaccard(h.ShingleSet(a), h.ShingleSet(b))
	estimate = lsh.Estimate(h.Signature(a, nil), h.Signature(b, nil))
	return similarity, estimate
}
