package web

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/chart"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
	"github.com/dedupstudio/dedupstudio/internal/words"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// Sweeps: a campaign's sweeps and the form that starts one (/campaigns/{c}/sweeps), and a
// sweep's dashboard (/sweeps/{id}) with its polled progress, the live threshold slider's
// fragment, the charts (SVG, PNG, CSV) and the results as CSV. Everything a sweep
// computes comes from internal/sweeprun; this file reads the request and builds views.

// Limits of what a page lists.
const (
	maxSweepsListed = 50
	maxDiffed       = 10  // sweeps of a list compared with the current labels (each resolves them)
	maxOutcomes     = 25  // misses and false merges listed each
	maxRows         = 100 // table rows on a page (?page=)
)

// loadSweep loads the {sweep} of the URL.
func (s *server) loadSweep(r *http.Request) (sweeprun.Sweep, error) {
	return loadByID(r, "sweep", "sweep", s.sweeps.Get)
}

func (s *server) listSweeps(w http.ResponseWriter, r *http.Request, c db.Campaign) {
	page := 1 // of maxSweepsListed sweeps, newest first
	if v := r.URL.Query().Get("page"); v != "" {
		n, ok := parseWhole(v)
		if !ok || n < 1 {
			s.fail(w, r, &formError{field: "page", msg: fmt.Sprintf("%q is not a page number", v)})
			return
		}
		page = n
	}
	ds, err := s.store.Dataset(r.Context(), c.DatasetID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	list, err := s.sweeps.List(r.Context(), c.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	role := userOf(r).Role
	v := templates.SweepList{Page: s.page(r, "Sweeps of "+c.Name), CampaignID: c.ID, Campaign: c.Name,
		Dataset: fmt.Sprintf("%s v%d", ds.Name, ds.Version), CanRun: role.Can(auth.RunSweeps), WhoRuns: whoCan(auth.RunSweeps), Pairless: pairlessOf(userOf(r), ds.Docs),
		LabelRule: sweep.LabelRule}
	names := s.userNames(r.Context())
	// A page past the last shows the last, as the dashboard's table does.
	v.Total, v.Pages = len(list), max(1, (len(list)+maxSweepsListed-1)/maxSweepsListed)
	v.PageNo = min(page, v.Pages)
	lo, hi := (v.PageNo-1)*maxSweepsListed, min(v.PageNo*maxSweepsListed, len(list))
	v.First, v.Last = lo+1, hi
	listPage := func(n int) string {
		if n == 1 {
			return fmt.Sprintf("/campaigns/%d/sweeps", c.ID)
		}
		return fmt.Sprintf("/campaigns/%d/sweeps?page=%d", c.ID, n)
	}
	if v.PageNo > 1 {
		v.NewerHref = listPage(v.PageNo - 1)
	}
	if v.PageNo < v.Pages {
		v.OlderHref, v.Older = listPage(v.PageNo+1), len(list)-hi
	}
	if v.PageNo > 1 && len(list) > 0 {
		// The current labels are the newest sweep's, whichever page is shown.
		if diff, err := s.sweeps.LabelsChanged(r.Context(), list[0].ID); err == nil {
			v.LabelVersion = shortVersion(diff.Version)
			if diff.N() == 0 && list[0].Summary != nil {
				v.Counted = list[0].Summary.Labels.Counted
			}
		}
	}
	for j, sw := range list[lo:hi] {
		i := lo + j // the sweep's place in the whole list, newest first
		item := templates.SweepItem{ID: sw.ID, Name: sw.Name, State: string(sw.State), Done: sw.Done + sw.Summary.DeclinedConfigs(), Declined: sw.Summary.DeclinedConfigs(), Total: sw.Total,
			Version: shortVersion(sw.LabelVersion), Created: sw.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"), By: names(sw.CreatedBy)}
		if sw.Total > 0 {
			item.Percent = 100 * item.Done / sw.Total
		}
		if i >= maxDiffed {
			// Older sweeps are not compared: each comparison resolves every label.
		} else if diff, err := s.sweeps.LabelsChanged(r.Context(), sw.ID); err == nil {
			item.Changed = diff.N()
			if i == 0 {
				v.LabelVersion = shortVersion(diff.Version)
			}
		}
		if sw.Summary != nil && i == 0 {
			v.Counted = sw.Summary.Labels.Counted
		}
		list[i] = sw
		v.Sweeps = append(v.Sweeps, item)
	}
	if v.PageNo == 1 && len(v.Sweeps) > 0 && v.Sweeps[0].Changed > 0 {
		v.Counted = 0 // the newest sweep's count is not the current one: say none
	}
	form := defaultGridForm()
	form.Name = "sweep " + s.now().UTC().Format("2006-01-02 15:04")
	if sent := noticeOf(r).Form; sent != nil {
		form = gridFormFrom(sent) // its token too: the refused form has not started anything
	}
	if form.Token == "" {
		form.Token = newFormToken()
	}
	known := map[string]int{}
	for _, sw := range list {
		if sw.Total > 0 {
			known[gridKey(sw.Grid)] = sw.Total
		}
	}
	v.Form = sweepFormView(form, fmt.Sprintf("/campaigns/%d/sweeps", c.ID), known)
	s.render(w, r, http.StatusOK, templates.SweepListPage(v))
}

// userNames returns a function naming users by id ("" for 0 or unknown).
func (s *server) userNames(ctx context.Context) func(int64) string {
	cache := map[int64]string{}
	return func(id int64) string {
		if id == 0 {
			return ""
		}
		if n, ok := cache[id]; ok {
			return n
		}
		u, err := s.store.UserByID(ctx, id)
		if err == nil {
			cache[id] = "by " + u.Name
		}
		return cache[id]
	}
}

func shortVersion(v string) string {
	if len(v) > 12 {
		return v[:12]
	}
	return v
}

// sweepFormView writes the form for the template, with the number of configurations it
// makes when it parses.
func sweepFormView(f gridForm, action string, known map[string]int) templates.SweepForm {
	v := templates.SweepForm{Action: action, Token: f.Token, Name: f.Name, Notes: f.Notes, Schemes: f.Schemes, Norms: f.Norms, Hashes: f.Hashes,
		Seeds: f.Seeds, WordSizes: f.WordSizes, CharSizes: f.CharSizes, Ks: f.Ks, Shapes: f.Shapes, From: f.From, To: f.To, Step: f.Step}
	for _, k := range f.KnownVerifications {
		v.Verifications = append(v.Verifications, templates.Check{Value: k, Label: f.VerificationLabels[k], Checked: contains(f.Verifications, k)})
	}
	for _, k := range f.KnownPolicies {
		v.Policies = append(v.Policies, templates.Check{Value: k, Label: f.PolicyLabels[k], Checked: contains(f.Policies, k)})
	}
	if n, ok := formConfigs(f, known); ok {
		v.Configs = templates.Plural(n, "configuration", "configurations")
	} else if f.autoShapes() {
		v.Configs = "Configurations: every axis multiplied, with the shapes chosen at each k when it starts."
	}
	return v
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func (s *server) startSweep(w http.ResponseWriter, r *http.Request, c db.Campaign) {
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, &pageError{http.StatusBadRequest, "Unreadable form."})
		return
	}
	back := fmt.Sprintf("/campaigns/%d/sweeps#new", c.ID)
	// A dataset without a pair is refused before the form is read: no field could help.
	if err := s.sweeps.Pairless(r.Context(), c); err != nil {
		s.failBack(w, r, err, back)
		return
	}
	f := gridFormFrom(r.PostForm)
	// The volume is checked before the grid is validated: counting the configurations of
	// automatic shapes runs the shape optimizer at every k, seconds at k=4096.
	g, err := f.grid()
	if err == nil {
		err = checkSweepVolume(g, c.DatasetID, s, r)
	}
	if err == nil {
		err = g.Validate()
	}
	if err == nil {
		err = checkSweepName(strings.TrimSpace(f.Name), strings.TrimSpace(f.Notes))
	}
	if err != nil {
		s.failBack(w, r, err, back)
		return
	}
	sw, err := s.sweeps.Start(r.Context(), sweeprun.StartRequest{CampaignID: c.ID, Name: f.Name, Notes: f.Notes, Grid: g, By: userOf(r).ID,
		Token: f.Token})
	if errors.Is(err, sweeprun.ErrReplayed) {
		s.redirect(w, r, fmt.Sprintf("/sweeps/%d", sw.ID), done("This form was sent already (a double click, or the page reloaded): here is the sweep it started. Nothing new was started."))
		return
	}
	if err != nil {
		s.failBack(w, r, err, back)
		return
	}
	msg := "Sweep started: " + templates.Plural(sw.Total, "configuration", "configurations") + "."
	if pr, ok := s.sweeps.Progress(sw.ID); ok && pr.Position > 0 {
		msg = fmt.Sprintf("Sweep queued, position %d: %d configurations. One sweep runs at a time; it starts when those before it finish.", pr.Position, sw.Total)
	}
	s.redirect(w, r, fmt.Sprintf("/sweeps/%d", sw.ID), done(msg))
}

// checkSweepVolume refuses, on the form, a grid whose signatures over the campaign's
// dataset would exceed sweeprun.MaxSignatureValues, naming the fields that set it.
func checkSweepVolume(g sweep.Grid, datasetID int64, s *server, r *http.Request) error {
	ds, err := s.store.Dataset(r.Context(), datasetID)
	if err != nil {
		return err
	}
	var ve *sweeprun.VolumeError
	if err := s.sweeps.CheckVolume(g, ds.Docs); errors.As(err, &ve) {
		return &formError{field: "k", msg: fmt.Sprintf(
			"%s documents × %d representations (word and char sizes × scheme × norm × hash × seed; k up to %d) make %s signature values, over the limit of %s (documents × representations × k). Sweep fewer representations or a smaller k.",
			thousands(int64(ve.Docs)), ve.Representations, ve.MaxK, thousands(ve.Values), thousands(ve.Limit))}
	}
	return nil
}

// thousands writes n with thousands separators: 1,234,567.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// newFormToken returns a one-time token for a form against double submits: 128 random
// bits, hex.
func newFormToken() string { return randomToken(16) }

// claimFormToken claims a form's one-time token (ClaimFormToken). When an earlier post
// claimed it and is still starting what it starts, it waits for that post to record where
// it led, up to 5 s: posts of a double click arrive together, and each should land on the
// page of the one thing they started. target "" after the wait is a post still starting.
func (s *server) claimFormToken(ctx context.Context, token string) (claimed bool, target string, err error) {
	for deadline := time.Now().Add(5 * time.Second); ; {
		claimed, target, err = s.store.ClaimFormToken(ctx, token, "run")
		if err != nil || claimed || target != "" || time.Now().After(deadline) {
			return claimed, target, err
		}
		select {
		case <-ctx.Done():
			return false, "", ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// sentAlready claims a form's one-time token (a form without one goes ahead) and reports
// whether the post has been answered: an error, a 409 while the form's first post is still
// starting its what (see where), or a redirect to the what that post started.
func (s *server) sentAlready(w http.ResponseWriter, r *http.Request, token, what, where string) bool {
	if token == "" {
		return false
	}
	claimed, target, err := s.claimFormToken(r.Context(), token)
	switch {
	case err != nil:
		s.fail(w, r, err)
	case claimed:
		return false
	case target == "":
		s.fail(w, r, &pageError{http.StatusConflict, fmt.Sprintf("This form was sent already and its %s is starting; see %s.", what, where)})
	default:
		s.redirect(w, r, target, done(fmt.Sprintf("This form was sent already (a double click, or the page reloaded): here is the %s it started. Nothing new was started.", what)))
	}
	return true
}

// settleFormToken records against a form's one-time token where its post led (target),
// or releases the token (target "": nothing started) so that the form may be sent again.
// It returns err, what starting gave, or else the store's error; a post without a token
// has nothing to settle.
func (s *server) settleFormToken(ctx context.Context, token, target string, err error) error {
	if token == "" {
		return err
	}
	if terr := s.store.SetFormToken(context.WithoutCancel(ctx), token, target); terr != nil && err == nil {
		err = terr
	}
	return err
}

// checkSweepName refuses a sweep without a name, or with a name over 200 characters or
// notes over 4,000: the same limits when a sweep starts and when it is renamed.
func checkSweepName(name, notes string) error {
	switch {
	case name == "":
		return &formError{field: "name", msg: "give the sweep a name"}
	case utf8.RuneCountInString(name) > 200:
		return &formError{field: "name", msg: "at most 200 characters"}
	case utf8.RuneCountInString(notes) > 4000:
		return &formError{field: "notes", msg: "at most 4,000 characters"}
	}
	return nil
}

func (s *server) cancelSweep(w http.ResponseWriter, r *http.Request) {
	sw, err := s.loadSweep(r)
	if err == nil {
		err = s.sweeps.Cancel(sw.ID)
	}
	s.afterSweepAction(w, r, sw, err, "Cancelled. What was scored stays; Resume continues from there.")
}

func (s *server) resumeSweep(w http.ResponseWriter, r *http.Request) {
	sw, err := s.loadSweep(r)
	if err == nil {
		_, err = s.sweeps.Resume(r.Context(), sw.ID, userOf(r).ID)
	}
	s.afterSweepAction(w, r, sw, err, "Resumed: the configurations not scored yet are running.")
}

func (s *server) rerunSweep(w http.ResponseWriter, r *http.Request) {
	sw, err := s.loadSweep(r)
	if err == nil {
		var again sweeprun.Sweep
		again, err = s.sweeps.Rerun(r.Context(), sw.ID, userOf(r).ID, r.PostFormValue("token"))
		if errors.Is(err, sweeprun.ErrReplayed) {
			s.redirect(w, r, fmt.Sprintf("/sweeps/%d", again.ID), done("This form was sent already (a double click, or the page reloaded): here is the re-run it started. Nothing new was started."))
			return
		}
		if err == nil {
			sw = again
		}
	}
	s.afterSweepAction(w, r, sw, err, "Re-run started on the current labels.")
}

func (s *server) saveSweepNotes(w http.ResponseWriter, r *http.Request, sw sweeprun.Sweep) {
	name, notes := strings.TrimSpace(r.PostFormValue("name")), strings.TrimSpace(r.PostFormValue("notes"))
	err := checkSweepName(name, notes)
	if err == nil {
		err = s.sweeps.SetNotes(r.Context(), sw.ID, name, notes)
	}
	s.afterSweepAction(w, r, sw, err, "Saved the name and notes.")
}

// afterSweepAction redirects to sw's page saying what happened, or what was wrong (sw's
// ID is 0 when the sweep could not be loaded).
func (s *server) afterSweepAction(w http.ResponseWriter, r *http.Request, sw sweeprun.Sweep, err error, ok string) {
	if err != nil {
		if sw.ID == 0 {
			s.fail(w, r, err)
			return
		}
		s.failBack(w, r, err, fmt.Sprintf("/sweeps/%d", sw.ID))
		return
	}
	s.redirect(w, r, fmt.Sprintf("/sweeps/%d", sw.ID), done(ok))
}

// progressView is a sweep's progress box.
func (s *server) progressView(sw sweeprun.Sweep, rs []sweeprun.Result) templates.SweepProgress {
	p := templates.SweepProgress{ID: sw.ID, State: string(sw.State), Running: sw.State == sweeprun.Running || sw.State == sweeprun.Queued,
		Total: sw.Total, Error: sw.Error, Declined: sw.Summary.DeclinedConfigs()}
	p.Done = sw.Done + p.Declined
	phase := ""
	if pr, ok := s.sweeps.Progress(sw.ID); ok {
		p.Done, p.Total, p.Declined = max(p.Done, pr.Done), max(p.Total, pr.Total), max(p.Declined, pr.Declined)
		if pr.Rate > 0 {
			p.Rate = fmt.Sprintf("%.0f configurations/s", pr.Rate)
			if pr.Rate < 10 {
				p.Rate = fmt.Sprintf("%.1f configurations/s", pr.Rate)
			}
		}
		if pr.ETA > 0 {
			p.ETA = roundDuration(pr.ETA)
		}
		phase = pr.Phase
		if pr.Phase == "queued" {
			p.Position = pr.Position
		}
		if pr.Phase == "signing" && pr.ToSign > 0 {
			phase = fmt.Sprintf("Computing signatures: %d of %d documents.", pr.Signed, pr.ToSign)
		}
	}
	if p.Total > 0 {
		p.Percent = 100 * p.Done / p.Total
	}
	switch {
	case p.Running && !sw.StartedAt.IsZero():
		p.Elapsed = roundDuration(s.now().Sub(sw.StartedAt))
	case !sw.FinishedAt.IsZero() && !sw.StartedAt.IsZero():
		p.Elapsed = roundDuration(sw.FinishedAt.Sub(sw.StartedAt))
	}
	if p.Running {
		for _, r := range rs[max(0, len(rs)-3):] {
			h := r.Headline()
			p.Latest = append(p.Latest, templates.SweepRow{Label: r.Config.Label(), Recall: pct(h.Recall.Value), FalseRate: pct(h.FalseRemovalRate.Value)})
		}
		p.Line = progressLine(p, phase)
	} else {
		p.Line = words.Thousands(p.Done-p.Declined) + " of " + templates.Plural(p.Total, "configuration", "configurations") + " scored"
		if p.Declined > 0 {
			p.Line += ", " + words.Thousands(p.Declined) + " declined (their shapes propose too many pairs: see All configurations)"
		}
		if p.Elapsed != "" {
			p.Line += " in " + p.Elapsed
		}
		p.Line += "."
		switch sw.State {
		case sweeprun.Interrupted:
			p.Line += " The server stopped while it ran; Resume continues with the configurations not scored yet."
		case sweeprun.Cancelled:
			p.Line += " Resume continues with the configurations not scored yet."
		}
	}
	return p
}

// progressLine says how far a running sweep is, in one sentence.
func progressLine(p templates.SweepProgress, phase string) string {
	if (phase == "queued" || p.State == string(sweeprun.Queued) && phase == "") && p.Position > 0 {
		return fmt.Sprintf("Queued, position %d: one sweep runs at a time, and this one starts when the %d before it finish. Cancel takes it out of the queue.", p.Position, p.Position)
	}
	if phase == "queued" || p.State == string(sweeprun.Queued) {
		// Its turn has come (position 0) and its job is starting: no sweep runs before it.
		return "Starting: reading the labels and the documents" + soFar(p.Elapsed) + "."
	}
	if p.Done == 0 {
		switch {
		case strings.HasPrefix(phase, "Computing"):
			return strings.TrimSuffix(phase, ".") + soFar(p.Elapsed) + "."
		case phase == "loading" || phase == "":
			return "Reading the labels and the documents" + soFar(p.Elapsed) + "."
		}
	}
	line := fmt.Sprintf("%s of %s scored (%d%%)%s", words.Thousands(p.Done-p.Declined), templates.Plural(p.Total, "configuration", "configurations"), p.Percent, soFar(p.Elapsed))
	if p.Declined > 0 {
		line = fmt.Sprintf("%s of %s scored and %s declined (%d%%)%s", words.Thousands(p.Done-p.Declined), templates.Plural(p.Total, "configuration", "configurations"),
			words.Thousands(p.Declined), p.Percent, soFar(p.Elapsed))
	}
	if p.Rate != "" {
		line += ", " + p.Rate
	}
	if p.ETA != "" {
		line += "; about " + p.ETA + " left"
	}
	return line + "."
}

// soFar is ", 12s so far" for an elapsed time, "" when none is known yet (a sweep whose
// start is not recorded: it said "starting , 0s so far").
func soFar(elapsed string) string {
	if elapsed == "" || elapsed == "0s" {
		return ""
	}
	return ", " + elapsed + " so far"
}

func roundDuration(d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

func (s *server) sweepProgress(w http.ResponseWriter, r *http.Request, sw sweeprun.Sweep) {
	// Polled every second or two while a sweep runs: no results are read here (the page
	// refreshes them itself, less often).
	s.render(w, r, http.StatusOK, templates.SweepProgressFragment(s.progressView(sw, nil)))
}

// dashQuery is what a dashboard URL chooses: the configuration (by ordinal), the
// slider's threshold, dimming, the table's order, the target and the heatmap.
type dashQuery struct {
	config    int // ordinal; -1 for the recommendation
	t         float64
	hasT      bool
	dim       bool
	sort      string
	desc      bool
	target    float64 // false-removal ceiling as a rate
	targetRaw string
	heat      heatChoice
	hasHeat   bool
	page      int // the table's page, from 1
	// keeper is the keeper rule the figures are under and a proposal would run
	// ("" for the first the sweep scored).
	keeper string
}

// parseDash reads q, naming the parameter at fault.
func parseDash(q url.Values) (dashQuery, error) {
	d := dashQuery{config: -1, dim: q.Get("dim") != "0", sort: q.Get("sort"), target: sweep.DefaultTarget.MaxFalseRemovalRate,
		page: 1, keeper: strings.TrimSpace(q.Get("keeper"))}
	if v := q.Get("page"); v != "" {
		n, ok := parseWhole(v)
		if !ok || n < 1 {
			return d, &formError{field: "page", msg: fmt.Sprintf("%q is not a page number", v)}
		}
		d.page = n
	}
	if d.keeper != "" {
		if _, err := cluster.ParseRule(d.keeper); err != nil {
			return d, &formError{field: "keeper", msg: fmt.Sprintf("%q: %s", d.keeper, keeperProblem(err))}
		}
	}
	if v := q.Get("config"); v != "" {
		n, ok := parseWhole(v)
		if !ok || n < 0 {
			return d, &formError{field: "config", msg: fmt.Sprintf("%q is not a configuration number", v)}
		}
		d.config = n
	}
	if v := q.Get("t"); v != "" {
		t, err := parseUnit("t", v)
		if err != nil {
			return d, err
		}
		d.t, d.hasT = t, true
	}
	if _, ok := sortKeys[d.sort]; !ok {
		d.sort = "order"
	}
	d.desc = sortKeys[d.sort]
	switch q.Get("dir") {
	case "asc":
		d.desc = false
	case "desc":
		d.desc = true
	}
	if v := q.Get("target"); v != "" {
		x, ok := parseDecimal(strings.TrimSuffix(v, "%"))
		if !ok || !(x >= 0 && x <= 100) {
			return d, &formError{field: "target", msg: fmt.Sprintf("%q: want a percentage from 0 to 100, e.g. 1", v)}
		}
		d.target, d.targetRaw = x/100, v
	}
	if spec := q.Get("hspec"); spec != "" {
		d.hasHeat = true
		d.heat = heatChoice{Spec: spec, Verification: sweep.Verification(q.Get("hv")), Policy: cluster.Policy(q.Get("hp")), Value: q.Get("hval")}
		if d.heat.Policy == "" {
			d.heat.Policy = cluster.Components
		}
		if v := q.Get("ht"); v != "" {
			t, err := parseUnit("ht", v)
			if err != nil {
				return d, err
			}
			d.heat.Threshold = t
		}
	}
	return d, nil
}

// sweepData is a sweep with its results and what they say together (sweeprun's
// Analysis), as the dashboard and its charts read it.
type sweepData struct {
	sw      sweeprun.Sweep
	a       *sweeprun.Analysis
	results []sweeprun.Result
	rs      []sweep.Result // results' sweep.Result, same order
	sel     int            // index into rs of the selected configuration; -1 with no results
	// chosen: the person chose the selection (a config in the URL), or the page chose a
	// configuration that meets the target; false when the page shows the closest one,
	// whose point estimate breaks the target, which is never preselected for proposing.
	chosen bool
	// draws: the person may draw pairs for labeling (the plans' forms); without it the
	// plans say who can.
	draws bool
}

func (s *server) loadSweepData(r *http.Request, q dashQuery) (sweepData, error) {
	sw, err := s.loadSweep(r)
	if err != nil {
		return sweepData{}, err
	}
	a, err := s.sweeps.Analyze(r.Context(), sw.ID, sweep.Target{MaxFalseRemovalRate: q.target, Rule: q.keeper})
	if err != nil {
		return sweepData{}, err
	}
	d := sweepData{sw: sw, a: a, sel: -1, results: a.Results, rs: a.Scored, draws: userOf(r).Role.Can(auth.ManageCampaigns)}
	if a.RecErr == nil {
		d.sel, d.chosen = a.Rec.Index, a.Rec.Preselect
	} else if len(d.rs) > 0 {
		d.sel, d.chosen = 0, true
	}
	if q.config >= 0 {
		d.sel, d.chosen = -1, true
		for i, res := range d.results {
			if res.Ordinal == q.config {
				d.sel = i
			}
		}
		if d.sel < 0 {
			return d, &pageError{http.StatusNotFound, fmt.Sprintf("This sweep has no configuration %d (yet).", q.config)}
		}
	}
	return d, nil
}

// loadSelected is loadSweepData for the URL's dashboard query where a configuration
// must be selected: a sweep with no results yet is a 404.
func (s *server) loadSelected(r *http.Request) (sweepData, dashQuery, error) {
	q, err := parseDash(r.URL.Query())
	if err != nil {
		return sweepData{}, q, err
	}
	d, err := s.loadSweepData(r, q)
	if err != nil {
		return d, q, err
	}
	if d.sel < 0 {
		return d, q, &pageError{http.StatusNotFound, "This sweep has no results yet."}
	}
	return d, q, nil
}

// ordinals are the results' keys on the page.
func (d sweepData) ordinals() []int {
	out := make([]int, len(d.results))
	for i, r := range d.results {
		out[i] = r.Ordinal
	}
	return out
}

// selected returns the selected configuration at the slider's threshold.
func (d sweepData) selected(q dashQuery) sweep.Config {
	c := d.rs[d.sel].Config
	if q.hasT {
		c.Threshold = q.t
	}
	return c
}

func (s *server) showSweep(w http.ResponseWriter, r *http.Request) {
	q, err := parseDash(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d, err := s.loadSweepData(r, q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c, err := s.store.Campaign(r.Context(), d.sw.CampaignID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	sw := d.sw
	role := userOf(r).Role
	v := templates.SweepDashboard{Page: s.page(r, "Sweep "+sw.Name), ID: sw.ID, Name: sw.Name, Notes: sw.Notes, State: string(sw.State),
		CampaignID: c.ID, Campaign: c.Name, DatasetID: sw.DatasetID, Progress: s.progressView(sw, d.results),
		CanRun: role.Can(auth.RunSweeps), WhoRuns: whoCan(auth.RunSweeps), LabelRule: sweep.LabelRule,
		LabelVersion: shortVersion(sw.LabelVersion), Results: len(d.rs), Configs: sw.Total, HasResults: len(d.rs) > 0,
		Created: sw.CreatedAt.UTC().Format("2006-01-02 15:04 UTC")}
	v.Page.SweepKeys = true
	v.NotesName, v.NotesText = formValue(r, "name", sw.Name), formValue(r, "notes", sw.Notes)
	v.CreatedBy = strings.TrimPrefix(s.userNames(r.Context())(sw.CreatedBy), "by ")
	v.CanCancel = v.Progress.Running && sw.JobID != ""
	v.CanResume = sw.State.Resumable()
	v.RerunToken = newFormToken()
	if diff, err := s.sweeps.LabelsChanged(r.Context(), sw.ID); err == nil {
		v.LabelsChanged = diff.N()
	}
	if sm := sw.Summary; sm != nil {
		l := sm.Labels
		v.LabelCounts = []templates.Fact{{Name: "counted pairs", Value: strconv.Itoa(l.Counted)},
			{Name: "from", Value: fmt.Sprintf("%d adjudicated, %d by majority, %d by rule only", l.Adjudicated, l.Majority, l.RuleOnly)},
			{Name: "left out", Value: leftOutLabels(l)}}
		v.GoneLabels = goneLabels(l, sm.Model, v.Progress.Running)
		v.Basis = string(sweep.LabeledBasis)
		if sm.Model != nil {
			v.Basis = string(sweep.DatasetBasis)
		}
		v.BasisSentence = basisSentence(sm.Model)
		v.DesignNotes = designNotes(sm.Model, sm.ModelNote, l.Gone)
		v.DeclinedLine, v.Declined = declinedView(sm.Declined)
		if sm.Model == nil && v.Progress.Running {
			v.Basis, v.BasisSentence = runningBasis(d.rs)
		}
		if m := sm.Model; m != nil {
			v.ModelBins = modelBinRows(m)
		}
		if b := sm.Baseline; b != nil {
			h := b.HeadlineFor(q.keeper)
			v.Baseline = []templates.Fact{{Name: "recall", Value: pct(h.Recall.Value) + " " + ci(h.Recall)},
				{Name: "false-removal rate", Value: pct(h.FalseRemovalRate.Value) + " " + ci(h.FalseRemovalRate)},
				{Name: "labeled duplicates found", Value: hitsOf(b.Recall)}, {Name: "labeled non-duplicates merged", Value: hitsOf(b.FalseMerges)}, {Name: "documents removed", Value: strconv.Itoa(b.Removals)}}
		}
	} else {
		v.BasisSentence = "The basis (dataset estimates or labeled pairs) is known once the sweep has read its labels."
	}
	if len(d.rs) > 0 {
		s.fillResults(r, &v, d, q, c.ID)
		if sm := sw.Summary; sm != nil && sm.Model != nil && d.sel >= 0 {
			fillModelRemovals(v.ModelBins, d.rs[d.sel], d.a.Rule)
		}
	}
	s.render(w, r, http.StatusOK, templates.SweepPage(v))
}

// runningBasis is the basis a running sweep's page states before its model exists (it
// comes with the end of the run): not known yet, then the first results' own.
func runningBasis(rs []sweep.Result) (basis, sentence string) {
	if len(rs) == 0 {
		return "not known yet", "Whether the figures are estimates over the whole dataset (labels drawn by a recorded design) or describe the labeled pairs only is known with the first results."
	}
	return string(rs[0].Headline().Basis), "Each result below says its basis; the details of the estimate (bins, design, replicates) appear here when the sweep finishes."
}

// dashURL is the dashboard's URL with q's choices, changed by set (a value "" drops
// the parameter).
func dashURL(id int64, base url.Values, set ...string) string {
	v := url.Values{}
	for k, vs := range base {
		if k != "notice" {
			v[k] = vs
		}
	}
	for i := 0; i+1 < len(set); i += 2 {
		if set[i+1] == "" {
			v.Del(set[i])
		} else {
			v.Set(set[i], set[i+1])
		}
	}
	if len(v) == 0 {
		return fmt.Sprintf("/sweeps/%d", id)
	}
	return fmt.Sprintf("/sweeps/%d?%s", id, v.Encode())
}

// fillResults fills the recommendation, the selection, the charts and the table.
func (s *server) fillResults(r *http.Request, v *templates.SweepDashboard, d sweepData, q dashQuery, campaignID int64) {
	base := r.URL.Query()
	base.Del("rows") // the old "show all": the table pages now
	ords := d.ordinals()
	href := func(i int) string {
		return dashURL(d.sw.ID, base, "config", strconv.Itoa(ords[i]), "t", "") + "#selected"
	}
	v.Target = strconv.FormatFloat(100*q.target, 'f', -1, 64)
	v.Keeper = d.a.Rule
	for _, rule := range d.a.Rules {
		v.Keepers = append(v.Keepers, templates.Option{Value: rule, Label: rule, Selected: rule == d.a.Rule})
	}
	if rec := d.a.Rec; d.a.RecErr == nil {
		v.Rec, v.RecReason, v.RecMet, v.RecHref = configWords(rec.Config), rec.Reason, rec.Met, href(rec.Index)
		v.RecPreselect = rec.Preselect
		if len(d.a.RecTies) > 0 {
			ties := make([]string, len(d.a.RecTies))
			for i, p := range d.a.RecTies {
				ties[i] = policyWords(p)
			}
			v.RecTies = " (the same figures under " + joinList(ties, "and") + ")"
		}
	} else {
		v.RecReason = "Nothing to recommend yet: no configuration has both a recall and a false-removal rate (are there labeled duplicates and non-duplicates?)."
	}
	v.FalseRemovalDefinition = sweep.FalseRemovalDefinition
	if !slices.Contains(v.DesignNotes, sweep.ModelAssumption) {
		// The bins' table states the assumption when the notes above it do not.
		v.Assumption = sweep.ModelAssumption // the part on removed documents is in GoneLabels
	}
	for _, r := range d.rs {
		if r.Dataset != nil && r.Dataset.Unit != sweep.FalseRemovalUnit {
			v.StaleUnits = true
			break
		}
	}
	if p := d.a.Plan; p != nil && !v.StaleUnits {
		v.Plan = planView(*p, d, campaignID, q)
	}
	if g := d.a.Guard; g != nil && !v.StaleUnits {
		v.Guard = guardView(*g, d, campaignID)
	}
	for _, k := range []string{"sort", "dir", "dim", "config", "t", "target", "keeper", "hspec", "ht", "hv", "hp", "hval", "page"} {
		if x := base.Get(k); x != "" {
			v.SortHidden = append(v.SortHidden, templates.Fact{Name: k, Value: x})
		}
	}
	// The selection at the slider's threshold.
	selCfg := d.selected(q)
	selOrd := ords[d.sel]
	v.SelKey, v.SelLabel, v.SelWords = strconv.Itoa(selOrd), selCfg.Label(), configWords(selCfg)
	v.SelThreshold = fmt.Sprintf("%.2f", selCfg.Threshold)
	v.SliderAction = fmt.Sprintf("/sweeps/%d#selected", d.sw.ID)
	v.Live = s.liveView(r, d, selCfg, campaignID)
	v.SelChosen = d.chosen
	res := d.rs[d.sel]
	v.SelFacts = selFacts(res)
	v.SelRules = ruleRows(res, d.a.Rule)
	// Charts.
	v.Dim = q.dim
	if q.dim {
		v.DimHref = dashURL(d.sw.ID, base, "dim", "0") + "#sweep-charts"
	} else {
		v.DimHref = dashURL(d.sw.ID, base, "dim", "") + "#sweep-charts"
	}
	chartBase := fmt.Sprintf("/sweeps/%d/charts/", d.sw.ID)
	sel := url.Values{"config": {v.SelKey}, "t": {fmtFloat(selCfg.Threshold)}}
	tq := url.Values{"config": {v.SelKey}}
	if !q.dim {
		tq.Set("dim", "0")
	}
	if q.targetRaw != "" {
		tq.Set("target", q.targetRaw)
	}
	if q.keeper != "" {
		tq.Set("keeper", q.keeper)
	}
	v.Tradeoff = templates.Chart{Base: chartBase + "tradeoff", Query: "?" + tq.Encode(), Alt: "Recall against false-removal rate, a point per configuration"}
	v.SCurve = templates.Chart{Base: chartBase + "scurve", Query: "?" + sel.Encode(), Alt: "S-curve of the selected shape with measured collision rates"}
	v.Categories = templates.Chart{Base: chartBase + "categories", Query: "?" + sel.Encode(), Alt: "Recall by category of the selected configuration"}
	v.Histogram = templates.Chart{Base: chartBase + "histogram", Query: "?" + sel.Encode(), Alt: "Exact Jaccard of labeled duplicates and non-duplicates"}
	hc := defaultHeat(d.rs[d.sel].Config)
	if q.hasHeat {
		hc = q.heat
	}
	if hc.Value == "" {
		hc.Value = "recall"
	}
	v.Heatmap = templates.Chart{Base: chartBase + "heatmap", Query: "?" + heatQuery(hc).Encode(), Alt: "Recall over bands and rows"}
	v.HeatReprs, v.HeatThresholds, v.HeatVerifs, v.HeatValues = heatOptions(d.rs, hc)
	// The table.
	order := sortResults(d.rs, q.sort, q.desc)
	v.TotalRows, v.Pages = len(order), max(1, (len(order)+maxRows-1)/maxRows)
	v.PageNo = min(q.page, v.Pages)
	lo, hi := (v.PageNo-1)*maxRows, min(v.PageNo*maxRows, len(order))
	v.FirstRow, v.LastRow = lo+1, hi
	if v.PageNo > 1 {
		v.PrevHref = dashURL(d.sw.ID, base, "page", strconv.Itoa(v.PageNo-1)) + "#table"
		if v.PageNo == 2 {
			v.PrevHref = dashURL(d.sw.ID, base, "page", "") + "#table"
		}
	}
	if v.PageNo < v.Pages {
		v.NextHref = dashURL(d.sw.ID, base, "page", strconv.Itoa(v.PageNo+1)) + "#table"
	}
	shown := order[lo:hi]
	if v.PageNo == 1 && !slices.Contains(shown, d.sel) && len(shown) > 0 {
		// The selected configuration stays in view on the first page.
		shown = append(shown[:len(shown)-1:len(shown)-1], d.sel)
	}
	order = shown
	v.Rows = resultRows(d.rs, d.a.Headlines, ords, order, d.a.Front, d.sel, d.a.Recommended(), href)
	if d.sw.Summary != nil && d.sw.Summary.Baseline != nil {
		v.BaselineRow = baselineRow(*d.sw.Summary.Baseline, d.a.Rule)
	}
	cols := []struct{ key, label, title string }{
		{"order", "configuration", "in the grid's order"}, {"recall", "recall", "headline recall (" + string(d.a.Headlines[0].Basis) + ") with its 95% interval"},
		{"false", "false removals", "false-removal rate with its 95% interval, keeper rule " + d.a.Rule}, {"removals", "removed", "documents removed over the dataset"},
		{"candidates", "cand./doc", "candidate pairs per document"}, {"", "labeled dup. accepted", ""}, {"", "non-dup. merged", ""},
		{"precision", "precision", "accepted labeled pairs that are duplicates"}, {"candrecall", "cand. recall (expected)", "labeled duplicates that collide in a band; the S-curve's prediction in brackets"},
	}
	for _, col := range cols {
		sc := templates.SortCol{Label: col.label, Title: col.title}
		if col.key != "" {
			sc.Active = q.sort == col.key
			dir := "desc"
			if !sortKeys[col.key] {
				dir = "asc"
			}
			if sc.Active {
				sc.Desc = q.desc
				if q.desc {
					dir = "asc"
				} else {
					dir = "desc"
				}
			}
			sc.Href = dashURL(d.sw.ID, base, "sort", col.key, "dir", dir, "page", "") + "#table"
		}
		v.Columns = append(v.Columns, sc)
	}
	v.CSVHref = fmt.Sprintf("/sweeps/%d/results.csv", d.sw.ID)
}

// heatQuery writes a heatmap choice as chart parameters.
func heatQuery(hc heatChoice) url.Values {
	return url.Values{"hspec": {hc.Spec}, "ht": {fmtFloat(hc.Threshold)}, "hv": {string(hc.Verification)}, "hp": {string(hc.Policy)}, "hval": {hc.Value}}
}

// heatOptions lists the representations, thresholds and verifications the sweep has,
// hc's selected.
func heatOptions(rs []sweep.Result, hc heatChoice) (reprs, thresholds, verifs, values []templates.Option) {
	seen := map[string]bool{}
	for _, r := range rs {
		c := r.Config
		if id := c.Spec.ID(); !seen["s"+id] {
			seen["s"+id] = true
			reprs = append(reprs, templates.Option{Value: id, Label: reprWords(c.Spec), Selected: id == hc.Spec})
		}
		if t := fmtFloat(c.Threshold); !seen["t"+t] {
			seen["t"+t] = true
			thresholds = append(thresholds, templates.Option{Value: t, Label: fmt.Sprintf("%.2f", c.Threshold), Selected: sameThreshold(c.Threshold, hc.Threshold)})
		}
		if vf := string(c.Verification); !seen["v"+vf] {
			seen["v"+vf] = true
			verifs = append(verifs, templates.Option{Value: vf, Label: verificationWords(c.Verification), Selected: c.Verification == hc.Verification})
		}
	}
	values = []templates.Option{{Value: "recall", Label: "recall", Selected: hc.Value != "false"}, {Value: "false", Label: "false-removal rate", Selected: hc.Value == "false"}}
	return reprs, thresholds, verifs, values
}

// selFacts are the selected configuration's costs and shapes.
func selFacts(r sweep.Result) []templates.Fact {
	f := []templates.Fact{
		{Name: "candidate recall", Value: fmt.Sprintf("%s measured (%s); %s expected from the S-curve", pct(r.CandidateRecall.Value), hitsOf(r.CandidateRecall), pct(r.ExpectedCandidateRecall))},
		{Name: "candidates", Value: fmt.Sprintf("%d (%s per document), %d accepted", r.Candidates, fmtNum(r.CandidatesPerDoc, 2), r.Accepted)},
		{Name: "datasketch optimum", Value: shapeChoice(r.Optimal)},
	}
	if r.Observed != nil {
		f = append(f, templates.Fact{Name: "optimum fitted to the labels", Value: shapeChoice(*r.Observed)})
	}
	if r.BucketSkipped > 0 {
		f = append(f, templates.Fact{Name: "left out by the bucket bound", Value: fmt.Sprintf("%d band collisions", r.BucketSkipped)})
	}
	if e := r.Dataset; e != nil && e.Unit == sweep.FalseRemovalUnit && e.BelowFloor.Hi > 0 {
		f = append(f, templates.Fact{Name: "duplicates below the bins recall counts", Value: fmt.Sprintf(
			"none labeled; up to %s pairs cannot be ruled out (95%%): recall leaves them out", fmtCount(e.BelowFloor.Hi))})
	}
	for _, ix := range r.Index {
		f = append(f, templates.Fact{Name: fmt.Sprintf("index at %s documents", docCount(ix.Docs)),
			Value: fmt.Sprintf("%s of bands + %s of signatures", bytesWords(ix.BandBytes), bytesWords(ix.SignatureBytes))})
	}
	f = append(f, templates.Fact{Name: "time", Value: fmt.Sprintf("%s for the shape's candidates, %s to score", roundDuration(r.CandidateTime), roundDuration(r.ScoreTime))})
	return f
}

func shapeChoice(c lsh.ShapeChoice) string {
	if c.Shape.Bands == 0 {
		return "–"
	}
	return fmt.Sprintf("%s (steepest near %.2f)", templates.ShapeWords(c.Shape.Bands, c.Shape.Rows), c.Threshold)
}

func docCount(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%dB", n/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%dM", n/1e6)
	}
	return strconv.FormatInt(n, 10)
}

func bytesWords(b int64) string {
	const unit = 1024
	x := float64(b)
	for _, u := range []string{"B", "KiB", "MiB", "GiB", "TiB"} {
		if x < unit {
			return fmt.Sprintf("%.3g %s", x, u)
		}
		x /= unit
	}
	return fmt.Sprintf("%.3g PiB", x)
}

// liveView rescores the selected configuration at its threshold (the slider's).
func (s *server) liveView(r *http.Request, d sweepData, c sweep.Config, campaignID int64) templates.SweepLive {
	role := userOf(r).Role
	sel, err := s.sweeps.Select(r.Context(), d.sw.ID, c, c.Threshold)
	if err != nil {
		status, msg := s.problem(r, err)
		if status == http.StatusInternalServerError {
			msg = "The configuration could not be rescored: " + msg
		}
		return templates.SweepLive{Threshold: fmt.Sprintf("%.2f", c.Threshold), Error: msg}
	}
	v := liveFigures(sel.Result, d.a.Rule)
	v.CanSeePairs, v.WhoSeesPairs = role.Can(auth.ReadLabels), whoCan(auth.ReadLabels)
	if v.CanSeePairs {
		v.FalseMerged, v.Misses, v.NFalse, v.NMisses = outcomeRows(sel.Outcomes, func(id int64) string {
			return fmt.Sprintf("/campaigns/%d/pairs/%d", campaignID, id)
		}, maxOutcomes)
		for _, rows := range [][]templates.OutcomeRow{v.FalseMerged, v.Misses} {
			for i := range rows {
				rows[i].Repr = v.Repr // the representation its J is measured on (the pair page shows the campaign's)
			}
		}
	}
	v.CanPropose = role.Can(auth.PrepareManifests) && d.chosen
	v.NotChosen = !d.chosen
	if req, err := proposal(d.sw.DatasetID, campaignID, c, d.a.Rule); err != nil {
		// Not a run the manifest can make (a policy no longer registered): nothing to propose.
		v.CanPropose = false
	} else {
		v.ProposeHref = proposeHref(req)
		v.ProposeAction = fmt.Sprintf("/datasets/%d/runs/new", d.sw.DatasetID)
		q := runFormOf(req).query()
		v.Keeper = q.Get("keeper")
		q.Del("keeper") // an input of its own
		for _, name := range slices.Sorted(maps.Keys(q)) {
			v.ProposeFields = append(v.ProposeFields, templates.Fact{Name: name, Value: q.Get(name)})
		}
	}
	v.SettingsHref = fmt.Sprintf("/sweeps/%d/settings.json?config=%d&t=%s", d.sw.ID, d.results[d.sel].Ordinal, fmtFloat(c.Threshold))
	if v.CanPropose {
		v.CorpusRunHref = fmt.Sprintf("/sweeps/%d/dedup-jobs/new?config=%d&t=%s", d.sw.ID, d.results[d.sel].Ordinal, fmtFloat(c.Threshold))
	}
	return v
}

func (s *server) sweepLive(w http.ResponseWriter, r *http.Request) {
	d, q, err := s.loadSelected(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, templates.SweepLiveFragment(s.liveView(r, d, d.selected(q), d.sw.CampaignID)))
}

// sweepChart serves one of the dashboard's charts as SVG, PNG or CSV.
func (s *server) sweepChart(w http.ResponseWriter, r *http.Request) {
	d, q, err := s.loadSelected(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	kind := chi.URLParam(r, "chart")
	var fig *chart.Figure
	switch kind {
	case "tradeoff":
		var base *sweep.Scores
		if d.sw.Summary != nil {
			base = d.sw.Summary.Baseline
		}
		if chi.URLParam(r, "format") == "csv" {
			s.serveTable(w, tradeoffTable(d.rs, d.a.Headlines, d.a.Front, d.ordinals(), base, d.a.Rule), fmt.Sprintf("sweep-%d-tradeoff", d.sw.ID))
			return
		}
		fig, err = tradeoffFigure(d.rs, d.a.Headlines, d.a.Front, d.ordinals(), base, d.sel, d.a.Recommended(), q.dim, d.a.Rule)
	case "heatmap":
		hc := defaultHeat(d.rs[d.sel].Config)
		if q.hasHeat {
			hc = q.heat
		}
		fig, err = heatmapFigure(d.rs, hc)
	case "scurve", "categories", "histogram":
		c := d.selected(q)
		var sel sweeprun.Selection
		if sel, err = s.sweeps.Select(r.Context(), d.sw.ID, c, c.Threshold); err != nil {
			break
		}
		if stored := d.rs[d.sel]; sameThreshold(stored.Config.Threshold, c.Threshold) {
			sel.Result.Optimal = stored.Optimal // Select leaves the optima to the caller
		}
		switch kind {
		case "scurve":
			fig, err = scurveFigure(sel.Result, sel.Outcomes, c.Threshold)
		case "categories":
			fig, err = categoryFigure(sel.Result)
		default:
			fig, err = histogramFigure(sel.Result, sel.Outcomes, c.Threshold)
		}
	default:
		err = notFound("chart")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.serveFigure(w, r, fig, fmt.Sprintf("sweep-%d-%s", d.sw.ID, kind))
}

func (s *server) sweepResultsCSV(w http.ResponseWriter, r *http.Request) {
	d, err := s.loadSweepData(r, dashQuery{config: -1, target: sweep.DefaultTarget.MaxFalseRemovalRate})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	t := resultsTable(d.rs, d.a.Headlines, d.a.Front)
	for i := range t.Rows {
		t.Rows[i][0] = strconv.Itoa(d.results[i].Ordinal)
	}
	t.Columns[0] = "ordinal"
	s.serveTable(w, t, fmt.Sprintf("sweep-%d-results", d.sw.ID))
}

// serveTable writes t as a CSV download named name.csv.
func (s *server) serveTable(w http.ResponseWriter, t chart.Table, name string) {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.csv"`, name))
	w.Write(t.CSV())
}

// declinedView says which shapes a sweep declined and why, in a sentence and a line
// each ("" and nil when none).
func declinedView(ds []sweep.Declined) (string, []string) {
	if len(ds) == 0 {
		return "", nil
	}
	configs := 0
	var lines []string
	for _, d := range ds {
		configs += d.Configs
		lines = append(lines, fmt.Sprintf("%s, %s: %s", reprWords(d.Spec), templates.ShapeWords(d.Shape.Bands, d.Shape.Rows), words.Count(d.Configs, "configuration", "configurations")))
	}
	d := ds[0]
	which := "the shape below"
	if len(ds) > 1 {
		which = "the " + words.Thousands(len(ds)) + " shapes below"
	}
	line := fmt.Sprintf("Not scored: %s, of %s. Each %s: %s.", words.Count(configs, "configuration", "configurations"), which, d.Reason(), sweep.DeclineRule())
	return line, lines
}
