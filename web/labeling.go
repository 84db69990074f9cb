package web

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// charSpec is the second representation shown on the pair page.
var charSpec = lsh.Spec{Scheme: lsh.Classic, Norm: lsh.Norm{NFKC: true, Lower: true, CollapseSpace: true}, Level: lsh.Char, Size: 5, Hashes: 1, Hash: lsh.XXHash, Seed: 1}

const bins = 10

func idParam(r *http.Request, name string) (int64, bool) {
	id, err := strconv.ParseInt(chi.URLParam(r, name), 10, 64)
	return id, err == nil && id > 0
}

// campaign loads the {campaign} of the URL; it writes a 404 and returns false when
// there is none.
func (s *server) campaign(w http.ResponseWriter, r *http.Request) (db.Campaign, []labels.Category, bool) {
	id, ok := idParam(r, "campaign")
	if !ok {
		s.renderError(w, r, http.StatusNotFound, "No such campaign.")
		return db.Campaign{}, nil, false
	}
	c, err := s.store.Campaign(r.Context(), id)
	if errors.Is(err, db.ErrNotFound) {
		s.renderError(w, r, http.StatusNotFound, "No such campaign.")
		return c, nil, false
	}
	if err != nil {
		s.internalError(w, r, err)
		return c, nil, false
	}
	var cats []labels.Category
	if err := json.Unmarshal(c.Categories, &cats); err != nil || len(cats) == 0 {
		cats = labels.DefaultCategories
	}
	return c, cats, true
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

// pairStates joins a campaign's pairs with their standing labels.
func (s *server) pairStates(r *http.Request, c db.Campaign) ([]labels.PairState, []db.CurrentLabel, error) {
	stats, err := s.store.PairStats(r.Context(), c.ID)
	if err != nil {
		return nil, nil, err
	}
	cur, err := s.store.CurrentLabels(r.Context(), c.ID)
	if err != nil {
		return nil, nil, err
	}
	byPair := map[int64][]labels.Label{}
	for _, l := range cur {
		byPair[l.PairID] = append(byPair[l.PairID], labels.Label{Annotator: l.Annotator, Kind: l.Kind, Category: l.Category, Duplicate: l.Duplicate})
	}
	out := make([]labels.PairState, len(stats))
	for i, p := range stats {
		sim := math.NaN()
		if p.Similarity.Valid {
			sim = p.Similarity.Float64
		}
		out[i] = labels.PairState{ID: p.ID, Similarity: sim, Wanted: p.Wanted, Labels: byPair[p.ID]}
	}
	return out, cur, nil
}

func (s *server) showCampaign(w http.ResponseWriter, r *http.Request) {
	c, cats, ok := s.campaign(w, r)
	if !ok {
		return
	}
	s.renderCampaign(w, r, c, cats, http.StatusOK, r.URL.Query().Get("msg"), "")
}

func (s *server) renderCampaign(w http.ResponseWriter, r *http.Request, c db.Campaign, cats []labels.Category, status int, msg, errMsg string) {
	states, _, err := s.pairStates(r, c)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	ds, err := s.store.Dataset(r.Context(), c.DatasetID)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	spec, _ := ingest.CampaignSpec(c)
	o := labels.Summarize(states, cats, bins, c.Threshold)
	role := auth.Role(userOf(r).Role)
	v := templates.Campaign{
		Page: s.page(r, "Labeling "+c.Name), ID: c.ID, Name: c.Name, Dataset: fmt.Sprintf("%s v%d", ds.Name, ds.Version),
		Spec: spec.String(), SpecID: spec.ID(), Threshold: fmtNum(c.Threshold, 2), Overlap: c.Overlap, DoubleShare: fmtNum(c.DoubleShare, 2),
		Pairs: o.Pairs, Complete: o.Complete, Target: o.Target, Given: o.Given,
		Categories: categoryViews(cats), BinLabels: o.BinLabels, Coverage: o.Coverage,
		AgreeUnits: o.Agreement.Units, Alpha: fmtNum(o.Agreement.Alpha, 3), PercentAgree: fmtNum(100*o.Agreement.PercentAgreement, 1) + "%",
		ConfusionCats: o.Agreement.Categories, Confusion: o.Agreement.Confusion,
		CanLabel: role.Can(auth.Label), CanManage: role.Can(auth.ManageCampaigns), CanAdjudicate: role.Can(auth.Adjudicate),
		Message: msg, Error: errMsg, CategoryText: labels.FormatCategories(cats),
	}
	if o.Target > 0 {
		v.Percent = 100 * o.Given / o.Target
	}
	switch a := o.Agreement.Alpha; {
	case math.IsNaN(a):
		v.AlphaNote = "(undefined: one category only)"
	case a >= 0.8:
		v.AlphaNote = "(reliable: at least 0.8)"
	case a >= 0.667:
		v.AlphaNote = "(tentative: 0.667 to 0.8)"
	default:
		v.AlphaNote = "(below 0.667: revisit the guidelines)"
	}
	for _, k := range o.Agreement.Pairs {
		v.Kappas = append(v.Kappas, templates.KappaRow{A: k.A, B: k.B, Units: k.Units, Observed: fmtNum(100*k.Observed, 0) + "%", Kappa: fmtNum(k.Kappa, 3)})
	}
	for _, d := range o.Disagreements {
		var parts []string
		for _, l := range d.Labels {
			parts = append(parts, fmt.Sprintf("%s: %s/%s", l.Annotator, l.Category, yesNo(l.Duplicate)))
		}
		v.Disagreements = append(v.Disagreements, templates.DisagreementRow{PairID: d.PairID, Similarity: fmtNum(d.Similarity, 3), Labels: strings.Join(parts, "; ")})
	}
	s.render(w, r, status, templates.CampaignPage(v))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func (s *server) saveCampaignSettings(w http.ResponseWriter, r *http.Request) {
	c, cats, ok := s.campaign(w, r)
	if !ok {
		return
	}
	fail := func(msg string) { s.renderCampaign(w, r, c, cats, http.StatusUnprocessableEntity, "", msg) }
	spec, err := lsh.ParseSpec(r.PostFormValue("spec"))
	if err != nil {
		fail(err.Error())
		return
	}
	threshold, err1 := strconv.ParseFloat(r.PostFormValue("threshold"), 64)
	overlap, err2 := strconv.Atoi(r.PostFormValue("overlap"))
	share, err3 := strconv.ParseFloat(r.PostFormValue("double_share"), 64)
	switch {
	case err1 != nil || threshold < 0 || threshold > 1:
		fail("threshold: want a number between 0 and 1")
		return
	case err2 != nil || overlap < 1 || overlap > 10:
		fail("labels per pair: want a whole number from 1 to 10")
		return
	case err3 != nil || share < 0 || share > 1:
		fail("share labeled twice: want a number between 0 and 1")
		return
	}
	newCats := cats // a form without the field keeps the list
	if r.PostForm.Has("categories") {
		if newCats, err = labels.ParseCategories(r.PostFormValue("categories")); err != nil {
			fail(err.Error())
			return
		}
	}
	// A category that labels use cannot leave the list.
	cur, err := s.store.CurrentLabels(r.Context(), c.ID)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	used := map[string]int{}
	for _, l := range cur {
		used[l.Category]++
	}
	for key, n := range used {
		if _, ok := labels.Find(newCats, key); !ok {
			fail(fmt.Sprintf("category %q has %d standing label(s): keep it in the list", key, n))
			return
		}
	}
	catJSON, _ := json.Marshal(newCats)
	changedSpec := spec.String() != specOf(c).String()
	c.Spec, c.Threshold, c.Overlap, c.DoubleShare, c.Categories = spec.String(), threshold, overlap, share, catJSON
	if err := s.store.UpdateCampaign(r.Context(), userOf(r).Name, c); err != nil {
		s.internalError(w, r, err)
		return
	}
	if changedSpec {
		if err := s.store.ClearPairScores(r.Context(), c.ID); err != nil {
			s.internalError(w, r, err)
			return
		}
		if _, err := ingest.ScorePairs(r.Context(), s.store, c); err != nil {
			s.internalError(w, r, err)
			return
		}
	}
	http.Redirect(w, r, fmt.Sprintf("/campaigns/%d?msg=%s", c.ID, "Settings saved."), http.StatusSeeOther)
}

func specOf(c db.Campaign) lsh.Spec {
	spec, err := ingest.CampaignSpec(c)
	if err != nil {
		return lsh.DefaultSpec()
	}
	return spec
}

func (s *server) samplePairs(w http.ResponseWriter, r *http.Request) {
	c, cats, ok := s.campaign(w, r)
	if !ok {
		return
	}
	num := func(name string, lo, hi int) (int, bool) {
		n, err := strconv.Atoi(strings.TrimSpace(r.PostFormValue(name)))
		if err != nil || n < lo || n > hi {
			s.renderCampaign(w, r, c, cats, http.StatusUnprocessableEntity, "", fmt.Sprintf("%s: want a whole number from %d to %d", name, lo, hi))
			return 0, false
		}
		return n, true
	}
	perBin, ok1 := num("per_bin", 0, 1000)
	if !ok1 {
		return
	}
	bin, ok2 := num("bin", -1, bins-1)
	if !ok2 {
		return
	}
	boundary, ok3 := num("boundary", 0, 1000)
	if !ok3 {
		return
	}
	random, ok4 := num("random", 0, 1000)
	if !ok4 {
		return
	}
	docs, err := s.store.DatasetTexts(r.Context(), c.DatasetID)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	existing, err := s.existingPairs(r, c.ID)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.Text
	}
	spec := specOf(c)
	sigs, err := s.datasetSignatures(r, spec, c.DatasetID, docs)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	drawn, err := labels.DrawWith(texts, sigs, spec, labels.Plan{Bins: bins, PerBin: perBin, TargetBin: bin, Boundary: boundary,
		Threshold: c.Threshold, Random: random, Overlap: c.Overlap, DoubleShare: c.DoubleShare, Seed: uint64(s.now().UnixNano())},
		func(a, b int) bool { return existing[[2]int64{docs[a].ID, docs[b].ID}] })
	if err != nil {
		s.renderCampaign(w, r, c, cats, http.StatusUnprocessableEntity, "", err.Error())
		return
	}
	pairs := make([]db.NewPair, len(drawn))
	for i, d := range drawn {
		pairs[i] = db.NewPair{DocA: docs[d.A].ID, DocB: docs[d.B].ID, Origin: d.Origin, Scored: true, Similarity: d.Similarity, Estimate: d.Estimate, Wanted: d.Wanted}
	}
	added, err := s.store.AddPairs(r.Context(), c.ID, pairs, userOf(r).Name)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/campaigns/%d?msg=%d+pairs+drawn.", c.ID, added), http.StatusSeeOther)
}

// datasetSignatures returns the documents' signatures under spec, from the store's
// cache where they are there, computing and caching the rest.
func (s *server) datasetSignatures(r *http.Request, spec lsh.Spec, datasetID int64, docs []db.DocText) ([]lsh.Signature, error) {
	if err := s.store.EnsureRepresentation(r.Context(), spec.ID(), spec.String()); err != nil {
		return nil, err
	}
	cached, err := s.store.CachedSignatures(r.Context(), spec.ID(), datasetID)
	if err != nil {
		return nil, err
	}
	sigs := make([]lsh.Signature, len(docs))
	var missing []int
	for i, d := range docs {
		if b, ok := cached[d.ID]; ok {
			if sig, valid := lsh.SignatureFromBytes(b); valid && len(sig) == spec.Hashes {
				sigs[i] = sig
				continue
			}
		}
		missing = append(missing, i)
	}
	if len(missing) == 0 {
		return sigs, nil
	}
	texts := make([]string, len(missing))
	for j, i := range missing {
		texts[j] = docs[i].Text
	}
	computed, err := spec.Signatures(texts)
	if err != nil {
		return nil, err
	}
	store := make(map[int64][]byte, len(missing))
	for j, i := range missing {
		sigs[i] = computed[j]
		store[docs[i].ID] = computed[j].Bytes()
	}
	return sigs, s.store.StoreSignatures(r.Context(), spec.ID(), store)
}

// existingPairs maps a campaign's pairs by document ids (both orders).
func (s *server) existingPairs(r *http.Request, campaignID int64) (map[[2]int64]bool, error) {
	cur, err := s.store.PairDocs(r.Context(), campaignID)
	if err != nil {
		return nil, err
	}
	m := map[[2]int64]bool{}
	for _, p := range cur {
		m[[2]int64{p.DocA, p.DocB}] = true
		m[[2]int64{p.DocB, p.DocA}] = true
	}
	return m, nil
}

func (s *server) nextPair(w http.ResponseWriter, r *http.Request) {
	c, _, ok := s.campaign(w, r)
	if !ok {
		return
	}
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	id, err := s.store.NextPair(r.Context(), c.ID, userOf(r).Name, after)
	if errors.Is(err, db.ErrNotFound) && after != 0 {
		id, err = s.store.NextPair(r.Context(), c.ID, userOf(r).Name, 0)
	}
	if errors.Is(err, db.ErrNotFound) {
		s.render(w, r, http.StatusOK, templates.QueueEmpty(s.page(r, "Queue empty"), c.ID))
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/campaigns/%d/pairs/%d", c.ID, id), http.StatusSeeOther)
}

func (s *server) showPair(w http.ResponseWriter, r *http.Request) {
	s.renderPair(w, r, http.StatusOK, "", "")
}

// campaignPair loads the {campaign} of the URL and reads its {pair} id; it writes a 404
// and returns false when either is not there.
func (s *server) campaignPair(w http.ResponseWriter, r *http.Request) (db.Campaign, []labels.Category, int64, bool) {
	c, cats, ok := s.campaign(w, r)
	if !ok {
		return c, nil, 0, false
	}
	pairID, ok := idParam(r, "pair")
	if !ok {
		s.renderError(w, r, http.StatusNotFound, "No such pair in this campaign.")
	}
	return c, cats, pairID, ok
}

func (s *server) renderPair(w http.ResponseWriter, r *http.Request, status int, errMsg, saved string) {
	c, cats, pairID, ok := s.campaignPair(w, r)
	if !ok {
		return
	}
	p, err := s.store.Pair(r.Context(), c.ID, pairID)
	if errors.Is(err, db.ErrNotFound) {
		s.renderError(w, r, http.StatusNotFound, "No such pair in this campaign.")
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	me := userOf(r)
	role := auth.Role(me.Role)
	adjudicate := r.URL.Query().Get("adjudicate") != "" || r.PostFormValue("adjudicate") != ""
	if adjudicate && !role.Can(auth.Adjudicate) {
		s.renderError(w, r, http.StatusForbidden, "Your role does not adjudicate.")
		return
	}
	spec := specOf(c)
	view := r.URL.Query().Get("view")
	if view != "shared" && view != "unified" {
		view = "diff"
	}
	v := templates.PairPage{Page: s.page(r, fmt.Sprintf("Pair %d", p.ID)), CampaignID: c.ID, PairID: p.ID, Origin: p.Origin, View: view,
		SpecID: spec.ID(), Categories: categoryViews(cats), Adjudicate: adjudicate, CanLabel: role.Can(auth.Label) || adjudicate,
		Error: errMsg, Saved: saved}
	// The pair's scores under the campaign's representation are stored with it (kept
	// current when the representation changes); only a pair never scored is hashed here.
	sim, est := p.Similarity.Float64, p.Estimate.Float64
	if !p.Similarity.Valid || !p.Estimate.Valid {
		h, _ := lsh.NewHasher(spec)
		sim, est = labels.Score(h, p.A.Text, p.B.Text)
	}
	hc, _ := lsh.NewHasher(charSpec)
	v.Jaccard, v.Estimate = fmtNum(sim, 3), fmtNum(est, 3)
	v.JaccardChar = fmtNum(lsh.ExactJaccard(hc.ShingleSet(p.A.Text), hc.ShingleSet(p.B.Text)), 3)
	size := spec.Size
	if spec.Level != lsh.Word {
		size = 5
	}
	v.Left = templates.DocView{ID: p.A.ID, ExtID: p.A.ExtID, Source: p.A.Source, Lang: p.A.Lang, Bytes: len(p.A.Text)}
	v.Right = templates.DocView{ID: p.B.ID, ExtID: p.B.ExtID, Source: p.B.Source, Lang: p.B.Lang, Bytes: len(p.B.Text)}
	if view == "shared" {
		l, r := labels.Shared(p.A.Text, p.B.Text, spec.Norm, size)
		v.Left.Spans, v.Right.Spans = spans(l, "shared"), spans(r, "shared")
	} else {
		cmpn := labels.Compare(p.A.Text, p.B.Text)
		v.DiffCutShort = cmpn.Reason
		v.Left.Spans, v.Right.Spans = spans(cmpn.Left, ""), spans(cmpn.Right, "")
		v.Unified = spans(cmpn.Unified, "")
	}
	// The annotator's standing label prefills the form (editing appends a new event).
	annotator := me.Name
	mine, err := s.store.LatestEvent(r.Context(), p.ID, annotator)
	switch {
	case err == nil:
		v.Previous = mine.ID
		if mine.Kind != "retract" {
			v.Category, v.Note = mine.Category, mine.Note
			v.Duplicate = yesNo(mine.Duplicate)
		}
	case !errors.Is(err, db.ErrNotFound):
		s.internalError(w, r, err)
		return
	}
	hist, err := s.store.PairHistory(r.Context(), p.ID)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	decided := v.Category != ""
	// Blind: another annotator's labels show only after this person has decided, or to
	// an adjudicator.
	v.ShowOthers = decided || adjudicate
	latest := map[string]db.LabelEvent{}
	for _, e := range hist {
		switch e.Kind {
		case "flag":
			v.Flagged = true
		case "unflag":
			v.Flagged = false
		case "label", "adjudication", "retract":
			latest[e.Annotator] = e
		}
		v.History = append(v.History, templates.HistoryRow{When: e.At.Format("2006-01-02 15:04"), Annotator: e.Annotator, Kind: e.Kind,
			Category: e.Category, Dup: yesNo(e.Duplicate), Note: e.Note})
	}
	for name, e := range latest {
		if name != annotator && e.Kind != "retract" {
			v.Others = append(v.Others, templates.HistoryRow{Annotator: name, Kind: e.Kind, Category: e.Category, Dup: yesNo(e.Duplicate)})
		}
	}
	recent, err := s.store.RecentDecisions(r.Context(), c.ID, annotator, 10)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	for i, d := range recent {
		if d.Kind == "retract" {
			continue
		}
		v.Recent = append(v.Recent, templates.Decision{PairID: d.PairID, Category: d.Category, Dup: yesNo(d.Duplicate), When: d.At.Format("15:04"), Current: d.PairID == p.ID})
		if d.PairID == p.ID && i+1 < len(recent) {
			v.PrevURL = fmt.Sprintf("/campaigns/%d/pairs/%d", c.ID, recent[i+1].PairID)
		}
	}
	if v.PrevURL == "" && len(recent) > 0 && recent[0].PairID != p.ID {
		v.PrevURL = fmt.Sprintf("/campaigns/%d/pairs/%d", c.ID, recent[0].PairID)
	}
	v.NextURL = fmt.Sprintf("/campaigns/%d/next?after=%d", c.ID, p.ID)
	s.render(w, r, status, templates.PairLabelPage(v))
}

func spans(in []labels.Span, sameClass string) []templates.TextSpan {
	out := make([]templates.TextSpan, len(in))
	for i, sp := range in {
		class := ""
		switch sp.Op {
		case labels.Same:
			class = sameClass
		case labels.Removed:
			if sameClass == "" {
				class = "del"
			}
		case labels.Added:
			if sameClass == "" {
				class = "ins"
			}
		}
		out[i] = templates.TextSpan{Text: sp.Text, Class: class}
	}
	return out
}

func (s *server) labelPair(w http.ResponseWriter, r *http.Request) {
	c, cats, pairID, ok := s.campaignPair(w, r)
	if !ok {
		return
	}
	me := userOf(r)
	action := r.PostFormValue("action")
	adjudicate := r.PostFormValue("adjudicate") != ""
	if adjudicate && !auth.Role(me.Role).Can(auth.Adjudicate) {
		s.renderError(w, r, http.StatusForbidden, "Your role does not adjudicate.")
		return
	}
	if !adjudicate && !auth.Role(me.Role).Can(auth.Label) {
		s.renderError(w, r, http.StatusForbidden, "Your role does not label.")
		return
	}
	l := db.NewLabel{Annotator: me.Name, UserID: me.ID, Note: strings.TrimSpace(r.PostFormValue("note"))}
	previous, _ := strconv.ParseInt(r.PostFormValue("previous"), 10, 64)
	switch action {
	case "skip", "flag", "unflag":
		l.Kind = action
		l.Category = action
	case "", "submit":
		cat, found := labels.Find(cats, r.PostFormValue("category"))
		if !found {
			s.renderPair(w, r, http.StatusUnprocessableEntity, "Choose a category (keys 1-"+strconv.Itoa(len(cats))+").", "")
			return
		}
		dup, err := labels.ResolveDuplicate(cat, r.PostFormValue("duplicate"))
		if err != nil {
			s.renderPair(w, r, http.StatusUnprocessableEntity, "Duplicate: "+err.Error()+": press y or n.", "")
			return
		}
		l.Kind, l.Category, l.Duplicate = "label", cat.Key, dup
		if adjudicate {
			l.Kind = "adjudication"
		}
	default:
		s.renderPair(w, r, http.StatusUnprocessableEntity, "Unknown action.", "")
		return
	}
	if len(l.Note) > 4000 {
		s.renderPair(w, r, http.StatusUnprocessableEntity, "The note is longer than 4,000 characters.", "")
		return
	}
	_, err := s.store.RecordEvent(r.Context(), c.ID, pairID, l, previous)
	switch {
	case errors.Is(err, db.ErrNotFound):
		s.renderError(w, r, http.StatusNotFound, "No such pair in this campaign.")
		return
	case errors.Is(err, db.ErrStale):
		s.renderPair(w, r, http.StatusConflict, "Your label on this pair changed since this page was loaded (another tab?). Here is the current state; decide again.", "")
		return
	case err != nil:
		s.internalError(w, r, err)
		return
	}
	switch {
	case action == "flag" || action == "unflag":
		http.Redirect(w, r, fmt.Sprintf("/campaigns/%d/pairs/%d", c.ID, pairID), http.StatusSeeOther)
	case adjudicate:
		http.Redirect(w, r, fmt.Sprintf("/campaigns/%d?msg=Adjudicated+pair+%d.", c.ID, pairID), http.StatusSeeOther)
	default:
		http.Redirect(w, r, fmt.Sprintf("/campaigns/%d/next?after=%d", c.ID, pairID), http.StatusSeeOther)
	}
}

// undoLast withdraws the annotator's most recent decision in the campaign (a retract
// event, so the history keeps it) and goes back to that pair.
func (s *server) undoLast(w http.ResponseWriter, r *http.Request) {
	c, _, ok := s.campaign(w, r)
	if !ok {
		return
	}
	me := userOf(r)
	recent, err := s.store.RecentDecisions(r.Context(), c.ID, me.Name, 1)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	if len(recent) == 0 || recent[0].Kind == "retract" {
		http.Redirect(w, r, fmt.Sprintf("/campaigns/%d/next", c.ID), http.StatusSeeOther)
		return
	}
	last := recent[0]
	_, err = s.store.RecordEvent(r.Context(), c.ID, last.PairID, db.NewLabel{Annotator: me.Name, UserID: me.ID, Kind: "retract",
		Category: last.Category, Duplicate: last.Duplicate, Note: "undo"}, last.ID)
	if err != nil && !errors.Is(err, db.ErrStale) {
		s.internalError(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/campaigns/%d/pairs/%d", c.ID, last.PairID), http.StatusSeeOther)
}

// exportLabels writes the campaign's standing labels (and adjudications) as CSV or JSONL
// in the format import-labels reads.
func (s *server) exportLabels(format string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, _, ok := s.campaign(w, r)
		if !ok {
			return
		}
		cur, err := s.store.CurrentLabels(r.Context(), c.ID)
		if err != nil {
			s.internalError(w, r, err)
			return
		}
		name := fmt.Sprintf("labels-campaign-%d.%s", c.ID, format)
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		if format == "csv" {
			w.Header().Set("Content-Type", "text/csv; charset=utf-8")
			cw := csv.NewWriter(w)
			cw.Write([]string{"a", "b", "category", "duplicate", "annotator", "note", "kind", "labeled_at", "similarity"})
			for _, l := range cur {
				cw.Write([]string{l.ExtA, l.ExtB, l.Category, yesNo(l.Duplicate), l.Annotator, l.Note, l.Kind, l.At.UTC().Format("2006-01-02T15:04:05Z"), nullNum(l.Similarity.Float64, l.Similarity.Valid)})
			}
			cw.Flush()
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
		enc := json.NewEncoder(w)
		for _, l := range cur {
			rec := map[string]any{"a": l.ExtA, "b": l.ExtB, "category": l.Category, "duplicate": yesNo(l.Duplicate),
				"annotator": l.Annotator, "note": l.Note, "kind": l.Kind, "labeled_at": l.At.UTC().Format("2006-01-02T15:04:05Z")}
			if l.Similarity.Valid {
				rec["similarity"] = l.Similarity.Float64
			}
			enc.Encode(rec)
		}
	}
}

func nullNum(x float64, valid bool) string {
	if !valid {
		return ""
	}
	return strconv.FormatFloat(x, 'f', 4, 64)
}

// rawDocument serves a document's text as a plain-text download, never as HTML.
func (s *server) rawDocument(w http.ResponseWriter, r *http.Request) {
	id, ok := idParam(r, "doc")
	if !ok {
		s.renderError(w, r, http.StatusNotFound, "No such document.")
		return
	}
	d, err := s.store.Document(r.Context(), id)
	if errors.Is(err, db.ErrNotFound) {
		s.renderError(w, r, http.StatusNotFound, "No such document.")
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	safe := strings.Map(func(r rune) rune {
		if r < 0x20 || r == '"' || r == '\\' || r == '/' || r > 0x7e {
			return '_'
		}
		return r
	}, d.ExtID)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+safe+`.txt"`)
	w.Write([]byte(d.Text))
}

// startCampaign opens the default labeling campaign of a dataset (idempotent).
func (s *server) startCampaign(w http.ResponseWriter, r *http.Request) {
	id, ok := idParam(r, "dataset")
	if !ok {
		s.renderError(w, r, http.StatusNotFound, "No such dataset.")
		return
	}
	if _, err := s.store.Dataset(r.Context(), id); errors.Is(err, db.ErrNotFound) {
		s.renderError(w, r, http.StatusNotFound, "No such dataset.")
		return
	} else if err != nil {
		s.internalError(w, r, err)
		return
	}
	cats, _ := json.Marshal(labels.DefaultCategories)
	c, err := s.store.EnsureCampaign(r.Context(), id, "default", cats)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/campaigns/%d?msg=Draw+pairs+to+label+below.", c.ID), http.StatusSeeOther)
}
