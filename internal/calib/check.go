package calib

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
)

// Defaults and bounds of Options.
const (
	DefaultDraws = 30
	// MaxLabels bounds the labels of one draw (the budget of a draw).
	MaxLabels = 800
)

// DefaultTaus are the rule labels' similarity cuts: duplicate = Jaccard >= tau.
var DefaultTaus = []float64{0.5, 0.7}

// Options tune Check; the zero value is the full check's grid with DefaultDraws draws.
type Options struct {
	// Dir is where the check's SQLite store is made; "" makes a temporary directory and
	// removes it afterwards.
	Dir string
	// Population is the population to check on; nil builds the default one (Documents
	// under Word5).
	Population *Population
	// Grid is the configurations scored (DefaultGrid when nil); Policies the cluster
	// policies (all three when nil), each under every keeper rule of Rules.
	Grid     Grid
	Policies []cluster.Policy
	// Taus are the rule labels' cuts (DefaultTaus when nil).
	Taus []float64
	// Draws is the number of independent draws (DefaultDraws when 0); Labels the labels
	// a draw may ask for, at most MaxLabels (MaxLabels when 0).
	Draws, Labels int
	// Seed makes the draws repeatable: draw d draws with Seed+d.
	Seed uint64
	// Log, when set, is told what the check does as it goes.
	Log func(format string, args ...any)
}

