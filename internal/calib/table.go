package calib

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
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

// FastBars are the bars of the fast check (20 draws): coverage >= 0.85 instead of 0.93,
// and a useful upper end in 70% of draws instead of 80%, for the binomial spread of 20
// draws (a row whose true coverage is 0.95 falls under 0.85 in 20 draws with probability
// about 0.016); recall's bias bar is the issue's.
var FastBars = Bars{Coverage: 0.85, Bias: 0.005, TightShare: 0.7}

// Cover is one estimate's record over the draws against its truth.
type Cover struct {
	// Draws counts the draws that gave an estimate; Missing those whose result had none.
	Draws, Missing int
	// Covered counts the draws whose 95% interval held the truth; Tight those whose upper
	// end was within TightUpper of the removals (false removals only).
	Covered, Tight int
	// Sum and SumWidth add up the point estimates and the interval widths.
	Sum, SumWidth float64
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
	Tau    float64
	Config Config
	Truth  float64
	Cover
}

// RemovalRow is a configuration's false removals under one policy and keeper rule at
// one tau.
type RemovalRow struct {
	Tau    float64
	Config Config
	Policy cluster.Policy
	Rule   cluster.Criterion
	// Removals and Truth are the exact removals and false removals.
	Removals, Truth int
	Cover
}

// Rate is the true false-removal rate.
func (r RemovalRow) Rate() float64 {
	if r.Removals == 0 {
		return 0
	}
	return float64(r.Truth) / float64(r.Removals)
}

// Table is a check's outcome: per configuration the truth and how the sweep's estimates
// did against it over the draws.
type Table struct {
	// Docs and Pairs describe the population (pairs with J >= MinJaccard); Duplicates
	// are its duplicate pairs at each tau of Taus.
	Docs, Pairs int
	Taus        []float64
	Duplicates  []int64
	// Draws is the number of draws; Labels the labels given in all of them, every tau.
	Draws, Labels int
	// PerRule says whether the sweep's results gave each keeper rule a false-removal
	// figure of its own (estimatesOf); without, every rule is held against one figure.
	PerRule bool
	Recall  []RecallRow
	Removal []RemovalRow
	// Truth is the truth of every configuration of the grid, in grid order, with the
	// counts an estimator on exact bins starts from (Outcome.Bins, Clustering.Bins).
	Truth []Outcome
	// Times: the population, the truth, the store's import and signatures (each once),
	// and, over all draws, drawing, labeling and sweeping.
	PopulationTime, TruthTime, SetupTime time.Duration
	DrawTime, LabelTime, SweepTime       time.Duration

	done      int // draws x taus recorded
	perRule   int // results that gave per-rule figures
	results   int
	recallAt  map[recallKey]int
	removalAt map[removalKey]int
}

type recallKey struct {
	tau float64
	cfg Config
}

type removalKey struct {
	tau  float64
	cfg  Config
	pol  cluster.Policy
	rule cluster.Criterion
}

