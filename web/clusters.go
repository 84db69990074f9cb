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
	"github.com/dedupstudio/dedupstudio/internal/dedup"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/textdiff"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// Clusters: the list of a manifest's clusters riskiest first, with filters, and one
// cluster's page: its members, keeper and decisions, the chain and the similarity
// matrix, a member's text against the keeper's (the pair page's views), the labels its
// member pairs have, comments.

// clusterFilter reads the list's filters from the query.
func clusterFilter(q url.Values) db.ClusterFilter {
	f := db.ClusterFilter{Pending: q.Get("pending") != "", Chained: q.Get("chained") != "", Sample: q.Get("sample") != ""}
	switch r := cluster.Reason(q.Get("reason")); r {
	case cluster.Exact, cluster.Near:
		f.Reason = r
	}
	if g := q.Get("group"); (g == "source" || g == "domain" || g == "lang") && q.Get("value") != "" {
		f.Group, f.Value = g, strings.TrimSpace(q.Get("value"))
	}
	return f
}

func (s *server) listClusters(w http.ResponseWriter, r *http.Request) {
	m, err := s.loadManifest(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	f := clusterFilter(q)
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

func (s *server) showCluster(w http.ResponseWriter, r *http.Request) {
	m, c, err := s.loadCluster(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.renderCluster(w, r, m, c, http.StatusOK, "", "")
}

func (s *server) renderCluster(w http.ResponseWriter, r *http.Request, m db.Manifest, c db.Cluster, status int, msg, errMsg string) {
	v, err := s.clusterView(r, m, c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if msg == "" && errMsg == "" {
		msg, errMsg = pageMessage(&v.Page)
	}
	v.Message, v.Error = msg, errMsg
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
		CanDecide: me.Role.Can(auth.PrepareManifests) && review.CanChange(m.State) == nil, Stratum: c.SampleStratum,
		ChartBase: fmt.Sprintf("/manifests/%d/clusters/%d", m.ID, c.ID)}
	// Rank and the neighbours in risk order.
	if c.EngineWeakest != nil {
		v.EngineWeakest = fmtNum(*c.EngineWeakest, 3)
	}
	// A cluster of a review sample steps through the sample, in risk order.
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
	compared := comparedMember(q.Get("member"), c, members, order, v.Focus)
	view := q.Get("view")
	if view != "shared" && view != "unified" {
		view = "diff"
	}
	memberURL := func(doc int64) string {
		return fmt.Sprintf("/manifests/%d/clusters/%d?member=%d&view=%s#row-%d", m.ID, c.ID, doc, view, doc)
	}
	memberRows(&v, c, order, infos, names, p.Threshold, compared, memberURL)
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
	// The compared member against the keeper.
	texts, err := s.store.DocumentTexts(ctx, []int64{c.Keeper, compared})
	if err != nil {
		return v, err
	}
	kd, cd := infos[c.Keeper], infos[compared]
	v.View, v.ViewURL = view, fmt.Sprintf("/manifests/%d/clusters/%d?member=%d", m.ID, c.ID, compared)
	v.Left = templates.DocView{ID: kd.ID, ExtID: kd.ExtID, Source: kd.Source, Lang: kd.Lang, Bytes: kd.Bytes}
	v.Right = templates.DocView{ID: cd.ID, ExtID: cd.ExtID, Source: cd.Source, Lang: cd.Lang, Bytes: cd.Bytes}
	compareTexts(&v, texts[0], texts[1], view, p.Spec)
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

// focusItem is the item the page focuses: the one asked for when the cluster has it,
// else the first undecided in review order (0: none).
func focusItem(asked string, order []db.Item) int64 {
	focus, _ := strconv.ParseInt(asked, 10, 64)
	if slices.IndexFunc(order, func(it db.Item) bool { return it.ID == focus }) >= 0 {
		return focus
	}
	if i := slices.IndexFunc(order, func(it db.Item) bool { return it.Decision == review.Proposed }); i >= 0 {
		return order[i].ID
	}
	return 0
}

// comparedMember is the member shown against the keeper: the one asked for when it is
// a member other than the keeper, else the focused item's document (or the first's).
func comparedMember(asked string, c db.Cluster, members []int64, order []db.Item, focus int64) int64 {
	compared, _ := strconv.ParseInt(asked, 10, 64)
	if slices.Contains(members, compared) && compared != c.Keeper {
		return compared
	}
	compared = 0
	for _, it := range order {
		if it.ID == focus || compared == 0 {
			compared = it.Doc
		}
	}
	return compared
}

// memberRows lists the keeper, then the removals in review order with their decisions,
// counting the undecided ones.
func memberRows(v *templates.ClusterPage, c db.Cluster, order []db.Item, infos map[int64]db.DocInfo, names map[int64]string, threshold float64,
	compared int64, memberURL func(int64) string) {
	kd := infos[c.Keeper]
	v.Members = append(v.Members, templates.MemberRow{Doc: c.Keeper, ExtID: kd.ExtID, Source: kd.Source, Lang: kd.Lang, Bytes: kd.Bytes,
		Keeper: true, Decision: "kept", CompareURL: memberURL(c.Keeper)})
	for _, it := range order {
		di := infos[it.Doc]
		row := templates.MemberRow{Item: it.ID, Doc: it.Doc, ExtID: di.ExtID, Source: di.Source, Lang: di.Lang, Bytes: di.Bytes,
			Reason: string(it.Reason), Estimate: fmtNum(it.Estimate, 3), Exact: fmtNum(it.Exact, 3), BelowThreshold: it.Score < threshold,
			Decision: string(it.Decision), Compared: it.Doc == compared, CompareURL: memberURL(it.Doc)}
		if it.DecidedBy != 0 {
			row.By = names[it.DecidedBy]
			if it.BulkBar != 0 {
				row.By += fmt.Sprintf(" (bulk, bar %g)", it.BulkBar)
			}
		}
		if it.Decision == review.Proposed {
			v.Undecided++
		}
		v.Members = append(v.Members, row)
	}
}

// chainAndLinks fills the chain and the links one may cut: the weakest 200 and the
// suggested cut.
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
	if c.Cut.Chained > 0 {
		v.Cut = &templates.LinkRow{A: c.Cut.A, B: c.Cut.B, ExtA: ext(c.Cut.A), ExtB: ext(c.Cut.B), Sim: fmtNum(c.Cut.Sim, 3), Suggested: true}
	}
	links := slices.Clone(c.Links)
	slices.SortFunc(links, func(a, b db.Link) int {
		return cmp.Or(cmp.Compare(a.Sim, b.Sim), cmp.Compare(a.A, b.A), cmp.Compare(a.B, b.B))
	})
	for i, l := range links {
		suggested := v.Cut != nil && (l.A == c.Cut.A && l.B == c.Cut.B || l.A == c.Cut.B && l.B == c.Cut.A)
		if i >= 200 && !suggested {
			continue // the weakest 200 and the suggested one
		}
		v.Links = append(v.Links, templates.LinkRow{A: l.A, B: l.B, ExtA: ext(l.A), ExtB: ext(l.B), Sim: fmtNum(l.Sim, 3), Suggested: suggested})
	}
}

// compareTexts marks the keeper's text (left) against the compared member's (right):
// the shingles they share, or their word diff.
func compareTexts(v *templates.ClusterPage, left, right, view string, spec lsh.Spec) {
	if view == "shared" {
		size := spec.Size
		if spec.Level != lsh.Word {
			size = 5
		}
		l, rr := textdiff.Shared(left, right, spec.Norm, size)
		v.Left.Spans, v.Right.Spans = spans(l, "shared"), spans(rr, "shared")
		return
	}
	cmpd := textdiff.Compare(left, right)
	v.DiffCutShort = cmpd.Reason
	v.Left.Spans, v.Right.Spans, v.Unified = spans(cmpd.Left, ""), spans(cmpd.Right, ""), spans(cmpd.Unified, "")
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
func (s *server) clusterChart(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		m, c, err := s.loadCluster(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		var fig *chart.Figure
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
	sims, err := dedup.Similarities(ctx, s.store, m.Params.Spec, ids)
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
			n.CutNext = c.Cut.Chained > 0 && (c.Cut.A == d && c.Cut.B == next || c.Cut.A == next && c.Cut.B == d)
		}
		ch.Nodes = append(ch.Nodes, n)
	}
	return ch.Figure()
}
