package web

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/chart"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/handoff"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
	"github.com/dedupstudio/dedupstudio/internal/percent"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/words"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// Manifests: the list, one manifest's page (parameters, every policy compared, impact,
// approvals, history and the next step for the viewer's role), the diff of two, the
// sign-off record and the export's files.

// loadManifest loads the {manifest} of the URL.
func (s *server) loadManifest(r *http.Request) (db.Manifest, error) {
	return loadByID(r, "manifest", "manifest", s.store.Manifest)
}

func manifestURL(id int64) string { return fmt.Sprintf("/manifests/%d", id) }

// toManifest answers a POST with the manifest's page, where msg shows once (a notice
// kept on the server: a message in the URL would let any link put its own words there).
func (s *server) toManifest(w http.ResponseWriter, r *http.Request, id int64, msg string) {
	s.redirect(w, r, manifestURL(id), done(msg))
}

// pageMessage is the message and error a page shows in its own place: msg and errMsg when
// the handler has one, else what a POST left for this page to say (toManifest,
// failOnManifest, failOnCluster) when it is plain text: what it did or why it was
// refused, taken off the page's notice so that it is not said twice.
func pageMessage(p *templates.Page, msg, errMsg string) (string, string) {
	if msg != "" || errMsg != "" {
		return msg, errMsg
	}
	n := p.Notice
	if n.Text == "" || n.Link != "" || n.Secret != "" {
		return "", ""
	}
	p.Notice = templates.Notice{}
	if n.Error {
		return "", n.Text
	}
	return n.Text, ""
}

func datasetLabel(m db.Manifest) string {
	return fmt.Sprintf("%s v%d", m.Dataset.Name, m.Dataset.Version)
}

func (s *server) listManifests(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	list, err := s.store.Manifests(ctx, 0)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := templates.ManifestList{Page: s.page(r, "Manifests"), CanPrepare: userOf(r).Role.Can(auth.PrepareManifests)}
	ms := make([]db.Manifest, len(list))
	for i, m := range list {
		ms[i] = m.Manifest
	}
	stale, err := s.store.StalenessOf(ctx, ms)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	audits, err := s.auditShorts(ctx, ms)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	for i, m := range list {
		p := m.Params
		v.Rows = append(v.Rows, templates.ManifestRow{ID: m.ID, Dataset: datasetLabel(m.Manifest), State: m.State.Label(), StateKey: string(m.State),
			Policy: string(p.Policy), Keeper: p.Rule.String(), Threshold: fmtNum(p.Threshold, 2), Shape: p.Shape.String(),
			Verification: string(p.Verification), Preparer: m.Preparer, Created: m.CreatedAt.Format("2006-01-02 15:04"),
			Removals: m.Removals, Proposed: m.Proposed, Excluded: m.Excluded, Count: m.Clusters})
		row := &v.Rows[len(v.Rows)-1]
		if o := m.Origin; o != nil {
			row.Imported = o.Format + ": " + o.File
		}
		row.Stale, row.Audit = staleSummary(stale[m.ID]), audits[m.ID]
		if review.Open(m.State) {
			if _, n, err := s.store.CrossConflicts(ctx, m.Manifest); err != nil {
				s.fail(w, r, err)
				return
			} else {
				row.Conflicts = n
			}
		}
		v.Choices = append(v.Choices, templates.Option{Value: strconv.FormatInt(m.ID, 10),
			Label: fmt.Sprintf("%d: %s, %s", m.ID, datasetLabel(m.Manifest), p.Policy), Selected: i == 1})
	}
	if v.CanPrepare {
		datasets, err := s.store.Datasets(ctx)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		for _, d := range datasets {
			v.Datasets = append(v.Datasets, templates.Option{Value: strconv.FormatInt(d.ID, 10), Label: fmt.Sprintf("%s v%d", d.Name, d.Version)})
		}
		v.Results = s.resultsForm(r, v.Datasets, list)
	}
	s.render(w, r, http.StatusOK, templates.ManifestListPage(v))
}

func (s *server) showManifest(w http.ResponseWriter, r *http.Request, m db.Manifest) {
	s.renderManifest(w, r, m, http.StatusOK, "", "")
}

// failOnManifest shows err on the manifest page when the person can act on it there:
// a redirect (303) to the page, which says it once, as every other form's refusal does.
func (s *server) failOnManifest(w http.ResponseWriter, r *http.Request, m db.Manifest, err error) {
	s.failOn(w, r, err, func(_ int, msg string) {
		s.recordRefusal(r, m, msg, err)
		s.redirect(w, r, manifestURL(m.ID), refused(r, msg))
	})
}

// recordRefusal writes to the audit log a refusal the page is about to show (manifests
// writes its own; this catches the ones the pages make, a malformed form), with the
// action named as manifests names it (refusedAction).
func (s *server) recordRefusal(r *http.Request, m db.Manifest, msg string, err error) {
	action := refusedAction(r)
	if rerr := manifests.RecordRefusal(r.Context(), s.store, *userOf(r), m, action, msg, err); !manifests.Recorded(rerr) {
		s.log.Error("record a refusal in the audit log", "manifest", m.ID, "err", rerr, "request_id", requestIDOf(r))
	}
}

// refusedActions names the action a manifest's form posts, by its route, as the
// manifests package names it (manifests.Action) when it refuses it itself: one action,
// one name in the audit log ("request an audit", not "audit" for the page's refusal and
// "request an audit" for the store's).
var refusedActions = map[string]manifests.Action{
	"/manifests/{manifest}/items/{item}":               manifests.ActDecide,
	"/manifests/{manifest}/clusters/{cluster}/decide":  manifests.ActDecideCluster,
	"/manifests/{manifest}/clusters/{cluster}/keeper":  manifests.ActMakeKeeper,
	"/manifests/{manifest}/clusters/{cluster}/cut":     manifests.ActCut,
	"/manifests/{manifest}/clusters/{cluster}/comment": manifests.ActComment,
	"/manifests/{manifest}/bulk":                       manifests.ActBulkApproval,
	"/manifests/{manifest}/approve-outside-sample":     manifests.ActApproveOutsideSample,
	"/manifests/{manifest}/undo":                       manifests.ActUndo,
	"/manifests/{manifest}/submit":                     manifests.ActRequestSignOff,
	"/manifests/{manifest}/settings":                   manifests.ActSetApprovals,
	"/manifests/{manifest}/prepare-again":              manifests.ActPrepareAgain,
	"/manifests/{manifest}/audit":                      manifests.ActRequestAudit,
	"/manifests/{manifest}/export":                     manifests.ActExport,
	"/manifests/{manifest}/revoke":                     manifests.ActRevoke,
	"/manifests/{manifest}/tombstones/{doc}/restore":   manifests.ActRestore,
	"/manifests/{manifest}/reviews":                    actReview,
}

