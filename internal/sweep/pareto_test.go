package sweep

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

func point(recall, frr float64) Headline {
	return Headline{Basis: DatasetBasis, Recall: Interval{Value: recall}, FalseRemovalRate: Interval{Value: frr}}
}

func TestFront(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		points []Headline
		want   []bool
	}{
		{"staircase", []Headline{point(0.5, 0.01), point(0.7, 0.02), point(0.9, 0.05), point(0.6, 0.03), point(0.95, 0.2)},
			[]bool{true, true, true, false, true}},
		{"same rate, lower recall is dominated", []Headline{point(0.8, 0.02), point(0.7, 0.02)}, []bool{true, false}},
		{"same recall, higher rate is dominated", []Headline{point(0.8, 0.03), point(0.8, 0.02)}, []bool{false, true}},
		{"identical points are both on it", []Headline{point(0.8, 0.02), point(0.8, 0.02), point(0.5, 0.5)}, []bool{true, true, false}},
		{"undefined figures are not", []Headline{point(math.NaN(), 0.01), point(0.5, math.NaN()), point(0.4, 0.1)}, []bool{false, false, true}},
		{"zero rate", []Headline{point(0.3, 0), point(0.3, 0.001), point(0.9, 0.001)}, []bool{true, false, true}},
		{"empty", nil, []bool{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Front(c.points); !slices.Equal(got, c.want) {
				t.Errorf("Front = %v; want %v", got, c.want)
			}
		})
	}
}

func result(recall, lo, hi, frr, frrHi float64) Result {
	var r Result
	r.Removals = 100
	r.Dataset = &Estimate{Recall: Interval{recall, lo, hi}, FalseRemovalRate: Interval{frr, frr / 2, frrHi}, Removals: 100, Unit: FalseRemovalUnit}
	return r
}

func TestRecommend(t *testing.T) {
	t.Parallel()
	rs := []Result{
		result(0.95, 0.9, 0.97, 0.008, 0.02), // best recall, but the upper end is 2%
		result(0.90, 0.85, 0.93, 0.004, 0.009),
		result(0.92, 0.88, 0.95, 0.005, 0.0099),
		result(0.80, 0.7, 0.85, 0.001, 0.002),
	}
	rec, err := Recommend(rs, DefaultTarget)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Index != 2 || !rec.Met {
		t.Errorf("Recommend = %d (met %v); want 2, met", rec.Index, rec.Met)
	}
	if !strings.Contains(rec.Reason, "highest estimated recall") || !strings.Contains(rec.Reason, "upper end") {
		t.Errorf("Reason = %q", rec.Reason)
	}
	rec, _ = Recommend(rs, Target{MaxFalseRemovalRate: 0.01, PointEstimate: true})
	if rec.Index != 0 {
		t.Errorf("Recommend on point estimates = %d; want 0", rec.Index)
	}
	// Nothing qualifies: the fallback is the lowest upper end, and the reason says so.
	rec, _ = Recommend(rs, Target{MaxFalseRemovalRate: 0.001})
	if rec.Index != 3 || rec.Met || !strings.Contains(rec.Reason, "no configuration") {
		t.Errorf("Recommend(0.1%%) = %+v; want the fallback 3, not met, said so", rec)
	}
	// Ties on recall go to the lower rate, then fewer candidates.
	tie := []Result{result(0.9, 0.8, 0.95, 0.005, 0.008), result(0.9, 0.8, 0.95, 0.005, 0.006), result(0.9, 0.8, 0.95, 0.005, 0.006)}
	tie[1].CandidatesPerDoc, tie[2].CandidatesPerDoc = 20, 10
	if rec, _ := Recommend(tie, DefaultTarget); rec.Index != 2 {
		t.Errorf("Recommend(ties) = %d; want 2", rec.Index)
	}
	// Labeled basis wording.
	var lab Result
	lab.Recall, lab.FalseMerges, lab.Removals = NewRate(9, 10), NewRate(0, 500), 12
	if rec, _ := Recommend([]Result{lab}, DefaultTarget); !rec.Met || !strings.Contains(rec.Reason, "labeled") {
		t.Errorf("Recommend(labeled) = %+v", rec)
	}
	if _, err := Recommend([]Result{{}}, DefaultTarget); !errors.Is(err, ErrNothingToRecommend) {
		t.Errorf("Recommend(no labels) = %v; want ErrNothingToRecommend", err)
	}
}

// TestRecommendNothingRemoved: a configuration that removes nothing has no false
// removals, an interval of 0–0, and is never the recommendation.
func TestRecommendNothingRemoved(t *testing.T) {
	t.Parallel()
	none := result(0, 0, 0, 0, 0)
	none.Removals, none.Dataset.Removals = 0, 0
	rs := []Result{none, result(0.9, 0.8, 0.95, 0.05, 0.2)}
	rec, err := Recommend(rs, DefaultTarget)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Met || rec.Index != 1 || !strings.Contains(rec.Reason, "not enough labels to bound false removals at 1%") {
		t.Errorf("Recommend = %+v; want not met, the closest configuration 1 (not the one removing nothing), saying there are not enough labels", rec)
	}
}

