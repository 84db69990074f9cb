package web

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/chart"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/textdiff"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// Clusters: the list of a manifest's clusters riskiest first, with filters, and one
// cluster's page: its members, keeper and decisions, the chain and the similarity
// matrix, a member's text against the keeper's (the pair page's views), the labels its
// member pairs have, comments.

// clusterFilter reads the list's filters from the query. A reason or grouping the list
// does not offer is refused by name, as the manifest page refuses an unknown grouping
// (it was ignored, and the list shown unfiltered as if filtered).
func clusterFilter(q url.Values) (db.ClusterFilter, error) {
	f := db.ClusterFilter{Pending: q.Get("pending") != "", Chained: q.Get("chained") != "", Sample: q.Get("sample") != ""}
	switch r := cluster.Reason(q.Get("reason")); r {
	case "":
	case cluster.Exact, cluster.Near:
		f.Reason = r
	default:
		return f, &formError{field: "reason", msg: fmt.Sprintf("%q: want one of exact, near", r)}
	}
	switch g := q.Get("group"); g {
	case "":
	case "source", "domain", "lang":
		if v := strings.TrimSpace(q.Get("value")); v != "" {
			f.Group, f.Value = g, v
		}
	default:
		return f, &formError{field: "group", msg: fmt.Sprintf("%q: want one of source, domain, lang", g)}
	}
	return f, nil
}