// refusedAction is the action r posts, as refusedActions names it; a review by its
// verdict ("approve", "reject", "comment"), as manifests.Review records it.
func refusedAction(r *http.Request) manifests.Action {
	pattern := chi.RouteContext(r.Context()).RoutePattern()
	action, ok := refusedActions[pattern]
	if !ok {
		return manifests.Action(pattern) // a new form: named by its route until it is listed
	}
	if action == actReview {
		if v, err := review.ParseVerdict(r.PostFormValue("verdict")); err == nil {
			return manifests.Action(v)
		}
	}
	return action
}

// actReview stands in refusedActions for a review, named by its verdict when refused.
const actReview manifests.Action = "review"

func (s *server) renderManifest(w http.ResponseWriter, r *http.Request, m db.Manifest, status int, msg, errMsg string) {
	v, err := s.manifestView(r, m)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v.Message, v.Error = pageMessage(&v.Page, msg, errMsg)
	s.render(w, r, status, templates.ManifestOverviewPage(v))
}

func (s *server) manifestView(r *http.Request, m db.Manifest) (templates.ManifestPage, error) {
	ctx := r.Context()
	me := userOf(r)
	p := m.Params
	v := templates.ManifestPage{Page: s.page(r, fmt.Sprintf("Manifest %d", m.ID)), ID: m.ID, DatasetID: m.DatasetID, Dataset: datasetLabel(m),
		State: m.State.Label(), StateKey: string(m.State), ContentHash: m.ContentHash, DatasetHash: m.DatasetHash,
		Policy: string(p.Policy), Keeper: p.Rule.String(), Preparer: m.Preparer, Created: m.CreatedAt.Format("2006-01-02 15:04"),
		Required: m.ApprovalsRequired, Threshold: fmtNum(p.Threshold, 2)}
	v.Params = paramRows(m)
	counts, err := s.store.CountManifest(ctx, m.ID)
	if err != nil {
		return v, err
	}
	v.Rows, v.Proposed, v.Approved, v.Excluded, v.Clusters, v.Chained = counts.Rows, counts.Proposed, counts.Approved, counts.Excluded, counts.Clusters, counts.Chained
	for _, c := range m.Comparison {
		row := templates.PolicyRow{Policy: string(c.Policy), Chosen: c.Policy == p.Policy, Removed: c.Removed, RemovedExact: c.RemovedExact,
			Clusters: c.Clusters, Chained: c.Chained, Largest: c.Largest, SimCalls: c.SimCalls, Limited: c.Limited,
			FalseMerges: fmt.Sprintf("%d of %d", c.FalseMerges, c.LabeledNonDuplicates), Together: fmt.Sprintf("%d of %d", c.DuplicatesTogether, c.LabeledDuplicates)}
		v.HasLabels = v.HasLabels || c.LabeledDuplicates+c.LabeledNonDuplicates > 0
		v.Comparison = append(v.Comparison, row)
	}
	if e := m.Estimates; e != nil {
		v.Labels = estimateRows(e)
		v.LabelNotes = e.Notes
	}
	byReason, bySize, err := s.store.RemovalCounts(ctx, m.ID)
	if err != nil {
		return v, err
	}
	for _, rsn := range []cluster.Reason{cluster.Exact, cluster.Near} {
		v.ByReason = append(v.ByReason, templates.Count{Key: string(rsn), N: byReason[rsn]})
	}
	sizes := map[string]int{}
	for size, n := range bySize {
		sizes[review.SizeBin(size)] += n
	}
	for _, b := range review.SizeBins {
		v.BySize = append(v.BySize, templates.Count{Key: b, N: sizes[b]})
	}
	group, opts, err := s.groupChoice(ctx, m, r.URL.Query().Get("group"))
	if err != nil {
		return v, err
	}
	v.Group, v.Groups, v.ChartQuery = strings.TrimPrefix(string(group), "meta:"), opts, "group="+url.QueryEscape(string(group))
	imp, err := s.impact(ctx, m, group)
	if err != nil {
		return v, err
	}
	v.Tested, v.OverallRate = imp.Tested, pct(imp.Rate)
	for _, g := range imp.Groups {
		v.GroupRows = append(v.GroupRows, templates.GroupView{Key: cmp.Or(g.Key, "(none)"), Docs: strconv.Itoa(g.Docs), Removed: strconv.Itoa(g.Removed),
			Rate: pct(g.Rate), Ratio: fmtNum(g.Ratio, 2), Interval: interval(g.RatioLo, g.RatioHi), P: fmtP(g.PAdjusted), Flag: string(g.Flag)})
	}
	reviews, err := s.store.Reviews(ctx, m.ID)
	if err != nil {
		return v, err
	}
	for _, rv := range reviews {
		v.Reviews = append(v.Reviews, reviewRow(rv))
	}
	v.Approvals = len(review.TallyOf(reviews, m.PreparedBy).Approvals)
	names, err := s.store.UserNames(ctx)
	if err != nil {
		return v, err
	}
	events, err := s.store.AuditOf(ctx, fmt.Sprintf("manifest:%d", m.ID), 200)
	if err != nil {
		return v, err
	}
	for _, e := range events {
		v.History = append(v.History, eventRow(e, names))
	}
	sos, err := s.store.SignOffs(ctx, m.ID)
	if err != nil {
		return v, err
	}
	if len(sos) > 0 {
		v.HasSignOff, v.SignOffStatus = true, manifests.SignOffStatus(sos[0])
	}
	changeable := review.CanChange(m.State) == nil
	prep, approve := me.Role.Can(auth.PrepareManifests), me.Role.Can(auth.Approve)
	v.CanDecide = prep && changeable
	v.CanRunCorpus = prep
	v.CanSubmit = prep && m.State == review.Draft
	v.CanSetApprovals = prep && m.State == review.Draft
	v.CanReview = approve && review.CanReview(m.State, review.Approve, m.PreparedBy, me.ID) == nil
	v.PreparerApprover = approve && me.ID == m.PreparedBy && m.State == review.InReview
	v.CanComment = approve && review.CanReview(m.State, review.Comment, m.PreparedBy, me.ID) == nil
	v.CanExport = approve && review.CanExport(m.State) == nil
	v.CanRevoke = approve && review.CanRevoke(m.State) == nil
	v.Exported = m.State == review.Exported
	v.CanRestore = approve && m.State == review.Exported
	v.SignedOff = handoffSource(m).SignedOff()
	v.ExportCommand = fmt.Sprintf("go run ./cmd/server handoff -db %s -manifest %d -format all -out engines/", s.commandDB(), m.ID)
	v.ShapeNote = shapeNote(m)
	if params, why := handoff.MilvusFunction(m.Params.Spec); params != nil {
		b, _ := json.Marshal(params)
		v.MilvusFunction = string(b)
	} else {
		v.MilvusWhy = why
	}
	if m.State == review.Exported || m.State == review.Revoked {
		stones, err := s.store.Tombstones(ctx, m.ID)
		if err != nil {
			return v, err
		}
		for _, t := range stones {
			v.Tombstones = append(v.Tombstones, templates.TombstoneRow{Doc: t.Doc, ExtID: t.ExtID, RemovedAt: t.RemovedAt.Format("2006-01-02 15:04"),
				Restored: t.Restored, RestoredBy: t.RestoredBy})
		}
	}
	if prep {
		if v.Recent, err = s.recentActions(ctx, m.ID, me.ID); err != nil {
			return v, err
		}
	}
	if err := s.originView(ctx, &v, m); err != nil {
		return v, err
	}
	if err := s.staleView(ctx, &v, m, me, reviews); err != nil {
		return v, err
	}
	if err := s.approvalView(ctx, &v, m, me, reviews, counts.Proposed); err != nil {
		return v, err
	}
	// Asked by whoever may bulk-approve, the manifest changeable or not: the page says
	// what the post would say.
	if bar := r.URL.Query().Get("bulk"); bar != "" && me.Role.Can(auth.PrepareManifests) {
		v.Bulk = &templates.BulkPreview{Bar: bar}
		x, ok := parseDecimal(bar)
		if !ok {
			x = math.NaN()
		}
		if v.Bulk.Items, v.Bulk.Clusters, err = manifests.BulkPreview(ctx, s.store, m, x); err != nil {
			if status, msg := s.problem(r, err); status == http.StatusUnprocessableEntity || status == http.StatusConflict {
				v.Bulk.Error = msg // a bar typed into the address
			} else {
				return v, err
			}
		}
	}
	if err := s.auditView(ctx, &v, m, me, reviews); err != nil {
		return v, err
	}
	return v, nil
}

