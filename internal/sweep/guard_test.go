package sweep

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/frame"
)

// rampBins are J21 bins of a population like internal/calib's under the ramp 0.6~0.15:
// pairs in the bin and its true share of duplicates (rising from 0 at J = 0.45 to 1 at
// 0.75; the bin's mean).
var rampBins = []struct {
	bin   int
	size  int
	share float64
}{
	{9, 1298, 0}, {10, 793, 0.083}, {11, 1008, 0.25}, {12, 709, 0.417}, {13, 470, 0.583}, {14, 593, 0.75},
	{15, 729, 0.917}, {16, 748, 1}, {17, 348, 1}, {18, 1600, 1}, {19, 2412, 1}, {20, 264, 1},
}

// rampModel is a studio model of rampBins whose labels are the first perBin[b] pairs of
// order[b], a random order of bin b's pairs, each labeled by its truth (pairs below
// the bin's count of duplicates are its duplicates).
func rampModel(order map[int][]int, perBin map[int]int, seed uint64) *Model {
	m := &Model{Basis: "test", Scheme: frame.J21, Floor: -1}
	m.Bins = make([]ModelBin, frame.J21.Bins())
	for b := range m.Bins {
		m.Bins[b] = ModelBin{Bin: b, Label: frame.J21.Label(b)}
	}
	for _, rb := range rampBins {
		dups := int(math.Round(rb.share * float64(rb.size)))
		n := min(perBin[rb.bin], rb.size)
		nonDup := 0
		for _, i := range order[rb.bin][:n] {
			if i >= dups {
				nonDup++
			}
		}
		m.Bins[rb.bin].Size, m.Bins[rb.bin].Drawable = float64(rb.size), int64(rb.size)
		m.Bins[rb.bin].Pooled = Cell{Name: "drawn pairs", Size: float64(rb.size), Frame: int64(rb.size), Labeled: n, NonDup: nonDup}
	}
	newModel(m, DefaultReplicates, seed)
	return m
}

// rampProfile accepts every pair from J >= 0.5 up (exact Jaccard verification at 0.5)
// and returns it with its true recall: the duplicates of bin [0.45, 0.5) are what it
// misses.
func rampProfile() (Profile, float64) {
	p := Profile{Accepted: make([]int64, frame.J21.Bins())}
	var acc, all float64
	for _, rb := range rampBins {
		dups := math.Round(rb.share * float64(rb.size))
		all += dups
		if rb.bin >= 11 {
			p.Accepted[rb.bin] = int64(rb.size)
			acc += dups
		}
	}
	return p, acc / all
}

