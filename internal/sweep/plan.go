package sweep

import (
	"math"
	"slices"
)

// PlanBin is one bin of a labeling plan.
type PlanBin struct {
	Bin     int
	Label   string
	Removal int64 // the configuration's (removed, keeper) pairs in the bin
	Labeled int   // labels the bin has
	More    int   // labels the plan adds
	// Drawable is how many of the bin's pairs a draw can still choose from.
	Drawable int64
}

// LabelPlan says how many more labels, in which bins, would bring a configuration's
// upper end of false removals (under one keeper rule) to a target, if the new labels
// show each bin's share of non-duplicates as it stands.
type LabelPlan struct {
	Rule string
	Bins []PlanBin // the bins that get labels, most first
	More int       // labels in all
	// Now, Reaches and Limit are upper ends of the false-removal rate: with the labels
	// there are (about; the page shows the exact one), with the plan's, and with every
	// drawable pair of the bins labeled (what labels alone can reach).
	Now, Reaches, Limit float64
	// Met: the plan reaches the target; Feasible: some number of labels would (Limit
	// under the target). A plan can be feasible and not met when the labels it would
	// need pass MaxPlan.
	Met, Feasible bool
	Target        float64
}

// MaxPlan bounds the labels a plan proposes.
const MaxPlan = 20_000

// Plan returns the labeling plan for a configuration's profile under keeper rule (the
// first when ""), aiming at target false removals per removal. It allocates labels
// greedily, a few at a time, to the bin where they lower the upper end most per label,
// on a normal approximation of the upper end (the Monte Carlo's, which the sweep shows,
// differs by a little); new labels are assumed to show their bin's share as it stands
// (a bin without labels: its neighbours'). False removals come from the bins where a
// configuration removes pairs, so that is where the labels go.
func (m *Model) Plan(p Profile, rule string, target float64) LabelPlan {
	var rp RuleProfile
	for i, r := range p.Rules {
		if i == 0 || r.Rule == rule {
			rp = r
		}
		if r.Rule == rule {
			break
		}
	}
	plan := LabelPlan{Rule: rp.Rule, Target: target}
	if rp.Removals == 0 {
		plan.Met, plan.Feasible = true, true
		return plan
	}
	nb := len(m.Bins)
	share := make([]float64, nb)
	for b := range m.Bins {
		share[b] = m.shareFor(b)
	}
	s := make([]float64, nb)
	n := make([]float64, nb)
	room := make([]float64, nb)
	for b := range nb {
		if b < len(rp.Pairs) {
			s[b] = float64(rp.Pairs[b])
		}
		n[b] = float64(m.Bins[b].Labeled)
		room[b] = math.Max(float64(m.Bins[b].Drawable)-n[b], 0)
	}
	R := float64(rp.Removals)
	// The greedy allocation runs on the normal approximation; its stopping point is
	// corrected by the ratio of the Monte Carlo upper end (what the page shows) to the
	// approximation, and the plan's end is checked with the Monte Carlo itself.
	approxNow := approxUpper(s, n, share)
	plan.Now = m.falseRemovals(rp).FalseRemovals.Hi / R
	scale := 1.0
	if approxNow > 0 {
		scale = plan.Now * R / approxNow
	}
	inf := make([]float64, nb)
	for b := range inf {
		inf[b] = math.Inf(1)
	}
	plan.Limit = approxUpper(s, inf, share) / R
	plan.Feasible = plan.Limit <= target
	more := make([]float64, nb)
	total := 0
	aim := target
	for round := 0; round < 6; round++ {
		upper := approxUpper(s, n, share) * scale
		for upper/R > aim && total < MaxPlan {
			step := float64(max(5, total/20))
			best, gain := -1, 0.0
			for b := range nb {
				if s[b] == 0 || room[b]-more[b] < 1 {
					continue
				}
				add := math.Min(step, room[b]-more[b])
				n[b] += add
				u := approxUpper(s, n, share) * scale
				n[b] -= add
				if g := (upper - u) / add; g > gain {
					best, gain = b, g
				}
			}
			if best < 0 {
				break
			}
			add := math.Min(step, room[best]-more[best])
			more[best] += add
			n[best] += add
			total += int(add)
			upper = approxUpper(s, n, share) * scale
		}
		plan.Reaches = m.withLabels(more, share).falseRemovals(rp).FalseRemovals.Hi / R
		if plan.Reaches <= target || total >= MaxPlan || !plan.Feasible {
			break
		}
		aim *= 0.85 // the approximation was optimistic: aim lower and check again
	}
	plan.Met = plan.Reaches <= target
	for b := range nb {
		if more[b] > 0 {
			plan.Bins = append(plan.Bins, PlanBin{Bin: b, Label: m.Bins[b].Label, Removal: int64(s[b]), Labeled: m.Bins[b].Labeled,
				More: int(more[b]), Drawable: int64(room[b])})
			plan.More += int(more[b])
		}
	}
	slices.SortStableFunc(plan.Bins, func(x, y PlanBin) int { return y.More - x.More })
	return plan
}

