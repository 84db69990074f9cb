package web

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/chart"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// The sweep dashboard's view models and charts, built from a sweep's plain values
// (sweep.Result, sweep.Outcome, sweep.Scores) without I/O, so that they are tested on a
// real sweep.Run over a small sample.

// verificationWords names a verification in plain words.
func verificationWords(v sweep.Verification) string {
	switch v {
	case sweep.MinHashEstimate:
		return "MinHash estimate"
	case sweep.ExactJaccard:
		return "exact Jaccard"
	}
	return string(v)
}

// policyWords names a cluster policy in plain words.
func policyWords(p cluster.Policy) string {
	if info, ok := cluster.PolicyOf(p); ok {
		return info.Title
	}
	return string(p)
}

// reprWords names a representation briefly: "word 5-shingles, k=128", with what differs
// from lsh.DefaultSpec (scheme, normalization, hash, seed) after it.
func reprWords(s lsh.Spec) string {
	out := fmt.Sprintf("%s %d-shingles, k=%d", s.Level, s.Size, s.Hashes)
	d := lsh.DefaultSpec()
	if s.Scheme != d.Scheme {
		out += ", " + string(s.Scheme)
	}
	if s.Norm != d.Norm {
		out += ", norm " + s.Norm.String()
	}
	if s.Hash != d.Hash {
		out += ", " + string(s.Hash)
	}
	if s.Seed != d.Seed {
		out += fmt.Sprintf(", seed %d", s.Seed)
	}
	return out
}

// configWords names a configuration in plain words, the hover text of its point.
func configWords(c sweep.Config) string {
	return fmt.Sprintf("%s, %s, threshold %.2f, %s, %s", reprWords(c.Spec), templates.ShapeWords(c.Shape.Bands, c.Shape.Rows),
		c.Threshold, verificationWords(c.Verification), policyWords(c.Policy))
}

// rateEstimate turns a sweep interval into a chart estimate, capped to [0, 1]: a
// false-removal rate over 1 (chains merging unrelated documents wholesale) is drawn at
// the edge and written in full in the table.
func rateEstimate(iv sweep.Interval, n int) chart.Estimate {
	clamp := func(x float64) float64 {
		if math.IsNaN(x) {
			return x
		}
		return min(max(x, 0), 1)
	}
	return chart.Estimate{Value: clamp(iv.Value), Lo: clamp(iv.Lo), Hi: clamp(iv.Hi), N: n}
}

func rateOf(r sweep.Rate) chart.Estimate { return rateEstimate(r.Interval, r.Of) }

// headlineN is the sample size behind a headline: the labeled duplicates for recall and
// the labeled non-duplicates for false merges.
func headlineN(s sweep.Scores) (recallN, falseN int) {
	return s.Recall.Of, s.FalseMerges.Of
}

// tradeoffCells is how finely the recall chart tells points apart: points that fall in
// one cell of a tradeoffCells × tradeoffCells grid over the plotted ranges are drawn as
// one mark (less than a pixel apart at the sizes the page draws), named for one of them
// with the count of the others. A default sweep has thousands of configurations, many of
// them with the same figures; one mark each made a 5 MB SVG.
const tradeoffCells = 300

