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
	"time"

	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/frame"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
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
	// DefaultFirstPerBin and DefaultFirstRandom are a draw's first phase: pairs from
	// every bin of exact Jaccard and uniformly random pairs (21·10 + 20 = 230 labels).
	DefaultFirstPerBin = 10
	DefaultFirstRandom = 20
	// DefaultAudits is the audits simulated per eligible manifest (Audits).
	DefaultAudits = 1000
)

// DefaultTaus are the label rules: duplicate = identical normalized text or
// Jaccard >= tau, at tau = 0.5 and 0.7.
var DefaultTaus = []LabelRule{Cut(0.5), Cut(0.7)}

// FullTaus are the full check's label rules: the issue's, whose estimates are exact
// (LabelRule), and the ramp 0.6~0.15, whose mixed bins test the intervals' coverage.
var FullTaus = []LabelRule{Cut(0.5), Cut(0.7), {Tau: 0.6, Ramp: 0.15}}

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
	// Taus are the label rules, each labeled in draws of its own (DefaultTaus when nil).
	Taus []LabelRule
	// Draws is the number of independent draws (DefaultDraws when 0); Labels the labels
	// a draw may ask for, at most MaxLabels (MaxLabels when 0).
	Draws, Labels int
	// FirstPerBin and FirstRandom are a draw's first phase (DefaultFirstPerBin and
	// DefaultFirstRandom when both are 0); the rest of Labels follows the studio's
	// labeling plans (SecondPlan).
	FirstPerBin, FirstRandom int
	// GuardPlans makes the second phase follow recall's guard plans as well
	// (sweep.Model.GuardPlan; SecondPlan says why it is off by default).
	GuardPlans bool
	// Audits is the manifest audits simulated per eligible manifest (DefaultAudits
	// when 0, none when negative).
	Audits int
	// Seed makes the draws and audits repeatable: draw d's first phase draws with
	// Seed+d, and audit a of a manifest with Seed+a.
	Seed uint64
	// Log, when set, is told what the check does as it goes.
	Log func(format string, args ...any)
	// OnDraw, when set, is given the table after each draw (every label rule): the
	// figures so far, for a long check to show or save. It must not keep the table.
	OnDraw func(*Table)
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
	if o.FirstPerBin == 0 && o.FirstRandom == 0 {
		o.FirstPerBin, o.FirstRandom = DefaultFirstPerBin, DefaultFirstRandom
	}
	if o.Audits == 0 {
		o.Audits = DefaultAudits
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	first := o.FirstPerBin*frame.Default.Bins() + o.FirstRandom
	switch {
	case o.Draws < 0:
		return o, fmt.Errorf("calibration check: draws %d: want at least 1", o.Draws)
	case o.Labels < 0 || o.Labels > MaxLabels:
		return o, fmt.Errorf("calibration check: labels per draw %d: want 1 to %d", o.Labels, MaxLabels)
	case o.FirstPerBin < 0 || o.FirstRandom < 0 || first > o.Labels:
		return o, fmt.Errorf("calibration check: first phase of %d per bin and %d random pairs (%d labels): want at most the %d labels of a draw",
			o.FirstPerBin, o.FirstRandom, first, o.Labels)
	case len(o.Grid.Configs()) == 0:
		return o, errors.New("calibration check: the grid has no configuration")
	}
	for _, tau := range o.Taus {
		if err := tau.check(); err != nil {
			return o, fmt.Errorf("calibration check: %w", err)
		}
	}
	for _, p := range o.Policies {
		if _, err := cluster.ParsePolicy(string(p)); err != nil {
			return o, fmt.Errorf("calibration check: %w", err)
		}
	}
	return o, nil
}

// firstPlan is the first phase of draw d: FirstPerBin pairs from every bin of exact
// Jaccard and FirstRandom uniformly random pairs, what a person starts a campaign with
// on the "draw pairs" form.
func firstPlan(d int, opt Options) campaign.DrawPlan {
	return campaign.DrawPlan{PerBin: opt.FirstPerBin, Bin: -1, Random: opt.FirstRandom, Seed: opt.Seed + uint64(d)}
}

