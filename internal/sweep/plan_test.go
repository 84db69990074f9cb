package sweep

import (
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/frame"
)

// planModel is a studio model over J21 bins: bin 20 (J >= 0.95) holds 5,000 pairs of
// which labeled are labeled, nonDup of them not duplicates; bin 12 holds 800 pairs, 40
// labeled, none a duplicate.
func planModel(labeled, nonDup int) *Model {
	m := &Model{Basis: "test", Scheme: frame.J21, Floor: -1}
	m.Bins = make([]ModelBin, frame.J21.Bins())
	for b := range m.Bins {
		m.Bins[b] = ModelBin{Bin: b, Label: frame.J21.Label(b)}
	}
	m.Bins[20].Size, m.Bins[20].Drawable = 5000, 5000
	m.Bins[20].Pooled = Cell{Name: "drawn pairs", Size: 5000, Frame: 5000, Labeled: labeled, NonDup: nonDup}
	m.Bins[12].Size, m.Bins[12].Drawable = 800, 800
	m.Bins[12].Pooled = Cell{Name: "drawn pairs", Size: 800, Frame: 800, Labeled: 40, NonDup: 40}
	newModel(m, DefaultReplicates, 1)
	return m
}

// TestPlanPutsLabelsWhereTheRemovalsAre: a configuration removing 2,000 documents, all
// in the top bin, with 20 labels there: the plan adds labels to that bin only, and with
// them (none a mistake, as now) the Monte Carlo upper end meets the target.
func TestPlanPutsLabelsWhereTheRemovalsAre(t *testing.T) {
	t.Parallel()
	m := planModel(20, 0)
	pairs := make([]int64, frame.J21.Bins())
	pairs[20] = 2000
	p := Profile{Accepted: make([]int64, len(pairs)), Rules: []RuleProfile{{Rule: "earliest", Removals: 2000, Pairs: pairs}}}
	if now := m.Estimate(p).Rules[0].FalseRemovalRate.Hi; now <= 0.01 {
		t.Fatalf("with 20 labels the upper end is already %v", now)
	}
	plan := m.Plan(p, "earliest", 0.01)
	if !plan.Feasible || !plan.Met || len(plan.Bins) != 1 || plan.Bins[0].Bin != 20 || plan.More == 0 {
		t.Fatalf("plan = %+v; want labels in bin 20 that meet 1%%", plan)
	}
	after := planModel(20+plan.More, 0)
	if got := after.Estimate(p).Rules[0].FalseRemovalRate.Hi; got > 0.01 {
		t.Errorf("with the plan's %d more labels the upper end is %v; the plan said %v", plan.More, got, plan.Reaches)
	}
	if before := planModel(20+plan.More*2/3, 0).Estimate(p).Rules[0].FalseRemovalRate.Hi; before <= 0.01 {
		t.Logf("two thirds of the plan would do (%v): the plan is generous", before)
	}
}

// TestPlanInfeasible: when a tenth of the bin's labeled pairs are mistakes, no number of
// labels brings the configuration to 1%, and the plan says so.
func TestPlanInfeasible(t *testing.T) {
	t.Parallel()
	m := planModel(200, 20)
	pairs := make([]int64, frame.J21.Bins())
	pairs[20] = 2000
	p := Profile{Accepted: make([]int64, len(pairs)), Rules: []RuleProfile{{Rule: "earliest", Removals: 2000, Pairs: pairs}}}
	if plan := m.Plan(p, "earliest", 0.01); plan.Feasible || plan.Met {
		t.Errorf("plan = %+v; want infeasible", plan)
	}
}
