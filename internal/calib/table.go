package calib

import (
	"fmt"
	"io"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/frame"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// The issue's definitions of a low false-removal rate and of a useful upper end.
const (
	// LowRate is the true false-removal rate at or under which a configuration's upper
	// end must be useful.
	LowRate = 0.01
	// TightUpper is the share of its removals a useful upper end of false removals stays
	// within.
	TightUpper = 0.03
)

// Bars are what a check must meet.
type Bars struct {
	// Coverage is the least share of draws whose 95% interval holds the truth, for
	// recall and for false removals under each keeper rule.
	Coverage float64
	// Bias bounds |mean estimate - truth| of recall.
	Bias float64
	// TightShare is the least share of draws in which a configuration whose true
	// false-removal rate is at most LowRate shows an upper end within TightUpper of its
	// removals.
	TightShare float64
}

// IssueBars are issue 23's targets for the full check (>= 200 draws).
var IssueBars = Bars{Coverage: 0.93, Bias: 0.005, TightShare: 0.8}

// FastBars are the bars of the fast check (a few draws under the issue's cuts): coverage
// >= 0.85 instead of 0.93 and a useful upper end in 70% of draws instead of 80%, looser
// for the binomial spread of few draws when estimates vary (20 draws of a row whose true
// coverage is 0.95 fall under 0.85 with probability about 0.016; under the cuts every
// draw gives the same estimate, so a row meets them in all draws or none); recall's bias
// bar is the issue's.
var FastBars = Bars{Coverage: 0.85, Bias: 0.005, TightShare: 0.7}

// Cover is one estimate's record over the draws against its truth.
type Cover struct {
	// Draws counts the draws that gave an estimate; Missing those whose result had none.
	Draws, Missing int
	// Covered counts the draws whose 95% interval held the truth; Tight those whose upper
	// end was within TightUpper of the removals (false removals only).
	Covered, Tight int
	// Sum and SumWidth add up the point estimates and the interval widths, SumTruth the
	// truths they were held against (the same in every draw but under a rule that
	// redraws its realization, LabelRule.Redraw).
	Sum, SumWidth, SumTruth float64
}

func (c *Cover) add(iv sweep.Interval, truth float64) {
	if !finite(iv) {
		c.Missing++
		return
	}
	c.Draws++
	if covers(iv, truth) {
		c.Covered++
	}
	c.Sum += iv.Value
	c.SumWidth += iv.Hi - iv.Lo
	c.SumTruth += truth
}

// meanTruth is the mean truth over the draws, fixed without draws.
func (c Cover) meanTruth(fixed float64) float64 {
	if c.Draws == 0 {
		return fixed
	}
	return c.SumTruth / float64(c.Draws)
}

// Coverage is the share of draws whose interval held the truth (NaN without draws).
func (c Cover) Coverage() float64 { return float64(c.Covered) / float64(c.Draws) }

// Mean is the mean point estimate.
func (c Cover) Mean() float64 { return c.Sum / float64(c.Draws) }

// MeanWidth is the mean width of the 95% intervals.
func (c Cover) MeanWidth() float64 { return c.SumWidth / float64(c.Draws) }

// TightShare is the share of draws with a useful upper end (Cover.Tight).
func (c Cover) TightShare() float64 { return float64(c.Tight) / float64(c.Draws) }

// RecallRow is a configuration's recall at one tau.
type RecallRow struct {
	Tau    LabelRule
	Config Config
	Truth  float64
	Cover
}

// TrueMean is the truth the row's estimates were held against, averaged over the draws:
// Truth but under a rule that redraws its realization.
func (r RecallRow) TrueMean() float64 { return r.meanTruth(r.Truth) }

// RemovalRow is a configuration's false removals under one policy and keeper rule at
// one tau.
type RemovalRow struct {
	Tau    LabelRule
	Config Config
	Policy cluster.Policy
	Rule   cluster.Criterion
	// Removals and Truth are the exact removals and false removals (of the fixed
	// realization, under a rule that redraws it).
	Removals, Truth int
	Cover
}

// TrueMean is the false removals the row's estimates were held against, averaged over
// the draws: Truth but under a rule that redraws its realization.
func (r RemovalRow) TrueMean() float64 { return r.meanTruth(float64(r.Truth)) }

// Rate is the true false-removal rate (averaged over the realizations under a rule that
// redraws them).
func (r RemovalRow) Rate() float64 {
	if r.Removals == 0 {
		return 0
	}
	return r.TrueMean() / float64(r.Removals)
}

// Table is a check's outcome: per configuration the truth and how the sweep's estimates
// did against it over the draws.
type Table struct {
	// Docs and Pairs describe the population (pairs with J >= MinJaccard); Duplicates
	// are its duplicate pairs at each tau of Taus.
	Docs, Pairs int
	Taus        []LabelRule
	Duplicates  []int64
	// Draws is the number of draws; Labels the labels given in all of them, every tau.
	Draws, Labels int
	// Phases says, per tau, how the draws' labels were split between the first phase
	// and the second (SecondPlan) and where the second put them.
	Phases  []Phase
	Recall  []RecallRow
	Removal []RemovalRow
	// Audits are the simulated audits of every manifest whose true rate is at most
	// AuditRate (Audits).
	Audits []AuditRow
	// Truth is the truth of every configuration of the grid, in grid order, with the
	// counts an estimator on exact bins starts from (Outcome.Bins, Clustering.Bins).
	Truth []Outcome
	// Profiles counts the sweep profiles held against the truth's counts (accepted pairs
	// and every rule's removal pairs per bin); Mismatches describes those that differ
	// (the first few), MismatchCount counts them all.
	Profiles, MismatchCount int
	Mismatches              []string
	pop                     *Population
	// Times: the population, the truth, the store's import and signatures (each once),
	// and, over all draws, drawing, labeling, planning the second phase and sweeping
	// (both sweeps of a draw).
	PopulationTime, TruthTime, SetupTime time.Duration
	AuditTime                            time.Duration
	DrawTime, LabelTime, PlanTime        time.Duration
	SweepTime                            time.Duration

	done      int // draws x taus recorded
	truthAt   map[Config]int
	recallAt  map[recallKey]int
	removalAt map[removalKey]int
}

// Phase is how one tau's draws spent their labels.
type Phase struct {
	Tau LabelRule
	// Draws counts the draws; First and Second their labels in each phase.
	Draws, First, Second int
	// Bins sums the second phase's labels per frame.Default bin.
	Bins []int64
	// Plans sums the plans combined (Allocation.Plans); NoPlan counts the draws with
	// none (spread evenly); Scaled the draws whose plans asked for more than the budget;
	// Guard sums what recall's guard plans asked (Allocation.Guard).
	Plans, NoPlan, Scaled, Guard int
}

func (p *Phase) record(first, second int, a Allocation) {
	p.Draws++
	p.First += first
	p.Second += second
	if p.Bins == nil {
		p.Bins = make([]int64, len(a.Counts))
	}
	for b, n := range a.Counts {
		p.Bins[b] += int64(n)
	}
	p.Plans += a.Plans
	p.Guard += a.Guard
	switch budget := sum(a.Counts); {
	case a.Asked == 0:
		p.NoPlan++
	case a.Asked > budget:
		p.Scaled++
	}
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// phase returns tau's Phase.
func (t *Table) phase(tau LabelRule) *Phase {
	for i := range t.Phases {
		if t.Phases[i].Tau == tau {
			return &t.Phases[i]
		}
	}
	t.Phases = append(t.Phases, Phase{Tau: tau})
	return &t.Phases[len(t.Phases)-1]
}

type recallKey struct {
	tau LabelRule
	cfg Config
}

type removalKey struct {
	tau  LabelRule
	cfg  Config
	pol  cluster.Policy
	rule cluster.Criterion
}

// addRows makes the table's rows from the truth.
func (t *Table) addRows(pop *Population, outs []Outcome, policies []cluster.Policy) {
	t.Truth, t.pop = outs, pop
	t.truthAt, t.recallAt, t.removalAt = map[Config]int{}, map[recallKey]int{}, map[removalKey]int{}
	for i := range outs {
		t.truthAt[outs[i].Config] = i
	}
	for _, tau := range t.Taus {
		for i := range outs {
			o := &outs[i]
			t.recallAt[recallKey{tau, o.Config}] = len(t.Recall)
			t.Recall = append(t.Recall, RecallRow{Tau: tau, Config: o.Config, Truth: o.Recall(pop, tau)})
			for _, pol := range policies {
				for _, rule := range Rules {
					cl := o.Clustering(pol, rule)
					t.removalAt[removalKey{tau, o.Config, pol, rule}] = len(t.Removal)
					t.Removal = append(t.Removal, RemovalRow{Tau: tau, Config: o.Config, Policy: pol, Rule: rule,
						Removals: len(cl.Removals), Truth: cl.FalseRemovals(tau)})
				}
			}
		}
	}
}

// configOf is the truth's name of a result's configuration.
func configOf(r sweep.Result) Config {
	return Config{Spec: r.Config.Spec, Shape: r.Config.Shape, Threshold: r.Config.Threshold, Verification: Verification(r.Config.Verification)}
}

// add records one draw's sweep results at tau against the truth; lab is the rule the draw
// labeled with (tau.ForDraw), whose realization the truth is counted under.
func (t *Table) add(tau, lab LabelRule, results []sweep.Result) error {
	redrawn := lab.Seed != 0 && t.pop != nil
	t.done++
	seen := map[Config]bool{}
	for _, r := range results {
		cfg := configOf(r)
		pol := r.Config.Policy
		if err := pol.Validate(); err != nil {
			return fmt.Errorf("calibration check: result of %s: %w", cfg, err)
		}
		t.checkProfile(cfg, pol, r)
		fr, recall, ok := estimatesOf(r)
		if !seen[cfg] {
			seen[cfg] = true
			i, found := t.recallAt[recallKey{tau, cfg}]
			if !found {
				return fmt.Errorf("calibration check: a result of %s, which the grid does not hold", cfg)
			}
			row := &t.Recall[i]
			truth := row.Truth
			if redrawn {
				truth = t.Truth[t.truthAt[cfg]].Recall(t.pop, lab)
			}
			if ok {
				row.add(recall, truth)
			} else {
				row.Missing++
			}
		}
		for _, rule := range Rules {
			i, found := t.removalAt[removalKey{tau, cfg, pol, rule}]
			if !found {
				return fmt.Errorf("calibration check: a result of %s under %s/%s, which the check did not ask for", cfg, pol, rule)
			}
			row := &t.Removal[i]
			iv, has := fr[rule]
			if !ok || !has {
				row.Missing++
				continue
			}
			truth := float64(row.Truth)
			if redrawn {
				truth = float64(t.Truth[t.truthAt[cfg]].Clustering(pol, rule).FalseRemovals(lab))
			}
			row.add(iv, truth)
			if finite(iv) && iv.Hi <= TightUpper*float64(row.Removals) {
				row.Tight++
			}
		}
	}
	return nil
}

// maxMismatches bounds the mismatches a table describes.
const maxMismatches = 20

// checkProfile holds a result's exact counts (sweep.Profile) against the truth's: the
// accepted pairs per bin of exact Jaccard under the campaign's representation and, for
// every keeper rule, the removals and the (removed, keeper) pairs per bin. They must
// agree exactly; each difference is recorded.
func (t *Table) checkProfile(cfg Config, pol cluster.Policy, r sweep.Result) {
	i, ok := t.truthAt[cfg]
	if !ok || r.Profile == nil {
		return
	}
	o := &t.Truth[i]
	p := r.Profile
	t.Profiles++
	var diffs []string
	if !slices.Equal(p.Accepted, o.Bins) || p.AcceptedIdentical != o.Identical {
		diffs = append(diffs, fmt.Sprintf("accepted per bin %v + %d identical; truth %v + %d", p.Accepted, p.AcceptedIdentical, o.Bins, o.Identical))
	}
	for _, rp := range p.Rules {
		cl := o.Clustering(pol, cluster.Criterion(rp.Rule))
		if cl == nil {
			continue
		}
		if rp.Removals != len(cl.Removals) || !slices.Equal(rp.Pairs, cl.Bins) || int64(rp.Identical) != cl.Identical {
			diffs = append(diffs, fmt.Sprintf("keeper %s: %d removals, pairs per bin %v + %d identical; truth %d, %v + %d", rp.Rule,
				rp.Removals, rp.Pairs, rp.Identical, len(cl.Removals), cl.Bins, cl.Identical))
		}
	}
	if len(diffs) == 0 {
		return
	}
	t.MismatchCount++
	if len(t.Mismatches) < maxMismatches {
		t.Mismatches = append(t.Mismatches, fmt.Sprintf("%s, %s: %s", cfg, pol, strings.Join(diffs, "; ")))
	}
}

// PerDraw is the mean time of one draw, every tau: drawing, labeling and sweeping.
func (t *Table) PerDraw() time.Duration {
	draws := t.done / max(1, len(t.Taus))
	if draws == 0 {
		return 0
	}
	return (t.DrawTime + t.LabelTime + t.PlanTime + t.SweepTime) / time.Duration(draws)
}

// Failures lists every row that misses b, one line each.
func (t *Table) Failures(b Bars) []string {
	var out []string
	for _, m := range t.Mismatches {
		out = append(out, "exact counts differ from the truth's: "+m)
	}
	for _, r := range t.Recall {
		name := fmt.Sprintf("tau %s, %s: recall", r.Tau, r.Config)
		switch {
		case r.Draws == 0 || r.Missing > 0:
			out = append(out, fmt.Sprintf("%s: an estimate in %d of %d draws", name, r.Draws, r.Draws+r.Missing))
			continue
		case r.Coverage() < b.Coverage:
			out = append(out, fmt.Sprintf("%s: coverage %.3f < %.3f (truth %.4f, mean estimate %.4f)", name, r.Coverage(), b.Coverage, r.TrueMean(), r.Mean()))
		}
		if bias := r.Mean() - r.TrueMean(); math.Abs(bias) > b.Bias {
			out = append(out, fmt.Sprintf("%s: bias %+.4f beyond ±%.4f (truth %.4f, mean estimate %.4f)", name, bias, b.Bias, r.TrueMean(), r.Mean()))
		}
	}
	for _, r := range t.Removal {
		name := fmt.Sprintf("tau %s, %s, %s, keeper %s: false removals", r.Tau, r.Config, r.Policy, r.Rule)
		switch {
		case r.Draws == 0 || r.Missing > 0:
			out = append(out, fmt.Sprintf("%s: an estimate in %d of %d draws", name, r.Draws, r.Draws+r.Missing))
			continue
		case r.Coverage() < b.Coverage:
			out = append(out, fmt.Sprintf("%s: coverage %.3f < %.3f (truth %s of %d, mean estimate %.1f)", name, r.Coverage(), b.Coverage, r.truthText(), r.Removals, r.Mean()))
		}
		if r.Removals > 0 && r.Rate() <= LowRate && r.TightShare() < b.TightShare {
			out = append(out, fmt.Sprintf("%s: true rate %.4f, upper end within %.0f%% of the %d removals in %.3f of draws < %.3f",
				name, r.Rate(), 100*TightUpper, r.Removals, r.TightShare(), b.TightShare))
		}
	}
	for _, r := range t.Audits {
		name := fmt.Sprintf("tau %s, %s, %s, keeper %s: audit of %d labels", r.Tau, r.Config, r.Policy, r.Rule, r.Labels)
		cover, tight := float64(r.Covered)/float64(r.Audits), float64(r.Tight)/float64(r.Audits)
		if cover < AuditBars.Cover {
			out = append(out, fmt.Sprintf("%s: the bound held the truth (%d false of %d removals) in %.3f of %d audits < %.2f (exactly %.4f)",
				name, r.Truth, r.Removals, cover, r.Audits, AuditBars.Cover, r.ExactCover))
		}
		if tight < AuditBars.Tight {
			out = append(out, fmt.Sprintf("%s: bound <= %.1f%% in %.3f of %d audits < %.2f (exactly %.4f): true rate %.4f (%d false of %d removals), "+
				"%d certain and %d uncertain removals, so a bound <= %.1f%% allows at most %d mistakes among the %d labels, and the %d false removals "+
				"among the %d uncertain put more than that in %.0f%% of audits",
				name, 100*AuditBound, tight, r.Audits, AuditBars.Tight, r.ExactTight, r.Rate(), r.Truth, r.Removals, r.Certain, r.Uncertain,
				100*AuditBound, r.MaxTight, r.Labels, r.Truth, r.Uncertain, 100*(1-r.ExactTight)))
		}
	}
	return out
}

// Markdown writes the table: the population and timings, then recall and false
// removals per configuration.
func (t *Table) Markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Population: %d documents, %d pairs with exact Jaccard >= %v (word 5-shingles)", t.Docs, t.Pairs, MinJaccard)
	for i := range min(len(t.Taus), len(t.Duplicates)) {
		fmt.Fprintf(&b, "; %d duplicate pairs at tau %s (%s)", t.Duplicates[i], t.Taus[i], t.Taus[i].Describe())
	}
	draws := t.done / max(1, len(t.Taus))
	b.WriteString(".\n\n")
	if draws < t.Draws {
		fmt.Fprintf(&b, "**Partial: %d of %d draws done.**\n\n", draws, t.Draws)
	}
	fmt.Fprintf(&b, "Draws: %d per tau, %.0f labels a draw on average. False removals: the sweep's figure under each keeper rule.\n\n", draws,
		float64(t.Labels)/float64(max(1, t.done)))
	for _, ph := range t.Phases {
		fmt.Fprintf(&b, "Labels at tau %s: first phase %.0f a draw (even over the bins, and random pairs), second phase %.0f following %.1f labeling plans a draw "+
			"and recall's guard plans (asking %.0f a draw; asked for more than the budget in %d of %d draws, no plan in %d); the second phase's labels a draw by bin: %s.\n\n",
			ph.Tau, perCount(ph.First, ph.Draws), perCount(ph.Second, ph.Draws), perCount(ph.Plans, ph.Draws), perCount(ph.Guard, ph.Draws), ph.Scaled, ph.Draws, ph.NoPlan, binMeans(ph))
	}
	fmt.Fprintf(&b, "Exact counts: %d sweep profiles held against the truth's per-bin counts, %d differ.\n\n", t.Profiles, t.MismatchCount)
	fmt.Fprintf(&b, "Time: population %.1f s, truth %.1f s, import and signatures %.1f s (once); per draw and all taus %.2f s (draws %.2f, labels %.2f, plans %.2f, sweeps %.2f).\n\n",
		t.PopulationTime.Seconds(), t.TruthTime.Seconds(), t.SetupTime.Seconds(), t.PerDraw().Seconds(),
		perDraw(t.DrawTime, draws), perDraw(t.LabelTime, draws), perDraw(t.PlanTime, draws), perDraw(t.SweepTime, draws))

	b.WriteString("### Recall\n\n| tau | configuration | true recall | mean estimate | bias | coverage | mean width | draws |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range t.Recall {
		fmt.Fprintf(&b, "| %s | %s | %.4f | %s | %s | %s | %s | %d |\n", r.Tau, r.Config, r.TrueMean(), num(r.Mean(), "%.4f"),
			num(r.Mean()-r.TrueMean(), "%+.4f"), num(r.Coverage(), "%.3f"), num(r.MeanWidth(), "%.4f"), r.Draws)
	}
	fmt.Fprintf(&b, "\n### False removals\n\nOne row per configuration and policy; where the keeper rules differ, the figures are given as earliest / longest / shortest. Upper end useful: the share of draws whose upper end is within %.0f%% of the removals, for true rates up to %.0f%%.\n\n", 100*TightUpper, 100*LowRate)
	b.WriteString("| tau | configuration | policy | removals | true false removals | true rate | mean estimate | coverage | mean width | upper end useful |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for rows := range chunkBy(t.Removal, func(a, b RemovalRow) bool { return a.Tau == b.Tau && a.Config == b.Config && a.Policy == b.Policy }) {
		col := func(f func(r RemovalRow) string) string { return perRule(rows, f) }
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", rows[0].Tau, rows[0].Config, rows[0].Policy,
			col(func(r RemovalRow) string { return strconv.Itoa(r.Removals) }),
			col(func(r RemovalRow) string { return r.truthText() }),
			col(func(r RemovalRow) string { return fmt.Sprintf("%.4f", r.Rate()) }),
			col(func(r RemovalRow) string { return num(r.Mean(), "%.1f") }),
			col(func(r RemovalRow) string { return num(r.Coverage(), "%.3f") }),
			col(func(r RemovalRow) string { return num(r.MeanWidth(), "%.1f") }),
			col(func(r RemovalRow) string {
				if r.Removals > 0 && r.Rate() <= LowRate {
					return num(r.TightShare(), "%.3f")
				}
				return "-"
			}))
	}
	t.auditMarkdown(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// truthText is the row's true false removals: the count, or its mean over the draws
// under a rule that redraws its realization.
func (r RemovalRow) truthText() string {
	if r.Tau.Redraw {
		return fmt.Sprintf("%.1f", r.TrueMean())
	}
	return strconv.Itoa(r.Truth)
}

func perCount(n, draws int) float64 {
	if draws == 0 {
		return 0
	}
	return float64(n) / float64(draws)
}

// binMeans lists the second phase's mean labels a draw per bin, the bins it used.
func binMeans(ph Phase) string {
	var out []string
	for b, n := range ph.Bins {
		if n > 0 {
			out = append(out, fmt.Sprintf("%s %.0f", frame.Default.Label(b), float64(n)/float64(max(1, ph.Draws))))
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

func perDraw(d time.Duration, draws int) float64 {
	if draws == 0 {
		return 0
	}
	return d.Seconds() / float64(draws)
}

func num(x float64, format string) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return fmt.Sprintf(format, x)
}

// auditMarkdown writes the audits' table: one row per manifest audited, keeper rules
// side by side where they differ, as in the false-removal table.
func (t *Table) auditMarkdown(b *strings.Builder) {
	if len(t.Audits) == 0 {
		return
	}
	fmt.Fprintf(b, "\n### Manifest audits\n\nEvery manifest (configuration, policy and keeper rule) whose true false-removal rate is at most %.1f%%, "+
		"audited %d times with %d labels drawn from its uncertain removals (internal/audit: identical normalized texts are the certain stratum); "+
		"coverage: the one-sided 95%% upper bound holds the truth; bound <= %.1f%%: the upper bound is at most %.1f%% of the removals. "+
		"Simulated share, then the exact probability in parentheses; most mistakes: the most an audit may find and still bound the rate at %.1f%%.\n\n",
		100*AuditRate, t.Audits[0].Audits, AuditLabels, 100*AuditBound, 100*AuditBound, 100*AuditBound)
	b.WriteString("| tau | configuration | policy | removals | certain | true false removals | true rate | coverage | bound <= 1.5% | most mistakes |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for rows := range chunkBy(t.Audits, func(a, b AuditRow) bool { return a.Tau == b.Tau && a.Config == b.Config && a.Policy == b.Policy }) {
		col := func(f func(r AuditRow) string) string { return perRule(rows, f) }
		rules := col(func(r AuditRow) string { return string(r.Rule) })
		fmt.Fprintf(b, "| %s | %s | %s (%s) | %s | %s | %s | %s | %s | %s | %s |\n", rows[0].Tau, rows[0].Config, rows[0].Policy, rules,
			col(func(r AuditRow) string { return strconv.Itoa(r.Removals) }),
			col(func(r AuditRow) string { return strconv.Itoa(r.Certain) }),
			col(func(r AuditRow) string { return strconv.Itoa(r.Truth) }),
			col(func(r AuditRow) string { return fmt.Sprintf("%.4f", r.Rate()) }),
			col(func(r AuditRow) string {
				return fmt.Sprintf("%.3f (%.3f)", float64(r.Covered)/float64(r.Audits), r.ExactCover)
			}),
			col(func(r AuditRow) string {
				return fmt.Sprintf("%.3f (%.3f)", float64(r.Tight)/float64(r.Audits), r.ExactTight)
			}),
			col(func(r AuditRow) string { return strconv.Itoa(r.MaxTight) }))
	}
}

// TruthTable writes the truth of every outcome as Markdown: per configuration its
// candidates and accepted pairs, its true recall at each tau, and per policy and keeper
// rule its removals and true false-removal rate at each tau.
func TruthTable(w io.Writer, pop *Population, outs []Outcome, taus []LabelRule) error {
	var b strings.Builder
	fmt.Fprintf(&b, "| configuration | candidates | accepted |")
	for _, tau := range taus {
		fmt.Fprintf(&b, " recall at %s |", tau)
	}
	b.WriteString(" policy | keeper | removals |")
	for _, tau := range taus {
		fmt.Fprintf(&b, " false at %s (rate) |", tau)
	}
	b.WriteString("\n|---|---:|---:|")
	b.WriteString(strings.Repeat("---:|", len(taus)))
	b.WriteString("---|---|---:|")
	b.WriteString(strings.Repeat("---:|", len(taus)))
	b.WriteString("\n")
	for i := range outs {
		o := &outs[i]
		var recall []string
		for _, tau := range taus {
			recall = append(recall, fmt.Sprintf("%.4f", o.Recall(pop, tau)))
		}
		for _, cl := range o.Clusterings {
			fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | %d |", o.Config, o.Candidates, o.Accepted, strings.Join(recall, " | "),
				cl.Policy, cl.Rule, len(cl.Removals))
			for _, tau := range taus {
				fmt.Fprintf(&b, " %d (%.4f) |", cl.FalseRemovals(tau), cl.FalseRate(tau))
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// chunkBy yields the runs of consecutive rows that same puts with the run's first: the
// keeper rules of one table line.
func chunkBy[R any](rows []R, same func(a, b R) bool) iter.Seq[[]R] {
	return func(yield func([]R) bool) {
		for i := 0; i < len(rows); {
			j := i + 1
			for j < len(rows) && same(rows[i], rows[j]) {
				j++
			}
			if !yield(rows[i:j]) {
				return
			}
			i = j
		}
	}
}

// perRule is a table cell for rows that differ only in their keeper rule: f of each row,
// the value once when the rules all give it, else each rule's joined by " / ".
func perRule[R any](rows []R, f func(R) string) string {
	var out []string
	for _, r := range rows {
		out = append(out, f(r))
	}
	if slices.Equal(out, slices.Repeat(out[:1], len(out))) {
		return out[0]
	}
	return strings.Join(out, " / ")
}