// addRows makes the table's rows from the truth.
func (t *Table) addRows(pop *Population, outs []Outcome, policies []cluster.Policy) {
	t.Truth = outs
	t.recallAt, t.removalAt = map[recallKey]int{}, map[removalKey]int{}
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

// add records one draw's sweep results at tau against the truth.
func (t *Table) add(tau float64, results []sweep.Result) error {
	t.done++
	seen := map[Config]bool{}
	for _, r := range results {
		cfg := Config{Spec: r.Config.Spec, Shape: r.Config.Shape, Threshold: r.Config.Threshold, Verification: Verification(r.Config.Verification)}
		pol, polRule, err := policyOf(r.Config.Policy)
		if err != nil {
			return fmt.Errorf("calibration check: result of %s: %w", cfg, err)
		}
		fr, recall, perRule, ok := estimatesOf(r)
		t.results++
		if perRule {
			t.perRule++
		}
		t.PerRule = t.results > 0 && t.perRule == t.results
		if !seen[cfg] {
			seen[cfg] = true
			i, found := t.recallAt[recallKey{tau, cfg}]
			if !found {
				return fmt.Errorf("calibration check: a result of %s, which the grid does not hold", cfg)
			}
			row := &t.Recall[i]
			if ok {
				row.add(recall, row.Truth)
			} else {
				row.Missing++
			}
		}
		for _, rule := range Rules {
			iv, has := fr[rule]
			if ok && !has || !ok && polRule != "" && polRule != rule {
				continue // the result does not speak for this rule
			}
			i, found := t.removalAt[removalKey{tau, cfg, pol, rule}]
			if !found {
				return fmt.Errorf("calibration check: a result of %s under %s/%s, which the check did not ask for", cfg, pol, rule)
			}
			row := &t.Removal[i]
			if !ok {
				row.Missing++
				continue
			}
			row.add(iv, float64(row.Truth))
			if finite(iv) && iv.Hi <= TightUpper*float64(row.Removals) {
				row.Tight++
			}
		}
	}
	return nil
}

// PerDraw is the mean time of one draw, every tau: drawing, labeling and sweeping.
func (t *Table) PerDraw() time.Duration {
	draws := t.done / max(1, len(t.Taus))
	if draws == 0 {
		return 0
	}
	return (t.DrawTime + t.LabelTime + t.SweepTime) / time.Duration(draws)
}

// Failures lists every row that misses b, one line each.
func (t *Table) Failures(b Bars) []string {
	var out []string
	for _, r := range t.Recall {
		name := fmt.Sprintf("tau %.2f, %s: recall", r.Tau, r.Config)
		switch {
		case r.Draws == 0 || r.Missing > 0:
			out = append(out, fmt.Sprintf("%s: an estimate in %d of %d draws", name, r.Draws, r.Draws+r.Missing))
			continue
		case r.Coverage() < b.Coverage:
			out = append(out, fmt.Sprintf("%s: coverage %.3f < %.3f (truth %.4f, mean estimate %.4f)", name, r.Coverage(), b.Coverage, r.Truth, r.Mean()))
		}
		if bias := r.Mean() - r.Truth; math.Abs(bias) > b.Bias {
			out = append(out, fmt.Sprintf("%s: bias %+.4f beyond ±%.4f (truth %.4f, mean estimate %.4f)", name, bias, b.Bias, r.Truth, r.Mean()))
		}
	}
	for _, r := range t.Removal {
		name := fmt.Sprintf("tau %.2f, %s, %s, keeper %s: false removals", r.Tau, r.Config, r.Policy, r.Rule)
		switch {
		case r.Draws == 0 || r.Missing > 0:
			out = append(out, fmt.Sprintf("%s: an estimate in %d of %d draws", name, r.Draws, r.Draws+r.Missing))
			continue
		case r.Coverage() < b.Coverage:
			out = append(out, fmt.Sprintf("%s: coverage %.3f < %.3f (truth %d of %d, mean estimate %.1f)", name, r.Coverage(), b.Coverage, r.Truth, r.Removals, r.Mean()))
		}
		if r.Removals > 0 && r.Rate() <= LowRate && r.TightShare() < b.TightShare {
			out = append(out, fmt.Sprintf("%s: true rate %.4f, upper end within %.0f%% of the %d removals in %.3f of draws < %.3f",
				name, r.Rate(), 100*TightUpper, r.Removals, r.TightShare(), b.TightShare))
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
		fmt.Fprintf(&b, "; %d duplicate pairs at tau = %.2f", t.Duplicates[i], t.Taus[i])
	}
	draws := t.done / max(1, len(t.Taus))
	fmt.Fprintf(&b, ".\n\nDraws: %d (each labeled at every tau), %.0f labels a draw and tau on average. ", draws,
		float64(t.Labels)/float64(max(1, t.done)))
	if t.PerRule {
		b.WriteString("False removals: the sweep's figure of each keeper rule.\n\n")
	} else {
		b.WriteString("False removals: the sweep has one figure for all keeper rules (a keeper drawn uniformly from each cluster), set against each rule's truth.\n\n")
	}
	fmt.Fprintf(&b, "Time: population %.1f s, truth %.1f s, import and signatures %.1f s (once); per draw %.2f s (draw %.2f, labels %.2f, sweeps %.2f).\n\n",
		t.PopulationTime.Seconds(), t.TruthTime.Seconds(), t.SetupTime.Seconds(), t.PerDraw().Seconds(),
		perDraw(t.DrawTime, draws), perDraw(t.LabelTime, draws), perDraw(t.SweepTime, draws))

	b.WriteString("### Recall\n\n| tau | configuration | true recall | mean estimate | bias | coverage | mean width | draws |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range t.Recall {
		fmt.Fprintf(&b, "| %.2f | %s | %.4f | %s | %s | %s | %s | %d |\n", r.Tau, r.Config, r.Truth, num(r.Mean(), "%.4f"),
			num(r.Mean()-r.Truth, "%+.4f"), num(r.Coverage(), "%.3f"), num(r.MeanWidth(), "%.4f"), r.Draws)
	}
	fmt.Fprintf(&b, "\n### False removals\n\nOne row per configuration and policy; where the keeper rules differ, the figures are given as earliest / longest / shortest. Upper end useful: the share of draws whose upper end is within %.0f%% of the removals, for true rates up to %.0f%%.\n\n", 100*TightUpper, 100*LowRate)
	b.WriteString("| tau | configuration | policy | removals | true false removals | true rate | mean estimate | coverage | mean width | upper end useful |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for i := 0; i < len(t.Removal); {
		j := i + 1
		for j < len(t.Removal) && t.Removal[j].Tau == t.Removal[i].Tau && t.Removal[j].Config == t.Removal[i].Config && t.Removal[j].Policy == t.Removal[i].Policy {
			j++
		}
		rows := t.Removal[i:j]
		col := func(f func(r RemovalRow) string) string {
			var out []string
			for _, r := range rows {
				out = append(out, f(r))
			}
			if slices.Equal(out, slices.Repeat(out[:1], len(out))) {
				return out[0]
			}
			return strings.Join(out, " / ")
		}
		fmt.Fprintf(&b, "| %.2f | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", rows[0].Tau, rows[0].Config, rows[0].Policy,
			col(func(r RemovalRow) string { return strconv.Itoa(r.Removals) }),
			col(func(r RemovalRow) string { return strconv.Itoa(r.Truth) }),
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
		i = j
	}
	_, err := io.WriteString(w, b.String())
	return err
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

// TruthTable writes the truth of every outcome as Markdown: per configuration its
// candidates and accepted pairs, its true recall at each tau, and per policy and keeper
// rule its removals and true false-removal rate at each tau.
func TruthTable(w io.Writer, pop *Population, outs []Outcome, taus []float64) error {
	var b strings.Builder
	fmt.Fprintf(&b, "| configuration | candidates | accepted |")
	for _, tau := range taus {
		fmt.Fprintf(&b, " recall at %.2f |", tau)
	}
	b.WriteString(" policy | keeper | removals |")
	for _, tau := range taus {
		fmt.Fprintf(&b, " false at %.2f (rate) |", tau)
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