// secondSeed is the seed of draw d's second phase, apart from every first phase's.
func secondSeed(d int, opt Options) uint64 { return opt.Seed + uint64(d) + 1<<32 }

// estimatesOf reads one sweep result's estimates over the dataset: false removals under
// each keeper rule of Rules the result scored, and recall; ok is false when the result
// has no dataset estimate.
func estimatesOf(r sweep.Result) (fr map[cluster.Criterion]sweep.Interval, recall sweep.Interval, ok bool) {
	d := r.Dataset
	if d == nil || len(d.Rules) == 0 {
		return nil, sweep.Interval{}, false
	}
	fr = map[cluster.Criterion]sweep.Interval{}
	for _, re := range d.Rules {
		if c := cluster.Criterion(re.Rule); slices.Contains(Rules, c) {
			fr[c] = re.FalseRemovals
		}
	}
	return fr, d.Recall, true
}

// Check measures how well the sweep's estimates over the dataset cover the truth. It
// imports the population into a real store and, for each draw and label rule, labels as a
// person would: a new campaign, a first phase drawn through campaign.Draw (what the
// "draw pairs" form runs) and labeled by the rule (LabelRule.Duplicate), a sweep of the
// grid through sweeprun (what the sweep form starts), a second phase drawn where the
// studio's labeling plans put it (SecondPlan) and labeled, and a final sweep, whose
// results are compared with the truth of their configuration, policy and keeper rule.
// Signatures and the truth are computed once.
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
	if opt.Audits > 0 {
		start = time.Now()
		if t.Audits, err = Audits(outs, opt.Taus, opt.Audits, opt.Seed); err != nil {
			return nil, err
		}
		t.AuditTime = time.Since(start)
		opt.Log("audits: %d manifests with a true rate <= %.1f%%, %d audits of %d labels each (%.1f s)", len(t.Audits), 100*AuditRate,
			opt.Audits, AuditLabels, t.AuditTime.Seconds())
	}

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
	defer h.close()
	t.SetupTime = time.Since(start)
	opt.Log("store: dataset %d imported and signed (%.1f s)", h.ds.ID, t.SetupTime.Seconds())

	for d := range opt.Draws {
		for _, tau := range opt.Taus {
			lab := tau.ForDraw(d)
			results, err := h.labelAndSweep(ctx, d, tau, lab, t)
			if err != nil {
				return t, err
			}
			if err := t.add(tau, lab, results); err != nil {
				return t, err
			}
		}
		opt.Log("draw %d of %d done (%.1f s a draw so far)", d+1, opt.Draws, t.PerDraw().Seconds())
		if opt.OnDraw != nil {
			opt.OnDraw(t)
		}
	}
	return t, nil
}

// harness is the store side of a check: the imported dataset, its signatures, and the
// studio's sweep service over them, kept for every draw.
type harness struct {
	store *db.DB
	cache *sigcache.Cache
	jobs  *jobs.Registry
	runs  *sweeprun.Service
	ds    db.Dataset
	eng   *Engine
	opt   Options
	index map[int64]int // store id -> document index
}

// newHarness opens a fresh store at path, imports the population as a dataset (the
// documents in order, so store ids ascend with the population's indexes), signs it
// under the campaign's and the grid's representations, and starts a sweep service.
func newHarness(ctx context.Context, path string, eng *Engine, opt Options) (*harness, error) {
	store, err := db.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	h := &harness{store: store, cache: sigcache.New(store), eng: eng, opt: opt}
	if err := h.load(ctx); err != nil {
		store.Close()
		return nil, err
	}
	h.jobs = jobs.NewRegistry(context.WithoutCancel(ctx))
	h.runs = sweeprun.New(store, h.cache, h.jobs)
	return h, nil
}