func (o Options) withDefaults() (Options, error) {
	if o.Grid == nil {
		o.Grid = DefaultGrid()
	}
	if o.Policies == nil {
		o.Policies = cluster.Policies()
	}
	if o.Taus == nil {
		o.Taus = DefaultTaus
	}
	if o.Draws == 0 {
		o.Draws = DefaultDraws
	}
	if o.Labels == 0 {
		o.Labels = MaxLabels
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	switch {
	case o.Draws < 0:
		return o, fmt.Errorf("calibration check: draws %d: want at least 1", o.Draws)
	case o.Labels < 0 || o.Labels > MaxLabels:
		return o, fmt.Errorf("calibration check: labels per draw %d: want 1 to %d", o.Labels, MaxLabels)
	case len(o.Grid.Configs()) == 0:
		return o, errors.New("calibration check: the grid has no configuration")
	}
	for _, tau := range o.Taus {
		if !(tau >= MinJaccard && tau <= 1) {
			return o, fmt.Errorf("calibration check: tau %v: want %v to 1 (the population lists the pairs from %v)", tau, MinJaccard, MinJaccard)
		}
	}
	for _, p := range o.Policies {
		if _, err := cluster.ParsePolicy(string(p)); err != nil {
			return o, fmt.Errorf("calibration check: %w", err)
		}
	}
	return o, nil
}

// drawPlan is what draw d asks the "draw pairs" form's code path (campaign.Draw) for,
// with at most labels pairs: today's plan, the same number of pairs from each of the
// campaign's bins of estimated similarity plus an eighth of the budget in uniformly
// random pairs. It is the one place a targeted plan replaces.
func drawPlan(d int, seed uint64, labels int) campaign.DrawPlan {
	random := labels / 8
	return campaign.DrawPlan{PerBin: (labels - random) / campaign.Bins, Bin: -1, Random: random, Seed: seed + uint64(d)}
}

// sweepPolicies names the policies each sweep scores, with the clusterers it needs, for
// the check's policies. Today's sweep clusters connected components itself and takes
// other policies as clusterers by name; its false removals average over a keeper drawn
// uniformly from each cluster, so keeper-star and complete-link, whose clusters depend
// on the keeper rule, are given once per rule (named "keeper-star/longest", ...),
// clustered with internal/cluster as internal/dedup gives a run's policy.
func sweepPolicies(pols []cluster.Policy, mk func(cluster.Policy, cluster.Criterion) sweep.Clusterer) ([]string, map[string]sweep.Clusterer) {
	var names []string
	cls := map[string]sweep.Clusterer{}
	for _, p := range pols {
		if p == cluster.Components {
			names = append(names, sweep.ConnectedComponents)
			continue
		}
		for _, r := range Rules {
			name := string(p) + "/" + string(r)
			names = append(names, name)
			cls[name] = mk(p, r)
		}
	}
	return names, cls
}

// policyOf reads a sweep policy name (sweepPolicies) back: the cluster policy and the
// keeper rule it was clustered under, "" when its clusters do not depend on one.
func policyOf(name string) (cluster.Policy, cluster.Criterion, error) {
	if name == sweep.ConnectedComponents {
		return cluster.Components, "", nil
	}
	pol, rule, _ := strings.Cut(name, "/")
	p, err := cluster.ParsePolicy(pol)
	if err != nil {
		return "", "", err
	}
	return p, cluster.Criterion(rule), nil
}

// estimatesOf reads one sweep result's estimates over the dataset: false removals by
// keeper rule (for the rules the result speaks for) and recall; ok is false when the
// result has no dataset estimate. perRule says whether the figures are each rule's own.
// Today's sweep has one false-removal figure, the expectation over a keeper drawn
// uniformly from each cluster, which is set against every rule's truth (perRule false).
// This is the one function that reads the sweep's estimates: point it at the per-rule
// figures when the sweep has them.
func estimatesOf(r sweep.Result) (fr map[cluster.Criterion]sweep.Interval, recall sweep.Interval, perRule, ok bool) {
	d := r.Dataset
	if d == nil {
		return nil, sweep.Interval{}, false, false
	}
	_, rule, err := policyOf(r.Config.Policy)
	if err != nil {
		return nil, sweep.Interval{}, false, false
	}
	fr = map[cluster.Criterion]sweep.Interval{}
	if rule != "" {
		fr[rule] = d.FalseRemovals
	} else {
		for _, rl := range Rules {
			fr[rl] = d.FalseRemovals
		}
	}
	return fr, d.Recall, false, true
}

// Check measures how well the sweep's estimates over the dataset cover the truth: it
// imports the population into a real store, and for each draw and tau creates a
// campaign, draws pairs through campaign.Draw (what the "draw pairs" form runs), labels
// each drawn pair by the rule (Duplicate at tau) as a rule label, sweeps the grid over
// the store's labels as sweeprun does, and compares every result with the truth of its
// configuration, policy and keeper rule. Signatures and the truth are computed once.
func Check(ctx context.Context, opt Options) (*Table, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	t := &Table{Draws: opt.Draws, Taus: opt.Taus}
	pop := opt.Population
	if pop == nil {
		docs, err := Documents()
		if err != nil {
			return nil, err
		}
		if pop, err = NewPopulation(ctx, docs, Word5()); err != nil {
			return nil, err
		}
	}
	if pop.Rep != Word5() {
		return nil, fmt.Errorf("calibration check: the population's representation is %s; the campaign's is %s", pop.Rep, Word5())
	}
	t.Docs, t.Pairs, t.PopulationTime = len(pop.Docs), len(pop.Pairs), pop.Took
	for _, tau := range opt.Taus {
		t.Duplicates = append(t.Duplicates, pop.Duplicates(tau))
	}
	opt.Log("population: %d documents, %d pairs with J >= %v (%.1f s)", t.Docs, t.Pairs, MinJaccard, pop.Took.Seconds())

	start := time.Now()
	eng := NewEngine(pop)
	configs := opt.Grid.Configs()
	outs, err := eng.EvaluateAll(ctx, configs, opt.Policies, Rules)
	if err != nil {
		return nil, err
	}
	t.TruthTime = time.Since(start)
	opt.Log("truth of %d configurations x %d policies x %d keeper rules: %.1f s", len(configs), len(opt.Policies), len(Rules), t.TruthTime.Seconds())
	t.addRows(pop, outs, opt.Policies)

	dir := opt.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "calibcheck-"); err != nil {
			return nil, fmt.Errorf("calibration check: %w", err)
		}
		defer os.RemoveAll(dir)
	}
	start = time.Now()
	h, err := newHarness(ctx, filepath.Join(dir, "calib.db"), eng, opt)
	if err != nil {
		return nil, err
	}
	defer h.store.Close()
	t.SetupTime = time.Since(start)
	opt.Log("store: dataset %d imported and signed (%.1f s)", h.ds.ID, t.SetupTime.Seconds())

	for d := range opt.Draws {
		drawn, err := h.draw(ctx, d, t)
		if err != nil {
			return t, err
		}
		for _, tau := range opt.Taus {
			results, labeled, err := h.labelAndSweep(ctx, d, tau, drawn, t)
			if err != nil {
				return t, err
			}
			if err := t.add(tau, results); err != nil {
				return t, err
			}
			t.Labels += labeled
		}
		opt.Log("draw %d of %d done (%.1f s a draw so far)", d+1, opt.Draws, t.PerDraw().Seconds())
	}
	return t, nil
}

