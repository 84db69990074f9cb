package web

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// Runs: a configuration entered by hand (or prefilled by a link from another page, e.g.
// the sweep dashboard: /datasets/{id}/runs/new?spec=…&bands=…&rows=…&threshold=…
// &verification=…&policy=…&keeper=…) runs over a dataset as a background job that ends
// in a draft manifest.

// runForm holds the run form's fields as typed. A run request travels as it: runFormOf
// writes one (a proposal from a sweep, a manifest prepared again), query and
// runFormFrom carry it through a URL or a post, and parse reads it back.
type runForm struct {
	spec, bands, rows, threshold, verification, policy, keeper, campaign, approvals string
}

// runFormOf writes req's parameters, campaign and approvals as the form's fields;
// parse reads them back to req (but its dataset, code version and who runs it, which
// the form does not hold). Approvals of 0 leave the field to the form's default.
func runFormOf(req manifests.Request) runForm {
	p := req.Params
	f := runForm{spec: p.Spec.String(), bands: strconv.Itoa(p.Shape.Bands), rows: strconv.Itoa(p.Shape.Rows),
		threshold: fmtFloat(p.Threshold), verification: string(p.Verification), policy: string(p.Policy), keeper: p.Rule.String(),
		campaign: strconv.FormatInt(req.CampaignID, 10)}
	if req.ApprovalsRequired > 0 {
		f.approvals = strconv.Itoa(req.ApprovalsRequired)
	}
	return f
}

// runFormFrom reads the form's fields from v (the query of the new-run page, or the
// POST body), as query writes them.
func runFormFrom(v url.Values) runForm {
	return runForm{spec: v.Get("spec"), bands: v.Get("bands"), rows: v.Get("rows"), threshold: v.Get("threshold"),
		verification: v.Get("verification"), policy: v.Get("policy"), keeper: v.Get("keeper"), campaign: v.Get("campaign"),
		approvals: v.Get("approvals")}
}

// formValues reads the run form from v (the query of the new-run page, or the POST
// body), filling what is missing from the dataset's campaign and sensible defaults.
func (s *server) runFormValues(ctx context.Context, datasetID int64, v url.Values) (runForm, []db.Campaign, error) {
	f := runFormFrom(v)
	all, err := s.store.Campaigns(ctx)
	if err != nil {
		return f, nil, err
	}
	var camps []db.Campaign
	for _, c := range all {
		if c.DatasetID == datasetID {
			camps = append(camps, c)
		}
	}
	spec, threshold := lsh.DefaultSpec(), 0.8
	if len(camps) > 0 {
		c := camps[len(camps)-1] // the oldest: the run's default labels
		spec, threshold = c.Spec, c.Threshold
		f.campaign = cmp.Or(f.campaign, strconv.FormatInt(c.ID, 10))
	}
	f.spec = cmp.Or(f.spec, spec.String())
	f.threshold = cmp.Or(f.threshold, strconv.FormatFloat(threshold, 'g', -1, 64))
	if f.bands == "" && f.rows == "" {
		if sp, err := lsh.ParseSpec(f.spec); err == nil {
			if t, ok := parseDecimal(f.threshold); ok {
				if ch, err := lsh.OptimalShape(t, sp.Hashes, lsh.EqualWeights); err == nil {
					f.bands, f.rows = strconv.Itoa(ch.Shape.Bands), strconv.Itoa(ch.Shape.Rows)
				}
			}
		}
	}
	f.verification = cmp.Or(f.verification, string(review.Exact))
	f.policy = cmp.Or(f.policy, string(cluster.KeeperStar))
	f.keeper = cmp.Or(f.keeper, "earliest")
	f.approvals = cmp.Or(f.approvals, strconv.Itoa(review.DefaultApprovals))
	return f, camps, nil
}

// runSettings are the run form's fields a post must fill: the run's settings. The form
// always sends them (prefilled); runFormValues's defaults are for prefilling it, not for
// a post that lacks them, which would run settings nobody chose. Campaign and approvals
// have the defaults the form says (the dataset's labels, review.DefaultApprovals).
var runSettings = []string{"spec", "bands", "rows", "threshold", "verification", "policy", "keeper"}

// runFieldsSent refuses a run post that lacks (or leaves blank) one of runSettings,
// naming the first.
func runFieldsSent(v url.Values) error {
	for _, name := range runSettings {
		if strings.TrimSpace(v.Get(name)) == "" {
			return &formError{field: name, msg: "missing: a run takes every setting of the form, and nothing was started"}
		}
	}
	return nil
}

