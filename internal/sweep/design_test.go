package sweep

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// population is a synthetic sampling frame with known truth: pairs in strata, each a
// duplicate or not, and what one configuration does with it.
type population struct {
	strata           []string
	members          [][]int // pair indexes per stratum
	dup, acc, merged []bool
	size             []int32 // the size of the cluster a merged pair ends in
	recall           float64 // true A/D
	falseRemovals    float64 // true F in documents: Σ 2/m over merged non-duplicates
}

// popSpec is one stratum of a synthetic population.
type popSpec struct {
	name                      string
	size                      int
	pDup, pAccept, pMergedNon float64
}

func newPopulation(seed uint64) population {
	return newPopulationOf(seed, []popSpec{
		{"0.9-1.0", 1500, 0.9, 0.95, 0.4},
		{"0.7-0.9", 4000, 0.6, 0.7, 0.15},
		{"0.5-0.7", 9000, 0.3, 0.4, 0.06},
		{"0.3-0.5", 20000, 0.1, 0.15, 0.03},
		{"random", 300000, 0, 0, 0},
	})
}

// newPopulationOf draws a population: each merged pair ends in a cluster of 2 to 12
// documents.
func newPopulationOf(seed uint64, specs []popSpec) population {
	rng := rand.New(rand.NewPCG(seed, 1))
	var p population
	dups, accepted := 0, 0
	for _, s := range specs {
		p.strata = append(p.strata, s.name)
		var m []int
		for range s.size {
			i := len(p.dup)
			d := rng.Float64() < s.pDup
			a := d && rng.Float64() < s.pAccept
			f := !d && rng.Float64() < s.pMergedNon
			p.dup, p.acc, p.merged = append(p.dup, d), append(p.acc, a), append(p.merged, f || a)
			var size int32
			if f || a {
				size = 2 + int32(rng.IntN(11))
			}
			p.size = append(p.size, size)
			if d {
				dups++
			}
			if a {
				accepted++
			}
			if f {
				p.falseRemovals += 2 / float64(size)
			}
			m = append(m, i)
		}
		p.members = append(p.members, m)
	}
	if dups > 0 {
		p.recall = float64(accepted) / float64(dups)
	}
	return p
}

// outcome returns what the population's configuration does with the drawn pairs, as
// estimate takes it.
func (p population) outcome(pairs []int) (acc []bool, fm []int32) {
	acc = make([]bool, len(pairs))
	fm = make([]int32, len(pairs))
	for i, q := range pairs {
		acc[i] = p.dup[q] && p.acc[q]
		if !p.dup[q] && p.merged[q] {
			fm[i] = p.size[q]
		}
	}
	return acc, fm
}

// draw takes a simple random sample of n pairs from every stratum, as the labeling
// sampler does, and returns them as the design's pairs.
func (p population) draw(rng *rand.Rand, n int) (ps []designPair, pairs []int) {
	for h, m := range p.members {
		idx := rng.Perm(len(m))[:n]
		for _, j := range idx {
			i := m[j]
			ps = append(ps, designPair{design: "draw-1", stratum: p.strata[h], frameSize: len(m), duplicate: p.dup[i]})
			pairs = append(pairs, i)
		}
	}
	return ps, pairs
}