// staleSummary says in a few words what changed under a manifest ("" when nothing).
func staleSummary(st review.Staleness) string {
	var parts []string
	for _, c := range st.Changes {
		verb := map[string]string{review.ChangeExport: "exported", review.ChangeRevoke: "revoked", review.ChangeRestore: "restored a document"}[c.Kind]
		parts = append(parts, fmt.Sprintf("manifest %d %s", c.Manifest, verb))
	}
	if st.LabelEvents > 0 {
		parts = append(parts, templates.Plural(st.LabelEvents, "new label event", "new label events"))
	}
	return strings.Join(parts, ", ")
}

// staleView fills a manifest page's staleness, conflicts with other open manifests,
// separation of duties and what it was prepared again from (or as).
func (s *server) staleView(ctx context.Context, v *templates.ManifestPage, m db.Manifest, me *db.User, reviews []review.Review) error {
	st, err := s.store.Staleness(ctx, m)
	if err != nil {
		return err
	}
	v.StaleReasons, v.StaleDataset = st.Reasons(), st.Dataset()
	if st.Stale() {
		v.CanPrepareLive = me.Role.Can(auth.PrepareManifests) && m.Origin == nil
		v.AgainToken = newFormToken()
	}
	conflicts, total, err := s.store.CrossConflicts(ctx, m)
	if err != nil {
		return err
	}
	v.ConflictTotal = total
	for _, c := range conflicts[:min(len(conflicts), 50)] {
		v.Conflicts = append(v.Conflicts, templates.ConflictRow{Text: c.Text(), URL: fmt.Sprintf("/manifests/%d/clusters/%d", m.ID, c.Cluster),
			OtherURL: fmt.Sprintf("/manifests/%d/clusters/%d", c.Other, c.OtherCl)})
	}
	decided, names, err := s.store.Deciders(ctx, m.ID)
	if err != nil {
		return err
	}
	v.Deciders, v.IDecided = names, decided[me.ID]
	tally := review.TallyOf(reviews, m.PreparedBy)
	if m.State == review.InReview && len(tally.Approvals) >= m.ApprovalsRequired && !tally.Apart(decided) {
		v.Waiting = sentence((&review.SeparationError{Deciders: names}).Error())
	}
	if l := m.ApprovalsLowered; l != nil {
		v.Lowered = l.Text()
	}
	if c := m.CarriedOver; c != nil {
		v.Carried = &templates.CarriedNote{From: c.From, Decisions: c.Decisions, NotApplying: c.NotApplying, Overrides: c.Overrides}
	}
	v.PreparedAgain, err = s.store.PreparedAgain(ctx, m.ID)
	return err
}

// paramRows are a manifest's parameters as the page lists them.
func paramRows(m db.Manifest) []templates.Param {
	p := m.Params
	budget := "default (" + words.Thousands(cluster.DefaultBudget) + " checks per node)"
	if p.Budget != 0 {
		budget = strconv.Itoa(p.Budget)
	}
	return append(methodFacts(p, m.Origin),
		templates.Param{Name: "Budget", Value: budget},
		templates.Param{Name: "Code version", Value: p.CodeVersion},
		templates.Param{Name: "Approvals required", Value: approvalsText(m)},
	)
}

// methodFacts are the parameters that say how a manifest's removals were found (compared,
// verified, grouped, kept), the facts its page and its sign-off record both begin with.
func methodFacts(p review.Params, o *review.Origin) []templates.Param {
	return []templates.Param{
		{Name: "Representation", Value: p.Spec.String() + " (" + p.Spec.ID() + ")"},
		{Name: "Bands × rows", Value: p.Shape.String()},
		{Name: "Threshold", Value: fmtNum(p.Threshold, 3)},
		{Name: "Verification", Value: string(p.Verification)},
		{Name: "Cluster policy", Value: policyText(p, o)},
		{Name: "Keeper rule", Value: p.Rule.String()},
	}
}