// parse turns the form into a run request, every field checked by name.
func (f runForm) parse(datasetID int64, codeVersion string) (manifests.Request, error) {
	spec, err := lsh.ParseSpec(f.spec)
	if err != nil {
		return manifests.Request{}, err
	}
	num := func(name, s string) (int, error) {
		n, ok := parseWhole(s)
		if !ok || n < 1 {
			return 0, &formError{field: name, msg: "want a whole number of at least 1"}
		}
		return n, nil
	}
	bands, err := num("bands", f.bands)
	if err != nil {
		return manifests.Request{}, err
	}
	rows, err := num("rows", f.rows)
	if err != nil {
		return manifests.Request{}, err
	}
	approvals, ok := parseWhole(f.approvals)
	if !ok {
		approvals = 0 // checkApprovals names the range
	}
	t, ok := parseDecimal(f.threshold)
	if !ok {
		return manifests.Request{}, &formError{field: "threshold", msg: "want a number in (0, 1], e.g. 0.8"}
	}
	ver, err := review.ParseVerification(f.verification)
	if err != nil {
		return manifests.Request{}, err
	}
	pol, err := cluster.ParsePolicy(f.policy)
	if err != nil {
		return manifests.Request{}, badInput(err)
	}
	rule, err := cluster.ParseRule(f.keeper)
	if err != nil {
		return manifests.Request{}, &formError{field: "keeper", msg: keeperProblem(err)}
	}
	var campaign int64
	if f.campaign != "" && f.campaign != "0" {
		var ok bool
		if campaign, ok = parseID(f.campaign); !ok {
			return manifests.Request{}, &formError{field: "campaign", msg: "no such campaign"}
		}
	}
	p := review.Params{Spec: spec, Shape: lsh.Shape{Bands: bands, Rows: rows}, Threshold: t, Verification: ver, Policy: pol,
		Rule: rule, CodeVersion: codeVersion}
	if err := p.Validate(); err != nil {
		return manifests.Request{}, err
	}
	return manifests.Request{DatasetID: datasetID, CampaignID: campaign, Params: p, ApprovalsRequired: approvals}, nil
}

// loadDataset loads the {dataset} of the URL.
func (s *server) loadDataset(r *http.Request) (db.Dataset, error) {
	return loadByID(r, "dataset", "dataset", s.store.Dataset)
}

func (s *server) newRun(w http.ResponseWriter, r *http.Request, ds db.Dataset) {
	// A refused post comes back here (303) with what was sent and why it was refused.
	v, errMsg := r.URL.Query(), ""
	if n := noticeOf(r); n.Error && n.Form != nil {
		v, errMsg = n.Form, n.Text
	}
	s.renderRunForm(w, r, ds, v, http.StatusOK, errMsg)
}