// harness is the store side of a check: the imported dataset, its signatures and what a
// sweep reads of it, kept for every draw.
type harness struct {
	store *db.DB
	cache *sigcache.Cache
	ds    db.Dataset
	eng   *Engine
	opt   Options
	docs  db.SweepDocs
	index map[int64]int // store id -> document index
	sigs  map[lsh.Spec][]lsh.Signature
}

// newHarness opens a fresh store at path, imports the population as a dataset (the
// documents in order, so store ids ascend with the population's indexes) and signs it
// under the campaign's and the grid's representations.
func newHarness(ctx context.Context, path string, eng *Engine, opt Options) (*harness, error) {
	store, err := db.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	h := &harness{store: store, cache: sigcache.New(store), eng: eng, opt: opt, sigs: map[lsh.Spec][]lsh.Signature{}}
	if err := h.load(ctx); err != nil {
		store.Close()
		return nil, err
	}
	return h, nil
}

func (h *harness) load(ctx context.Context) error {
	pop := h.eng.Population()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, d := range pop.Docs {
		if err := enc.Encode(d); err != nil {
			return fmt.Errorf("calibration check: %w", err)
		}
	}
	r, err := corpus.NewReader(&buf, "calib-population.jsonl", corpus.JSONL, corpus.Options{})
	if err != nil {
		return err
	}
	rep, err := ingest.Documents(ctx, h.store, r, "calib-population.jsonl", ingest.Options{Dataset: "calib", Actor: "calibcheck"})
	if err != nil {
		return err
	}
	h.ds = rep.Dataset
	if h.docs, err = h.store.SweepDocuments(ctx, h.ds.ID); err != nil {
		return err
	}
	if len(h.docs.IDs) != len(pop.Docs) {
		return fmt.Errorf("calibration check: %d documents imported of %d", len(h.docs.IDs), len(pop.Docs))
	}
	h.index = make(map[int64]int, len(h.docs.IDs))
	for i, id := range h.docs.IDs {
		if h.docs.Texts[i] != pop.Docs[i].Text {
			return fmt.Errorf("calibration check: stored document %d (%s) is not the population's document %d", id, pop.Docs[i].ID, i)
		}
		h.index[id] = i
	}
	specs := []lsh.Spec{Word5()}
	for _, p := range h.opt.Grid {
		if !slices.Contains(specs, p.Spec) {
			specs = append(specs, p.Spec)
		}
	}
	for _, spec := range specs {
		set, err := h.cache.Signatures(ctx, h.ds.ID, spec, nil)
		if err != nil {
			return err
		}
		want, err := h.eng.Signatures(spec)
		if err != nil {
			return err
		}
		for i := range want {
			if !slices.Equal(set.Sigs[i], want[i]) {
				return fmt.Errorf("calibration check: the store's signature of document %d under %s differs from the truth's", i, spec.ID())
			}
		}
		h.sigs[spec] = set.Sigs
	}
	return nil
}

// draw runs draw d: a new campaign, and a draw of pairs into it through campaign.Draw.
func (h *harness) draw(ctx context.Context, d int, t *Table) (db.Campaign, error) {
	start := time.Now()
	defer func() { t.DrawTime += time.Since(start) }()
	c, err := h.campaign(ctx, d, h.opt.Taus[0])
	if err != nil {
		return db.Campaign{}, err
	}
	if _, err := campaign.Draw(ctx, h.store, h.cache, "calibcheck", c, drawPlan(d, h.opt.Seed, h.opt.Labels)); err != nil {
		return db.Campaign{}, err
	}
	return c, nil
}

// campaign creates the campaign of draw d at tau.
func (h *harness) campaign(ctx context.Context, d int, tau float64) (db.Campaign, error) {
	c, err := h.store.EnsureCampaign(ctx, h.ds.ID, fmt.Sprintf("calibration draw %d, tau %.2f", d+1, tau), nil)
	if err != nil {
		return db.Campaign{}, err
	}
	if c.Spec != Word5() {
		return db.Campaign{}, fmt.Errorf("calibration check: campaign %d's representation is %s; the rule's is %s", c.ID, c.Spec, Word5())
	}
	return c, nil
}

