package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/frame"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/words"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// The campaign page: progress, coverage, agreement, the adjudication queue, drawing
// pairs and the settings.

// idParam reads a positive id from the URL parameter name.
func idParam(r *http.Request, name string) (int64, bool) {
	return parseID(chi.URLParam(r, name))
}

// loadByID loads what the id in the URL parameter param names with load: a malformed id,
// or one load does not find (db.ErrNotFound), is a 404 that says "No such what.".
func loadByID[T any](r *http.Request, param, what string, load func(context.Context, int64) (T, error)) (T, error) {
	id, ok := idParam(r, param)
	if !ok {
		var zero T
		return zero, notFound(what)
	}
	v, err := load(r.Context(), id)
	if errors.Is(err, db.ErrNotFound) {
		return v, notFound(what)
	}
	return v, err
}

// loaded adapts a handler of the one thing its URL names (the {campaign} of
// /campaigns/{campaign}, ...): load reads it first, and a failure to (a malformed id,
// none such, the store's error) is answered as every page answers one, so the handler
// starts with what it works on.
func loaded[T any](s *server, load func(*http.Request) (T, error), h func(http.ResponseWriter, *http.Request, T)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := load(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		h(w, r, v)
	}
}

// loaded2 is loaded for a URL that names two things, the second within the first (a
// manifest's {cluster}, a campaign's {pair}).
func loaded2[A, B any](s *server, load func(*http.Request) (A, B, error), h func(http.ResponseWriter, *http.Request, A, B)) http.HandlerFunc {
	type both struct {
		a A
		b B
	}
	return loaded(s, func(r *http.Request) (both, error) {
		a, b, err := load(r)
		return both{a, b}, err
	}, func(w http.ResponseWriter, r *http.Request, v both) { h(w, r, v.a, v.b) })
}

// loadCampaign loads the {campaign} of the URL.
func (s *server) loadCampaign(r *http.Request) (db.Campaign, error) {
	return loadByID(r, "campaign", "campaign", s.store.Campaign)
}

func (s *server) showCampaign(w http.ResponseWriter, r *http.Request, c db.Campaign) {
	v, err := s.campaignView(r, c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, templates.CampaignPage(v))
}

// failOnCampaign shows err on the campaign page when the person can fix it there,
// keeping what they sent in the form.
func (s *server) failOnCampaign(w http.ResponseWriter, r *http.Request, c db.Campaign, err error) {
	s.failOn(w, r, err, func(_ int, msg string) { s.redirect(w, r, fmt.Sprintf("/campaigns/%d", c.ID), refused(r, msg)) })
}

// campaignView builds the campaign page. Its label figures come from the tallies, in one
// look (s.tally): counting them from the store for each view took seconds at a million
// label events, and 200 people viewing at once queued behind each other.
func (s *server) campaignView(r *http.Request, c db.Campaign) (templates.Campaign, error) {
	role := userOf(r).Role
	f, err := s.tally.Figures(r.Context(), c, role.Can(auth.ReadLabels))
	if err != nil {
		return templates.Campaign{}, err
	}
	o := f.Overview
	ds, err := s.store.Dataset(r.Context(), c.DatasetID)
	if err != nil {
		return templates.Campaign{}, err
	}
	v := templates.Campaign{
		Page: s.page(r, "Labeling "+c.Name), ID: c.ID, Name: c.Name, Dataset: fmt.Sprintf("%s v%d", ds.Name, ds.Version),
		Spec: c.Spec.String(), SpecID: c.Spec.ID(), Threshold: fmtNum(c.Threshold, 2), Overlap: c.Overlap, DoubleShare: fmtNum(c.DoubleShare, 2),
		Pairs: o.Pairs, Complete: o.Complete, Target: o.Target, Given: o.Given,
		Categories: categoryViews(c.Categories), BinLabels: o.BinLabels, DrawBins: drawBinLabels(), Coverage: coverageRows(c.Categories, o),
		AgreeUnits: o.Agreement.Units, Alpha: fmtNum(o.Agreement.Alpha, 3), PercentAgree: fmtNum(100*o.Agreement.PercentAgreement, 1) + "%",
		ConfusionCats: o.Agreement.Categories, Confusion: o.Agreement.Confusion, AlphaNote: alphaNote(o.Agreement.Alpha),
		CanLabel: role.Can(auth.Label), CanManage: role.Can(auth.ManageCampaigns), CanAdjudicate: role.Can(auth.Adjudicate),
		CanReadLabels: role.Can(auth.ReadLabels), CanRunSweeps: role.Can(auth.RunSweeps), WhoRunsSweeps: whoCan(auth.RunSweeps),
		CategoryText: labels.FormatCategories(c.Categories), Pairless: pairlessOf(userOf(r), ds.Docs),
	}
	if !v.CanLabel {
		v.WhoLabels = whoCan(auth.Label)
	}
	if !v.CanManage {
		v.WhoManages = whoCan(auth.ManageCampaigns)
	}
	if !v.CanReadLabels || !v.CanAdjudicate {
		v.WhoAdjudicates = whoCan(auth.Adjudicate)
	}
	// The forms, as sent when they were refused.
	v.Spec, v.Threshold = formValue(r, "spec", v.Spec), formValue(r, "threshold", v.Threshold)
	v.OverlapText, v.DoubleShare = formValue(r, "overlap", fmt.Sprint(c.Overlap)), formValue(r, "double_share", v.DoubleShare)
	v.CategoryText = formValue(r, "categories", v.CategoryText)
	v.PerBin, v.Boundary, v.Random = formValue(r, "per_bin", "10"), formValue(r, "boundary", "10"), formValue(r, "random", "10")
	if o.Target > 0 {
		v.Percent = 100 * o.Given / o.Target
	}
	v.Overrides = overrides(c, f.Answers)
	if !v.CanReadLabels {
		return v, nil // labels stay blind: nobody's but one's own
	}
	for _, k := range o.Agreement.Pairs {
		v.Kappas = append(v.Kappas, templates.KappaRow{A: k.A, B: k.B, Units: k.Units, Observed: fmtNum(100*k.Observed, 0) + "%", Kappa: fmtNum(k.Kappa, 3)})
	}
	for _, d := range f.Queue {
		parts := make([]string, len(d.Labels))
		for i, l := range d.Labels {
			parts[i] = fmt.Sprintf("%s: %s/%s", l.Annotator, l.Category, yesNo(l.Duplicate))
		}
		v.Disagreements = append(v.Disagreements, templates.DisagreementRow{PairID: d.PairID, Similarity: fmtNum(d.Similarity, 3),
			Answers: d.Answers, Labels: strings.Join(parts, "; ")})
	}
	return v, nil
}