// TestRecallGuardBin: when the labels of bin [0.45, 0.5) happen to see none of its
// duplicates (66 of 793 pairs, 8%), the floor lands on [0.5, 0.55) and a configuration
// accepting everything from 0.5 up had recall [1, 1]; the truth, counted by hand, is
// 0.9882. With the guard bin recall's interval holds it and its point stays 1.
func TestRecallGuardBin(t *testing.T) {
	t.Parallel()
	p, truth := rampProfile()
	// Labels: 10 in every bin, and in bin [0.45, 0.5) none of its duplicates.
	m := &Model{Basis: "test", Scheme: frame.J21, Floor: -1}
	m.Bins = make([]ModelBin, frame.J21.Bins())
	for b := range m.Bins {
		m.Bins[b] = ModelBin{Bin: b, Label: frame.J21.Label(b)}
	}
	var dupsAbove, dupsGuard float64
	for _, rb := range rampBins {
		dups := math.Round(rb.share * float64(rb.size))
		nonDup := int(math.Round((1 - rb.share) * 10))
		if rb.bin == 10 {
			nonDup = 10
			dupsGuard = dups
		} else if rb.bin > 10 {
			dupsAbove += dups
		}
		m.Bins[rb.bin].Size, m.Bins[rb.bin].Drawable = float64(rb.size), int64(rb.size)
		m.Bins[rb.bin].Pooled = Cell{Name: "drawn pairs", Size: float64(rb.size), Frame: int64(rb.size), Labeled: 10, NonDup: nonDup}
	}
	newModel(m, DefaultReplicates, 1)
	if m.Floor != 11 {
		t.Fatalf("floor %d; want 11", m.Floor)
	}
	if want := dupsAbove / (dupsAbove + dupsGuard); math.Abs(truth-want) > 1e-12 {
		t.Fatalf("true recall %v; by hand %v", truth, want)
	}
	e := m.Estimate(p)
	r := e.Recall
	if r.Value != 1 {
		t.Errorf("recall %+v; want the point estimate 1 (the guard's labels saw no duplicate)", r)
	}
	if !(r.Lo <= truth && truth <= r.Hi) {
		t.Errorf("recall %+v; want an interval that holds the true %v", r, truth)
	}
	// Not as wide as the answer: the guard's zero-event bound (10 labels: 31% of 793 pairs)
	// is all it may lose.
	if lim := dupsAbove / (dupsAbove + 0.31*793 + 1); r.Lo < lim-0.01 {
		t.Errorf("recall %+v; want a lower end near %v, not lower", r, lim)
	}
	if g := m.Guard(); g != 10 {
		t.Errorf("guard %d; want 10", g)
	}
	// BelowFloor is what lies under the guard: bin [0.4, 0.45).
	if e.BelowFloor.Hi <= 0 || e.BelowFloor.Hi > 1298 {
		t.Errorf("below the guard %+v; want (0, 1298]", e.BelowFloor)
	}
}

// TestRecallCoverageAtARamp: 400 draws of labels from rampBins in two phases, as a
// campaign labels: 10 in every bin, then 60 more in each bin from J >= 0.7 up (where the
// false-removal plans put them) and the guard bin's GuardPlan. Recall's 95% interval
// must hold the true recall in at least 93% of draws (the bar; without the guard
// bin about 59%), its point estimate be within 0.005 of the truth on average, and its
// mean width stay under 0.04 (0.030 without the guard: the guard's labels pay for most
// of what it adds).
func TestRecallCoverageAtARamp(t *testing.T) {
	if testing.Short() {
		t.Skip("800 models of 1,000 replicates: -short skips it")
	}
	t.Parallel()
	p, truth := rampProfile()
	rng := rand.New(rand.NewPCG(23, 3))
	const draws = 400
	covered, floorHigh, guardLabels := 0, 0, 0
	var sum, width float64
	for d := range draws {
		order := map[int][]int{}
		per := map[int]int{}
		for _, rb := range rampBins {
			order[rb.bin] = rng.Perm(rb.size)
			per[rb.bin] = 10
		}
		first := rampModel(order, per, uint64(d))
		if first.Floor > 10 {
			floorHigh++
		}
		for _, rb := range rampBins {
			if rb.bin >= 15 {
				per[rb.bin] += 60
			}
		}
		for _, g := range first.GuardPlan(DefaultGuardShare) {
			per[g.Bin] += g.More
			guardLabels += g.More
		}
		r := rampModel(order, per, uint64(d)).Estimate(p).Recall
		if r.Lo <= truth && truth <= r.Hi {
			covered++
		}
		sum += r.Value
		width += r.Hi - r.Lo
	}
	cov, bias, w := float64(covered)/draws, sum/draws-truth, width/draws
	t.Logf("true recall %.4f: coverage %.3f, bias %+.4f, mean width %.4f; floor above [0.45, 0.5) after the first phase in %d of %d draws; %.1f guard labels a draw",
		truth, cov, bias, w, floorHigh, draws, float64(guardLabels)/draws)
	if cov < 0.93 {
		t.Errorf("coverage %.3f; want >= 0.93", cov)
	}
	if math.Abs(bias) > 0.005 {
		t.Errorf("bias %+.4f; want within ±0.005", bias)
	}
	if w > 0.04 {
		t.Errorf("mean width %.4f; want under 0.04 (an interval as wide as the answer always covers)", w)
	}
}