func (h *harness) close() {
	if h.jobs != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = h.jobs.Shutdown(ctx) // every sweep was waited for; nothing is left to stop
	}
	h.store.Close()
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
	docs, err := h.store.SweepDocuments(ctx, h.ds.ID)
	if err != nil {
		return err
	}
	if len(docs.IDs) != len(pop.Docs) {
		return fmt.Errorf("calibration check: %d documents imported of %d", len(docs.IDs), len(pop.Docs))
	}
	h.index = make(map[int64]int, len(docs.IDs))
	for i, id := range docs.IDs {
		if docs.Texts[i] != pop.Docs[i].Text {
			return fmt.Errorf("calibration check: stored document %d (%s) is not the population's document %d", id, pop.Docs[i].ID, i)
		}
		if docs.Keep[i] != h.eng.docs[i] {
			return fmt.Errorf("calibration check: the keeper rules see stored document %d as %+v; the truth sees %+v", id, docs.Keep[i], h.eng.docs[i])
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
	}
	return nil
}

// campaign creates the campaign of draw d at tau.
func (h *harness) campaign(ctx context.Context, d int, tau LabelRule) (db.Campaign, error) {
	c, err := h.store.EnsureCampaign(ctx, h.ds.ID, fmt.Sprintf("calibration draw %d, tau %s", d+1, tau), nil)
	if err != nil {
		return db.Campaign{}, err
	}
	if c.Spec != Word5() {
		return db.Campaign{}, fmt.Errorf("calibration check: campaign %d's representation is %s; the rule's is %s", c.ID, c.Spec, Word5())
	}
	return c, nil
}

// labelAndSweep runs draw d at tau as a person would (Check) and returns the final
// sweep's results; lab is the rule its labels follow (tau.ForDraw(d)).
func (h *harness) labelAndSweep(ctx context.Context, d int, tau, lab LabelRule, t *Table) ([]sweep.Result, error) {
	ph := t.phase(tau)
	c, err := h.campaign(ctx, d, tau)
	if err != nil {
		return nil, err
	}
	// First phase: an even draw over the bins and some random pairs.
	n1, err := h.drawAndLabel(ctx, c, lab, firstPlan(d, h.opt), t)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	_, analyses, err := h.sweep(ctx, c, "first phase", true)
	t.SweepTime += time.Since(start)
	if err != nil {
		return nil, err
	}
	// Second phase: the rest of the budget where the studio's labeling plans put it.
	start = time.Now()
	sp := SecondPlan(analyses, h.opt.Labels-n1, h.opt.GuardPlans)
	t.PlanTime += time.Since(start)
	n2, err := h.drawAndLabel(ctx, c, lab, campaign.DrawPlan{Counts: sp.Counts, Bin: -1, Seed: secondSeed(d, h.opt)}, t)
	if err != nil {
		return nil, err
	}
	ph.record(n1, n2, sp)
	t.Labels += n1 + n2
	start = time.Now()
	rs, _, err := h.sweep(ctx, c, "final", false)
	t.SweepTime += time.Since(start)
	return rs, err
}

// drawAndLabel draws plan into c through campaign.Draw and gives each new pair its rule
// label at tau; it returns the pairs labeled.
func (h *harness) drawAndLabel(ctx context.Context, c db.Campaign, tau LabelRule, plan campaign.DrawPlan, t *Table) (int, error) {
	start := time.Now()
	if _, err := campaign.Draw(ctx, h.store, h.cache, "calibcheck", c, plan); err != nil {
		return 0, err
	}
	t.DrawTime += time.Since(start)
	start = time.Now()
	defer func() { t.LabelTime += time.Since(start) }()
	stored, err := h.store.SweepPairs(ctx, c.ID)
	if err != nil {
		return 0, err
	}
	return h.label(ctx, c, tau, stored)
}

// RuleAnnotator names the labels of a label rule.
func RuleAnnotator(tau LabelRule) string { return "rule-j" + tau.String() }