// TestEstimatorCoverage draws many stratified samples from a population with known
// truth and checks that the 95% bootstrap intervals of recall and of the number of
// false removals cover the truth in at least 90% of draws (expected near 95%; with 200
// draws the share's standard error is about 1.5 points, so 90% is more than 3 below).
func TestEstimatorCoverage(t *testing.T) {
	t.Parallel()
	pop := newPopulation(11)
	rng := rand.New(rand.NewPCG(12, 12))
	const draws, perStratum = 200, 80
	coveredRecall, coveredF := 0, 0
	var sumF, sumF2, sumRecall float64
	for draw := range draws {
		ps, pairs := pop.draw(rng, perStratum)
		d, err := newDesign(ps, "", 1000, uint64(draw))
		if err != nil {
			t.Fatal(err)
		}
		acc, fm := pop.outcome(pairs)
		est := d.estimate(acc, fm, 1_000_000, nil) // removals far above F: no cap
		if est.Recall.Lo <= pop.recall && pop.recall <= est.Recall.Hi {
			coveredRecall++
		}
		if f := pop.falseRemovals; est.FalseRemovals.Lo <= f && f <= est.FalseRemovals.Hi {
			coveredF++
		}
		sumF += est.FalseRemovals.Value
		sumF2 += est.FalseRemovals.Value * est.FalseRemovals.Value
		sumRecall += est.Recall.Value
	}
	sdMean := math.Sqrt((sumF2/draws - (sumF/draws)*(sumF/draws)) / draws)
	t.Logf("truth: recall %.4f, false removals %.1f; coverage: recall %d/%d, false removals %d/%d; mean estimates %.4f, %.1f (sd of the mean %.1f)",
		pop.recall, pop.falseRemovals, coveredRecall, draws, coveredF, draws, sumRecall/draws, sumF/draws, sdMean)
	if share := float64(coveredRecall) / draws; share < 0.90 {
		t.Errorf("recall intervals covered the truth in %.3f of draws; want >= 0.90", share)
	}
	if share := float64(coveredF) / draws; share < 0.90 {
		t.Errorf("false-removal intervals covered the truth in %.3f of draws; want >= 0.90", share)
	}
	// The total is unbiased (Horvitz-Thompson): its mean over draws is within 3 standard
	// errors of the truth (the standard error, measured over the draws, is about 3% of it:
	// the 2/m shares add spread to the pair counts).
	if mean := sumF / draws; math.Abs(mean-pop.falseRemovals) > 3*sdMean {
		t.Errorf("mean false-removal estimate %.1f (standard error %.1f); truth %.1f", mean, sdMean, pop.falseRemovals)
	}
}

// TestEstimatorCoverageZeroEvents is the coverage test where false merges are rare
// enough that most draws see none in most strata: a bootstrap alone gives those draws
// the interval 0–0 and misses the truth (it covered it in none of the draws that saw no
// false merge). The zero-event bound of each stratum must keep the coverage.
func TestEstimatorCoverageZeroEvents(t *testing.T) {
	t.Parallel()
	pop := newPopulationOf(21, []popSpec{
		{"0.9-1.0", 1500, 0.9, 0.95, 0.002},
		{"0.7-0.9", 4000, 0.6, 0.7, 0.001},
		{"0.5-0.7", 9000, 0.3, 0.4, 0.0005},
		{"random", 300000, 0, 0, 0.00001},
	})
	rng := rand.New(rand.NewPCG(22, 22))
	const draws, perStratum = 200, 80
	covered, allZero, allZeroCovered, bootstrapOnly := 0, 0, 0, 0
	for draw := range draws {
		ps, pairs := pop.draw(rng, perStratum)
		d, err := newDesign(ps, "", 500, uint64(draw))
		if err != nil {
			t.Fatal(err)
		}
		acc, fm := pop.outcome(pairs)
		est := d.estimate(acc, fm, 1_000_000, nil)
		f := pop.falseRemovals
		if est.FalseRemovals.Lo <= f && f <= est.FalseRemovals.Hi {
			covered++
		}
		if est.Sampled >= f {
			bootstrapOnly++
		}
		if len(est.Seen) == 0 {
			allZero++
			if est.FalseRemovals.Value != 0 || est.FalseRemovals.Hi <= 0 {
				t.Fatalf("draw %d saw no false merge: estimate %+v; want 0 with a positive upper end", draw, est.FalseRemovals)
			}
			if f <= est.FalseRemovals.Hi {
				allZeroCovered++
			}
		}
	}
	t.Logf("truth %.1f false removals; covered %d/%d; %d draws saw no false merge, %d of them covered; the bootstrap's own upper end covered %d",
		pop.falseRemovals, covered, draws, allZero, allZeroCovered, bootstrapOnly)
	if pop.falseRemovals <= 0 || allZero < draws/4 {
		t.Fatalf("population: truth %.1f, %d of %d draws without a false merge; the test needs rare false merges", pop.falseRemovals, allZero, draws)
	}
	if share := float64(covered) / draws; share < 0.90 {
		t.Errorf("false-removal intervals covered the truth in %.3f of draws; want >= 0.90", share)
	}
	if allZeroCovered != allZero {
		t.Errorf("of %d draws without a false merge, %d intervals covered the truth; want all", allZero, allZeroCovered)
	}
}