// TestAdvise: with no configuration under the target at the upper end, Advise names the
// configuration to aim for, the strata that need labels and the tightest target met now.
func TestAdvise(t *testing.T) {
	t.Parallel()
	d := Design{Name: "d", Strata: []Stratum{
		{Name: "big", FrameSize: 10000, Labeled: 20, Unseen: zeroEventBound(10000, 20, unseenAlpha)},
		{Name: "small", FrameSize: 400, Labeled: 20, Unseen: zeroEventBound(400, 20, unseenAlpha)},
		{Name: "census", FrameSize: 30, Labeled: 30},
		{Name: "seen", FrameSize: 500, Labeled: 20, Unseen: zeroEventBound(500, 20, unseenAlpha)},
	}}
	est := func(recall, value, sampled float64, removals int, seen ...int) Result {
		var r Result
		r.Removals = removals
		e := &Estimate{Recall: Interval{recall, recall - 0.1, recall + 0.05}, Removals: removals, Unit: FalseRemovalUnit, Sampled: sampled, Seen: seen}
		for h, s := range d.Strata {
			if !slices.Contains(seen, h) {
				e.Unseen += float64(s.Unseen)
			}
		}
		rr := float64(removals)
		e.FalseRemovals = Interval{value * rr, 0, min(rr, sampled+e.Unseen)}
		e.FalseRemovalRate = Interval{value, 0, e.FalseRemovals.Hi / rr}
		r.Dataset = e
		return r
	}
	rs := []Result{
		est(0.95, 0.05, 40, 1000, 3), // loose: its point estimate is 5%
		est(0.80, 0.004, 3, 1000, 3), // the one to aim for
		est(0.60, 0, 0, 200),
	}
	sf, ok := Advise(rs, d, DefaultTarget)
	if !ok {
		t.Fatal("Advise = not applicable; want a shortfall")
	}
	// Every upper end is capped at 100% by the unseen strata; the first is the lowest.
	if sf.Index != 1 || !sf.Reachable || sf.LowestIndex != 0 || sf.Lowest != 1 {
		t.Errorf("Advise = %+v; want configuration 1, reachable, lowest upper end 100%% (configuration 0)", sf)
	}
	// Budget 0.01·1000 - 3 = 7 false removals for the unseen strata; n_h = 3.69·sqrt(N_h)·(100+20)/7.
	want := []StratumNeed{{"big", 10000, 20, 6324 - 20}, {"small", 400, 20, 400 - 20}}
	if !slices.Equal(sf.Needs, want) {
		t.Errorf("needs = %+v; want %+v", sf.Needs, want)
	}
	// The clustering capped "big" at 0.5 false removals, under a tenth of the budget (7):
	// it needs no labels, and the budget of the others is 6.5; n_h = 3.69·sqrt(400)·20/6.5
	// for "small". Capped at 2 (over a tenth) it is left to labels as before.
	capped := est(0.80, 0.004, 3, 1000, 3)
	e := capped.Dataset
	e.Unseen, e.Capped, e.CappedBins = e.Unseen-float64(d.Strata[0].Unseen)+0.5, float64(d.Strata[0].Unseen)-0.5, 1
	e.Caps = []BinCap{{Bin: 0, Cap: 0.5, Bound: float64(d.Strata[0].Unseen), Strata: []int{0}}}
	e.FalseRemovals.Hi = min(1000, 3+e.Unseen)
	e.FalseRemovalRate.Hi = e.FalseRemovals.Hi / 1000
	saved := rs[1]
	rs[1] = capped
	sf, _ = Advise(rs, d, DefaultTarget)
	if want := []StratumNeed{{"small", 400, 20, 228 - 20}}; sf.Index != 1 || !sf.Reachable || !slices.Equal(sf.Needs, want) {
		t.Errorf("Advise with big capped = %+v; want configuration 1 needing %+v", sf, want)
	}
	e.Caps[0].Cap = 2
	if sf, _ = Advise(rs, d, DefaultTarget); !slices.Equal(sf.Needs, want) {
		t.Errorf("Advise with big capped over a tenth of the budget: needs %+v; want %+v", sf.Needs, want)
	}
	rs[1] = saved
	// The strata with false merges alone exceed the target: labels elsewhere cannot help.
	// (A reachable configuration of lower recall is preferred to it; here there is none.)
	rs[1], rs[2] = est(0.80, 0.004, 12, 1000, 3), est(0.60, 0.5, 0, 200)
	if sf, _ = Advise(rs, d, DefaultTarget); sf.Index != 1 || sf.Reachable || len(sf.Needs) != 0 {
		t.Errorf("Advise with the seen strata over the target = %+v; want configuration 1, unreachable", sf)
	}
	rs[2] = est(0.60, 0, 0, 200)
	if sf, _ = Advise(rs, d, DefaultTarget); sf.Index != 2 || !sf.Reachable {
		t.Errorf("Advise = %+v; want the reachable configuration 2 over the unreachable 1", sf)
	}
	// A target some configuration meets needs no advice.
	if _, ok := Advise(rs, d, Target{MaxFalseRemovalRate: 1}); ok {
		t.Errorf("Advise at 100%% = applicable; want not")
	}
}
