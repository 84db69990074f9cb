package labels

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// Plan says which pairs to draw for labeling. Recall and false-removal estimates need
// labels across the whole similarity range, not just the easy ends: pairs are drawn per
// bin of estimated similarity, plus pairs near the decision boundary, plus random pairs
// (the negatives that LSH candidates never show).
type Plan struct {
	Bins        int     // similarity bins over [0, 1]; default 10
	PerBin      int     // pairs per bin
	TargetBin   int     // draw only from this bin (0-based); -1 for all
	Boundary    int     // pairs whose estimate is nearest the threshold
	Threshold   float64 // the decision boundary
	Random      int     // uniformly random pairs of documents
	Overlap     int     // labels wanted per pair (default 1)
	DoubleShare float64 // with Overlap 1: share of pairs labeled twice, for agreement
	Seed        uint64
}

// Drawn is a pair chosen for labeling (documents by index into the texts given).
type Drawn struct {
	A, B       int
	Estimate   float64
	Similarity float64 // exact Jaccard of the shingle sets
	Origin     string  // bin:N, boundary or random
	Wanted     int
	// Design, Stratum and FrameSize record the stratified draw of a bin's pairs: a simple
	// random sample of the candidates in the bin, FrameSize of them (N_h), so a sweep can
	// weigh each labeled pair by N_h/n_h. Boundary and random pairs carry none (their
	// inclusion probabilities are not known): they count on the labeled-pairs basis only.
	Design    string
	Stratum   string
	FrameSize int
}

// DrawDesign names the design of the bin draws of spec over nBins bins: draws under the
// same name share their frame (the candidates of the generous banding), so their pairs
// pool into one stratified sample. Over more than PoolSize documents the frame depends
// on the seed's random pool, so seed is part of the name.
func DrawDesign(spec lsh.Spec, nBins, docs int, seed uint64) string {
	name := fmt.Sprintf("draw-%s-bins%d", spec.ID(), nBins)
	if docs > PoolSize {
		name += fmt.Sprintf("-seed%d", seed)
	}
	return name
}

// Bin returns the similarity bin of s among n bins over [0, 1].
func Bin(s float64, n int) int {
	return min(max(int(s*float64(n)), 0), n-1)
}

// Draw samples pairs from texts under spec. Candidates come from generous banding
// (two rows per band, so pairs down to about 0.1 similarity are reachable); existing
// reports pairs already in the campaign (by document index, a < b), never drawn again.
func Draw(texts []string, spec lsh.Spec, plan Plan, existing func(a, b int) bool) ([]Drawn, error) {
	return DrawWith(texts, nil, spec, plan, existing)
}

// DrawWith is Draw with the texts' signatures under spec given (a cache), or nil to
// compute them. With signatures, texts may be nil: the draw needs only the signatures,
// and the drawn pairs' Similarity is left for the caller to fill from their texts, so a
// large dataset's texts need not be held at once.
func DrawWith(texts []string, sigs []lsh.Signature, spec lsh.Spec, plan Plan, existing func(a, b int) bool) ([]Drawn, error) {
	if plan.Bins <= 0 {
		plan.Bins = 10
	}
	if plan.Overlap <= 0 {
		plan.Overlap = 1
	}
	if plan.TargetBin >= plan.Bins {
		return nil, fmt.Errorf("bin %d: there are %d bins", plan.TargetBin, plan.Bins)
	}
	ndocs := len(texts)
	if texts == nil {
		ndocs = len(sigs)
	}
	if ndocs < 2 {
		return nil, fmt.Errorf("a dataset of %d documents has no pairs", ndocs)
	}
	if sigs == nil {
		var err error
		if sigs, err = spec.Signatures(texts); err != nil {
			return nil, err
		}
	}
	if len(sigs) != ndocs {
		return nil, fmt.Errorf("%d signatures for %d texts", len(sigs), len(texts))
	}
	rng := rand.New(rand.NewPCG(plan.Seed, 0x5eed))
	cands, err := candidates(sigs, spec.Hashes, rng)
	if err != nil {
		return nil, err
	}
	// The draws share one random stream, in this order: the bins, the boundary, the
	// random pairs, then the overlap.
	d := &drawer{plan: plan, sigs: sigs, rng: rng, existing: existing, taken: map[[2]int]bool{}}
	all := d.bins(cands, DrawDesign(spec, plan.Bins, len(texts), plan.Seed))
	d.boundary(all)
	d.random(ndocs)
	if err := d.finish(texts, spec); err != nil {
		return nil, err
	}
	return d.out, nil
}

// drawer is one draw in progress: the pairs taken so far, in the order drawn.
type drawer struct {
	plan     Plan
	sigs     []lsh.Signature
	rng      *rand.Rand
	existing func(a, b int) bool
	taken    map[[2]int]bool
	out      []Drawn
}

// scored is a candidate pair with its MinHash estimate.
type scored struct {
	a, b int
	est  float64
}

// take reports whether the pair a, b may be drawn (two documents, not drawn before,
// not in the campaign already) and marks it drawn.
func (d *drawer) take(a, b int) bool {
	a, b = min(a, b), max(a, b)
	if a == b || d.taken[[2]int{a, b}] || (d.existing != nil && d.existing(a, b)) {
		return false
	}
	d.taken[[2]int{a, b}] = true
	return true
}

func (d *drawer) add(a, b int, est float64, origin string) {
	d.out = append(d.out, Drawn{A: min(a, b), B: max(a, b), Estimate: est, Origin: origin})
}