// TestZeroEventBound checks the hypergeometric bound against its definition and the
// binomial rule of thumb (about 3.7/n of the frame for alpha 0.025).
func TestZeroEventBound(t *testing.T) {
	t.Parallel()
	p0 := func(N, n, k int) float64 {
		l := 0.0
		for i := range n {
			l += math.Log(float64(N-k-i)) - math.Log(float64(N-i))
		}
		return math.Exp(l)
	}
	for _, c := range []struct{ N, n int }{{100, 10}, {1764, 100}, {2129947, 65}, {20, 19}, {50, 1}} {
		k := zeroEventBound(c.N, c.n, 0.025)
		if p0(c.N, c.n, k) < 0.025 || p0(c.N, c.n, k+1) >= 0.025 {
			t.Errorf("zeroEventBound(%d, %d) = %d: P(0 | K) = %.4f, P(0 | K+1) = %.4f; want the last K with P >= 0.025",
				c.N, c.n, k, p0(c.N, c.n, k), p0(c.N, c.n, k+1))
		}
		if rough := float64(c.N) * (1 - math.Pow(0.025, 1/float64(c.n))); float64(k) > rough+1 {
			t.Errorf("zeroEventBound(%d, %d) = %d; the binomial bound is %.0f and without replacement should not exceed it", c.N, c.n, k, rough)
		}
	}
	if k := zeroEventBound(40, 40, 0.025); k != 0 {
		t.Errorf("zeroEventBound of a census = %d; want 0", k)
	}
}

