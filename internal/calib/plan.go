package calib

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/frame"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
)

// The second phase's candidates and aim: configurations whose point estimate of false
// removals per removal meets CandidateRate (the dashboard's default target) but whose
// upper end is over PlanTarget (the useful upper end), planned to PlanTarget.
var (
	CandidateRate = sweep.DefaultTarget.MaxFalseRemovalRate
	PlanTarget    = TightUpper
)

// Allocation is a draw's second phase: how many labels each bin of exact Jaccard gets,
// and which of the studio's plans asked for them.
type Allocation struct {
	// Counts are the labels per frame.Default bin (campaign.DrawPlan.Counts), summing to
	// the budget.
	Counts []int
	// Plans counts the distinct plans combined; Asked is the most any of them asked of
	// a bin, summed over the bins (more than the budget: scaled down; less: scaled up).
	// Guard is what recall's guard plans asked (sweep.Model.GuardPlan, one a sweep).
	Plans, Asked, Guard int
}

// SecondPlan allocates budget labels over the bins the way a team that wants a usable
// bound on every candidate configuration would follow the studio's labeling plans,
// using nothing but what the first sweep computed (the results and the model of each
// sweep's analysis, as the dashboard reads them; nothing of the truth):
//
//   - the candidates are every configuration and keeper rule whose point estimate of
//     false removals per removal meets CandidateRate (1%) and whose upper end is over
//     PlanTarget (3%);
//   - each gets sweep.Model.Plan to PlanTarget (configurations with the same removal
//     profile share one plan); plans that do not reach it (Met false) are left out.
//     The dashboard's own plan aims at its target, 1%, for one configuration: that asks
//     900-1,200 labels of a configuration here, more than a draw's budget, and a mix of
//     such plans scaled to the budget follows the configurations that need the most;
//   - a plan's labels in a bin whose every label so far says "not a duplicate" are left
//     out: that bin's upper confidence distribution is 1 already and no label there
//     lowers an upper end (the planner's greedy step puts labels there once the useful
//     bins are spent on its normal approximation; a person reading the plan would skip
//     them);
//   - with guard (Options.GuardPlans), recall's lowest bins get what
//     sweep.Model.GuardPlan asks (DefaultGuardShare): the guard bin under the floor,
//     whose labels saw no duplicate, and the floor bin, so that the duplicates a floor
//     one bin too high would leave out cannot widen recall's interval by more than about
//     half a percent. Off by default: within the budget of a draw those labels come
//     out of the false-removal plans (at tau 0.5 two rows' upper ends went from useful
//     in every draw to none), and at the ramp they make the bins under 0.55 precise
//     enough to show what the within-bin assumption costs char 5-shingle
//     configurations (their recall is under-estimated by about 0.0015: within a bin
//     they accept the more similar pairs, which are more often duplicates), whose
//     coverage fell from 0.93 to 0.77-0.80;
//   - each bin gets the most any plan asks of it (a label in a bin speaks for every
//     configuration that removes pairs there, so the plans' demands overlap, they do not
//     add up), and the result is scaled to the budget in proportion (largest
//     remainders), so a draw always uses its labels; with no plan at all the budget is
//     spread evenly over the bins.
func SecondPlan(analyses []*sweeprun.Analysis, budget int, guard bool) Allocation {
	bins := frame.Default.Bins()
	ask := make([]int, bins)
	planned := map[string]bool{}
	out := Allocation{}
	for _, a := range analyses {
		m := a.Model
		if m == nil || len(m.Bins) != bins {
			continue
		}
		if guard {
			for _, g := range m.GuardPlan(sweep.DefaultGuardShare) {
				ask[g.Bin] = max(ask[g.Bin], g.More)
				out.Guard += g.More
			}
		}
		for _, r := range a.Results {
			if r.Dataset == nil || r.Profile == nil {
				continue
			}
			for i, re := range r.Dataset.Rules {
				rate := re.FalseRemovalRate
				if re.Removals == 0 || rate.Value > CandidateRate || rate.Hi <= PlanTarget || i >= len(r.Profile.Rules) {
					continue
				}
				rp := r.Profile.Rules[i]
				key := profileKey(a.Sweep.ID, rp)
				if planned[key] {
					continue
				}
				planned[key] = true
				p := m.Plan(sweep.Profile{Rules: []sweep.RuleProfile{rp}}, rp.Rule, PlanTarget)
				if !p.Met || p.More == 0 {
					continue
				}
				out.Plans++
				for b, n := range p.Counts(bins) {
					if mb := m.Bins[b]; mb.Labeled > 0 && mb.NonDup == mb.Labeled {
						continue // every label says not a duplicate: more cannot lower an upper end
					}
					ask[b] = max(ask[b], n)
				}
			}
		}
	}
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

// profileKey names a removal profile within one sweep: configurations that remove the
// same pairs per bin get the same plan.
func profileKey(sweepID int64, rp sweep.RuleProfile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %d %d", sweepID, rp.Removals, rp.Identical)
	for _, n := range rp.Pairs {
		fmt.Fprintf(&b, " %d", n)
	}
	return b.String()
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