// TestGuardAdvice: the dashboard's advice for recall's guard bin says what its labels
// cannot rule out (10 labels, none a duplicate: 1-0.025^(1/10) = 30.85% of its 793
// pairs, under the floor bin's cap) and asks for the labels GuardPlan does; labeled so,
// with no duplicate among them, the guard bin needs no more.
func TestGuardAdvice(t *testing.T) {
	t.Parallel()
	build := func(guardLabels, floorLabels int) *Model {
		m := &Model{Basis: "test", Scheme: frame.J21, Floor: -1}
		m.Bins = make([]ModelBin, frame.J21.Bins())
		for b := range m.Bins {
			m.Bins[b] = ModelBin{Bin: b, Label: frame.J21.Label(b)}
		}
		for _, rb := range rampBins {
			n := 10
			switch rb.bin {
			case 10:
				n = guardLabels
			case 11:
				n = floorLabels
			}
			nonDup := int(math.Round((1 - rb.share) * float64(n)))
			if rb.bin == 10 {
				nonDup = n // the guard's labels see none of its duplicates
			}
			m.Bins[rb.bin].Size, m.Bins[rb.bin].Drawable = float64(rb.size), int64(rb.size)
			m.Bins[rb.bin].Pooled = Cell{Name: "drawn pairs", Size: float64(rb.size), Frame: int64(rb.size), Labeled: n, NonDup: nonDup}
		}
		newModel(m, DefaultReplicates, 1)
		return m
	}
	m := build(10, 10)
	a := m.GuardAdvice(DefaultGuardShare)
	if a == nil {
		t.Fatal("no advice for a guard bin of 10 labels")
	}
	if a.Bin != 10 || a.Label != frame.J21.Label(10) || a.FloorLabel != frame.J21.Label(11) || a.Labeled != 10 || a.Pairs != 793 {
		t.Errorf("advice %+v; want guard bin 10 (10 labels, 793 pairs) under floor bin 11", a)
	}
	if want := (1 - math.Pow(0.025, 0.1)) * 793; math.Abs(a.Upper-want) > 0.03*793 {
		t.Errorf("upper %.1f duplicates in the guard bin; want about %.1f (the zero-event bound of 10 labels)", a.Upper, want)
	}
	var d float64
	for _, rb := range rampBins {
		if rb.bin >= 11 {
			d += float64(rb.size) * (1 - m.point[rb.bin])
		}
	}
	if math.Abs(a.Share-a.Upper/d) > 1e-12 {
		t.Errorf("share %v; want upper over the duplicates from the floor up, %v", a.Share, a.Upper/d)
	}
	if a.Whole != "" {
		t.Errorf("advice says the plan takes every pair of %s; it asks %d of bins of hundreds", a.Whole, a.More)
	}
	counts := a.Counts(frame.J21.Bins())
	if counts[10] == 0 || counts[11] == 0 || counts[10]+counts[11] != a.More {
		t.Fatalf("plan counts %v (more %d); want labels in bins 10 and 11 summing to more", counts, a.More)
	}
	// The guard labeled as asked, none a duplicate: within the share, no advice.
	after := build(10+counts[10], 10+counts[11])
	if after.Guard() == 10 {
		if b := after.GuardAdvice(DefaultGuardShare); b != nil {
			t.Errorf("after %d more labels in the guard bin, still advice %+v", counts[10], b)
		}
	}
	// Recall's lower end moves by about what the advice says the guard costs.
	p, _ := rampProfile()
	lo := m.Estimate(p).Recall.Lo
	if drop := 1 - lo; drop < a.Share/(1+a.Share)*0.7 || drop > a.Share*1.3 {
		t.Errorf("recall's lower end %.4f; the advice says the guard costs about %.4f of it", lo, a.Share)
	}
}