// labelAndSweep labels the pairs drawn into campaign drawn by the rule at tau and sweeps
// the grid over them. The first tau labels them where they were drawn; every other tau
// gets a campaign of its own holding the same pairs with their design, as an import of
// labels with design columns makes them. It returns the sweep's results and the labels
// given.
func (h *harness) labelAndSweep(ctx context.Context, d int, tau float64, drawn db.Campaign, t *Table) ([]sweep.Result, int, error) {
	start := time.Now()
	c := drawn
	stored, err := h.store.SweepPairs(ctx, drawn.ID)
	if err != nil {
		return nil, 0, err
	}
	if tau != h.opt.Taus[0] {
		if c, err = h.campaign(ctx, d, tau); err != nil {
			return nil, 0, err
		}
	}
	n, err := h.label(ctx, c, tau, stored)
	if err != nil {
		return nil, 0, err
	}
	pairs, err := h.pairs(ctx, c)
	if err != nil {
		return nil, 0, err
	}
	t.LabelTime += time.Since(start)

	start = time.Now()
	results, err := h.sweep(ctx, c, pairs)
	t.SweepTime += time.Since(start)
	return results, n, err
}

// RuleAnnotator names the rule labels of tau.
func RuleAnnotator(tau float64) string { return fmt.Sprintf("rule-j%.2f", tau) }

// label gives every pair of stored a rule label in c (Duplicate at tau under the
// campaign's representation), as an import of rule-made labels stores them: an
// annotator's label without an account, which a person's label would override, carrying
// the design that drew the pair.
func (h *harness) label(ctx context.Context, c db.Campaign, tau float64, stored []db.SweepPair) (int, error) {
	yes, no := categoryFor(c.Categories, labels.Yes), categoryFor(c.Categories, labels.No)
	if yes == "" || no == "" {
		return 0, fmt.Errorf("calibration check: campaign %d has no category that says duplicate and one that says not", c.ID)
	}
	pop := h.eng.Population()
	out := make([]db.NewLabel, 0, len(stored))
	for _, p := range stored {
		a, okA := h.index[p.A]
		b, okB := h.index[p.B]
		if !okA || !okB {
			return 0, fmt.Errorf("calibration check: pair %d names a document outside the dataset", p.ID)
		}
		inter, union, same := pop.Counts(a, b)
		dup := Duplicate(inter, union, same, tau)
		cat := no
		if dup {
			cat = yes
		}
		out = append(out, db.NewLabel{DocA: p.A, DocB: p.B, Annotator: RuleAnnotator(tau), Kind: labels.KindLabel,
			Category: cat, Duplicate: dup, Note: fmt.Sprintf("rule: word 5-shingle J = %.4f, duplicate at J >= %.2f", jaccard(inter, union), tau),
			Design: p.Design, Stratum: p.Stratum, FrameSize: p.FrameSize})
	}
	return len(out), h.store.AddLabels(ctx, c.ID, out, "calibcheck")
}

func categoryFor(cats []labels.Category, d labels.Decision) string {
	for _, c := range cats {
		if c.Duplicate == d {
			return c.Key
		}
	}
	return ""
}