// Counts returns the plan's labels per bin, for a draw (campaign.DrawPlan.Counts).
func (p LabelPlan) Counts(bins int) []int { return planCounts(p.Bins, bins) }

// planCounts spreads a plan's labels over bins bins.
func planCounts(plan []PlanBin, bins int) []int {
	out := make([]int, bins)
	for _, b := range plan {
		if b.Bin < bins {
			out[b.Bin] = b.More
		}
	}
	return out
}

// shareFor is bin b's share of non-duplicates for planning: its point estimate, or
// without labels the mean of its nearest labeled neighbours' (a half with none).
func (m *Model) shareFor(b int) float64 {
	if m.Bins[b].Labeled > 0 {
		return m.point[b]
	}
	var sum float64
	k := 0
	for _, d := range []int{-1, 1} {
		for c := b + d; c >= 0 && c < len(m.Bins); c += d {
			if m.Bins[c].Labeled > 0 {
				sum += m.point[c]
				k++
				break
			}
		}
	}
	if k == 0 {
		return 0.5
	}
	return sum / float64(k)
}

// approxUpper is the upper end of Σ_b s_b·p_b on a normal approximation: each bin's
// share from the upper confidence distribution Beta(x+1, n-x) with x = share·n, and the
// binomial spread of the bin's own pairs. n = +Inf means the share is known.
//
// Bins whose share is 0 are bounded together, as the Monte Carlo bounds them
// (addZeroDraws): their joint zero-event bound at the 97.5% point, with its Poisson
// spread. It falls fastest when labels follow the removal pairs (n_b in proportion to
// s_b), so that is where the greedy allocation puts them.
func approxUpper(s, n, share []float64) float64 {
	var mean, v float64
	var za, zn []float64
	for b, sb := range s {
		if sb == 0 {
			continue
		}
		p := share[b]
		if math.IsInf(n[b], 1) {
			mean += sb * p
			v += sb * p * (1 - p)
			continue
		}
		if p == 0 && n[b] > 0 {
			za, zn = append(za, sb), append(zn, n[b])
			continue
		}
		x := p * n[b]
		a, c := x+1, math.Max(n[b]-x, 1e-9)
		mu := a / (a + c)
		variance := a * c / ((a + c) * (a + c) * (a + c + 1))
		mean += sb * mu
		v += sb*sb*variance + sb*mu*(1-mu)
	}
	if len(za) > 0 {
		t := zeroBound(za, zn, math.Log(40))
		mean += t
		v += t
	}
	return mean + z95*math.Sqrt(v)
}

// withLabels returns the model as it would be with more[b] more labels in each bin,
// showing the bin's share as it stands (added to its pooled pairs), replicates drawn
// again with the model's seed stream.
func (m *Model) withLabels(more, share []float64) *Model {
	c := Model{Basis: m.Basis, Scheme: m.Scheme, Rep: m.Rep, Identical: m.Identical, Replicates: m.Replicates}
	c.Bins = slices.Clone(m.Bins)
	for b := range c.Bins {
		c.Bins[b].Cells = slices.Clone(m.Bins[b].Cells)
		if b >= len(more) || more[b] == 0 {
			continue
		}
		add := int(more[b])
		p := &c.Bins[b].Pooled
		p.Labeled += add
		p.NonDup += int(math.Round(share[b] * float64(add)))
		if p.Frame > 0 {
			p.Frame = max(p.Frame, int64(p.Labeled))
		}
	}
	newModel(&c, max(c.Replicates, 1), m.seed)
	return &c
}

// DefaultGuardShare is the share of the estimated duplicate pairs that the duplicates a
// guard bin's labels cannot rule out may reach before GuardPlan asks for labels there:
// they lower recall's lower end by about that much.
const DefaultGuardShare = 0.005