// bins draws up to PerBin pairs from each similarity bin (or the target bin only), each
// recorded with the design, its bin as the stratum and the bin's size as the frame. It
// returns every candidate scored.
func (d *drawer) bins(cands []lsh.Candidate, design string) []scored {
	plan := d.plan
	bins := make([][]scored, plan.Bins)
	all := make([]scored, 0, len(cands))
	for _, c := range cands {
		s := scored{c.A, c.B, lsh.Estimate(d.sigs[c.A], d.sigs[c.B])}
		all = append(all, s)
		bins[Bin(s.est, plan.Bins)] = append(bins[Bin(s.est, plan.Bins)], s)
	}
	for i, b := range bins {
		if plan.TargetBin >= 0 && i != plan.TargetBin {
			continue
		}
		d.rng.Shuffle(len(b), func(x, y int) { b[x], b[y] = b[y], b[x] })
		n := 0
		for _, s := range b {
			if n == plan.PerBin {
				break
			}
			if d.take(s.a, s.b) {
				d.add(s.a, s.b, s.est, fmt.Sprintf("bin:%d", i))
				dr := &d.out[len(d.out)-1]
				dr.Design, dr.Stratum, dr.FrameSize = design, fmt.Sprintf("bin:%d", i), len(b)
				n++
			}
		}
	}
	return all
}

// boundary draws the plan's Boundary candidates whose estimates are nearest the threshold.
func (d *drawer) boundary(all []scored) {
	if d.plan.Boundary <= 0 {
		return
	}
	slices.SortStableFunc(all, func(x, y scored) int {
		return cmp.Compare(math.Abs(x.est-d.plan.Threshold), math.Abs(y.est-d.plan.Threshold))
	})
	n := 0
	for _, s := range all {
		if n == d.plan.Boundary {
			break
		}
		if d.take(s.a, s.b) {
			d.add(s.a, s.b, s.est, "boundary")
			n++
		}
	}
}

// random draws the plan's Random pairs uniformly among the ndocs documents.
func (d *drawer) random(ndocs int) {
	for n, tries := 0, 0; n < d.plan.Random && tries < 100*d.plan.Random; tries++ {
		a, b := d.rng.IntN(ndocs), d.rng.IntN(ndocs)
		if d.take(a, b) {
			d.add(a, b, lsh.Estimate(d.sigs[a], d.sigs[b]), "random")
			n++
		}
	}
}

// finish gives every drawn pair its exact Jaccard (when there are texts) and how many
// annotators it wants.
func (d *drawer) finish(texts []string, spec lsh.Spec) error {
	h, err := lsh.NewHasher(spec)
	if err != nil {
		return err
	}
	sets := map[int][]uint64{}
	set := func(i int) []uint64 {
		s, ok := sets[i]
		if !ok {
			s = h.ShingleSet(texts[i])
			sets[i] = s
		}
		return s
	}
	for i := range d.out {
		if texts != nil {
			d.out[i].Similarity = lsh.ExactJaccard(set(d.out[i].A), set(d.out[i].B))
		}
		d.out[i].Wanted = d.plan.Overlap
		if d.plan.Overlap == 1 && d.rng.Float64() < d.plan.DoubleShare {
			d.out[i].Wanted = 2
		}
	}
	return nil
}

// PoolSize bounds the documents among which the generous (2-row) banding looks for
// low-similarity candidates: that banding makes a candidate of a tenth of all pairs at
// similarity 0.05, which is fine for a few thousand documents and not for a hundred
// thousand. Larger samples use a seeded random pool of this many documents for it.
const PoolSize = 4000

// maxBucket bounds what one band bucket of identical documents contributes.
const maxBucket = 300

// candidates finds pairs to draw from: 2-row banding (pairs down to about 0.1
// similarity) over at most PoolSize documents, plus, for larger samples, 4-row banding
// (pairs from about 0.3 up) over all of them, so near-duplicates anywhere stay reachable.
func candidates(sigs []lsh.Signature, k int, rng *rand.Rand) ([]lsh.Candidate, error) {
	generous := lsh.Shape{Bands: max(1, k/2), Rows: min(2, k)}
	if len(sigs) <= PoolSize {
		c, _, err := lsh.CandidatesBounded(sigs, generous, maxBucket)
		return c, err
	}
	pool := rng.Perm(len(sigs))[:PoolSize]
	slices.Sort(pool)
	sub := make([]lsh.Signature, len(pool))
	for i, d := range pool {
		sub[i] = sigs[d]
	}
	low, _, err := lsh.CandidatesBounded(sub, generous, maxBucket)
	if err != nil {
		return nil, err
	}
	high, _, err := lsh.CandidatesBounded(sigs, lsh.Shape{Bands: max(1, k/4), Rows: min(4, k)}, maxBucket)
	if err != nil {
		return nil, err
	}
	seen := make(map[[2]int]bool, len(high))
	for _, c := range high {
		seen[[2]int{c.A, c.B}] = true
	}
	for _, c := range low {
		a, b := pool[c.A], pool[c.B]
		if !seen[[2]int{a, b}] {
			seen[[2]int{a, b}] = true
			high = append(high, lsh.Candidate{A: a, B: b, Bands: c.Bands})
		}
	}
	return high, nil
}

// Score computes a pair's exact Jaccard and MinHash estimate under spec.
func Score(h *lsh.Hasher, a, b string) (similarity, estimate float64) {
	similarity = lsh.ExactJaccard(h.ShingleSet(a), h.ShingleSet(b))
	estimate = lsh.Estimate(h.Signature(a, nil), h.Signature(b, nil))
	return similarity, estimate
}