// tradeoffFigure draws recall against the false-removal rate, a mark per configuration
// (co-located ones shared), keyed by keys[i] (its ordinal in the grid); hs and front are
// the results' headlines and Pareto front (sweeprun.Analysis).
func tradeoffFigure(rs []sweep.Result, hs []sweep.Headline, front []bool, keys []int, base *sweep.Scores, selected, recommended int, dim bool, rule string) (*chart.Figure, error) {
	t := chart.Tradeoff{DimDominated: dim, Intervals: false}
	type point struct {
		i      int
		pt     chart.TradeoffPoint
		others int
	}
	pts := make([]point, len(rs))
	maxX := 0.0
	for i, r := range rs {
		h := hs[i]
		rn, fn := headlineN(r.Scores)
		pts[i] = point{i: i, pt: chart.TradeoffPoint{ID: strconv.Itoa(keys[i]), Label: configWords(r.Config),
			Recall: rateEstimate(h.Recall, rn), FalseRemoval: rateEstimate(h.FalseRemovalRate, fn)}}
		if x := pts[i].pt.FalseRemoval.Value; x > maxX {
			maxX = x
		}
	}
	// One mark per cell: the selected, else the recommended, else one on the front, else
	// the first.
	rank := func(i int) int {
		switch {
		case i == selected:
			return 0
		case i == recommended:
			return 1
		case front[i]:
			return 2
		}
		return 3
	}
	type cell struct{ x, y int }
	cells := map[cell]int{} // → index into pts of the mark drawn
	var drawn []int
	for i, p := range pts {
		x, y := p.pt.FalseRemoval.Value, p.pt.Recall.Value
		if math.IsNaN(x) || math.IsNaN(y) {
			drawn = append(drawn, i) // not drawn by the chart; kept in its table
			continue
		}
		c := cell{int(x / max(maxX, 1e-12) * tradeoffCells), int(y * tradeoffCells)}
		j, ok := cells[c]
		switch {
		case !ok:
			cells[c] = i
			drawn = append(drawn, i)
		case rank(i) < rank(j):
			pts[i].others = pts[j].others + 1
			pts[j].others = -1
			cells[c] = i
			drawn = append(drawn, i)
		default:
			pts[j].others++
			pts[i].others = -1
		}
	}
	for _, i := range drawn {
		p := pts[i]
		if p.others < 0 {
			continue
		}
		if p.others > 0 {
			p.pt.Label += fmt.Sprintf(" (and %d more configurations at this spot)", p.others)
		}
		t.Points = append(t.Points, p.pt)
	}
	if base != nil {
		h := base.HeadlineFor(rule)
		rn, fn := headlineN(*base)
		t.Baseline = &chart.TradeoffPoint{ID: "baseline", Label: "exact-hash dedup alone",
			Recall: rateEstimate(h.Recall, rn), FalseRemoval: rateEstimate(h.FalseRemovalRate, fn)}
	}
	if selected >= 0 && selected < len(rs) {
		t.Selected = strconv.Itoa(keys[selected])
	}
	if recommended >= 0 && recommended < len(rs) {
		t.Recommended = strconv.Itoa(keys[recommended])
	}
	if len(rs) > 0 {
		t.Title = "Recall against false-removal rate (" + string(rs[0].Headline().Basis) + " basis)"
	}
	return t.Figure()
}