func (s *server) renderRunForm(w http.ResponseWriter, r *http.Request, ds db.Dataset, v url.Values, status int, errMsg string) {
	f, camps, err := s.runFormValues(r.Context(), ds.ID, v)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	view := templates.RunForm{Page: s.page(r, "Run on "+ds.Name), DatasetID: ds.ID, Dataset: fmt.Sprintf("%s v%d", ds.Name, ds.Version),
		Docs: ds.Docs, Spec: f.spec, Bands: f.bands, Rows: f.rows, Threshold: f.threshold, Keeper: f.keeper, Approvals: f.approvals,
		Error: errMsg, Token: v.Get("token")}
	if errMsg != "" {
		view.Page.Notice = templates.Notice{} // said once, in the form
	}
	removed, err := s.store.RemovedDocuments(r.Context(), ds.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	view.Live = ds.Docs
	for _, rm := range removed {
		view.Live -= rm.Documents
		view.Removed = append(view.Removed, templates.RemovedRow{Manifest: rm.Manifest, Documents: rm.Documents, At: rm.At.UTC().Format("2006-01-02 15:04")})
	}
	if view.Pairless = pairlessOf(userOf(r), ds.Docs); view.Pairless == nil && view.Live < 2 && view.Error == "" {
		// Documents there are, but exported manifests removed all but one: said up front.
		view.Error = manifests.TooFew(ds, view.Live).Error()
	}
	me := userOf(r)
	others, _, err := s.approvers(r.Context(), me.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	view.ApprovalsNote = fmt.Sprintf("%d by default, none of them by whoever prepares it, and at least one by someone who made none of its review decisions; "+
		"fewer (at least 1) is your choice, recorded in the audit log and on the sign-off record.", review.DefaultApprovals)
	if n, ok := parseWhole(f.approvals); ok && n >= 1 {
		view.Shortfall = shortfall(me, n, others, false, "you")
	}
	if view.Token == "" || r.Method == http.MethodGet {
		view.Token = newFormToken() // a refused post keeps its own: it started nothing
	}
	for _, v := range []review.Verification{review.Exact, review.Estimate} {
		label := map[review.Verification]string{review.Exact: "exact Jaccard", review.Estimate: "MinHash estimate"}[v]
		view.Verification = append(view.Verification, templates.Option{Value: string(v), Label: label, Selected: string(v) == f.verification})
	}
	for _, p := range cluster.Policies() {
		view.Policy = append(view.Policy, templates.Option{Value: string(p), Label: string(p), Selected: string(p) == f.policy})
	}
	view.Campaigns = append(view.Campaigns, templates.Option{Value: "0", Label: "none"})
	for _, c := range camps {
		id := strconv.FormatInt(c.ID, 10)
		view.Campaigns = append(view.Campaigns, templates.Option{Value: id, Label: "campaign " + c.Name, Selected: id == f.campaign})
	}
	s.render(w, r, status, templates.RunFormPage(view))
}

func (s *server) startRun(w http.ResponseWriter, r *http.Request, ds db.Dataset) {
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, &pageError{http.StatusBadRequest, "Unreadable form."})
		return
	}
	f, _, err := s.runFormValues(r.Context(), ds.ID, r.PostForm)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	err = s.checkLive(r.Context(), ds)
	if err == nil {
		err = runFieldsSent(r.PostForm)
	}
	var req manifests.Request
	if err == nil {
		req, err = f.parse(ds.ID, manifests.CodeVersion(s.version))
	}
	if err == nil {
		req.By = *userOf(r)
		err = s.checkRunRequest(r.Context(), ds, req)
	}
	if err != nil {
		s.failOn(w, r, err, func(_ int, msg string) {
			s.redirect(w, r, fmt.Sprintf("/datasets/%d/runs/new", ds.ID), refused(r, msg))
		})
		return
	}
	// The same form posted twice (a double click, a replayed POST) starts one run: its
	// one-time token is claimed first, and a second post goes where the first led.
	token := r.PostForm.Get("token")
	if s.sentAlready(w, r, token, "run", "the dataset's page for it") {
		return
	}
	req.Team = s.teamOf(r.Context(), req.ApprovalsRequired, req.By.ID)
	title := fmt.Sprintf("%s v%d, %s %s t=%s %s", ds.Name, ds.Version, req.Params.Policy, req.Params.Shape, f.threshold, req.Params.Verification)
	id, err := s.launchRun(r.Context(), ds, req, title, f.query())
	target := ""
	if err == nil {
		target = "/runs/" + id
	}
	err = s.settleFormToken(r.Context(), token, target, err)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/runs/"+id, http.StatusSeeOther)
}

