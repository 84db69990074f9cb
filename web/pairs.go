package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/textdiff"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// The labeling page of a pair, the queue that leads to it, decisions and undo. What a
// person may see of a pair is campaign.View's rule; who may adjudicate is the role's.

// loadPair loads the {campaign} of the URL and reads its {pair} id.
func (s *server) loadPair(r *http.Request) (db.Campaign, int64, error) {
	c, err := s.loadCampaign(r)
	if err != nil {
		return c, 0, err
	}
	pairID, ok := idParam(r, "pair")
	if !ok {
		return c, 0, notFound("pair in this campaign")
	}
	// A pair the campaign does not have is not found before its form is read: a label
	// posted to one answers 404, not a form error about its fields.
	if _, err := s.store.Pair(r.Context(), c.ID, pairID); err != nil {
		if errors.Is(err, db.ErrNotFound) {
			return c, 0, notFound("pair in this campaign")
		}
		return c, 0, err
	}
	return c, pairID, nil
}

// adjudicating reads whether the request adjudicates, and refuses it to a role that
// does not.
func adjudicating(r *http.Request) (bool, error) {
	adj := r.URL.Query().Get("adjudicate") != "" || r.PostFormValue("adjudicate") != ""
	if adj && !userOf(r).Role.Can(auth.Adjudicate) {
		return adj, &pageError{http.StatusForbidden, "Your role does not adjudicate."}
	}
	return adj, nil
}