// label gives every pair of stored without a label a rule label in c (tau.Duplicate
// under the campaign's representation), as an import of rule-made labels stores them:
// an annotator's label without an account, which a person's label would override,
// carrying the design that drew the pair.
func (h *harness) label(ctx context.Context, c db.Campaign, tau LabelRule, stored []db.SweepPair) (int, error) {
	yes, no := categoryFor(c.Categories, labels.Yes), categoryFor(c.Categories, labels.No)
	if yes == "" || no == "" {
		return 0, fmt.Errorf("calibration check: campaign %d has no category that says duplicate and one that says not", c.ID)
	}
	pop := h.eng.Population()
	var out []db.NewLabel
	for _, p := range stored {
		if len(p.Labels) > 0 {
			continue
		}
		a, okA := h.index[p.A]
		b, okB := h.index[p.B]
		if !okA || !okB {
			return 0, fmt.Errorf("calibration check: pair %d names a document outside the dataset", p.ID)
		}
		inter, union, same := pop.Counts(a, b)
		dup := tau.Duplicate(int32(a), int32(b), inter, union, same)
		cat := no
		if dup {
			cat = yes
		}
		out = append(out, db.NewLabel{DocA: p.A, DocB: p.B, Origin: p.Origin, Annotator: RuleAnnotator(tau), Kind: labels.KindLabel,
			Category: cat, Duplicate: dup, Note: fmt.Sprintf("rule %s: word 5-shingle J = %.4f", tau, jaccard(inter, union)),
			Design: p.Design, Stratum: p.Stratum, FrameSize: p.FrameSize})
	}
	if len(out) == 0 {
		return 0, nil
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

// sweep scores the grid on c's labels through the studio's sweep service, one sweep per
// representation (a grid is every combination of its axes) with every policy, as the
// sweep form starts one, and waits for each. With analyze it also returns each sweep's
// analysis as the dashboard reads it (results and the model, restored from the store).
func (h *harness) sweep(ctx context.Context, c db.Campaign, name string, analyze bool) ([]sweep.Result, []*sweeprun.Analysis, error) {
	var out []sweep.Result
	var analyses []*sweeprun.Analysis
	for i, part := range h.opt.Grid {
		var verifs []sweep.Verification
		for _, v := range part.Verifications {
			verifs = append(verifs, sweep.Verification(v))
		}
		g := sweep.Grid{Specs: []lsh.Spec{part.Spec}, Shapes: part.Shapes, Thresholds: part.Thresholds, Verifications: verifs, Policies: h.opt.Policies}
		sw, err := h.runs.Start(ctx, sweeprun.StartRequest{CampaignID: c.ID, Name: fmt.Sprintf("%s, %s", name, part.Spec), Grid: g})
		if err != nil {
			return nil, nil, fmt.Errorf("calibration check: sweep %d of campaign %d: %w", i+1, c.ID, err)
		}
		if sw, err = h.runs.Wait(ctx, sw.ID); err != nil {
			return nil, nil, err
		}
		if sw.State != sweeprun.Done {
			return nil, nil, fmt.Errorf("calibration check: sweep %d of campaign %d ended %s: %s", sw.ID, c.ID, sw.State, sw.Error)
		}
		rs, err := h.runs.Results(ctx, sw.ID)
		if err != nil {
			return nil, nil, err
		}
		for _, r := range rs {
			out = append(out, r.Result)
		}
		if !analyze {
			continue
		}
		a, err := h.runs.Analyze(ctx, sw.ID, sweep.DefaultTarget)
		if err != nil {
			return nil, nil, err
		}
		analyses = append(analyses, a)
	}
	return out, analyses, nil
}

// covers reports whether iv contains x (ends included).
func covers(iv sweep.Interval, x float64) bool { return iv.Lo <= x && x <= iv.Hi }

// finite reports whether an interval's three numbers are all finite.
func finite(iv sweep.Interval) bool {
	return !math.IsNaN(iv.Value+iv.Lo+iv.Hi) && !math.IsInf(iv.Value+iv.Lo+iv.Hi, 0)
}