// GuardPlan returns the labels recall's lowest bins need: for the guard bin
// (Model.Guard), enough that the duplicates its labels cannot rule out come to at most
// share of the estimated duplicate pairs D (identical texts included), if they show no
// duplicate either: the zero-event bound N_g·(1-0.025^(1/n)) of n labels, or the floor
// bin's upper share times N_g when that is lower (guardShares' cap), so recall's lower
// end moves by about that share at most; and as many for the floor bin. The floor bin's
// share caps the guard's, it is the least known of recall's bins (its labels are the
// fewest that saw a duplicate), and labeling both bins whatever the first labels saw
// keeps recall's point estimate unbiased: labels added to a bin only when its first
// ones saw no duplicate would leave the bins whose first ones saw one over-estimated
// (10 labels of a bin with 8% duplicates see one or more in 58% of draws, and then show
// 14% on average). A duplicate among the guard's new labels moves the floor down a bin,
// and the next plan asks for the new guard's. Bins get no more than their drawable pairs
// allow; nil when there is no guard or its bound is within share already.
func (m *Model) GuardPlan(share float64) []PlanBin {
	g := m.Guard()
	if g < 0 {
		return nil
	}
	d := float64(m.Identical)
	for b := m.Floor; b < len(m.Bins); b++ {
		d += m.Bins[b].Size * (1 - m.point[b])
	}
	size := m.Bins[g].Size
	allow := share * d
	if size <= allow || allow <= 0 {
		return nil
	}
	if len(m.pLo[m.Floor]) > 0 {
		capQ := make([]float64, len(m.pLo[m.Floor]))
		for i, v := range m.pLo[m.Floor] {
			capQ[i] = 1 - v
		}
		if size*quantileSelect(capQ, 0.975) <= allow {
			return nil
		}
	}
	// The least n with size·(1-0.025^(1/n)) <= allow.
	n := int(math.Ceil(math.Log(0.025) / math.Log(1-allow/size)))
	var out []PlanBin
	for _, b := range []int{g, m.Floor} {
		mb := m.Bins[b]
		pb := PlanBin{Bin: b, Label: mb.Label, Labeled: mb.Labeled, Drawable: max(mb.Drawable-int64(mb.Labeled), 0)}
		pb.More = int(min(int64(max(n-mb.Labeled, 0)), pb.Drawable))
		if pb.More > 0 {
			out = append(out, pb)
		}
	}
	return out
}

// GuardAdvice is what recall's guard bin (Model.Guard) costs and what would narrow it:
// its labels saw no duplicate, yet up to Upper of its pairs may be duplicates (95%),
// which recall's lower end counts as missed; Plan is GuardPlan's labels for it and the
// floor bin.
type GuardAdvice struct {
	Bin        int
	Label      string
	FloorLabel string
	// Labeled counts the guard bin's labels, Pairs its pairs in the dataset, Drawable
	// those a draw can still choose from (0: more labels can only go to the floor bin).
	Labeled  int
	Pairs    float64
	Drawable int64
	// Upper is the duplicates among its pairs the labels cannot rule out (the 97.5%
	// point of the guard's replicates, capped by the floor bin's share as recall's
	// interval caps it); Share is Upper over the duplicates recall counts (the floor
	// bin up, identical texts included): about how far it lowers recall's lower end.
	Upper, Share float64
	Plan         []PlanBin
	// More sums the plan's labels; Whole names a bin of which the plan asks every pair
	// not yet labeled ("" when none): on a large bin, more than a team labels.
	More  int
	Whole string
}

// Counts returns the plan's labels per bin, as campaign.DrawPlan.Counts takes them.
func (g GuardAdvice) Counts(bins int) []int { return planCounts(g.Plan, bins) }

// GuardAdvice returns the guard bin's advice when GuardPlan(share) asks for labels,
// nil when there is no guard or what it cannot rule out is within share already.
func (m *Model) GuardAdvice(share float64) *GuardAdvice {
	plan := m.GuardPlan(share)
	g := m.Guard()
	if len(plan) == 0 || g < 0 || len(m.guardQ) == 0 {
		return nil
	}
	q := slices.Clone(m.guardQ) // quantileSelect reorders; the replicates' order pairs them
	mb := m.Bins[g]
	a := &GuardAdvice{Bin: g, Label: mb.Label, FloorLabel: m.Bins[m.Floor].Label, Labeled: mb.Labeled, Pairs: mb.Size,
		Drawable: max(mb.Drawable-int64(mb.Labeled), 0), Upper: mb.Size * quantileSelect(q, 0.975), Plan: plan}
	d := float64(m.Identical)
	for b := m.Floor; b < len(m.Bins); b++ {
		d += m.Bins[b].Size * (1 - m.point[b])
	}
	if d > 0 {
		a.Share = a.Upper / d
	}
	for _, p := range plan {
		a.More += p.More
		if p.More > 0 && int64(p.More) >= p.Drawable && a.Whole == "" {
			a.Whole = p.Label
		}
	}
	return a
}