func (s *server) showPair(w http.ResponseWriter, r *http.Request, c db.Campaign, pairID int64) {
	adjudicate, err := adjudicating(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	me := userOf(r)
	viewer := campaign.Viewer{Name: me.Name, Labels: me.Role.Can(auth.Label), ReadLabels: me.Role.Can(auth.ReadLabels), Adjudicate: adjudicate}
	pv, err := campaign.View(r.Context(), s.store, c, pairID, viewer)
	if errors.Is(err, db.ErrNotFound) {
		err = notFound("pair in this campaign")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := s.pairPage(r, c, pv, adjudicate)
	if adjudicate {
		byParty, err := campaign.MayAdjudicate(r.Context(), s.store, c, pairID, me.Name)
		var pe *campaign.PartyError
		switch {
		case errors.As(err, &pe):
			_, v.AdjudicateRefused = s.problem(r, err)
			v.CanLabel = false
		case err != nil:
			s.fail(w, r, err)
			return
		case byParty:
			v.ByParty = true
		}
	}
	s.render(w, r, http.StatusOK, templates.PairLabelPage(v))
}

// pairURL is the page of a pair, adjudicating or not.
func pairURL(campaignID, pairID int64, adjudicate bool) string {
	u := fmt.Sprintf("/campaigns/%d/pairs/%d", campaignID, pairID)
	if adjudicate {
		u += "?adjudicate=1"
	}
	return u
}

// withParam adds a query parameter to a path.
func withParam(path, key, value string) string {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + url.QueryEscape(key) + "=" + url.QueryEscape(value)
}

// pairPage builds the pair page's view model from what the viewer may see.
func (s *server) pairPage(r *http.Request, c db.Campaign, pv campaign.PairView, adjudicate bool) templates.PairPage {
	p := pv.Pair
	role := userOf(r).Role
	view := r.URL.Query().Get("view")
	if view != "shared" && view != "unified" {
		view = "diff"
	}
	v := templates.PairPage{Page: s.page(r, fmt.Sprintf("Pair %d", p.ID)), CampaignID: c.ID, PairID: p.ID, Origin: blindOrigin(p.Origin, pv.ShowOthers), View: view,
		SpecID: pv.Spec.ID(), Repr: shinglesWords(pv.Spec), Hashes: pv.Spec.Hashes, Categories: categoryViews(c.Categories), Adjudicate: adjudicate,
		CanLabel: role.Can(auth.Label) || adjudicate, Previous: pv.Previous, Flagged: pv.Flagged, ShowOthers: pv.ShowOthers,
		Jaccard: fmtNum(pv.Similarity, 3), Estimate: fmtNum(pv.Estimate, 3), JaccardChar: fmtNum(pv.CharJaccard, 3)}
	v.Page.Wide = true
	if !v.CanLabel {
		v.WhoLabels = fmt.Sprintf("Your role (%s) does not label pairs: %s do.", role, whoCan(auth.Label))
	}
	v.Left = templates.DocView{ID: p.A.ID, ExtID: p.A.ExtID, Source: p.A.Source, Lang: p.A.Lang, Bytes: len(p.A.Text)}
	v.Right = templates.DocView{ID: p.B.ID, ExtID: p.B.ExtID, Source: p.B.Source, Lang: p.B.Lang, Bytes: len(p.B.Text)}
	if view == "shared" {
		l, r := pv.SharedShingles()
		v.Left.Spans, v.Right.Spans = spans(l, "shared"), spans(r, "shared")
	} else {
		cmp := textdiff.Compare(p.A.Text, p.B.Text)
		v.DiffCutShort = cmp.Reason
		v.Left.Spans, v.Right.Spans, v.Unified = spans(cmp.Left, ""), spans(cmp.Right, ""), spans(cmp.Unified, "")
	}
	// The viewer's standing label prefills the form (editing appends a new event); after
	// a refused decision, what they sent.
	if m := pv.Mine; m != nil {
		v.Category, v.Note, v.Duplicate = m.Category, m.Note, yesNo(m.Duplicate)
	}
	v.Category, v.Duplicate, v.Note = formValue(r, "category", v.Category), formValue(r, "duplicate", v.Duplicate), formValue(r, "note", v.Note)
	if cat, ok := labels.Find(c.Categories, v.Category); ok {
		v.Category = cat.Key // a number or a name sent from the form
	}
	for _, e := range pv.History {
		v.History = append(v.History, templates.HistoryRow{When: e.At.Format("2006-01-02 15:04"), Annotator: labelAuthor(e), Kind: string(e.Kind),
			Category: e.Category, Dup: yesNo(e.Duplicate), Note: e.Note})
	}
	for _, e := range pv.Others {
		v.Others = append(v.Others, templates.HistoryRow{Annotator: labelAuthor(e), Kind: string(e.Kind), Category: e.Category, Dup: yesNo(e.Duplicate)})
	}
	for _, d := range pv.Recent {
		v.Recent = append(v.Recent, templates.Decision{PairID: d.PairID, Category: d.Category, Dup: yesNo(d.Duplicate), When: d.At.Format("15:04"), Current: d.PairID == p.ID})
	}
	if pv.PrevPair != 0 {
		v.PrevURL = pairURL(c.ID, pv.PrevPair, false)
	}
	switch {
	case adjudicate:
		v.NextURL = fmt.Sprintf("/campaigns/%d/disagreements/next?after=%d", c.ID, p.ID)
	case role.Can(auth.Label):
		v.NextURL = fmt.Sprintf("/campaigns/%d/next?after=%d", c.ID, p.ID)
	}
	return v
}

// spans gives text spans their classes: sameClass on Same text (the shared-shingles
// view's "shared"), else del and ins on removed and added text, and moved text as moved
// (Same in the two columns), moved-from and moved-to (in the unified column).
func spans(in []textdiff.Span, sameClass string) []templates.TextSpan {
	out := make([]templates.TextSpan, len(in))
	for i, sp := range in {
		class := ""
		switch {
		case sp.Op == textdiff.Same && sp.Moved && sameClass == "":
			class = "moved"
		case sp.Op == textdiff.Same:
			class = sameClass
		case sameClass != "":
		case sp.Op == textdiff.Removed && sp.Moved:
			class = "moved-from"
		case sp.Op == textdiff.Added && sp.Moved:
			class = "moved-to"
		case sp.Op == textdiff.Removed:
			class = "del"
		case sp.Op == textdiff.Added:
			class = "ins"
		}
		out[i] = templates.TextSpan{Text: sp.Text, Class: class}
	}
	return out
}

// nextPair sends the annotator to the next pair of their queue, or shows that it is empty.
func (s *server) nextPair(w http.ResponseWriter, r *http.Request, c db.Campaign) {
	after, _ := parseID(r.URL.Query().Get("after")) // no number: from the start
	id, ok, err := campaign.Next(r.Context(), s.store, c, userOf(r).Name, after)
	switch {
	case err != nil:
		s.fail(w, r, err)
	case !ok:
		v := templates.QueueEmpty{Page: s.page(r, "Queue empty"), CampaignID: c.ID}
		if ds, err := s.store.Dataset(r.Context(), c.DatasetID); err == nil {
			v.Pairless = pairlessOf(userOf(r), ds.Docs)
		}
		if !userOf(r).Role.Can(auth.ManageCampaigns) {
			v.WhoDraws = whoCan(auth.ManageCampaigns)
		}
		s.render(w, r, http.StatusOK, templates.QueueEmptyPage(v))
	default:
		http.Redirect(w, r, pairURL(c.ID, id, false), http.StatusSeeOther)
	}
}

// nextDisagreement sends an adjudicator to the first disagreement of the campaign's
// queue they may settle, or back to the campaign page when there is none.
func (s *server) nextDisagreement(w http.ResponseWriter, r *http.Request, c db.Campaign) {
	after, _ := parseID(r.URL.Query().Get("after")) // no number: from the start
	next, err := s.nextDisagreementURL(r, c, after)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// nextDisagreementURL is where an adjudicator goes after pair after: the next
// disagreement they may settle, or the campaign's adjudication queue.
func (s *server) nextDisagreementURL(r *http.Request, c db.Campaign, after int64) (string, error) {
	id, ok, err := campaign.NextDisagreement(r.Context(), s.store, c, userOf(r).Name, after)
	if err != nil {
		return "", err
	}
	if !ok {
		return fmt.Sprintf("/campaigns/%d#adjudication", c.ID), nil
	}
	return pairURL(c.ID, id, true), nil
}

// nextPairURL is where a labeler goes after pair after: their next pair, or the page
// that says the queue is empty.
func (s *server) nextPairURL(r *http.Request, c db.Campaign, after int64) (string, error) {
	id, ok, err := campaign.Next(r.Context(), s.store, c, userOf(r).Name, after)
	if err != nil {
		return "", err
	}
	if !ok {
		return fmt.Sprintf("/campaigns/%d/next?after=%d", c.ID, after), nil
	}
	return pairURL(c.ID, id, false), nil
}

// decision reads the pair form: the action (submit, skip, flag, unflag) and the label.
func decision(r *http.Request, adjudicate bool) (campaign.Decision, error) {
	d := campaign.Decision{Category: r.PostFormValue("category"), Duplicate: r.PostFormValue("duplicate"), Note: r.PostFormValue("note")}
	d.Previous, _ = parseID(r.PostFormValue("previous")) // none: 0, built on no label
	switch action := r.PostFormValue("action"); action {
	case "", "submit":
		d.Kind = labels.KindLabel
		if adjudicate {
			d.Kind = labels.KindAdjudication
		}
	case string(labels.KindSkip), string(labels.KindFlag), string(labels.KindUnflag):
		d.Kind = labels.Kind(action)
	default:
		return d, &formError{msg: "Unknown action."}
	}
	return d, nil
}

// labelText says what a label is: "minor edits", "partial overlap (a duplicate)".
func labelText(c db.Campaign, key string, dup bool) string {
	cat, ok := labels.Find(c.Categories, key)
	if !ok {
		return key
	}
	if cat.Duplicate != labels.Ask {
		return cat.Name
	}
	if dup {
		return cat.Name + " (a duplicate)"
	}
	return cat.Name + " (not a duplicate)"
}

// decisionText says what a recorded decision set.
func decisionText(c db.Campaign, d campaign.Decision) string {
	cat, ok := labels.Find(c.Categories, d.Category)
	if !ok {
		return d.Category
	}
	dup, _ := labels.ResolveDuplicate(cat, d.Duplicate) // Record checked it
	return labelText(c, cat.Key, dup)
}

func (s *server) labelPair(w http.ResponseWriter, r *http.Request, c db.Campaign, pairID int64) {
	adjudicate, err := adjudicating(r)
	if err == nil && !adjudicate && !userOf(r).Role.Can(auth.Label) {
		err = &pageError{http.StatusForbidden, "Your role does not label."}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d, err := decision(r, adjudicate)
	if err == nil {
		err = campaign.Record(r.Context(), s.store, c, pairID, *userOf(r), d)
	}
	if errors.Is(err, db.ErrNotFound) {
		err = notFound("pair in this campaign")
	}
	back := pairURL(c.ID, pairID, adjudicate)
	if view := r.URL.Query().Get("view"); view == "shared" || view == "unified" {
		back = withParam(back, "view", view)
	}
	if err != nil {
		s.failOn(w, r, err, func(_ int, msg string) { s.redirect(w, r, back, refused(r, msg)) })
		return
	}
	pair := fmt.Sprintf("pair %d", pairID)
	var next string
	var n *notice
	switch d.Kind {
	case labels.KindFlag:
		next, n = back, done(fmt.Sprintf("Flagged pair %d: reviewers see it flagged. Press f again to unflag it.", pairID))
	case labels.KindUnflag:
		next, n = back, done(fmt.Sprintf("Unflagged pair %d.", pairID))
	case labels.KindAdjudication:
		next, err = s.nextDisagreementURL(r, c, pairID)
		n = linked("Adjudicated", back, pair, ": "+decisionText(c, d)+".")
	case labels.KindSkip:
		next, err = s.nextPairURL(r, c, pairID)
		n = linked("Skipped", back, pair, ": it comes back after the others.")
	default:
		next, err = s.nextPairURL(r, c, pairID)
		n = linked("Saved", back, pair, ": "+decisionText(c, d)+".")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.redirect(w, r, next, n)
}

// linked is a notice whose words name a page: "Saved pair 12: minor edits."
func linked(text, link, linkText, after string) *notice {
	return &notice{Notice: templates.Notice{Text: text, Link: link, LinkText: linkText, After: after}}
}

// undoneAnswer is the label an undo withdrew as the pair form's values, so the form
// comes back filled in with it (as Prodigy's undo does): its category, its duplicate
// decision when the category does not settle it ("" when it does), its note.
func undoneAnswer(c db.Campaign, e db.LabelEvent) url.Values {
	dup := yesNo(e.Duplicate)
	if cat, ok := labels.Find(c.Categories, e.Category); ok && (cat.Duplicate == labels.Yes) == e.Duplicate && cat.Duplicate != labels.Ask {
		dup = ""
	}
	return url.Values{"category": {e.Category}, "duplicate": {dup}, "note": {e.Note}}
}

// undoLast withdraws the annotator's most recent decision in the campaign and goes back
// to that pair to decide again; with nothing to undo, to the queue.
func (s *server) undoLast(w http.ResponseWriter, r *http.Request, c db.Campaign) {
	undone, ok, err := campaign.Undo(r.Context(), s.store, c, *userOf(r))
	switch {
	case err != nil:
		s.fail(w, r, err)
	case !ok:
		s.redirect(w, r, fmt.Sprintf("/campaigns/%d/next", c.ID), done("Nothing to undo: you have no decision left in this campaign."))
	default:
		adjudication := undone.Kind == labels.KindAdjudication
		back := pairURL(c.ID, undone.PairID, adjudication && userOf(r).Role.Can(auth.Adjudicate))
		what := labelText(c, undone.Category, undone.Duplicate)
		if adjudication {
			what = "your adjudication, " + what
		}
		n := linked("Undid:", back, fmt.Sprintf("pair %d", undone.PairID), ", "+what+". Your answer is filled in below: change it, or submit it again.")
		n.Form = undoneAnswer(c, undone)
		s.redirect(w, r, back, n)
	}
}
