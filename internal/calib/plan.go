package calib

import (
	"slices"

	"github.com/dedupstudio/dedupstudio/internal/frame"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
)

// PlanTarget is the false-removal rate the second phase plans for: the dashboard's
// default target (sweep.DefaultTarget).
var PlanTarget = sweep.DefaultTarget.MaxFalseRemovalRate

// Allocation is a draw's second phase: how many labels each bin of exact Jaccard gets,
// and which of the studio's plans asked for them.
type Allocation struct {
	// Counts are the labels per frame.Default bin (campaign.DrawPlan.Counts), summing to
	// the budget.
	Counts []int
	// Plans counts the plans combined: the dashboard's (sweeprun.Analysis.Plan) and
	// those of the candidate configurations; Asked is the most any bin was asked for by
	// them, summed over the bins (more than the budget: scaled down; less: scaled up).
	Plans, Asked int
}

// SecondPlan allocates budget labels over the bins the way a team following the
// studio's labeling plans would, using nothing but what the first sweep computed:
//
//   - the plans: the dashboard's own (for each sweep and keeper rule, the plan of the
//     recommendation when it does not meet target: the closest configuration), and
//     sweep.Model.Plan for every configuration and keeper rule that is a candidate for
//     the target, its point estimate of false removals per removal at or under target
//     and its upper end over it; plans that no number of labels would meet
//     (Feasible false) are left out;
//   - each bin gets the most any plan asks of it (a label in a bin speaks for every
//     configuration that removes pairs there, so the plans' demands overlap, they do
//     not add up);
//   - the result is scaled to the budget in proportion (largest remainders), so a
//     draw always uses its labels; with no plan at all (every candidate meets the target
//     already, or there is none) the budget is spread evenly over the bins.
//
// Only the plans' bins matter: they are where the candidates remove documents, which is
// where labels lower an upper end of false removals (the issue: "put the labels where
// the removals are").
func SecondPlan(analyses []*sweeprun.Analysis, budget int, target float64) Allocation {
	bins := frame.Default.Bins()
	ask := make([]int, bins)
	plans := 0
	take := func(p sweep.LabelPlan) {
		if !p.Met || p.More == 0 {
			return
		}
		plans++
		for b, n := range p.Counts(bins) {
			ask[b] = max(ask[b], n)
		}
	}
	seen := map[int64]bool{} // sweeps whose candidates were planned
	for _, a := range analyses {
		if a.Model == nil || len(a.Model.Bins) != bins {
			continue
		}
		if a.Plan != nil {
			take(*a.Plan)
		}
		if seen[a.Sweep.ID] {
			continue
		}
		seen[a.Sweep.ID] = true // a sweep's candidates once: each result lists every rule
		for _, r := range a.Results {
			if r.Dataset == nil || r.Profile == nil {
				continue
			}
			for _, re := range r.Dataset.Rules {
				rate := re.FalseRemovalRate
				if re.Removals == 0 || rate.Value > target || rate.Hi <= target {
					continue
				}
				take(a.Model.Plan(*r.Profile, re.Rule, target))
			}
		}
	}
	out := Allocation{Plans: plans}
	for _, n := range ask {
		out.Asked += n
	}
	if out.Asked == 0 {
		for b := range ask {
			ask[b] = 1
		}
	}
	out.Counts = apportion(ask, budget)
	return out
}

// apportion splits total in proportion to weights (largest remainders, ties to the
// lower bin); weights that sum to 0 get nothing.
func apportion(weights []int, total int) []int {
	out := make([]int, len(weights))
	sum := 0
	for _, w := range weights {
		sum += w
	}
	if sum == 0 || total <= 0 {
		return out
	}
	type rem struct{ b, r int }
	rems := make([]rem, 0, len(weights))
	given := 0
	for b, w := range weights {
		q := w * total
		out[b] = q / sum
		given += out[b]
		rems = append(rems, rem{b, q % sum})
	}
	slices.SortStableFunc(rems, func(x, y rem) int { return y.r - x.r })
	for i := 0; given < total; i++ {
		out[rems[i].b]++
		given++
	}
	return out
}