// tradeoffTable is the recall chart's data with a row for every configuration (the
// chart shares one mark among co-located ones) and the baseline.
func tradeoffTable(rs []sweep.Result, hs []sweep.Headline, front []bool, keys []int, base *sweep.Scores, rule string) chart.Table {
	t := chart.Table{Columns: []string{"config", "label", "basis", "recall", "recall_lo", "recall_hi", "recall_n",
		"false_removal_rate", "false_removal_rate_lo", "false_removal_rate_hi", "false_removal_n", "on_front"}}
	num := func(x float64) string {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return ""
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	row := func(key, label string, s sweep.Scores, h sweep.Headline, front bool) []string {
		rn, fn := headlineN(s)
		return []string{key, label, string(h.Basis), num(h.Recall.Value), num(h.Recall.Lo), num(h.Recall.Hi), strconv.Itoa(rn),
			num(h.FalseRemovalRate.Value), num(h.FalseRemovalRate.Lo), num(h.FalseRemovalRate.Hi), strconv.Itoa(fn), strconv.FormatBool(front)}
	}
	for i, r := range rs {
		t.Rows = append(t.Rows, row(strconv.Itoa(keys[i]), configWords(r.Config), r.Scores, hs[i], front[i]))
	}
	if base != nil {
		t.Rows = append(t.Rows, row("baseline", "exact-hash dedup alone", *base, base.HeadlineFor(rule), false))
	}
	return t
}

// scurveFigure draws the selected configuration's shape with the collision rates its
// labeled pairs measured per similarity bin, and the datasketch optimum for comparison
// when it differs.
func scurveFigure(sel sweep.Result, outs []sweep.Outcome, threshold float64) (*chart.Figure, error) {
	const bins = 10
	rates := sweep.CollisionRates(outs, bins)
	// Each bin's point sits at the mean similarity of its pairs.
	sum, n := make([]float64, bins), make([]int, bins)
	for _, o := range outs {
		b := min(int(o.Jaccard*bins), bins-1)
		sum[b] += o.Jaccard
		n[b]++
	}
	curve := chart.ShapeCurve{Shape: sel.Config.Shape}
	for i, br := range rates {
		at := math.NaN()
		if i < bins && n[i] > 0 {
			at = sum[i] / float64(n[i])
		}
		curve.Measured = append(curve.Measured, chart.BinRate{Lo: br.Lo, Hi: br.Hi, At: at, Rate: rateOf(br.Rate)})
	}
	sc := chart.SCurves{Title: fmt.Sprintf("S-curve of %d × %d, measured on labeled pairs", sel.Config.Shape.Bands, sel.Config.Shape.Rows),
		Curves: []chart.ShapeCurve{curve}, Threshold: threshold}
	if opt := sel.Optimal.Shape; opt.Bands > 0 && opt != sel.Config.Shape {
		sc.Curves = append(sc.Curves, chart.ShapeCurve{Shape: opt, Label: templates.ShapeWords(opt.Bands, opt.Rows) + " (datasketch optimum)"})
	}
	return sc.Figure()
}

// categoryFigure draws the selected configuration's recall per category with labeled
// duplicates.
func categoryFigure(sel sweep.Result) (*chart.Figure, error) {
	cr := chart.CategoryRecall{Title: "Recall by category: " + sel.Config.Label()}
	for _, c := range sel.Categories {
		if c.Recall.Of > 0 {
			cr.Categories = append(cr.Categories, chart.Category{Name: c.Category, Recall: rateOf(c.Recall)})
		}
	}
	return cr.Figure()
}

// histogramFigure draws the labeled pairs' exact Jaccard, duplicates against
// non-duplicates, with the threshold.
func histogramFigure(sel sweep.Result, outs []sweep.Outcome, threshold float64) (*chart.Figure, error) {
	h := chart.JaccardHistogram{Title: "Exact Jaccard of labeled pairs (" + reprWords(sel.Config.Spec) + ")", Threshold: threshold}
	for _, o := range outs {
		if o.Duplicate {
			h.Duplicates = append(h.Duplicates, o.Jaccard)
		} else {
			h.NonDuplicates = append(h.NonDuplicates, o.Jaccard)
		}
	}
	return h.Figure()
}

// heatChoice is the representation, threshold, verification, policy and value a
// heatmap shows.
type heatChoice struct {
	Spec         string // lsh.Spec.ID
	Threshold    float64
	Verification sweep.Verification
	Policy       cluster.Policy
	Value        string // "recall" or "false"
}

// heatmapFigure draws recall (or the false-removal rate) over bands × rows for the
// results that match hc.
func heatmapFigure(rs []sweep.Result, hc heatChoice) (*chart.Figure, error) {
	hm := chart.ShapeHeatmap{Value: "Recall", Percent: true, Min: 0, Max: 1}
	if hc.Value == "false" {
		hm.Value = "False-removal rate"
	}
	var repr string
	for _, r := range rs {
		c := r.Config
		if c.Spec.ID() != hc.Spec || !sameThreshold(c.Threshold, hc.Threshold) || c.Verification != hc.Verification || c.Policy != hc.Policy {
			continue
		}
		repr = fmt.Sprintf("%s%d k%d", c.Spec.Level, c.Spec.Size, c.Spec.Hashes)
		h := r.Headline()
		rn, fn := headlineN(r.Scores)
		v := rateEstimate(h.Recall, rn)
		if hc.Value == "false" {
			v = rateEstimate(h.FalseRemovalRate, fn)
		}
		hm.Cells = append(hm.Cells, chart.ShapeCell{Shape: c.Shape, Value: v})
	}
	hm.Title = fmt.Sprintf("%s by bands × rows: %s ≥%.2f %s", hm.Value, repr, hc.Threshold, hc.Verification)
	return hm.Figure()
}

func sameThreshold(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// defaultHeat is the heatmap of the selected configuration's representation,
// threshold, verification and policy.
func defaultHeat(sel sweep.Config) heatChoice {
	return heatChoice{Spec: sel.Spec.ID(), Threshold: sel.Threshold, Verification: sel.Verification, Policy: sel.Policy, Value: "recall"}
}

// sortKeys are the table's sortable columns and the default direction of each.
var sortKeys = map[string]bool{ // true: descending first
	"order": false, "recall": true, "false": false, "removals": false, "candidates": false, "threshold": false,
	"precision": true, "candrecall": true,
}

// sortResults returns the result indexes in the order of column key (see sortKeys);
// undefined values go last, ties keep the sweep's order.
func sortResults(rs []sweep.Result, key string, desc bool) []int {
	idx := make([]int, len(rs))
	for i := range idx {
		idx[i] = i
	}
	value := func(i int) float64 {
		r := rs[i]
		switch key {
		case "recall":
			return r.Headline().Recall.Value
		case "false":
			return r.Headline().FalseRemovalRate.Value
		case "removals":
			return float64(r.Removals)
		case "candidates":
			return r.CandidatesPerDoc
		case "threshold":
			return r.Config.Threshold
		case "precision":
			return r.Precision.Value
		case "candrecall":
			return r.CandidateRecall.Value
		}
		return float64(i)
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		va, vb := value(a), value(b)
		if na, nb := math.IsNaN(va), math.IsNaN(vb); na || nb {
			switch {
			case na && nb:
				return 0
			case na:
				return 1
			}
			return -1
		}
		if desc {
			return cmp.Compare(vb, va)
		}
		return cmp.Compare(va, vb)
	})
	return idx
}

// ci writes a 95% interval as "12.0–15.3%".
func ci(iv sweep.Interval) string {
	if math.IsNaN(iv.Lo) || math.IsNaN(iv.Hi) {
		return ""
	}
	return strconv.FormatFloat(100*iv.Lo, 'f', 1, 64) + "–" + strconv.FormatFloat(100*iv.Hi, 'f', 1, 64) + "%"
}

// hitsOf writes a labeled rate's counts: "12 of 15".
func hitsOf(r sweep.Rate) string { return fmt.Sprintf("%d of %d", r.Hits, r.Of) }

// resultRows builds the table's rows in the order given.
func resultRows(rs []sweep.Result, hs []sweep.Headline, keys []int, order []int, front []bool, selected, recommended int, href func(i int) string) []templates.SweepRow {
	rows := make([]templates.SweepRow, 0, len(order))
	for _, i := range order {
		r := rs[i]
		h := hs[i]
		rows = append(rows, templates.SweepRow{
			Key: strconv.Itoa(keys[i]), Href: href(i), Label: r.Config.Label(), Words: configWords(r.Config),
			Recall: pct(h.Recall.Value), RecallCI: ci(h.Recall), FalseRate: pct(h.FalseRemovalRate.Value), FalseCI: ci(h.FalseRemovalRate),
			Removals: r.Removals, CandPerDoc: fmtNum(r.CandidatesPerDoc, 2),
			LabeledRecall: hitsOf(r.Recall), FalseMerges: hitsOf(r.FalseMerges), Precision: pct(r.Precision.Value),
			CandRecall: pct(r.CandidateRecall.Value), Expected: pct(r.ExpectedCandidateRecall),
			Front: i < len(front) && front[i], Selected: i == selected, Recommended: i == recommended,
		})
	}
	return rows
}

// baselineRow is exact-hash dedup alone as a row of the table.
func baselineRow(b sweep.Scores, rule string) *templates.SweepRow {
	h := b.HeadlineFor(rule)
	return &templates.SweepRow{Label: "exact-hash dedup alone (baseline)", Words: "identical text after normalization",
		Recall: pct(h.Recall.Value), RecallCI: ci(h.Recall), FalseRate: pct(h.FalseRemovalRate.Value), FalseCI: ci(h.FalseRemovalRate),
		Removals: b.Removals, CandPerDoc: "–", LabeledRecall: hitsOf(b.Recall), FalseMerges: hitsOf(b.FalseMerges),
		Precision: pct(b.Precision.Value), CandRecall: "–", Expected: "–"}
}

// resultsTable is every result with every figure, for the CSV download; hs and front
// are the results' headlines and Pareto front (sweeprun.Analysis).
func resultsTable(rs []sweep.Result, hs []sweep.Headline, front []bool) chart.Table {
	t := chart.Table{Columns: []string{"index", "spec", "level", "size", "k", "bands", "rows", "threshold", "verification", "policy",
		"basis", "recall", "recall_lo", "recall_hi", "false_removal_rate", "false_removal_rate_lo", "false_removal_rate_hi",
		"est_false_removals", "removals", "clusters", "largest_cluster",
		"labeled_recall", "labeled_duplicates", "cluster_recall", "false_merges", "labeled_non_duplicates", "precision",
		"candidate_recall", "expected_candidate_recall", "candidates", "candidates_per_doc", "bucket_skipped", "accepted",
		"datasketch_optimum", "candidate_seconds", "score_seconds", "on_front"}}
	num := func(x float64) string {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return ""
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	for i, r := range rs {
		c, h := r.Config, hs[i]
		est := ""
		if r.Dataset != nil && len(r.Dataset.Rules) > 0 {
			est = num(r.Dataset.Rules[0].FalseRemovals.Value)
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(i), c.Spec.String(), string(c.Spec.Level), strconv.Itoa(c.Spec.Size),
			strconv.Itoa(c.Spec.Hashes), strconv.Itoa(c.Shape.Bands), strconv.Itoa(c.Shape.Rows), num(c.Threshold), string(c.Verification), string(c.Policy),
			string(h.Basis), num(h.Recall.Value), num(h.Recall.Lo), num(h.Recall.Hi), num(h.FalseRemovalRate.Value), num(h.FalseRemovalRate.Lo),
			num(h.FalseRemovalRate.Hi), est, strconv.Itoa(r.Removals), strconv.Itoa(r.Clusters), strconv.Itoa(r.LargestCluster),
			num(r.Recall.Value), strconv.Itoa(r.Recall.Of), num(r.ClusterRecall.Value), strconv.Itoa(r.FalseMerges.Hits), strconv.Itoa(r.FalseMerges.Of),
			num(r.Precision.Value), num(r.CandidateRecall.Value), num(r.ExpectedCandidateRecall), strconv.Itoa(r.Candidates), num(r.CandidatesPerDoc),
			strconv.Itoa(r.BucketSkipped), strconv.Itoa(r.Accepted), r.Optimal.Shape.String(), num(r.CandidateTime.Seconds()), num(r.ScoreTime.Seconds()),
			strconv.FormatBool(front[i])})
	}
	return t
}

// liveFigures writes the selected result's headline figures for the live panel, its
// false removals under keeper rule.
func liveFigures(r sweep.Result, rule string) templates.SweepLive {
	h := r.HeadlineFor(rule)
	v := templates.SweepLive{Threshold: fmt.Sprintf("%.2f", r.Config.Threshold), Basis: string(h.Basis), Label: r.Config.Label(), Words: configWords(r.Config),
		Repr:   shinglesWords(r.Config.Spec),
		Recall: pct(h.Recall.Value), RecallCI: ci(h.Recall), FalseRate: pct(h.FalseRemovalRate.Value), FalseCI: ci(h.FalseRemovalRate),
		Removals: r.Removals, Clusters: r.Clusters, Largest: r.LargestCluster,
		LabeledRecall: hitsOf(r.Recall), FalseMerges: hitsOf(r.FalseMerges), Precision: pct(r.Precision.Value)}
	if e := r.Dataset; e != nil && len(e.Rules) > 0 {
		re, ok := e.Rule(rule)
		if !ok {
			re = e.Rules[0]
		}
		v.FalseRemovals, v.Keeper, v.Removals = fmtCount(re.FalseRemovals.Value), re.Rule, re.Removals
		if !math.IsNaN(re.FalseRemovals.Lo) {
			v.FalseRemovalsCI = fmtCount(re.FalseRemovals.Lo) + "–" + fmtCount(re.FalseRemovals.Hi)
		}
	} else {
		v.FalseRemovals = strconv.Itoa(r.FalseMerges.Hits) + " labeled pairs"
	}
	return v
}

// ruleRows are the selected result's false removals under every keeper rule scored.
func ruleRows(r sweep.Result, rule string) []templates.RuleRow {
	if r.Dataset == nil {
		return nil
	}
	var out []templates.RuleRow
	for _, re := range r.Dataset.Rules {
		row := templates.RuleRow{Rule: re.Rule, Removals: re.Removals, Certain: re.Certain,
			False: fmtCount(re.FalseRemovals.Value), FalseCI: fmtCount(re.FalseRemovals.Lo) + "–" + fmtCount(re.FalseRemovals.Hi),
			Rate: pct(re.FalseRemovalRate.Value), RateCI: ci(re.FalseRemovalRate), Current: re.Rule == rule}
		if re.Unlabeled > 0 {
			row.Note = fmt.Sprintf("%d removals lie in bins without a label", re.Unlabeled)
		}
		out = append(out, row)
	}
	return out
}

// modelBinRows lists the model's bins that hold pairs: the dataset's pairs, the labels
// and the estimated share of non-duplicates.
func modelBinRows(m *sweep.Model) []templates.ModelBinRow {
	var out []templates.ModelBinRow
	for _, b := range m.Bins {
		if b.Size < 0.5 && b.Labeled == 0 {
			continue
		}
		row := templates.ModelBinRow{Bin: b.Bin, Label: b.Label, Pairs: fmtCount(b.Size), Labeled: b.Labeled, NonDup: b.NonDup,
			Share: "–", BelowFloor: m.Floor >= 0 && b.Bin < m.Floor}
		if b.Labeled > 0 {
			row.Share = pct(b.Rate)
		}
		if len(b.Cells) > 1 {
			row.Cells = len(b.Cells)
		}
		out = append(out, row)
	}
	return out
}

// fillModelRemovals writes the selected configuration's (removed, keeper) pairs per bin
// under rule into the model's rows.
func fillModelRemovals(rows []templates.ModelBinRow, r sweep.Result, rule string) {
	if r.Profile == nil {
		return
	}
	for _, rp := range r.Profile.Rules {
		if rp.Rule != rule && rule != "" {
			continue
		}
		for i := range rows {
			if b := rows[i].Bin; b < len(rp.Pairs) {
				rows[i].Removals = rp.Pairs[b]
			}
		}
		return
	}
}

// planView is the labeling plan for the closest configuration, with the form that draws
// its pairs.
func planView(p sweep.LabelPlan, d sweepData, campaignID int64, q dashQuery) *templates.SweepPlan {
	v := &templates.SweepPlan{Rule: p.Rule, More: p.More, Now: pct(p.Now), Reaches: pct(p.Reaches), Limit: pct(p.Limit),
		Target: pct(p.Target), Met: p.Met, Feasible: p.Feasible, Max: sweep.MaxPlan, Draw: planDraw(d, campaignID, p.Counts, p.More)}
	for _, b := range p.Bins {
		v.Bins = append(v.Bins, templates.PlanRow{Label: b.Label, Removals: b.Removal, Labeled: b.Labeled, More: b.More, Drawable: b.Drawable})
	}
	return v
}

// planDraw is the form that draws a plan's more pairs, counts per bin of the sweep's
// model (no counts without one), into the campaign's labeling queue.
func planDraw(d sweepData, campaignID int64, counts func(bins int) []int, more int) templates.PlanDraw {
	f := templates.PlanDraw{Action: fmt.Sprintf("/campaigns/%d/sample", campaignID), More: more}
	if !d.draws {
		return templates.PlanDraw{More: more, WhoDraws: whoCan(auth.ManageCampaigns)}
	}
	if m := d.a.Model; m != nil {
		f.Scheme, f.Rep, f.Counts = string(m.Scheme), m.Rep.String(), countsField(counts(len(m.Bins)))
	}
	return f
}

// countsField is a draw form's counts per bin, as campaign.DrawPlan reads them.
func countsField(counts []int) string {
	parts := make([]string, len(counts))
	for i, n := range counts {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

// guardView is the advice for recall's guard bin, with the form that draws its pairs.
func guardView(g sweep.GuardAdvice, d sweepData, campaignID int64) *templates.SweepGuard {
	v := &templates.SweepGuard{Label: g.Label, FloorLabel: g.FloorLabel, Labeled: g.Labeled, More: g.More, Undrawable: g.Drawable == 0,
		Upper: fmtCount(g.Upper), Share: "about " + pct(g.Share) + " of", Draw: planDraw(d, campaignID, g.Counts, g.More)}
	if g.Share >= 1 {
		v.Share = "more than all of"
	}
	var to, whole []string // the bins the labels go to, and those of which they take every pair
	wholeMore := 0
	for _, b := range g.Plan {
		v.Bins = append(v.Bins, templates.PlanRow{Label: b.Label, Labeled: b.Labeled, More: b.More, Drawable: b.Drawable})
		if b.More > 0 {
			to = append(to, b.Label)
			if int64(b.More) >= b.Drawable {
				whole = append(whole, b.Label)
				wholeMore += b.More
			}
		}
	}
	v.Where = "around " + g.Label
	if len(to) == 1 {
		v.Where = "in " + to[0] // the guard bin's own, or the floor bin's when the guard's are all labeled
	}
	v.Whole = wholeSentence(to, whole, wholeMore, g.More)
	return v
}

// wholeSentence says which of a plan's bins (to) it takes every unlabeled pair of
// (whole, wholeMore labels of its more): "That is every pair of j0.05-0.1 not yet
// labeled" when those are all its labels, "That includes every pair of j0.05-0.1 not yet
// labeled (5,235 of the 14,780)" when other bins take some; "" when it takes no bin whole.
func wholeSentence(to, whole []string, wholeMore, more int) string {
	switch {
	case len(whole) == 0:
		return ""
	case len(whole) == len(to):
		return "That is every pair of " + joinList(whole, "and") + " not yet labeled"
	default:
		return fmt.Sprintf("That includes every pair of %s not yet labeled (%s of the %s)", joinList(whole, "and"),
			templates.Num(wholeMore), templates.Num(more))
	}
}

// outcomeRows lists false merges and misses (the outcomes come in that order), up to
// limit of each, with links to their pair pages.
func outcomeRows(outs []sweep.Outcome, pairHref func(id int64) string, limit int) (falseMerges, misses []templates.OutcomeRow, nFalse, nMiss int) {
	// Rows are written only for what is listed: a campaign can count a million pairs.
	rowOf := func(o sweep.Outcome) templates.OutcomeRow {
		row := templates.OutcomeRow{Pair: o.Pair, Href: pairHref(o.Pair), Category: o.Category, Jaccard: fmtNum(o.Jaccard, 3)}
		switch {
		case !o.Candidate:
			row.Why = "never a candidate (no band collided)"
		case !o.Accepted:
			row.Why = fmt.Sprintf("candidate, similarity %s below the threshold", fmtNum(o.Similarity, 3))
		default:
			row.Why = fmt.Sprintf("accepted at similarity %s", fmtNum(o.Similarity, 3))
		}
		if o.FalseMerge() && !o.Accepted {
			row.Why = "merged through a chain of other pairs"
		}
		return row
	}
	for _, o := range outs {
		switch {
		case o.FalseMerge():
			nFalse++
			if len(falseMerges) < limit {
				falseMerges = append(falseMerges, rowOf(o))
			}
		case o.Missed():
			nMiss++
			if len(misses) < limit {
				misses = append(misses, rowOf(o))
			}
		}
	}
	return falseMerges, misses, nFalse, nMiss
}

// basisSentence says what the headline figures are computed over, and why.
func basisSentence(m *sweep.Model) string {
	if m == nil {
		return "Figures are on the labeled-pairs basis: no counted pair records how it was drawn (imported or picked by hand), " +
			"so recall is the share of labeled duplicates accepted and the false-removal rate the share of labeled non-duplicates merged. " +
			"They describe the labeled pairs, not the dataset. Draw pairs from the campaign page to estimate over the whole dataset."
	}
	s := fmt.Sprintf("Figures are estimated over the whole dataset. Every configuration's accepted pairs and (removed, keeper) pairs are counted exactly "+
		"and binned by exact Jaccard under %s; the labels (%s, %d pairs) say how often a pair of each bin is not a duplicate, "+
		"and 95%% intervals carry each bin's uncertainty (Clopper-Pearson's confidence distributions summed over bins by %s Monte Carlo replicates, "+
		"and the bins whose labels show no mistake bounded together by what their labels jointly cannot rule out).", reprWords(m.Rep), m.Basis, m.Pairs, templates.Num(m.Replicates))
	if m.Identical > 0 {
		s += " " + templates.Plural(int(m.Identical), "pair has", "pairs have") + " identical normalized text: duplicates for certain, counted without a label."
	}
	if m.Unused > 0 {
		s += fmt.Sprintf(" %d other counted pairs (imported, or of another design) count on the labeled-pairs basis only.", m.Unused)
	}
	return s
}

// DefaultKeeper is the keeper rule a proposal from a sweep starts with (the run form's
// default): the earliest document of a cluster stays.
const defaultKeeper = "earliest"

// proposal is the run that configuration c of a sweep over datasetID and campaignID
// proposes, with keeper rule keeper (defaultKeeper when empty): the sweep does not fix
// the rule, which decides which documents a cluster removes. It fails as c.Params
// does, and on a keeper rule that does not parse.
func proposal(datasetID, campaignID int64, c sweep.Config, keeper string) (manifests.Request, error) {
	rule, err := cluster.ParseRule(cmp.Or(keeper, defaultKeeper))
	if err != nil {
		return manifests.Request{}, err
	}
	p, err := c.Params(rule)
	if err != nil {
		return manifests.Request{}, err
	}
	return manifests.Request{DatasetID: datasetID, CampaignID: campaignID, Params: p}, nil
}

// proposeHref links web/runs.go's new-run form prefilled with req (runFormOf).
func proposeHref(req manifests.Request) string {
	return fmt.Sprintf("/datasets/%d/runs/new?%s", req.DatasetID, strings.ReplaceAll(runFormOf(req).query().Encode(), "+", "%20"))
}