// prepareAgain runs a manifest's settings again over the live documents and the current
// labels (one click on a stale manifest's page): the new draft carries over every
// approval and exclusion that still applies.
func (s *server) prepareAgain(w http.ResponseWriter, r *http.Request, m db.Manifest) {
	if m.Origin != nil {
		s.failOnManifest(w, r, m, &review.RefusedError{Msg: "an imported manifest is not run here: bring the engine's results back again " +
			"(the import leaves out the documents exported manifests removed)"})
		return
	}
	ds, err := s.store.Dataset(r.Context(), m.DatasetID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	token := r.PostFormValue("token")
	if s.sentAlready(w, r, token, "run", "the manifest's page") {
		return
	}
	p := m.Params
	p.CodeVersion = manifests.CodeVersion(s.version)
	req := manifests.Request{DatasetID: m.DatasetID, CampaignID: m.CampaignID, Params: p, ApprovalsRequired: m.ApprovalsRequired,
		By: *userOf(r), CarryFrom: m.ID}
	req.Team = s.teamOf(r.Context(), req.ApprovalsRequired, req.By.ID)
	if l := m.ApprovalsLowered; l != nil {
		// Not lowered anew: the number is the replaced manifest's, and so is the choice.
		req.Team = fmt.Sprintf("carried over from manifest %d, %s", m.ID, l.Text())
	}
	title := fmt.Sprintf("manifest %d prepared again: %s v%d, %s %s t=%s %s", m.ID, ds.Name, ds.Version, p.Policy, p.Shape,
		strconv.FormatFloat(p.Threshold, 'g', -1, 64), p.Verification)
	id, err := s.launchRun(r.Context(), ds, req, title, runFormOf(req).query())
	target := ""
	if err == nil {
		target = "/runs/" + id
	}
	err = s.settleFormToken(r.Context(), token, target, err)
	if err != nil {
		s.failOnManifest(w, r, m, err)
		return
	}
	http.Redirect(w, r, "/runs/"+id, http.StatusSeeOther)
}

// teamOf says what the team looks like when a run of preparer's asks for fewer
// approvals than the default (recorded with the lowering); "" otherwise.
func (s *server) teamOf(ctx context.Context, approvals int, preparer int64) string {
	if approvals >= review.DefaultApprovals {
		return ""
	}
	_, team, err := s.approvers(ctx, preparer)
	if err != nil {
		return ""
	}
	return team
}

// query is the form as the run form's query (runFormFrom reads it), to run it again;
// an empty field is left out, which the form reads as empty.
func (f runForm) query() url.Values {
	v := url.Values{}
	for name, value := range map[string]string{"spec": f.spec, "bands": f.bands, "rows": f.rows, "threshold": f.threshold,
		"verification": f.verification, "policy": f.policy, "keeper": f.keeper, "campaign": f.campaign, "approvals": f.approvals} {
		if value != "" {
			v.Set(name, value)
		}
	}
	return v
}

// launchRun starts a run of req over ds as a background job with its record
// (manifests.Launch), internal errors logged and named by reference (jobError).
func (s *server) launchRun(ctx context.Context, ds db.Dataset, req manifests.Request, title string, form url.Values) (string, error) {
	return manifests.Launch(ctx, s.store, s.sigs, s.jobs, s.log, req,
		db.NewRun{DatasetID: ds.ID, Title: title, Form: form.Encode(), CarriedFrom: req.CarryFrom},
		func(err error) error { return s.jobError("run", title, err, "no manifest was made") })
}

// loadRun finds the {job} of the URL, a run the user may see.
func (s *server) loadRun(r *http.Request) (jobs.Snapshot, error) {
	return s.loadJob(r, "run", "No such run. Runs are listed while the server runs; their manifests stay.")
}

func (s *server) showRun(w http.ResponseWriter, r *http.Request) {
	snap, err := s.loadRun(r)
	var missing *pageError
	if errors.As(err, &missing) && missing.status == http.StatusNotFound {
		// Not a job of this process: the record says what became of it.
		if rec, rerr := s.store.RunByJob(r.Context(), chi.URLParam(r, "job")); rerr == nil && seesRun(r, rec) {
			s.renderRunRecord(w, r, rec)
			return
		}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := templates.RunStatus{Page: s.page(r, "Run "+snap.Title), JobID: snap.ID, Title: snap.Title, State: string(snap.State),
		Running: snap.State == jobs.Running, Error: snap.Err, Elapsed: s.elapsed(snap)}
	if v.Running {
		v.Page.Refresh = 1
	}
	if p, ok := snap.Progress.(manifests.Progress); ok {
		v.Phase, v.Done, v.Total = p.Phase, p.Done, p.Total
	}
	v.Phase = cmp.Or(v.Phase, "starting")
	v.ManifestID, _ = snap.Result.(int64)
	status := http.StatusOK
	if snap.State == jobs.Failed {
		status = http.StatusUnprocessableEntity
	}
	s.render(w, r, status, templates.RunStatusPage(v))
}

// seesRun: who started a run, or an admin, sees its record (as its job).
func seesRun(r *http.Request, rec db.RunRecord) bool {
	c := jobCaller(r)
	return c.All || (rec.StartedBy != 0 && rec.StartedBy == c.UserID)
}

// renderRunRecord shows a run that is no job of this process: one that ended before
// (its manifest, or why it failed), or one a stopped process left (interrupted, with
// what it was doing and how to run it again).
func (s *server) renderRunRecord(w http.ResponseWriter, r *http.Request, rec db.RunRecord) {
	v := templates.RunStatus{Page: s.page(r, "Run "+rec.Title), JobID: rec.JobID, Title: rec.Title, State: rec.State,
		Error: rec.Error, ManifestID: rec.ManifestID, Phase: rec.Phase, Recorded: true, Started: rec.CreatedAt.UTC().Format("2006-01-02 15:04 UTC")}
	if rec.State == db.RunRunning { // left by a process that stopped before the start marked it
		v.State = db.RunInterrupted
	}
	if !rec.FinishedAt.IsZero() {
		v.Elapsed = rec.FinishedAt.Sub(rec.CreatedAt).Round(100 * time.Millisecond).String()
	}
	v.AgainURL = fmt.Sprintf("/datasets/%d/runs/new?%s", rec.DatasetID, rec.Form)
	if rec.CarriedFrom != 0 {
		v.CarriedFrom = rec.CarriedFrom
	}
	status := http.StatusOK
	if v.State == db.RunFailed {
		status = http.StatusUnprocessableEntity
	}
	s.render(w, r, status, templates.RunStatusPage(v))
}

func (s *server) cancelRun(w http.ResponseWriter, r *http.Request) {
	if snap, ok := s.cancelJob(w, r, s.loadRun); ok {
		http.Redirect(w, r, "/runs/"+snap.ID, http.StatusSeeOther)
	}
}

// cancelJob cancels the background job of the URL (load finds it) for the person asking;
// false when it answered with the error instead.
func (s *server) cancelJob(w http.ResponseWriter, r *http.Request, load func(*http.Request) (jobs.Snapshot, error)) (jobs.Snapshot, bool) {
	snap, err := load(r)
	if err == nil {
		err = s.jobs.Cancel(snap.ID, jobCaller(r))
	}
	if err != nil {
		s.fail(w, r, err)
		return snap, false
	}
	return snap, true
}

// checkLive refuses a run over ds when fewer than two of its documents are live
// (manifests.TooFew), before the form is read: no field of it could help.
func (s *server) checkLive(ctx context.Context, ds db.Dataset) error {
	removed, err := s.store.RemovedDocuments(ctx, ds.ID)
	if err != nil {
		return err
	}
	live := ds.Docs
	for _, rm := range removed {
		live -= rm.Documents
	}
	return manifests.TooFew(ds, live)
}

// checkRunRequest refuses, on the form, what would fail only once the run had started or
// never be signed off: a campaign that is not this dataset's, approvals checkApprovals
// refuses.
func (s *server) checkRunRequest(ctx context.Context, ds db.Dataset, req manifests.Request) error {
	if req.CampaignID != 0 {
		c, err := s.store.Campaign(ctx, req.CampaignID)
		if errors.Is(err, db.ErrNotFound) || (err == nil && c.DatasetID != ds.ID) {
			return &formError{field: "campaign", msg: "no such campaign of this dataset"}
		}
		if err != nil {
			return err
		}
	}
	_, err := s.checkApprovals(ctx, "approvals", req.ApprovalsRequired, req.By.ID)
	return err
}

// checkApprovals refuses, as field, a number of approvals no manifest may ask
// (review.CheckApprovals: 1 to 20). More than the people who may approve a manifest of
// preparer's is not refused: the manifest is a report until signed off, and the form and
// its page say whom to invite (shortfall). The run form, the results upload and the
// manifest's settings ask the same. It returns what the team looks like, recorded with a
// number under review.DefaultApprovals (a lowering).
func (s *server) checkApprovals(ctx context.Context, field string, n int, preparer int64) (string, error) {
	if err := review.CheckApprovals(n); err != nil {
		var in *review.InputError
		if errors.As(err, &in) {
			return "", &formError{field: field, msg: in.Msg}
		}
		return "", err
	}
	_, team, err := s.approvers(ctx, preparer)
	return team, err
}

// approvers counts the people who may approve a manifest prepared by preparer
// (db.DB.Approvers), and says so for a lowering's record.
func (s *server) approvers(ctx context.Context, preparer int64) (int, string, error) {
	n, err := s.store.Approvers(ctx, preparer)
	if err != nil {
		return 0, "", err
	}
	return n, templates.Plural(n, "enabled account other than the preparer may", "enabled accounts other than the preparer may") + " approve", nil
}

// shortfall says, when a manifest needs more approvals than the people who may still give
// them (others), how many it needs, from whom, and whom to invite (the invite link for
// whoever may invite): "needs 2 approvals from people other than you; 0 such accounts:
// invite 2 approvers". more says that some were given already. The zero Shortfall when
// others suffice.
func shortfall(me *db.User, needed, others int, more bool, who string) templates.Shortfall {
	if needed <= others {
		return templates.Shortfall{}
	}
	asked := templates.Plural(needed, "approval", "approvals")
	if more {
		asked = templates.Plural(needed, "more approval", "more approvals")
	}
	such := templates.Plural(others, "such account", "such accounts")
	if more {
		such += " left"
	}
	invite := templates.Plural(needed-others, "approver", "approvers")
	if others > 0 || more {
		invite = templates.Plural(needed-others, "more approver", "more approvers")
	}
	invite = strings.Replace(invite, "1 ", "one ", 1)
	sf := templates.Shortfall{Text: fmt.Sprintf("needs %s from people other than %s; %s: invite %s", asked, who, such, invite)}
	if me != nil && me.Role.Can(auth.ManageUsers) {
		sf.InviteURL = inviteApproverURL
	}
	return sf
}

// inviteApproverURL is the admin's invite form with the approver role chosen.
const inviteApproverURL = "/admin/users?role=approver#invite"