// pairs reads c's pairs as sweeprun does: each pair's standing labels, a label without
// an account being a rule's, and the design that drew it.
func (h *harness) pairs(ctx context.Context, c db.Campaign) ([]sweep.LabeledPair, error) {
	stored, err := h.store.SweepPairs(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	out := make([]sweep.LabeledPair, 0, len(stored))
	for _, p := range stored {
		a, okA := h.index[p.A]
		b, okB := h.index[p.B]
		if !okA || !okB {
			continue
		}
		lp := sweep.LabeledPair{ID: p.ID, A: a, B: b, Flagged: p.Flagged, Skipped: p.Skipped,
			Design: p.Design, Stratum: p.Stratum, FrameSize: p.FrameSize}
		for _, l := range p.Labels {
			lp.Labels = append(lp.Labels, sweep.Label{Annotator: l.Annotator, Kind: string(l.Kind), Category: l.Category,
				Duplicate: l.Duplicate, Rule: !l.ByAccount})
		}
		out = append(out, lp)
	}
	return out, nil
}

// sweep scores the grid on pairs, with sweeprun's seed, one sweep per representation;
// one per representation and verification when the sweep is given clusterers (a
// clusterer cannot tell which configuration it clusters, and its similarity for pairs
// no edge covers is the verification's).
func (h *harness) sweep(ctx context.Context, c db.Campaign, pairs []sweep.LabeledPair) ([]sweep.Result, error) {
	var out []sweep.Result
	for _, part := range h.opt.Grid {
		groups := [][]Verification{part.Verifications}
		if _, cls := sweepPolicies(h.opt.Policies, func(cluster.Policy, cluster.Criterion) sweep.Clusterer { return nil }); len(cls) > 0 {
			groups = groups[:0]
			for _, v := range part.Verifications {
				groups = append(groups, []Verification{v})
			}
		}
		for _, vs := range groups {
			var clusterErr error
			names, cls := sweepPolicies(h.opt.Policies, func(p cluster.Policy, r cluster.Criterion) sweep.Clusterer {
				return clustererOf(ctx, h.eng, h.sigs[part.Spec], part.Spec, vs[0], p, r, &clusterErr)
			})
			var verifs []sweep.Verification
			for _, v := range vs {
				verifs = append(verifs, sweep.Verification(v))
			}
			in := sweep.Input{
				Docs: sweep.Documents{Count: len(h.docs.IDs), ContentHash: h.docs.Hashes, Text: func(i int) string { return h.docs.Texts[i] }},
				Signatures: func(_ context.Context, spec lsh.Spec) ([]lsh.Signature, error) {
					s, ok := h.sigs[spec]
					if !ok {
						return nil, fmt.Errorf("calibration check: no signatures under %s", spec.ID())
					}
					return s, nil
				},
				Pairs: pairs, Categories: c.Categories, Policies: cls,
			}
			g := sweep.Grid{Specs: []lsh.Spec{part.Spec}, Shapes: part.Shapes, Thresholds: part.Thresholds,
				Verifications: verifs, Policies: names}
			rep, err := sweep.Run(ctx, in, g, sweep.Options{Seed: sweeprun.Seed})
			if err == nil {
				err = clusterErr
			}
			if err != nil {
				return nil, fmt.Errorf("calibration check: sweep of campaign %d: %w", c.ID, err)
			}
			out = append(out, rep.Results...)
		}
	}
	return out, nil
}

// clustererOf clusters a sweep's accepted edges under policy and rule with
// internal/cluster, as internal/dedup clusters a run's: exact groups under spec's
// normalization, the verification's similarity (sigs are spec's signatures) for pairs
// no edge covers. The first failure is kept in errp (a clusterer returns none).
func clustererOf(ctx context.Context, eng *Engine, sigs []lsh.Signature, spec lsh.Spec, v Verification, pol cluster.Policy, rule cluster.Criterion, errp *error) sweep.Clusterer {
	return func(n int, edges []sweep.Edge, t float64) []int32 {
		ids := make([]int32, n)
		for i := range ids {
			ids[i] = int32(i)
		}
		fail := func(err error) []int32 {
			if *errp == nil {
				*errp = err
			}
			return ids
		}
		var sim func(a, b int) float64
		if v == Exact {
			sets, err := eng.setsOf(ctx, spec)
			if err != nil {
				return fail(err)
			}
			sim = sets.Jaccard
		} else {
			sim = func(a, b int) float64 { return lsh.Estimate(sigs[a], sigs[b]) }
		}
		ce := make([]cluster.Edge, len(edges))
		for i, e := range edges {
			ce[i] = cluster.Edge{A: int(e.A), B: int(e.B), Sim: e.Similarity}
		}
		g, err := cluster.NewGraph(cluster.Input{Docs: eng.docs, Exact: eng.exactGroups(spec.Norm), Edges: ce, Sim: sim})
		if err != nil {
			return fail(err)
		}
		res, err := g.Cluster(cluster.Config{Threshold: t, Policy: pol, Rule: cluster.Rule{By: []cluster.Criterion{rule}}})
		if err != nil {
			return fail(err)
		}
		for i, a := range res.Assign {
			if a >= 0 {
				ids[i] = int32(n + a)
			}
		}
		return ids
	}
}

// covers reports whether iv contains x (ends included).
func covers(iv sweep.Interval, x float64) bool { return iv.Lo <= x && x <= iv.Hi }

// finite reports whether an interval's three numbers are all finite.
func finite(iv sweep.Interval) bool {
	return !math.IsNaN(iv.Value+iv.Lo+iv.Hi) && !math.IsInf(iv.Value+iv.Lo+iv.Hi, 0)
}
