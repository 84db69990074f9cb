package sweep

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
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
	recall           float64 // true A/D
	falseRemovals    int     // true F
}

func newPopulation(seed uint64) population {
	type spec struct {
		name                      string
		size                      int
		pDup, pAccept, pMergedNon float64
	}
	specs := []spec{
		{"0.9-1.0", 1500, 0.9, 0.95, 0.4},
		{"0.7-0.9", 4000, 0.6, 0.7, 0.15},
		{"0.5-0.7", 9000, 0.3, 0.4, 0.06},
		{"0.3-0.5", 20000, 0.1, 0.15, 0.03},
		{"random", 300000, 0, 0, 0},
	}
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
			if d {
				dups++
			}
			if a {
				accepted++
			}
			if f {
				p.falseRemovals++
			}
			m = append(m, i)
		}
		p.members = append(p.members, m)
	}
	p.recall = float64(accepted) / float64(dups)
	return p
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
	var sumF, sumRecall float64
	for draw := range draws {
		ps, pairs := pop.draw(rng, perStratum)
		d, err := newDesign(ps, "", 1000, uint64(draw))
		if err != nil {
			t.Fatal(err)
		}
		acc := make([]bool, len(pairs))
		fm := make([]bool, len(pairs))
		for i, p := range pairs {
			acc[i] = pop.dup[p] && pop.acc[p]
			fm[i] = !pop.dup[p] && pop.merged[p]
		}
		est := d.estimate(acc, fm, 1000)
		if est.Recall.Lo <= pop.recall && pop.recall <= est.Recall.Hi {
			coveredRecall++
		}
		if f := float64(pop.falseRemovals); est.FalseRemovals.Lo <= f && f <= est.FalseRemovals.Hi {
			coveredF++
		}
		sumF += est.FalseRemovals.Value
		sumRecall += est.Recall.Value
	}
	t.Logf("truth: recall %.4f, false removals %d; coverage: recall %d/%d, false removals %d/%d; mean estimates %.4f, %.1f",
		pop.recall, pop.falseRemovals, coveredRecall, draws, coveredF, draws, sumRecall/draws, sumF/draws)
	if share := float64(coveredRecall) / draws; share < 0.90 {
		t.Errorf("recall intervals covered the truth in %.3f of draws; want >= 0.90", share)
	}
	if share := float64(coveredF) / draws; share < 0.90 {
		t.Errorf("false-removal intervals covered the truth in %.3f of draws; want >= 0.90", share)
	}
	// The total is unbiased (Horvitz-Thompson): its mean over draws is within 3% of the
	// truth (its sd over draws is about 12%, so the mean of 200 has sd under 1%).
	if mean := sumF / draws; math.Abs(mean-float64(pop.falseRemovals)) > 0.03*float64(pop.falseRemovals) {
		t.Errorf("mean false-removal estimate %.1f; truth %d", mean, pop.falseRemovals)
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
	if !math.IsNaN(d.estimate(make([]bool, 25), make([]bool, 25), 0).Recall.Value) {
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
	est := d.estimate([]bool{true, false, false, false, false}, []bool{false, true, false, false, true}, 10)
	if math.Abs(est.Recall.Value-60.0/62) > 1e-12 || est.FalseRemovals.Value != 60+50 {
		t.Errorf("estimate = recall %v, F %v; want %v, 110", est.Recall.Value, est.FalseRemovals.Value, 60.0/62)
	}
	if est.FalseRemovalRate.Value != 11 {
		t.Errorf("false removals per removal = %v; want 110/10", est.FalseRemovalRate.Value)
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
	// Two strata: the duplicates (frame 40 pairs) and the non-duplicates (frame 1000).
	for i := range in.Pairs {
		p := &in.Pairs[i]
		p.Design, p.FrameSize = "draw", 1000
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
	// non-duplicates merged, each standing for 500: F = 500, over 4 removals.
	if got := r.Dataset.Recall.Value; math.Abs(got-0.75) > 1e-12 {
		t.Errorf("dataset recall = %v; want 0.75", got)
	}
	if got := r.Dataset.FalseRemovals.Value; got != 500 {
		t.Errorf("dataset false removals = %v; want 500", got)
	}
	if got := r.Dataset.FalseRemovalRate.Value; got != 125 || r.Dataset.Removals != 4 {
		t.Errorf("false removals per removal = %v over %d; want 125 over 4", got, r.Dataset.Removals)
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
	outcome := func(seed uint64) ([]bool, []bool) {
		r := rand.New(rand.NewPCG(seed, 0))
		acc, fm := make([]bool, len(pairs)), make([]bool, len(pairs))
		for i, p := range pairs {
			acc[i] = pop.dup[p] && r.IntN(3) > 0
			fm[i] = !pop.dup[p] && r.IntN(9) == 0
		}
		return acc, fm
	}
	d1, _ := newDesign(ps, "", 500, 1)
	d2, _ := newDesign(ps, "", 500, 1)
	a1, f1 := outcome(1)
	a2, f2 := outcome(2)
	first := d1.estimate(a1, f1, 100)
	d1.estimate(a2, f2, 100)
	again := d1.estimate(a1, f1, 100)
	d2.estimate(a2, f2, 100)
	fresh := d2.estimate(a1, f1, 100)
	if first != again || first != fresh {
		t.Errorf("estimate of one configuration: %+v, after another %+v, on a design that saw another first %+v", first, again, fresh)
	}
}
