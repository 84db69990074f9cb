package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
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

func (s *server) showPair(w http.ResponseWriter, r *http.Request) {
	s.renderPair(w, r, http.StatusOK, "")
}

// renderPair shows the pair page with status, and errMsg over the form when not empty.
func (s *server) renderPair(w http.ResponseWriter, r *http.Request, status int, errMsg string) {
	c, pairID, err := s.loadPair(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	adjudicate, err := adjudicating(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	me := userOf(r)
	pv, err := campaign.View(r.Context(), s.store, c, pairID, me.Name, adjudicate)
	if errors.Is(err, db.ErrNotFound) {
		err = notFound("pair in this campaign")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := s.pairPage(r, c, pv, adjudicate)
	v.Error = errMsg
	s.render(w, r, status, templates.PairLabelPage(v))
}

// pairPage builds the pair page's view model from what the viewer may see.
func (s *server) pairPage(r *http.Request, c db.Campaign, pv campaign.PairView, adjudicate bool) templates.PairPage {
	p := pv.Pair
	view := r.URL.Query().Get("view")
	if view != "shared" && view != "unified" {
		view = "diff"
	}
	v := templates.PairPage{Page: s.page(r, fmt.Sprintf("Pair %d", p.ID)), CampaignID: c.ID, PairID: p.ID, Origin: p.Origin, View: view,
		SpecID: pv.Spec.ID(), Categories: categoryViews(c.Categories), Adjudicate: adjudicate,
		CanLabel: userOf(r).Role.Can(auth.Label) || adjudicate, Previous: pv.Previous, Flagged: pv.Flagged, ShowOthers: pv.ShowOthers,
		Jaccard: fmtNum(pv.Similarity, 3), Estimate: fmtNum(pv.Estimate, 3), JaccardChar: fmtNum(pv.CharJaccard, 3)}
	v.Left = templates.DocView{ID: p.A.ID, ExtID: p.A.ExtID, Source: p.A.Source, Lang: p.A.Lang, Bytes: len(p.A.Text)}
	v.Right = templates.DocView{ID: p.B.ID, ExtID: p.B.ExtID, Source: p.B.Source, Lang: p.B.Lang, Bytes: len(p.B.Text)}
	if view == "shared" {
		l, r := pv.SharedShingles()
		v.Left.Spans, v.Right.Spans = spans(l, "shared"), spans(r, "shared")
	} else {
		cmp := labels.Compare(p.A.Text, p.B.Text)
		v.DiffCutShort = cmp.Reason
		v.Left.Spans, v.Right.Spans, v.Unified = spans(cmp.Left, ""), spans(cmp.Right, ""), spans(cmp.Unified, "")
	}
	// The viewer's standing label prefills the form (editing appends a new event).
	if m := pv.Mine; m != nil {
		v.Category, v.Note, v.Duplicate = m.Category, m.Note, yesNo(m.Duplicate)
	}
	for _, e := range pv.History {
		v.History = append(v.History, templates.HistoryRow{When: e.At.Format("2006-01-02 15:04"), Annotator: e.Annotator, Kind: string(e.Kind),
			Category: e.Category, Dup: yesNo(e.Duplicate), Note: e.Note})
	}
	for _, e := range pv.Others {
		v.Others = append(v.Others, templates.HistoryRow{Annotator: e.Annotator, Kind: string(e.Kind), Category: e.Category, Dup: yesNo(e.Duplicate)})
	}
	for _, d := range pv.Recent {
		v.Recent = append(v.Recent, templates.Decision{PairID: d.PairID, Category: d.Category, Dup: yesNo(d.Duplicate), When: d.At.Format("15:04"), Current: d.PairID == p.ID})
	}
	if pv.PrevPair != 0 {
		v.PrevURL = fmt.Sprintf("/campaigns/%d/pairs/%d", c.ID, pv.PrevPair)
	}
	v.NextURL = fmt.Sprintf("/campaigns/%d/next?after=%d", c.ID, p.ID)
	return v
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

// nextPair sends the annotator to the next pair of their queue, or shows that it is empty.
func (s *server) nextPair(w http.ResponseWriter, r *http.Request) {
	c, err := s.loadCampaign(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64) // no number: from the start
	id, ok, err := campaign.Next(r.Context(), s.store, c, userOf(r).Name, after)
	switch {
	case err != nil:
		s.fail(w, r, err)
	case !ok:
		s.render(w, r, http.StatusOK, templates.QueueEmpty(s.page(r, "Queue empty"), c.ID))
	default:
		http.Redirect(w, r, fmt.Sprintf("/campaigns/%d/pairs/%d", c.ID, id), http.StatusSeeOther)
	}
}

// decision reads the pair form: the action (submit, skip, flag, unflag) and the label.
func decision(r *http.Request, adjudicate bool) (campaign.Decision, error) {
	d := campaign.Decision{Category: r.PostFormValue("category"), Duplicate: r.PostFormValue("duplicate"), Note: r.PostFormValue("note")}
	d.Previous, _ = strconv.ParseInt(r.PostFormValue("previous"), 10, 64) // none: 0, built on no label
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

func (s *server) labelPair(w http.ResponseWriter, r *http.Request) {
	c, pairID, err := s.loadPair(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
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
	if err != nil {
		s.failOn(w, r, err, func(status int, msg string) { s.renderPair(w, r, status, msg) })
		return
	}
	switch {
	case d.Kind == labels.KindFlag || d.Kind == labels.KindUnflag:
		http.Redirect(w, r, fmt.Sprintf("/campaigns/%d/pairs/%d", c.ID, pairID), http.StatusSeeOther)
	case adjudicate:
		http.Redirect(w, r, fmt.Sprintf("/campaigns/%d?msg=Adjudicated+pair+%d.", c.ID, pairID), http.StatusSeeOther)
	default:
		http.Redirect(w, r, fmt.Sprintf("/campaigns/%d/next?after=%d", c.ID, pairID), http.StatusSeeOther)
	}
}

// undoLast withdraws the annotator's most recent decision in the campaign and goes back
// to that pair; with nothing to undo, to the queue.
func (s *server) undoLast(w http.ResponseWriter, r *http.Request) {
	c, err := s.loadCampaign(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	pairID, ok, err := campaign.Undo(r.Context(), s.store, c, *userOf(r))
	switch {
	case err != nil:
		s.fail(w, r, err)
	case !ok:
		http.Redirect(w, r, fmt.Sprintf("/campaigns/%d/next", c.ID), http.StatusSeeOther)
	default:
		http.Redirect(w, r, fmt.Sprintf("/campaigns/%d/pairs/%d", c.ID, pairID), http.StatusSeeOther)
	}
}