// alphaNote reads Krippendorff's alpha the way the literature does.
func alphaNote(a float64) string {
	switch {
	case math.IsNaN(a):
		return "(undefined: one category only)"
	case a >= 0.8:
		return "(reliable: at least 0.8)"
	case a >= 0.667:
		return "(tentative: 0.667 to 0.8)"
	default:
		return "(below 0.667: revisit the guidelines)"
	}
}

func categoryViews(cats []labels.Category) []templates.CategoryView {
	out := make([]templates.CategoryView, len(cats))
	for i, c := range cats {
		out[i] = templates.CategoryView{Key: i + 1, ID: c.Key, Name: c.Name, Duplicate: string(c.Duplicate), Help: c.Help}
	}
	return out
}

func fmtNum(x float64, digits int) string {
	if math.IsNaN(x) {
		return "–"
	}
	return strconv.FormatFloat(x, 'f', digits, 64)
}

// fmtCount writes a count estimated as a real number for people: rounded, with
// thousands separators (114,833), "–" for NaN.
func fmtCount(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "–"
	}
	return words.Thousands(int(math.Round(x)))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// formFloat reads a number from the form (parseDecimal); one that does not parse is
// NaN, which every range check refuses by the field's name.
func formFloat(r *http.Request, name string) float64 {
	x, ok := parseDecimal(r.PostFormValue(name))
	if !ok {
		return math.NaN()
	}
	return x
}

// formInt reads a whole number from the form (parseWhole); one that does not parse is
// math.MinInt, which every range check refuses by the field's name.
func formInt(r *http.Request, name string) int {
	n, ok := parseWhole(r.PostFormValue(name))
	if !ok {
		return math.MinInt
	}
	return n
}

func (s *server) saveCampaignSettings(w http.ResponseWriter, r *http.Request, c db.Campaign) {
	settings, err := parseSettings(r)
	if err == nil {
		err = campaign.Update(r.Context(), s.store, userOf(r).Name, c, settings)
	}
	if err != nil {
		s.failOnCampaign(w, r, c, err)
		return
	}
	s.redirect(w, r, fmt.Sprintf("/campaigns/%d", c.ID), done("Settings saved."))
}

// parseSettings reads the settings form; a form without the categories field keeps the
// campaign's list.
func parseSettings(r *http.Request) (campaign.Settings, error) {
	spec, err := lsh.ParseSpec(r.PostFormValue("spec"))
	if err != nil {
		return campaign.Settings{}, err
	}
	st := campaign.Settings{Spec: spec, Threshold: formFloat(r, "threshold"), Overlap: formInt(r, "overlap"), DoubleShare: formFloat(r, "double_share")}
	if err := st.Check(); err != nil {
		return st, err
	}
	if r.PostForm.Has("categories") {
		if st.Categories, err = labels.ParseCategories(r.PostFormValue("categories")); err != nil {
			return st, badInput(err)
		}
	}
	return st, nil
}

func (s *server) samplePairs(w http.ResponseWriter, r *http.Request, c db.Campaign) {
	plan, err := drawPlanOf(r)
	if err != nil {
		s.failOnCampaign(w, r, c, err)
		return
	}
	plan.Seed = uint64(s.now().UnixNano())
	added, err := campaign.Draw(r.Context(), s.store, s.sigs, userOf(r).Name, c, plan)
	if err != nil {
		s.failOnCampaign(w, r, c, err)
		return
	}
	s.redirect(w, r, fmt.Sprintf("/campaigns/%d", c.ID), done(templates.Plural(added, "pair drawn", "pairs drawn")+
		", in the labeling queue now."))
}

