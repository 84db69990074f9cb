package calib

import (
	"slices"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/frame"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
)

// planModel is a model of the studio's bins whose every bin holds 10 labels, all
// duplicates, and 1,000 drawable pairs; Restore draws its replicates as a stored
// sweep's are.
func planModel() *sweep.Model {
	m := &sweep.Model{Scheme: frame.Default, Replicates: 200}
	for b := range frame.Default.Bins() {
		m.Bins = append(m.Bins, sweep.ModelBin{Bin: b, Label: frame.Default.Label(b), Size: 1000, Drawable: 1000,
			Pooled: sweep.Cell{Name: "drawn pairs", Size: 1000, Labeled: 10, Frame: 1000}})
	}
	return m.Restore(1)
}

// candidate is a result whose only rule removes pairs in the given bins, with the
// model's estimate of them.
func candidate(m *sweep.Model, pairs map[int]int64, identical int) sweeprun.Result {
	rp := sweep.RuleProfile{Rule: "earliest", Pairs: make([]int64, frame.Default.Bins()), Identical: identical, Removals: identical}
	for b, n := range pairs {
		rp.Pairs[b] = n
		rp.Removals += int(n)
	}
	p := sweep.Profile{Accepted: make([]int64, frame.Default.Bins()), Rules: []sweep.RuleProfile{rp}}
	e := m.Estimate(p)
	var r sweeprun.Result
	r.Profile, r.Dataset = &p, &e
	return r
}

func TestSecondPlan(t *testing.T) {
	t.Parallel()
	m := planModel()
	// A candidate: no false removal in its labels, upper end over 3% (10 labels a bin).
	cand := candidate(m, map[int]int64{18: 300, 19: 300}, 400)
	if re := cand.Dataset.Rules[0].FalseRemovalRate; re.Value > CandidateRate || re.Hi <= PlanTarget {
		t.Fatalf("the candidate's rate %+v: want a point estimate <= 1%% and an upper end over 3%%", re)
	}
	// Not a candidate: its removals lie in a bin whose labels are all non-duplicates, a
	// point estimate over 1%.
	m.Bins[5].Pooled.NonDup = 10
	m = m.Restore(1)
	notCand := candidate(m, map[int]int64{5: 100}, 0)
	if notCand.Dataset.Rules[0].FalseRemovalRate.Value <= CandidateRate {
		t.Fatal("the second result's point estimate meets the target; want it over")
	}
	a := &sweeprun.Analysis{Sweep: sweeprun.Sweep{ID: 1}, Model: m, Results: []sweeprun.Result{cand, notCand}}
	got := SecondPlan([]*sweeprun.Analysis{a, a}, 500, true)
	if got.Plans != 1 || sum(got.Counts) != 500 || len(got.Counts) != frame.Default.Bins() {
		t.Fatalf("SecondPlan = %+v; want the candidate's one plan (planned once for two analyses of one sweep), 500 labels over %d bins", got, frame.Default.Bins())
	}
	for b, n := range got.Counts {
		if (b == 18 || b == 19) != (n > 0) {
			t.Errorf("bin %s gets %d labels; want labels only where the candidate removes pairs (bins 18 and 19)", frame.Default.Label(b), n)
		}
	}
	plan := m.Plan(*cand.Profile, "earliest", PlanTarget)
	if got.Asked != plan.More {
		t.Errorf("asked %d; want the plan's %d", got.Asked, plan.More)
	}
	// Without a plan the budget is spread evenly.
	none := SecondPlan([]*sweeprun.Analysis{{Sweep: sweeprun.Sweep{ID: 2}, Model: m, Results: []sweeprun.Result{notCand}}}, 42, true)
	if none.Plans != 0 || sum(none.Counts) != 42 || slices.Max(none.Counts)-slices.Min(none.Counts) > 1 {
		t.Errorf("SecondPlan without a candidate = %+v; want 42 labels evenly over the bins", none)
	}
}

func TestApportion(t *testing.T) {
	t.Parallel()
	cases := []struct {
		w     []int
		total int
		want  []int
	}{
		{[]int{1, 1, 1}, 10, []int{4, 3, 3}},
		{[]int{0, 3, 1}, 8, []int{0, 6, 2}},
		{[]int{2, 0, 1}, 1, []int{1, 0, 0}},
		{[]int{0, 0}, 5, []int{0, 0}},
		{[]int{5, 5}, 0, []int{0, 0}},
	}
	for _, tc := range cases {
		if got := apportion(tc.w, tc.total); !slices.Equal(got, tc.want) {
			t.Errorf("apportion(%v, %d) = %v; want %v", tc.w, tc.total, got, tc.want)
		}
	}
}