func TestDesignChoice(t *testing.T) {
	t.Parallel()
	var ps []designPair
	add := func(n int, design, stratum string, frame int, dup bool) {
		for range n {
			ps = append(ps, designPair{design: design, stratum: stratum, frameSize: frame, duplicate: dup})
		}
	}
	add(20, "june", "0.8-0.9", 400, true)
	add(10, "june", "random", 90000, false)
	add(25, "may", "0.5-0.6", 1000, false)
	add(7, "", "", 0, true) // imported labels: no design
	add(1, "june", "0.1-0.2", 0, false)

	d, err := newDesign(ps, "", 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "june" || d.Pairs != 30 || d.LabeledOnly != 33 || len(d.Strata) != 2 {
		t.Errorf("design = %q with %d pairs, %d labeled-only, %d strata; want june, 30, 33, 2", d.Name, d.Pairs, d.LabeledOnly, len(d.Strata))
	}
	if d.Duplicates.Value != 400 {
		t.Errorf("D = %v; want 400 (20 labeled duplicates standing for 400 pairs)", d.Duplicates.Value)
	}
	if !notesMention(d.Notes, "other design") || !notesMention(d.Notes, "invisible") || !notesMention(d.Notes, "missing at random") {
		t.Errorf("notes = %q", d.Notes)
	}

	d, err = newDesign(ps, "may", 100, 1)
	if err != nil || d.Name != "may" || d.Pairs != 25 {
		t.Errorf("newDesign(may) = %+v, %v; want may with 25 pairs", d, err)
	}
	if !math.IsNaN(d.estimate(make([]bool, 25), make([]int32, 25), 0, nil).Recall.Value) {
		t.Errorf("recall without a labeled duplicate is not NaN")
	}

	_, err = newDesign(ps, "april", 100, 1)
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "design" {
		t.Errorf("newDesign(april) = %v; want an InputError on design", err)
	}

	d, _ = newDesign([]designPair{{duplicate: true}}, "", 100, 1)
	if d.Name != "" || d.LabeledOnly != 1 || !notesMention(d.Notes, "labeled pairs only") {
		t.Errorf("no design: %+v", d.Design)
	}
}

func TestDesignFrameConflicts(t *testing.T) {
	t.Parallel()
	ps := []designPair{
		{design: "d", stratum: "a", frameSize: 100, duplicate: true},
		{design: "d", stratum: "a", frameSize: 120, duplicate: false},
		{design: "d", stratum: "b", frameSize: 1, duplicate: true},
		{design: "d", stratum: "b", frameSize: 1, duplicate: true},
		{design: "d", stratum: "c", frameSize: 50, duplicate: false},
	}
	d, err := newDesign(ps, "", 50, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"a": 120, "b": 2, "c": 50}
	for _, s := range d.Strata {
		if s.FrameSize != want[s.Name] {
			t.Errorf("stratum %s frame size %d; want %d", s.Name, s.FrameSize, want[s.Name])
		}
	}
	for _, w := range []string{"different frame sizes", "below its 2 labeled pairs", "stratum c has one labeled pair"} {
		if !notesMention(d.Notes, w) {
			t.Errorf("notes %q do not say %q", d.Notes, w)
		}
	}
	// Recall: D = 60 (a) + 2 (b); accepting a's duplicate only gives 60/62.
	// The non-duplicates of a (weight 60) and c (weight 50) are merged in clusters of
	// 2 and 4: F = 60·2/2 + 50·2/4 = 85 documents.
	est := d.estimate([]bool{true, false, false, false, false}, []int32{0, 2, 0, 0, 4}, 1000, nil)
	if math.Abs(est.Recall.Value-60.0/62) > 1e-12 || est.FalseRemovals.Value != 85 {
		t.Errorf("estimate = recall %v, F %v; want %v, 85", est.Recall.Value, est.FalseRemovals.Value, 60.0/62)
	}
	if est.FalseRemovalRate.Value != 0.085 {
		t.Errorf("false removals per removal = %v; want 85/1000", est.FalseRemovalRate.Value)
	}
	// Over fewer removals than the estimate the figures are capped: a rate, never
	// above 100%.
	est = d.estimate([]bool{true, false, false, false, false}, []int32{0, 2, 0, 0, 4}, 10, nil)
	if est.FalseRemovals.Value != 10 || est.FalseRemovalRate.Value != 1 || est.FalseRemovalRate.Hi != 1 {
		t.Errorf("over 10 removals: F %+v, rate %+v; want 10 and 1", est.FalseRemovals, est.FalseRemovalRate)
	}
}

func notesMention(notes []string, s string) bool {
	for _, n := range notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// TestRunWithDesign runs a sweep whose pairs carry a design and checks the dataset
// estimates line up with the labeled ones and the weights.
func TestRunWithDesign(t *testing.T) {
	in := handInput(t)
	// Two strata: the duplicates (frame 40 pairs) and the non-duplicates (frame 4).
	for i := range in.Pairs {
		p := &in.Pairs[i]
		p.Design, p.FrameSize = "draw", 4
		p.Stratum = "low"
		if p.Labels[0].Duplicate {
			p.Stratum, p.FrameSize = "high", 40
		}
	}
	g := Grid{Specs: []lsh.Spec{word1(t)}, Shapes: []lsh.Shape{{Bands: 64, Rows: 2}}, Thresholds: []float64{0.5},
		Verifications: []Verification{ExactJaccard}, Policies: []string{ConnectedComponents}}
	rep, err := Run(t.Context(), in, g, Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.Dataset == nil || rep.Design.Name != "draw" || rep.Design.Pairs != 6 {
		t.Fatalf("design %+v, dataset %v", rep.Design, r.Dataset)
	}
	// 3 of 4 duplicates accepted, each standing for 10 pairs: recall 30/40. One of two
	// non-duplicates (4~6, through the chain 4~5~6) merged in a cluster of 3, each
	// standing for 2 pairs: F = 2·2/3 documents, over 4 removals.
	if got := r.Dataset.Recall.Value; math.Abs(got-0.75) > 1e-12 {
		t.Errorf("dataset recall = %v; want 0.75", got)
	}
	if got := r.Dataset.FalseRemovals.Value; math.Abs(got-4.0/3) > 1e-6 {
		t.Errorf("dataset false removals = %v; want 4/3", got)
	}
	if got := r.Dataset.FalseRemovalRate.Value; math.Abs(got-1.0/3) > 1e-6 || r.Dataset.Removals != 4 {
		t.Errorf("false removals per removal = %v over %d; want 1/3 over 4", got, r.Dataset.Removals)
	}
	// The duplicates' stratum has no false merge among its 4 labeled pairs of 40: its
	// zero-event bound lifts the upper end, which stays within the removals.
	if r.Dataset.Unseen <= 0 || r.Dataset.FalseRemovals.Hi != 4 || r.Dataset.FalseRemovalRate.Hi != 1 {
		t.Errorf("dataset false removals %+v, unseen %v; want an upper end of 4 (all removals)", r.Dataset.FalseRemovals, r.Dataset.Unseen)
	}
	if h := r.Headline(); h.Basis != DatasetBasis {
		t.Errorf("headline basis = %s; want %s", h.Basis, DatasetBasis)
	}
	// The same seed gives the same results; another seed the same point estimates.
	again, _ := Run(t.Context(), in, g, Options{Seed: 3})
	a, b := again.Results[0], r
	a.CandidateTime, a.ScoreTime, b.CandidateTime, b.ScoreTime = 0, 0, 0, 0
	ja, _ := json.Marshal(a) // NaN != NaN, so compare the encodings (NaN as null)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("same seed, another run: %s\nthen %s", jb, ja)
	}
	other, _ := Run(t.Context(), in, g, Options{Seed: 4})
	if o := other.Results[0].Dataset; o.Recall.Value != r.Dataset.Recall.Value || o.FalseRemovals.Value != r.Dataset.FalseRemovals.Value {
		t.Errorf("another seed changed the point estimates: %+v vs %+v", o, r.Dataset)
	}
}

// TestEstimateOrderFree checks that the incremental replicate counts give every
// configuration the same intervals whatever came before it.
func TestEstimateOrderFree(t *testing.T) {
	t.Parallel()
	pop := newPopulation(5)
	rng := rand.New(rand.NewPCG(6, 6))
	ps, pairs := pop.draw(rng, 40)
	outcome := func(seed uint64) ([]bool, []int32) {
		r := rand.New(rand.NewPCG(seed, 0))
		acc, fm := make([]bool, len(pairs)), make([]int32, len(pairs))
		for i, p := range pairs {
			acc[i] = pop.dup[p] && r.IntN(3) > 0
			if !pop.dup[p] && r.IntN(9) == 0 {
				fm[i] = 2 + int32(r.IntN(5))
			}
		}
		return acc, fm
	}
	d1, _ := newDesign(ps, "", 500, 1)
	d2, _ := newDesign(ps, "", 500, 1)
	a1, f1 := outcome(1)
	a2, f2 := outcome(2)
	first := d1.estimate(a1, f1, 100, nil)
	d1.estimate(a2, f2, 100, nil)
	again := d1.estimate(a1, f1, 100, nil)
	d2.estimate(a2, f2, 100, nil)
	fresh := d2.estimate(a1, f1, 100, nil)
	if !reflect.DeepEqual(first, again) || !reflect.DeepEqual(first, fresh) {
		t.Errorf("estimate of one configuration: %+v, after another %+v, on a design that saw another first %+v", first, again, fresh)
	}
}