// drawPlanOf reads the draw form: pairs per bin (or one bin), near the threshold and at
// random; or, from a sweep's labeling plan, counts per bin ("counts", comma-separated)
// of a bin scheme ("scheme") under a representation ("rep").
func drawPlanOf(r *http.Request) (campaign.DrawPlan, error) {
	plan := campaign.DrawPlan{PerBin: formInt(r, "per_bin"), Bin: formInt(r, "bin"), Boundary: formInt(r, "boundary"),
		Random: formInt(r, "random")}
	if v := r.PostFormValue("scheme"); v != "" {
		sc, err := frame.ParseScheme(v)
		if err != nil {
			return plan, &formError{field: "scheme", msg: err.Error()}
		}
		plan.Scheme = sc
	}
	if v := r.PostFormValue("rep"); v != "" {
		spec, err := lsh.ParseSpec(v)
		if err != nil {
			return plan, &formError{field: "rep", msg: err.Error()}
		}
		plan.Rep = &spec
	}
	if v := r.PostFormValue("counts"); v != "" {
		for i, part := range strings.Split(v, ",") {
			n, ok := parseWhole(strings.TrimSpace(part)) // "1, 2": the space is the list's
			if !ok {
				return plan, &formError{field: "counts", msg: fmt.Sprintf("item %d: %q is not a whole number", i+1, part)}
			}
			plan.Counts = append(plan.Counts, n)
		}
		// A plan draws its counts; near-threshold and random pairs only when asked for.
		plan.PerBin, plan.Bin = 0, -1
		for _, f := range []*int{&plan.Boundary, &plan.Random} {
			if *f == math.MinInt {
				*f = 0
			}
		}
	}
	return plan, nil
}

// drawBinLabels names the bins a draw stratifies by (frame.Default), for its form.
func drawBinLabels() []string {
	out := make([]string, frame.Default.Bins())
	for b := range out {
		out[b] = frame.Default.Label(b)
	}
	return out
}

// startCampaign opens the default labeling campaign of a dataset (idempotent): whoever
// may manage campaigns, admins included, can start one.
func (s *server) startCampaign(w http.ResponseWriter, r *http.Request) {
	c, err := loadByID(r, "dataset", "dataset", func(ctx context.Context, id int64) (db.Campaign, error) {
		return campaign.Start(ctx, s.store, id)
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.redirect(w, r, fmt.Sprintf("/campaigns/%d", c.ID), done("Campaign “"+c.Name+"” started. Draw pairs to label below."))
}

// coverageRows lays the coverage matrix out: a row per category, two (duplicate, not a
// duplicate) for a category whose pairs were answered both ways, then the unlabeled.
func coverageRows(cats []labels.Category, o labels.Overview) []templates.CoverageRow {
	var rows []templates.CoverageRow
	for i, c := range cats {
		dup := o.CoverageDup[i]
		not := make([]int, len(o.Coverage[i]))
		var nDup, nNot int
		for j, n := range o.Coverage[i] {
			not[j] = n - dup[j]
			nDup, nNot = nDup+dup[j], nNot+not[j]
		}
		if nDup > 0 && nNot > 0 {
			rows = append(rows, templates.CoverageRow{Name: c.Name, Answer: "duplicate", Cells: dup},
				templates.CoverageRow{Name: c.Name, Answer: "not a duplicate", Cells: not})
			continue
		}
		rows = append(rows, templates.CoverageRow{Name: c.Name, Cells: o.Coverage[i]})
	}
	return append(rows, templates.CoverageRow{Unlabeled: true, Cells: o.Coverage[len(cats)]})
}

// overrides picks out of c's standing labels counted by answer (db.Answers) those
// whose duplicate answer contradicts their category (an exact copy that is not a
// duplicate).
func overrides(c db.Campaign, answers []db.Answer) []templates.OverrideView {
	var out []templates.OverrideView
	for _, a := range answers {
		cat, ok := labels.Find(c.Categories, a.Category)
		if !ok || !labels.Overrides(cat, a.Duplicate) {
			continue
		}
		out = append(out, templates.OverrideView{Category: cat.Name, Says: answerText(cat.Duplicate == labels.Yes), Given: answerText(a.Duplicate), N: a.N})
	}
	return out
}

func answerText(dup bool) string {
	if dup {
		return "duplicate"
	}
	return "not a duplicate"
}

// pairlessOf is a dataset of docs documents as the pages say it has no pairs (fewer than
// two documents), for viewer u; nil when it has two or more.
func pairlessOf(u *db.User, docs int) *templates.Pairless {
	if docs >= 2 {
		return nil
	}
	p := &templates.Pairless{Docs: docs}
	if u != nil && u.Role.Can(auth.ImportData) {
		p.CanImport = true
	} else {
		p.WhoImports = whoCan(auth.ImportData)
	}
	return p
}