// approvalsText is how many approvals a manifest asks, and a lowering.
func approvalsText(m db.Manifest) string {
	if l := m.ApprovalsLowered; l != nil {
		return strconv.Itoa(m.ApprovalsRequired) + " (" + l.Text() + ")"
	}
	return strconv.Itoa(m.ApprovalsRequired)
}

// estimateRows are a configuration's scores against the labels as the page lists them.
func estimateRows(e *review.Estimates) []templates.Param {
	rows := []templates.Param{
		{Name: "Labels", Value: fmt.Sprintf("campaign %s, version %s: %d pairs counted, %d left out", e.CampaignName, e.LabelVersion, e.Counted, e.Left)},
		{Name: "Agreement", Value: fmt.Sprintf("Krippendorff's alpha %s over %s labeled twice or more", fmtNum(float64(e.Alpha), 3), templates.Plural(e.AlphaUnits, "pair", "pairs"))},
		{Name: "Recall (labeled duplicates accepted)", Value: intervalText(e.Recall, true)},
		{Name: "Cluster recall (labeled duplicates in one cluster)", Value: intervalText(e.ClusterRecall, true)},
		{Name: "False merges (labeled non-duplicates in one cluster)", Value: intervalText(e.FalseMerges, true)},
		{Name: "Precision of the accepted labeled pairs", Value: intervalText(e.Precision, true)},
	}
	if e.Design != "" {
		rows = append(rows,
			templates.Param{Name: "Dataset recall (design " + strings.TrimPrefix(e.Design, "design ") + ")", Value: intervalText(e.DatasetRecall, true)},
			templates.Param{Name: "Dataset false removals", Value: intervalText(e.FalseRemovals, false)},
			templates.Param{Name: "False removals per removal", Value: intervalText(e.FalseRemovalRate, true)})
	}
	for _, c := range e.Categories {
		rows = append(rows, templates.Param{Name: "Category " + c.Category,
			Value: "recall " + intervalText(c.Recall, true) + "; false merges " + intervalText(c.FalseMerges, true)})
	}
	rows = append(rows, templates.Param{Name: "Label rule", Value: e.LabelRule})
	return rows
}

// intervalText writes "93% (88–96%, n=120)", or a count with its interval.
func intervalText(iv review.Interval, percent bool) string {
	v, lo, hi := float64(iv.Value), float64(iv.Lo), float64(iv.Hi)
	if math.IsNaN(v) {
		return fmt.Sprintf("no estimate (n=%d)", iv.N)
	}
	f := func(x float64) string { return fmtNum(x, 1) }
	if percent {
		f = pct
	}
	s := f(v)
	if !math.IsNaN(lo) && !math.IsNaN(hi) {
		s += " (" + f(lo) + "–" + f(hi)
		if iv.N > 0 {
			s += fmt.Sprintf(", n=%d", iv.N)
		}
		s += ")"
	} else if iv.N > 0 {
		s += fmt.Sprintf(" (n=%d)", iv.N)
	}
	return s
}

// pct writes a rate as a percentage with one decimal; "–" in an empty cell when it is
// undefined.
func pct(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return percent.Format(x, 'f', 1)
}