func (s *server) listClusters(w http.ResponseWriter, r *http.Request, m db.Manifest) {
	q := r.URL.Query()
	f, err := clusterFilter(q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rows, err := s.store.Clusters(r.Context(), m.ID, f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := templates.ClusterList{Page: s.page(r, fmt.Sprintf("Clusters of manifest %d", m.ID)), ManifestID: m.ID, Dataset: datasetLabel(m),
		State: m.State.Label(), Value: f.Value, Pending: f.Pending, Chained: f.Chained, Filtered: f != (db.ClusterFilter{}),
		Sample: f.Sample, HasSample: m.Origin != nil && m.Origin.Sample != nil}
	for i, c := range rows {
		v.Rows = append(v.Rows, templates.ClusterListRow{Rank: i + 1, ID: c.ID, Keeper: c.KeeperExtID, Size: c.Size, Chained: c.Chained,
			ChainedMembers: c.ChainedMembers, Weakest: fmtNum(c.WeakestLink, 3), Proposed: c.Proposed, Approved: c.Approved, Kept: c.Kept,
			Exact: c.Exact, Near: c.Near, Override: c.Override, Stratum: c.SampleStratum})
	}
	for _, o := range [][2]string{{"", "any"}, {"exact", "exact"}, {"near", "near"}} {
		v.Reasons = append(v.Reasons, templates.Option{Value: o[0], Label: o[1], Selected: string(f.Reason) == o[0]})
	}
	for _, o := range [][2]string{{"", "any"}, {"source", "source"}, {"domain", "domain"}, {"lang", "language"}} {
		v.Groups = append(v.Groups, templates.Option{Value: o[0], Label: o[1], Selected: f.Group == o[0]})
	}
	s.render(w, r, http.StatusOK, templates.ClusterListPage(v))
}

func (s *server) showCluster(w http.ResponseWriter, r *http.Request, m db.Manifest, c db.Cluster) {
	s.renderCluster(w, r, m, c, http.StatusOK, "", "")
}

func (s *server) renderCluster(w http.ResponseWriter, r *http.Request, m db.Manifest, c db.Cluster, status int, msg, errMsg string) {
	v, err := s.clusterView(r, m, c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v.Message, v.Error = pageMessage(&v.Page, msg, errMsg)
	w.Header().Set("Vary", "X-Fragment")
	if r.Header.Get("X-Fragment") == "review" {
		// The page's keys ask for the part a decision changes, to swap it in place.
		s.renderFragment(w, r, status, templates.ClusterReviewPage(v), "review")
		return
	}
	s.render(w, r, status, templates.ClusterReviewPage(v))
}

// seesOthersLabels reports whether a role sees every annotator's labels (annotators see
// their own only: labels are blind).
func seesOthersLabels(role auth.Role) bool {
	return role.Can(auth.Adjudicate) || role.Can(auth.PrepareManifests) || role.Can(auth.Approve)
}

func (s *server) clusterView(r *http.Request, m db.Manifest, c db.Cluster) (templates.ClusterPage, error) {
	ctx := r.Context()
	me := userOf(r)
	q := r.URL.Query()
	p := m.Params
	v := templates.ClusterPage{Page: s.page(r, fmt.Sprintf("Cluster %d", c.ID)), ManifestID: m.ID, ID: c.ID, State: m.State.Label(),
		KeeperRule: c.KeeperRule, Override: c.Override, Size: c.Size, Chained: c.Chained, ChainedMembers: c.ChainedMembers,
		Weakest: fmtNum(c.WeakestLink, 3), Threshold: fmtNum(p.Threshold, 2), Measure: verificationName(p.Verification),
		Repr: shinglesWords(p.Spec), Hashes: p.Spec.Hashes,
		CanDecide: me.Role.Can(auth.PrepareManifests) && review.CanChange(m.State) == nil, Stratum: c.SampleStratum,
		ChartBase: fmt.Sprintf("/manifests/%d/clusters/%d", m.ID, c.ID)}
	v.Page.Wide, v.Page.ReviewKeys = true, v.CanDecide
	if c.EngineWeakest != nil {
		v.EngineWeakest = fmtNum(*c.EngineWeakest, 3)
	}
	// Rank and the neighbours in risk order. A cluster of a review sample steps through
	// the sample, in risk order.
	list, err := s.store.Clusters(ctx, m.ID, db.ClusterFilter{Sample: c.SampleStratum != ""})
	if err != nil {
		return v, err
	}
	at := slices.IndexFunc(list, func(x db.ClusterRow) bool { return x.ID == c.ID })
	v.Rank, v.Total = at+1, len(list)
	if at > 0 {
		v.PrevURL = fmt.Sprintf("/manifests/%d/clusters/%d", m.ID, list[at-1].ID)
	}
	if next := nextCluster(list, at); next != 0 {
		v.NextURL = fmt.Sprintf("/manifests/%d/clusters/%d", m.ID, next)
	}
	members := c.Members()
	infos, err := s.store.DocInfos(ctx, members)
	if err != nil {
		return v, err
	}
	names, err := s.store.UserNames(ctx)
	if err != nil {
		return v, err
	}
	ext := func(id int64) string { return infos[id].ExtID }
	v.Keeper = ext(c.Keeper)
	order := reviewOrder(c.Items)
	v.Focus = focusItem(q.Get("focus"), order)
	open := openMember(q.Get("member"), c)
	view := q.Get("view")
	if view != "shared" && view != "diff" {
		view = "unified"
	}
	diffURL := func(doc int64, item int64) string {
		return fmt.Sprintf("/manifests/%d/clusters/%d?focus=%d&member=%d#row-%d", m.ID, c.ID, item, doc, doc)
	}
	memberRows(&v, c, order, infos, names, p.Threshold, open, diffURL)
	v.ChainedUndecided = manifests.ChainedUndecided(c, p.Threshold)
	conflicts, err := s.store.CrossConflictsIn(ctx, m, c.ID)
	if err != nil {
		return v, err
	}
	for _, x := range conflicts {
		for i := range v.Members {
			if v.Members[i].Doc != x.Doc {
				continue
			}
			v.Members[i].ConflictURL = fmt.Sprintf("/manifests/%d/clusters/%d", x.Other, x.OtherCl)
			if x.KeptHere {
				v.Members[i].Conflict = fmt.Sprintf("manifest %d (%s) removes it", x.Other, x.State.Label())
			} else {
				v.Members[i].Conflict = fmt.Sprintf("manifest %d (%s) keeps it", x.Other, x.State.Label())
			}
		}
	}
	chainAndLinks(&v, c, p.Threshold, ext)
	if len(members) > maxMatrix {
		v.MatrixNote = fmt.Sprintf("The matrix shows the keeper and the %d members least similar to it (of %d).", maxMatrix-1, len(members)-1)
	}
	if open != 0 {
		if v.Diff, err = s.memberDiff(ctx, m, c, open, view, infos); err != nil {
			return v, err
		}
	}
	// Labels of member pairs (an annotator sees their own only).
	if v.Labels, v.LabelsHidden, err = s.memberLabels(ctx, me, members, ext); err != nil {
		return v, err
	}
	reviews, err := s.store.Reviews(ctx, m.ID)
	if err != nil {
		return v, err
	}
	for _, rv := range reviews {
		if rv.Cluster == c.ID && rv.Comment != "" {
			v.Comments = append(v.Comments, reviewRow(rv))
		}
	}
	if v.CanDecide {
		if v.Recent, err = s.recentActions(ctx, m.ID, me.ID); err != nil {
			return v, err
		}
	}
	return v, nil
}

// memberDiff is member doc's text against the keeper's in view (unified, diff or
// shared), as the pair page compares texts (textdiff), moved passages counted.
func (s *server) memberDiff(ctx context.Context, m db.Manifest, c db.Cluster, doc int64, view string, infos map[int64]db.DocInfo) (*templates.MemberDiff, error) {
	texts, err := s.store.DocumentTexts(ctx, []int64{c.Keeper, doc})
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(c.Items, func(it db.Item) bool { return it.Doc == doc })
	it := c.Items[i]
	kd, md := infos[c.Keeper], infos[doc]
	base := fmt.Sprintf("/manifests/%d/clusters/%d?focus=%d", m.ID, c.ID, it.ID)
	d := &templates.MemberDiff{Doc: doc, Keeper: kd.ExtID, Member: md.ExtID, Exact: fmtNum(it.Exact, 3), Estimate: fmtNum(it.Estimate, 3),
		Repr: shinglesWords(m.Params.Spec), View: view, ViewURL: fmt.Sprintf("%s&member=%d", base, doc), CloseURL: fmt.Sprintf("%s#row-%d", base, doc)}
	d.Left = templates.DocView{ID: kd.ID, ExtID: kd.ExtID, Source: kd.Source, Lang: kd.Lang, Bytes: kd.Bytes}
	d.Right = templates.DocView{ID: md.ID, ExtID: md.ExtID, Source: md.Source, Lang: md.Lang, Bytes: md.Bytes}
	if view == "shared" {
		spec := m.Params.Spec
		size := spec.Size
		if spec.Level != lsh.Word {
			size = 5
		}
		l, rr := textdiff.Shared(texts[0], texts[1], spec.Norm, size)
		d.Left.Spans, d.Right.Spans = spans(l, "shared"), spans(rr, "shared")
		return d, nil
	}
	cmpd := textdiff.Compare(texts[0], texts[1])
	d.CutShort = cmpd.Reason
	d.Left.Spans, d.Right.Spans, d.Unified = spans(cmpd.Left, ""), spans(cmpd.Right, ""), spans(cmpd.Unified, "")
	for k, sp := range cmpd.Unified {
		if sp.Moved && sp.Op == textdiff.Added && (k == 0 || !cmpd.Unified[k-1].Moved) {
			d.Moved++
		}
	}
	return d, nil
}

// shinglesWords names what exact Jaccard similarities are measured on under spec: the
// shingles, and the normalization when it is not the default.
func shinglesWords(spec lsh.Spec) string {
	out := fmt.Sprintf("%s %d-shingles", spec.Level, spec.Size)
	if spec.Norm != lsh.DefaultSpec().Norm {
		out += ", norm " + spec.Norm.String()
	}
	return out
}

// focusItem is the item the page focuses: the one asked for when the cluster has it,
// else the first undecided in review order (0: none).
func focusItem(asked string, order []db.Item) int64 {
	focus, _ := parseID(asked)
	if slices.IndexFunc(order, func(it db.Item) bool { return it.ID == focus }) >= 0 {
		return focus
	}
	if i := slices.IndexFunc(order, func(it db.Item) bool { return it.Decision == review.Proposed }); i >= 0 {
		return order[i].ID
	}
	return 0
}

// openMember is the member whose text is open against the keeper's: the one asked for
// when it is a removal of the cluster, else none (0).
func openMember(asked string, c db.Cluster) int64 {
	doc, _ := parseID(asked)
	if doc != 0 && slices.ContainsFunc(c.Items, func(it db.Item) bool { return it.Doc == doc }) {
		return doc
	}
	return 0
}

// memberRows lists the keeper, then the removals in review order with their decisions,
// counting the undecided ones.
func memberRows(v *templates.ClusterPage, c db.Cluster, order []db.Item, infos map[int64]db.DocInfo, names map[int64]string, threshold float64,
	open int64, diffURL func(doc, item int64) string) {
	kd := infos[c.Keeper]
	v.Members = append(v.Members, templates.MemberRow{Doc: c.Keeper, ExtID: kd.ExtID, Source: kd.Source, Lang: kd.Lang, Bytes: kd.Bytes,
		Keeper: true, Decision: "kept"})
	for _, it := range order {
		di := infos[it.Doc]
		row := templates.MemberRow{Item: it.ID, Doc: it.Doc, ExtID: di.ExtID, Source: di.Source, Lang: di.Lang, Bytes: di.Bytes,
			Reason: string(it.Reason), Estimate: fmtNum(it.Estimate, 3), Exact: fmtNum(it.Exact, 3), BelowThreshold: it.Score < threshold,
			Decision: string(it.Decision), Open: it.Doc == open, DiffURL: diffURL(it.Doc, it.ID)}
		if row.Open {
			row.DiffURL = fmt.Sprintf("/manifests/%d/clusters/%d?focus=%d#row-%d", v.ManifestID, c.ID, it.ID, it.Doc)
		}
		if it.DecidedBy != 0 {
			row.By = names[it.DecidedBy]
			if it.BulkBar != 0 {
				row.By += " (bulk)"
				row.ByTitle = fmt.Sprintf("approved in bulk at bar %g", it.BulkBar)
			}
		}
		if it.Decision == review.Proposed {
			v.Undecided++
		}
		v.Members = append(v.Members, row)
	}
}

// chainAndLinks fills the chain, the suggested cut (manifests.SuggestCut) and the links one
// may cut: the weakest 200 and the suggested ones.
func chainAndLinks(v *templates.ClusterPage, c db.Cluster, threshold float64, ext func(int64) string) {
	score := map[int64]float64{c.Keeper: 1}
	for _, it := range c.Items {
		score[it.Doc] = it.Score
	}
	for i, d := range c.Chain.Docs {
		step := templates.ChainStep{ExtID: ext(d), Chained: score[d] < threshold}
		if i < len(c.Chain.Sims) {
			step.Next = fmtNum(c.Chain.Sims[i], 2)
		}
		v.Chain = append(v.Chain, step)
	}
	suggested := map[[2]int64]bool{}
	if c.Chained {
		plan := manifests.SuggestCut(c, threshold)
		v.Cut = &templates.CutView{Chained: plan.Chained, Unchained: plan.Unchained, OK: plan.OK, MaxLinks: plan.MaxLinks}
		for _, l := range plan.Links {
			v.Cut.Links = append(v.Cut.Links, templates.LinkRow{A: l.A, B: l.B, ExtA: ext(l.A), ExtB: ext(l.B), Sim: fmtNum(l.Sim, 3), Suggested: true})
			suggested[[2]int64{min(l.A, l.B), max(l.A, l.B)}] = true
		}
	}
	links := slices.Clone(c.Links)
	slices.SortFunc(links, func(a, b db.Link) int {
		return cmp.Or(cmp.Compare(a.Sim, b.Sim), cmp.Compare(a.A, b.A), cmp.Compare(a.B, b.B))
	})
	first := true // only the first suggested link is preselected in the one-link form
	for i, l := range links {
		sug := suggested[[2]int64{min(l.A, l.B), max(l.A, l.B)}]
		if i >= 200 && !sug {
			continue // the weakest 200 and the suggested ones
		}
		v.Links = append(v.Links, templates.LinkRow{A: l.A, B: l.B, ExtA: ext(l.A), ExtB: ext(l.B), Sim: fmtNum(l.Sim, 3), Suggested: sug && first})
		if sug {
			first = false
		}
	}
}

// nextCluster is the cluster after position at in risk order that still has undecided
// removals, or simply the next one when none has.
func nextCluster(list []db.ClusterRow, at int) int64 {
	for k := at + 1; k < len(list); k++ {
		if list[k].Proposed > 0 {
			return list[k].ID
		}
	}
	if at+1 < len(list) {
		return list[at+1].ID
	}
	return 0
}

func verificationName(v review.Verification) string {
	if v == review.Exact {
		return "exact Jaccard"
	}
	return "MinHash estimate"
}

func (s *server) memberLabels(ctx context.Context, me *db.User, members []int64, ext func(int64) string) ([]templates.PairLabelRow, bool, error) {
	pls, err := s.store.LabelsAmong(ctx, members)
	if err != nil {
		return nil, false, err
	}
	all := seesOthersLabels(me.Role)
	var out []templates.PairLabelRow
	for _, pl := range pls {
		var parts []string
		for _, l := range pl.Labels {
			if !all && l.Annotator != me.Name {
				continue
			}
			kind := ""
			if l.Kind == labels.KindAdjudication {
				kind = " (adjudicated)"
			}
			parts = append(parts, fmt.Sprintf("%s: %s, duplicate %s%s", l.Annotator, l.Category, yesNo(l.Duplicate), kind))
		}
		if len(parts) == 0 {
			continue
		}
		out = append(out, templates.PairLabelRow{URL: fmt.Sprintf("/campaigns/%d/pairs/%d", pl.CampaignID, pl.PairID),
			A: ext(pl.A), B: ext(pl.B), Labels: strings.Join(parts, "; ")})
	}
	return out, !all, nil
}

// maxMatrix is the most documents the similarity matrix shows (the chart's limit).
const maxMatrix = 80

// clusterChart serves a cluster's similarity matrix or chain as SVG, PNG or CSV.
func (s *server) clusterChart(kind string) func(http.ResponseWriter, *http.Request, db.Manifest, db.Cluster) {
	return func(w http.ResponseWriter, r *http.Request, m db.Manifest, c db.Cluster) {
		var (
			fig *chart.Figure
			err error
		)
		if kind == "matrix" {
			fig, err = s.matrixFigure(r.Context(), m, c)
		} else {
			fig, err = s.chainFigure(r.Context(), m, c)
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		s.serveFigure(w, r, fig, fmt.Sprintf("manifest-%d-cluster-%d-%s", m.ID, c.ID, kind))
	}
}

func (s *server) matrixFigure(ctx context.Context, m db.Manifest, c db.Cluster) (*chart.Figure, error) {
	items := reviewOrder(c.Items)
	ids := []int64{c.Keeper}
	for _, it := range items[:min(len(items), maxMatrix-1)] {
		ids = append(ids, it.Doc)
	}
	sims, err := manifests.Similarities(ctx, s.store, m.Params.Spec, ids)
	if err != nil {
		return nil, err
	}
	infos, err := s.store.DocInfos(ctx, ids)
	if err != nil {
		return nil, err
	}
	sm := chart.SimilarityMatrix{Title: fmt.Sprintf("Cluster %d: pairwise exact Jaccard", c.ID), Similarity: sims, Threshold: m.Params.Threshold}
	for i, id := range ids {
		sm.Docs = append(sm.Docs, chart.MatrixDoc{ID: strconv.FormatInt(id, 10), Label: infos[id].ExtID, Keeper: i == 0})
	}
	return sm.Figure()
}

func (s *server) chainFigure(ctx context.Context, m db.Manifest, c db.Cluster) (*chart.Figure, error) {
	infos, err := s.store.DocInfos(ctx, c.Chain.Docs)
	if err != nil {
		return nil, err
	}
	toKeeper := map[int64]float64{c.Keeper: 1}
	for _, it := range c.Items {
		toKeeper[it.Doc] = it.Score
	}
	plan := manifests.SuggestCut(c, m.Params.Threshold)
	ch := chart.Chain{Title: fmt.Sprintf("Cluster %d: the longest chain from the keeper (%s)", c.ID, verificationName(m.Params.Verification)),
		Threshold: m.Params.Threshold}
	for i, d := range c.Chain.Docs {
		n := chart.ChainNode{ID: strconv.FormatInt(d, 10), Label: infos[d].ExtID, Keeper: d == c.Keeper, ToKeeper: math.NaN()}
		if s, ok := toKeeper[d]; ok {
			n.ToKeeper = s
		}
		if i < len(c.Chain.Sims) {
			n.Next = c.Chain.Sims[i]
			next := c.Chain.Docs[i+1]
			n.CutNext = slices.ContainsFunc(plan.Links, func(l db.Link) bool { return l.A == d && l.B == next || l.A == next && l.B == d })
		}
		ch.Nodes = append(ch.Nodes, n)
	}
	return ch.Figure()
}