func fmtP(p float64) string {
	switch {
	case math.IsNaN(p):
		return "–"
	case p < 0.001:
		return "< 0.001"
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

func interval(lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return ""
	}
	return "(" + fmtNum(lo, 2) + "–" + fmtNum(hi, 2) + ")"
}

func reviewRow(rv review.Review) templates.ReviewRow {
	verdict := map[review.Verdict]string{review.Approve: "approved", review.Reject: "requested changes", review.Comment: "commented"}[rv.Verdict]
	return templates.ReviewRow{Name: rv.Name, Role: rv.Role, Verdict: verdict, Comment: rv.Comment, At: rv.At.Format("2006-01-02 15:04"),
		Hash: review.Short(rv.Hash), Dismissed: rv.Dismissed, Cluster: rv.Cluster}
}

// recentActions are the viewer's last changes to a manifest, linked to their cluster.
func (s *server) recentActions(ctx context.Context, manifestID, userID int64) ([]templates.ActionRow, error) {
	acts, err := s.store.RecentActions(ctx, manifestID, userID, 10)
	if err != nil {
		return nil, err
	}
	out := make([]templates.ActionRow, len(acts))
	for i, a := range acts {
		out[i] = templates.ActionRow{Summary: a.Summary, At: a.At.Format("15:04:05"), Undone: a.Undone}
		if a.Cluster != 0 {
			out[i].URL = fmt.Sprintf("/manifests/%d/clusters/%d", manifestID, a.Cluster)
		}
		if a.Undone {
			out[i].Summary += " (undone)"
		}
	}
	return out, nil
}

// groupChoice reads the impact grouping asked for (source by default) and the choices;
// one the dataset does not have is refused by name, as a chart's other parameters are.
func (s *server) groupChoice(ctx context.Context, m db.Manifest, asked string) (db.GroupBy, []templates.Option, error) {
	keys, err := s.store.MetaKeys(ctx, m.DatasetID)
	if err != nil {
		return "", nil, err
	}
	choices := []string{"source", "domain", "lang"}
	for _, k := range keys {
		choices = append(choices, "meta:"+k)
	}
	group := cmp.Or(asked, "source")
	if !slices.Contains(choices, group) {
		return "", nil, &formError{field: "group", msg: fmt.Sprintf("%q: want one of %s", asked, strings.Join(choices, ", "))}
	}
	opts := make([]templates.Option, len(choices))
	for i, c := range choices {
		label := map[string]string{"source": "source", "domain": "domain", "lang": "language"}[c]
		opts[i] = templates.Option{Value: c, Label: cmp.Or(label, "metadata "+strings.TrimPrefix(c, "meta:")), Selected: c == group}
	}
	return db.GroupBy(group), opts, nil
}

// impact compares each group's removal rate with the rest of the dataset's.
func (s *server) impact(ctx context.Context, m db.Manifest, g db.GroupBy) (review.Impact, error) {
	counts, err := s.store.ImpactCounts(ctx, m, g)
	if err != nil {
		return review.Impact{}, err
	}
	return review.Groups(manifests.LumpGroups(counts, manifests.MaxGroups)), nil
}

// impactChart serves the impact's rate ratios as SVG, PNG or CSV.
func (s *server) impactChart(w http.ResponseWriter, r *http.Request, m db.Manifest) {
	group, _, err := s.groupChoice(r.Context(), m, r.URL.Query().Get("group"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	imp, err := s.impact(r.Context(), m, group)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rr := chart.RateRatios{Title: "Removals by " + strings.TrimPrefix(string(group), "meta:") + " against the rest of the dataset"}
	for _, g := range imp.Groups {
		rr.Groups = append(rr.Groups, chart.RatioGroup{Name: cmp.Or(g.Key, "(none)"), Ratio: g.Ratio, Lo: g.RatioLo, Hi: g.RatioHi, N: g.Docs,
			Flagged: g.Flag != "", Note: pct(g.Rate) + " removed"})
	}
	fig, err := rr.Figure()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.serveFigure(w, r, fig, fmt.Sprintf("manifest-%d-impact-%s", m.ID, strings.ReplaceAll(string(group), ":", "-")))
}

// serveFigure writes a chart as the {format} of the URL asks: svg, png or csv.
func (s *server) serveFigure(w http.ResponseWriter, r *http.Request, fig *chart.Figure, name string) {
	var (
		body []byte
		err  error
		ct   string
	)
	format := chi.URLParam(r, "format")
	switch format {
	case "svg":
		ct = "image/svg+xml"
		body, err = fig.SVG(chart.Size{})
	case "png":
		ct = "image/png"
		body, err = fig.PNG(chart.Size{})
	case "csv":
		ct = "text/csv; charset=utf-8"
		body = fig.CSV()
	default:
		s.fail(w, r, &pageError{http.StatusNotFound, "Charts come as svg, png or csv."})
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", ct)
	if format != "svg" || r.URL.Query().Get("download") != "" {
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.%s"`, name, format))
	}
	w.Write(body)
}

func (s *server) diffManifests(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	if q.Get("a") == "" && q.Get("b") == "" {
		// The page opened as it is linked, without a choice yet: no error.
		s.chooseDiff(w, r, http.StatusOK, 0, 0, "")
		return
	}
	a, okA := parseID(q.Get("a"))
	b, okB := parseID(q.Get("b"))
	if !okA || !okB {
		// Say which of the two is wrong, and how.
		var what []string
		for _, p := range []struct {
			name string
			ok   bool
		}{{"a", okA}, {"b", okB}} {
			switch {
			case p.ok:
			case q.Get(p.name) == "":
				what = append(what, p.name+" is missing")
			default:
				what = append(what, p.name+" is not a manifest ID (a whole number from 1)")
			}
		}
		s.chooseDiff(w, r, http.StatusUnprocessableEntity, a, b, "Choose two manifests to compare: "+strings.Join(what, "; ")+".")
		return
	}
	if a == b {
		s.chooseDiff(w, r, http.StatusUnprocessableEntity, a, b, fmt.Sprintf("Choose two different manifests to compare: a and b are both manifest %d.", a))
		return
	}
	ma, errA := s.store.Manifest(ctx, a)
	mb, errB := s.store.Manifest(ctx, b)
	if errA == nil && errB == nil {
		s.renderDiff(w, r, ma, mb)
		return
	}
	for _, err := range []error{errA, errB} {
		if err != nil && !errors.Is(err, db.ErrNotFound) {
			s.fail(w, r, err)
			return
		}
	}
	// The chooser, so that the other manifest and the list are a click away; every
	// missing one named.
	missing := fmt.Sprintf("There is no manifest %d", a)
	switch {
	case errA != nil && errB != nil:
		missing = fmt.Sprintf("There are no manifests %d and %d", a, b)
	case errA == nil:
		missing = fmt.Sprintf("There is no manifest %d", b)
	}
	s.chooseDiff(w, r, http.StatusNotFound, a, b, missing+": choose two manifests that exist.")
}

// chooseDiff answers with the form that chooses two manifests (status, msg as an error
// when there is one: 422 for a comparison it cannot make, 404 for a manifest that does
// not exist), a and b preselected when they are ids, and the way to the manifests list.
func (s *server) chooseDiff(w http.ResponseWriter, r *http.Request, status int, a, b int64, msg string) {
	list, err := s.store.Manifests(r.Context(), 0)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := templates.DiffPage{Page: s.page(r, "Compare two manifests"), Choosing: true, Manifests: len(list)}
	if msg != "" {
		v.Notice = templates.Notice{Text: msg, Error: true}
	}
	if a == 0 && b == 0 && len(list) >= 2 {
		// Nothing chosen yet: the two latest, older first, so that Compare compares.
		a, b = list[1].ID, list[0].ID
	}
	v.Choices, v.ChoicesB = diffChoices(list, a, b)
	s.render(w, r, status, templates.DiffManifestsPage(v))
}

// manifestLabel tells the two manifests of a comparison apart: the dataset, and the
// settings that made the manifest.
func manifestLabel(m db.Manifest) string {
	return fmt.Sprintf("%s: %s %s t=%s %s, keeper %s", datasetLabel(m), m.Params.Spec.ID(), m.Params.Shape, fmtNum(m.Params.Threshold, 2),
		m.Params.Policy, m.Params.Rule)
}

// diffChoices are the comparison form's options, a and b selected in its two lists.
func diffChoices(list []db.ManifestSummary, a, b int64) (as, bs []templates.Option) {
	for _, m := range list {
		id := strconv.FormatInt(m.ID, 10)
		// Short enough for a phone's select: the dataset, threshold and policy tell
		// manifests apart (the comparison's header gives every setting).
		l := fmt.Sprintf("%d: %s, t=%s %s", m.ID, datasetLabel(m.Manifest), fmtNum(m.Params.Threshold, 2), m.Params.Policy)
		as = append(as, templates.Option{Value: id, Label: l, Selected: m.ID == a})
		bs = append(bs, templates.Option{Value: id, Label: l, Selected: m.ID == b})
	}
	return as, bs
}

func (s *server) renderDiff(w http.ResponseWriter, r *http.Request, ma, mb db.Manifest) {
	ctx := r.Context()
	ra, err := s.store.ManifestRows(ctx, ma.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rb, err := s.store.ManifestRows(ctx, mb.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := templates.DiffPage{Page: s.page(r, fmt.Sprintf("Manifest %d → %d", ma.ID, mb.ID)), A: ma.ID, B: mb.ID, LabelA: manifestLabel(ma), LabelB: manifestLabel(mb)}
	if ma.DatasetID != mb.DatasetID {
		v.Note = "The two manifests are on different datasets (or versions): documents are matched by external id, and links go to the second's documents."
	}
	list, err := s.store.Manifests(ctx, 0)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v.Choices, v.ChoicesB = diffChoices(list, ma.ID, mb.ID)
	d := review.Diff(ra, rb)
	row := func(c review.Change) templates.DiffRow {
		dr := templates.DiffRow{ExtID: c.ExtID, Doc: cmp.Or(c.B.Doc, c.A.Doc), KeeperA: c.A.KeeperExtID, KeeperB: c.B.KeeperExtID,
			ClusterA: c.A.Cluster, ClusterB: c.B.Cluster}
		return dr
	}
	for _, c := range d.Entered {
		v.Entered = append(v.Entered, row(c))
	}
	for _, c := range d.Left {
		v.Left = append(v.Left, row(c))
	}
	for _, c := range d.Rekept {
		v.Rekept = append(v.Rekept, row(c))
	}
	v.Both = d.Both
	s.render(w, r, http.StatusOK, templates.DiffManifestsPage(v))
}

func (s *server) showSignOff(w http.ResponseWriter, r *http.Request, m db.Manifest) {
	sos, err := s.store.SignOffs(r.Context(), m.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if len(sos) == 0 {
		s.fail(w, r, &pageError{http.StatusNotFound, "This manifest has not been signed off yet."})
		return
	}
	so := sos[0]
	v := templates.SignOffPage{Page: s.page(r, fmt.Sprintf("Sign-off of manifest %d", m.ID)), ManifestID: m.ID, Status: manifests.SignOffStatus(so),
		Sections: recordSections(so.Record)}
	switch head, err := s.store.ExportAuditHead(r.Context(), m.ID); {
	case err == nil:
		v.Sections[0].Facts = append(v.Sections[0].Facts, templates.Param{Name: "Audit chain head at the export", Value: head.String()})
	case !errors.Is(err, db.ErrNotFound):
		s.fail(w, r, err)
		return
	}
	if so.Revoked {
		v.Revoked = fmt.Sprintf("Revoked by %s on %s: %s", so.RevokedBy, so.RevokedAt.Format("2006-01-02 15:04"), so.RevokeReason)
	}
	since, err := manifests.LabelsAfter(r.Context(), s.store, so.Record)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if since != nil {
		v.LabelsStale = fmt.Sprintf("The label figures below are stale: campaign %s has %s on %s after the labels they were "+
			"computed on (the last on %s). They are what the approvers saw; a new run scores the configuration on the labels as they are.",
			so.Record.Labels.CampaignName, templates.Plural(since.Events, "label event", "label events"), templates.Plural(since.Pairs, "pair", "pairs"), since.Last.Format("2006-01-02 15:04 UTC"))
	}
	s.render(w, r, http.StatusOK, templates.SignOffRecordPage(v))
}

// approvalsRecord is how many approvals the record asked, and a lowering.
func approvalsRecord(rec review.Record) string {
	if l := rec.ApprovalsLowered; l != nil {
		return fmt.Sprintf("%d (%s)", rec.ApprovalsRequired, l.Text())
	}
	return strconv.Itoa(rec.ApprovalsRequired)
}

// recordSections lays the sign-off record out for its page.
func recordSections(rec review.Record) []templates.RecordSection {
	p := rec.Params
	ds := rec.Dataset
	secs := []templates.RecordSection{
		{Title: "What was signed", Facts: []templates.Param{
			{Name: "Manifest", Value: strconv.FormatInt(rec.Manifest, 10)},
			{Name: "Manifest content hash", Value: rec.ManifestHash},
			{Name: "Dataset snapshot hash", Value: rec.DatasetHash},
			{Name: "Dataset", Value: fmt.Sprintf("%s v%d (id %d), %d documents, import hash %s", ds.Name, ds.Version, ds.ID, ds.Documents, ds.ContentHash)},
			{Name: "Removals", Value: fmt.Sprintf("%d approved in %d clusters, %d excluded", rec.Removals, rec.Clusters, rec.Excluded)},
			{Name: "Signed at", Value: rec.SignedAt.Format("2006-01-02 15:04:05 UTC")},
			{Name: "Signed with code version", Value: rec.CodeVersion},
			{Name: "Audit chain head at sign-off", Value: auditHeadText(rec.AuditHead)},
			{Name: "Approvals required", Value: approvalsRecord(rec)},
			{Name: "Review decisions by", Value: cmp.Or(strings.Join(rec.Deciders, ", "), "nobody recorded (signed before deciders were recorded, or no decision)")},
		}},
		{Title: "Parameters", Facts: append(methodFacts(p, rec.Origin),
			templates.Param{Name: "Run with code version", Value: p.CodeVersion},
		)},
	}
	if rec.Labels != nil {
		secs = append(secs, templates.RecordSection{Title: "Labels and estimates", Facts: estimateRows(rec.Labels)})
	} else {
		secs = append(secs, templates.RecordSection{Title: "Labels and estimates", Facts: []templates.Param{{Name: "Labels", Value: "none: the dataset had no labeling campaign when it ran"}}})
	}
	secs = append(secs, auditRecordSection(rec))
	counts := func(title string, cs []review.Count) templates.RecordSection {
		sec := templates.RecordSection{Title: title, Header: []string{"", "removals"}}
		for _, c := range cs {
			sec.Rows = append(sec.Rows, []string{c.Key, strconv.Itoa(c.N)})
		}
		return sec
	}
	secs = append(secs, counts("Removals by reason", rec.ByReason), counts("Removals by cluster size", rec.BySize))
	for _, g := range []struct {
		name string
		rows []review.GroupRow
	}{{"source", rec.ByGroup.Source}, {"domain", rec.ByGroup.Domain}, {"language", rec.ByGroup.Language}} {
		sec := templates.RecordSection{Title: "Removals by " + g.name, Header: []string{g.name, "documents", "removed", "rate", "rate ratio (95%)", "p (Holm)", "flag"}}
		for _, row := range g.rows {
			sec.Rows = append(sec.Rows, []string{cmp.Or(row.Key, "(none)"), strconv.Itoa(row.Docs), strconv.Itoa(row.Removed), pct(float64(row.Rate)),
				fmtNum(float64(row.Ratio), 2) + " " + interval(float64(row.RatioLo), float64(row.RatioHi)), fmtP(float64(row.PAdjusted)), row.Flag})
		}
		secs = append(secs, sec)
	}
	pol := templates.RecordSection{Title: "Policies compared on the run", Header: []string{"policy", "removed", "clusters", "chained", "false merges"}}
	for _, c := range rec.Comparison {
		pol.Rows = append(pol.Rows, []string{string(c.Policy), strconv.Itoa(c.Removed), strconv.Itoa(c.Clusters), strconv.Itoa(c.Chained),
			fmt.Sprintf("%d of %d", c.FalseMerges, c.LabeledNonDuplicates)})
	}
	if len(rec.Comparison) > 0 {
		secs = append(secs, pol)
	}
	secs = append(secs, originSections(rec)...)
	people := templates.RecordSection{Title: fmt.Sprintf("People (%s required)", templates.Plural(rec.ApprovalsRequired, "approval", "approvals")),
		Header: []string{"name", "role", "as", "decision", "when", "comment", "on hash"}}
	pr := rec.Preparer
	people.Rows = append(people.Rows, []string{pr.Name, pr.Role, "preparer", "prepared", pr.At.Format("2006-01-02 15:04"), "", ""})
	for _, a := range rec.Reviews {
		people.Rows = append(people.Rows, []string{a.Name, a.Role, "reviewer", a.Verdict, a.At.Format("2006-01-02 15:04"), a.Comment, review.Short(a.Hash)})
	}
	for _, b := range rec.BulkApprovals {
		what := fmt.Sprintf("%s at bar %g", templates.Plural(b.Items, "removal", "removals"), b.Bar)
		if b.OutsideSample {
			what = templates.Plural(b.Items, "removal", "removals") + " outside the review sample, on its strength"
		}
		people.Rows = append(people.Rows, []string{b.Name, "", "bulk approval", what, b.At.Format("2006-01-02 15:04"), "", ""})
	}
	return append(secs, people)
}

// auditHeadText is the audit chain head a record published, for its page.
func auditHeadText(h *review.AuditHead) string {
	if h == nil {
		return "not published (signed off before records carried it)"
	}
	return h.String() + ": keep it elsewhere; the audit page or \"audit verify -head\" checks it"
}

func (s *server) signOffJSON(w http.ResponseWriter, r *http.Request, m db.Manifest) {
	var buf bytes.Buffer
	if err := manifests.WriteSignOff(r.Context(), s.store, m, &buf); err != nil {
		if errors.Is(err, db.ErrNotFound) {
			err = &pageError{http.StatusNotFound, "This manifest has not been signed off yet."}
		}
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="manifest-%d-%s"`, m.ID, manifests.SignOffJSON))
	w.Write(buf.Bytes())
}

// exportFile serves a file of an exported manifest (removals.csv, removals.jsonl,
// split.jsonl), refusing when the manifest or the dataset changed since the sign-off.
// The check comes before the first byte, so a refusal is a page, not half a file.
func (s *server) exportFile(name string) func(http.ResponseWriter, *http.Request, db.Manifest) {
	ct := map[string]string{manifests.RemovalsCSV: "text/csv; charset=utf-8", manifests.RemovalsJSONL: "application/jsonl",
		manifests.SplitJSONL: "application/jsonl"}[name]
	return func(w http.ResponseWriter, r *http.Request, m db.Manifest) {
		out := &startWriter{w: w, start: func() {
			w.Header().Set("Content-Type", ct)
			w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="manifest-%d-%s"`, m.ID, name))
		}}
		if err := manifests.WriteExport(r.Context(), s.store, m, name, out); err != nil {
			if !out.started {
				s.fail(w, r, err)
				return
			}
			s.log.Error("export download cut short", "manifest", m.ID, "file", name, "err", err, "request_id", requestIDOf(r))
		}
	}
}

// startWriter calls start before the first byte it writes.
type startWriter struct {
	w       http.ResponseWriter
	start   func()
	started bool
}

func (sw *startWriter) Write(b []byte) (int, error) {
	if !sw.started {
		sw.started = true
		sw.start()
	}
	return sw.w.Write(b)
}

// shapeNote says when Milvus cannot run the manifest's shape as calibrated: its
// MINHASH_LSH index cuts k values into bands of floor(k/bands) rows (datasketch and
// datatrove band exactly bands × rows); "" when it runs it.
func shapeNote(m db.Manifest) string {
	sh, k := m.Params.Shape, m.Params.Spec.Hashes
	ms := handoff.MilvusBanding(k, sh.Bands)
	if ms == sh {
		return ""
	}
	return fmt.Sprintf("Milvus's MINHASH_LSH cuts a signature of %d values into %d bands of floor(%d/%d) = %d rows, so it runs %d × %d, "+
		"not this %d × %d: to run the calibrated shape there, calibrate one whose rows are floor(k/bands). datasketch's MinHashLSH and datatrove band exactly bands × rows.",
		k, ms.Bands, k, ms.Bands, ms.Rows, ms.Bands, ms.Rows, sh.Bands, sh.Rows)
}

// handoffMeasureBytes is the most text the engines.zip download reads to measure what
// each engine does differently (a few seconds a core); a larger dataset's files say how
// to measure it from the command line.
const handoffMeasureBytes = 32 << 20

func handoffSource(m db.Manifest) handoff.Source {
	return handoff.Source{Manifest: m.ID, Dataset: m.Dataset, State: m.State}
}

// engineFiles serves a manifest's settings for the engines that run at scale: every
// format as one zip (engines.zip), or the plain JSON description (settings.json). A
// manifest not signed off is served too; its files say DRAFT.
func (s *server) engineFiles(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { s.serveEngineFile(w, r, name) }
}

func (s *server) serveEngineFile(w http.ResponseWriter, r *http.Request, name string) {
	m, err := s.loadManifest(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	now := time.Now()
	set := handoff.Settings{Params: m.Params, Source: handoffSource(m), Generated: now}
	var buf bytes.Buffer
	switch name {
	case "engines.zip":
		// The files say in numbers what each engine does differently, measured on the
		// manifest's dataset; over handoffMeasureBytes of text they say how to measure
		// it (the export command), rather than hold the download that long.
		figs, err := manifests.MeasureHandoff(r.Context(), s.store, m, handoffMeasureBytes, nil)
		var tooLarge *manifests.TooLargeError
		if err != nil && !errors.As(err, &tooLarge) {
			s.fail(w, r, err)
			return
		}
		set.Figures = figs
		files, err := handoff.All(set)
		if err == nil {
			err = handoff.Zip(&buf, fmt.Sprintf("manifest-%d-engines", m.ID), files, now)
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/zip")
	case "settings.json":
		files, err := handoff.Files(set, handoff.JSON)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		buf.Write(files[0].Body)
		w.Header().Set("Content-Type", "application/json")
	default:
		s.fail(w, r, notFound("file"))
		return
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="manifest-%d-%s"`, m.ID, name))
	w.Write(buf.Bytes())
}

// approvalView fills the sign-off panel for the viewer (review.StandingOf): who
// approved, who may still, what the viewer's own approval would do, whether anyone left
// can give what the manifest waits for, and what an export would do.
func (s *server) approvalView(ctx context.Context, v *templates.ManifestPage, m db.Manifest, me *db.User, reviews []review.Review, undecided int) error {
	decided, _, err := s.store.Deciders(ctx, m.ID)
	if err != nil {
		return err
	}
	users, err := s.store.Users(ctx)
	if err != nil {
		return err
	}
	var approvers []review.Approver
	for _, u := range users {
		if !u.Disabled && u.Role.Can(auth.Approve) {
			approvers = append(approvers, review.Approver{ID: u.ID, Name: u.Name})
		}
	}
	st := review.StandingOf(m.State, reviews, m.PreparedBy, m.ApprovalsRequired, undecided, decided, approvers, me.ID)
	a := &v.Approval
	a.Needed = st.Needed
	for _, r := range st.Approved {
		a.Approved = append(a.Approved, templates.ApproverRow{Name: r.Name, Role: r.Role, At: r.At.Format("2006-01-02 15:04")})
	}
	for _, r := range st.Rejected {
		a.Rejected = append(a.Rejected, templates.ApproverRow{Name: r.Name, Role: r.Role, At: r.At.Format("2006-01-02 15:04")})
	}
	var may, apart []string
	for _, p := range st.MayStill {
		if p.ID != me.ID {
			may = append(may, p.Name)
		}
		a.MayStill = append(a.MayStill, p.Name)
	}
	for _, p := range st.Apart {
		if p.ID != me.ID {
			apart = append(apart, p.Name)
		}
	}
	more := func() string {
		switch {
		case st.Needed == 0 && st.NeedApart && len(apart) > 0:
			return fmt.Sprintf("it still needs an approval from someone who made none of its review decisions: %s may give it", orNames(apart))
		case st.Needed == 0 && st.NeedApart:
			return "it still needs an approval from someone who made none of its review decisions"
		case st.Needed == 0:
			return "its approvals are enough"
		case len(may) == 1 && st.Needed > 1:
			return fmt.Sprintf("%d more approvals needed; only %s may give one", st.Needed, may[0])
		case len(may) > 0 && len(may) < st.Needed:
			return fmt.Sprintf("%d more approvals needed; only %s may give one each", st.Needed, andNames(may))
		case len(may) > 0 && st.Needed == 1:
			return fmt.Sprintf("1 more approval needed: %s may give it", orNames(may))
		case len(may) == st.Needed:
			return fmt.Sprintf("%d more approvals needed: %s may give them", st.Needed, andNames(may))
		case len(may) > 0:
			return fmt.Sprintf("%d more approvals needed: any %d of %s may give them", st.Needed, st.Needed, orNames(may))
		}
		return templates.Plural(st.Needed, "more approval", "more approvals") + " needed"
	}
	inReview := m.State == review.InReview
	switch {
	case st.YouApproved && inReview:
		a.YouKey, a.You = "approved", fmt.Sprintf("You approved content hash %s; %s.", review.Short(m.ContentHash), more())
	case st.YouApproved:
		a.YouKey, a.You = "approved", fmt.Sprintf("You approved content hash %s.", review.Short(m.ContentHash))
	case st.YouPrepared && (inReview || m.State == review.Draft):
		a.YouKey, a.You = "prepared", fmt.Sprintf("You prepared this manifest, so your approval does not count; %s.", more())
		v.PreparerApprover = false // said here, with who may
	case st.YouMay && st.YouSignOff:
		a.YouKey, a.You, a.Button = "may", "Your approval signs it off.", "Approve and sign off"
	case st.YouMay:
		after := max(0, st.Needed-1)
		a.YouKey, a.Button = "may", fmt.Sprintf("Approve: %d of %d", len(st.Approved)+1, m.ApprovalsRequired)
		switch {
		case after > 0:
			a.You = fmt.Sprintf("Your approval counts: %d more will be needed after it.", after)
		case st.YouRejected:
			a.You = "Your approval replaces your request for changes; it does not sign off on its own."
		default:
			a.You = "Your approval counts, but it does not sign off on its own (see below)."
		}
		if st.YouRejected {
			a.YouKey = "rejected"
		}
	case inReview && !me.Role.Can(auth.Approve):
		a.YouKey, a.You = "follows", fmt.Sprintf("Approvers sign it off: %s.", more())
	}
	if st.Blocked() && (inReview || m.State == review.Draft) {
		if st.Needed > len(st.MayStill) {
			// Too few people other than the preparer may approve: say so in numbers.
			sf := shortfall(me, st.Needed, len(st.MayStill), len(st.Approved) > 0, preparerWord(me, m))
			a.Blocked = "Nobody can sign this manifest off yet: it " + sf.Text + "."
		} else {
			a.Blocked = fmt.Sprintf("Nobody can sign this manifest off yet: it needs %s from an approver who made none of its review decisions, and the team has %s.",
				templates.Plural(max(1, st.Needed), "approval", "approvals"), teamOf(len(st.MayStill)))
		}
		if me.Role.Can(auth.ManageUsers) {
			a.InviteURL = inviteApproverURL
		}
	}
	if v.CanExport {
		sos, err := s.store.SignOffs(ctx, m.ID)
		if err != nil {
			return err
		}
		e := &templates.ExportPreview{Count: v.Approved, Dataset: datasetLabel(m), ContentHash: m.ContentHash, DatasetHash: m.DatasetHash}
		if len(sos) > 0 {
			var names []string
			for _, p := range sos[0].Record.Approvals {
				names = append(names, p.Name)
			}
			e.SignedBy = strings.Join(names, ", ")
		}
		v.Export = e
	}
	return nil
}

// preparerWord names who prepared m to me: "you", or their name.
func preparerWord(me *db.User, m db.Manifest) string {
	if me != nil && me.ID == m.PreparedBy {
		return "you"
	}
	return m.Preparer + " (who prepared it)"
}

// orNames joins names with commas and a last "or".
func orNames(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// andNames joins names with commas and a final "and".
func andNames(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// teamOf says how many other approvers there are.
func teamOf(n int) string {
	switch n {
	case 0:
		return "no other approver"
	case 1:
		return "only one other approver"
	}
	return fmt.Sprintf("only %d other approvers", n)
}
