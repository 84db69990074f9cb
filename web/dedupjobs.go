package web

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/bulk"
	"github.com/dedupstudio/dedupstudio/internal/corpusrun"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/handoff"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// Whole-corpus runs from the UI (internal/corpusrun runs them): the dedup command's
// pipeline over a corpus file the server holds under its corpus root, started from a
// manifest's page or a sweep result's settings. The handlers here check who may,
// pass the configuration the run takes, and show the runs.

// dedupSettings is the configuration of the manifest or sweep result the URL names,
// what the run takes, and where it comes from (in words, and the page to go back to).
func (s *server) dedupSettings(r *http.Request) (settings handoff.Settings, source, back string, err error) {
	if chi.URLParam(r, "manifest") != "" {
		m, err := s.loadManifest(r)
		if err != nil {
			return settings, "", "", err
		}
		settings = handoff.Settings{Params: m.Params, Source: handoffSource(m)}
		source, back = fmt.Sprintf("manifest %d (%s)", m.ID, m.State.Label()), fmt.Sprintf("/manifests/%d", m.ID)
	} else {
		var ord int
		if settings, ord, err = s.selectedSettings(r); err != nil {
			return settings, "", "", err
		}
		sweepID := settings.Source.Sweep
		source = fmt.Sprintf("sweep %d, configuration %d at t=%s", sweepID, ord, fmtNum(settings.Params.Threshold, 2))
		back = fmt.Sprintf("/sweeps/%d?config=%d", sweepID, ord)
	}
	return settings, source, back, settings.Params.Validate()
}

// newDedupJob shows the form: the configuration (from the URL) and the corpus files.
func (s *server) newDedupJob(w http.ResponseWriter, r *http.Request) {
	settings, source, back, err := s.dedupSettings(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	params := settings.Params
	files, err := s.corpusRuns.CorpusFiles()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := templates.DedupJobForm{Page: s.page(r, "Run on a whole corpus"), Source: source, Back: back, Root: s.corpusRuns.Root(),
		Action: r.URL.Path[:len(r.URL.Path)-len("/new")] + queryOf(r), Draft: !settings.Source.SignedOff(), Token: newFormToken(),
		Config: fmt.Sprintf("%s, %d bands x %d rows, threshold %s, %s verification, %s, keeper rule %s", params.Spec, params.Shape.Bands,
			params.Shape.Rows, fmtNum(params.Threshold, 2), params.Verification, params.Policy, params.Rule)}
	byFile, err := s.corpusRuns.Datasets(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	for _, f := range files {
		label := f
		if ds, ok := byFile[filepath.Base(f)]; ok {
			label += fmt.Sprintf(" (imported as %s v%d)", ds.Name, ds.Version)
		}
		v.Corpora = append(v.Corpora, templates.Option{Value: f, Label: label, Selected: formValue(r, "corpus", "") == f})
	}
	s.render(w, r, http.StatusOK, templates.DedupJobFormPage(v))
}

func queryOf(r *http.Request) string {
	if r.URL.RawQuery == "" {
		return ""
	}
	return "?" + r.URL.RawQuery
}

// startDedupJob stores the run and starts it.
func (s *server) startDedupJob(w http.ResponseWriter, r *http.Request) {
	settings, source, _, err := s.dedupSettings(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, badInput(err))
		return
	}
	rel := r.PostForm.Get("corpus")
	if _, err := s.corpusRuns.Path(rel); err != nil {
		s.failBack(w, r, err, r.URL.Path+"/new"+queryOf(r))
		return
	}
	// The same form sent twice (a double click, a replayed POST) starts one run over the
	// whole corpus: its one-time token is claimed first, and a later post goes where the
	// first led. (The token's kind is "run", the one kind form_tokens takes; tokens are
	// random, so the run form's and this one's never meet.)
	token := r.PostForm.Get("token")
	if s.sentAlready(w, r, token, "run", "the list of whole-corpus runs") {
		return
	}
	id, err := s.corpusRuns.Start(r.Context(), corpusrun.StartRequest{Source: source, SourceManifestID: settings.Source.Manifest, Settings: settings,
		Corpus: rel, By: *userOf(r)})
	target := "" // no run stored: the token is released
	if id != 0 {
		target = fmt.Sprintf("/dedup-jobs/%d", id)
	}
	err = s.settleFormToken(r.Context(), token, target, err)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/dedup-jobs/%d", id), http.StatusSeeOther)
}

func (s *server) loadDedupJob(r *http.Request) (corpusrun.Run, error) {
	return loadByID(r, "dedupJob", "whole-corpus run", s.corpusRuns.Get)
}

// mayControl: who started a run, or an admin, cancels and resumes it.
func mayControl(r *http.Request, j corpusrun.Run) bool {
	u := userOf(r)
	return u.Role == auth.Admin || u.ID == j.StartedBy
}

// listDedupJobs shows every whole-corpus run, and where corpus files go.
func (s *server) listDedupJobs(w http.ResponseWriter, r *http.Request) {
	list, err := s.corpusRuns.List(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	files, err := s.corpusRuns.CorpusFiles()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := templates.DedupJobsPage{Page: s.page(r, "Whole-corpus runs"), Root: s.corpusRuns.Root(), Files: files}
	sweeps, err := s.store.Sweeps(r.Context(), 0)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	for _, sw := range sweeps {
		if sw.Done > 0 {
			v.Sweeps = append(v.Sweeps, templates.Option{Value: strconv.FormatInt(sw.ID, 10),
				Label: fmt.Sprintf("%d: %s (%s)", sw.ID, cmp.Or(sw.Name, "unnamed"), sw.State)})
		}
	}
	for _, j := range list {
		v.Jobs = append(v.Jobs, templates.DedupJobRow{ID: j.ID, Corpus: j.Corpus, Source: j.Source, State: string(j.State),
			By: j.StartedName, Started: j.CreatedAt.Format("2006-01-02 15:04"), ManifestID: j.ManifestID})
	}
	s.render(w, r, http.StatusOK, templates.DedupJobsListPage(v))
}

// dedupFromSweep sends the list page's sweep choice to that sweep result's form.
func (s *server) dedupFromSweep(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id, ok := parseID(q.Get("sweep"))
	if !ok {
		s.fail(w, r, &formError{field: "sweep", msg: "choose a sweep"})
		return
	}
	next := url.Values{}
	for _, k := range []string{"config", "t"} {
		if v := strings.TrimSpace(q.Get(k)); v != "" {
			next.Set(k, v)
		}
	}
	to := fmt.Sprintf("/sweeps/%d/dedup-jobs/new", id)
	if len(next) > 0 {
		to += "?" + next.Encode()
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// showDedupJob shows a run: its progress while it runs, how it ended, its files and
// the manifest its removals became.
func (s *server) showDedupJob(w http.ResponseWriter, r *http.Request, j corpusrun.Run) {
	v := templates.DedupJob{Page: s.page(r, fmt.Sprintf("Whole-corpus run %d", j.ID)), ID: j.ID, Corpus: j.Corpus, Source: j.Source,
		State: string(j.State), Error: j.Error, By: j.StartedName, ManifestID: j.ManifestID, ImportNote: j.ImportNote,
		CanControl: mayControl(r, j), Out: s.corpusRuns.OutDir(j.ID)}
	end := j.FinishedAt
	if j.State == corpusrun.Running || end.IsZero() {
		end = s.now()
	}
	v.Elapsed = end.Sub(j.StartedAt).Round(time.Second).String()
	if j.InProgress() {
		v.Running, v.Page.Refresh = true, 2
		if p := j.Progress; p != nil {
			v.Stage = fmt.Sprintf("stage %d of %d: %s", p.Index, p.Of, p.Stage)
			if p.Stage == corpusrun.ImportStage {
				v.Stage = "importing the removals for review"
			}
			v.Done, v.Total = p.Done, p.Total
			if p.Unit != "" {
				v.Stage += ": " + amount(p.Done, p.Total, p.Unit)
			}
			if p.Rate > 0 {
				v.Stage += ", " + bulk.Quantity(p.Rate, p.Unit) + "/s"
			}
			if p.ETA > 0 {
				v.Stage += ", about " + p.ETA.Round(time.Second).String() + " left in this stage"
			}
		}
	}
	v.Line = cmp.Or(v.Stage, "starting") + soFar(v.Elapsed) + "."
	if j.State == corpusrun.Done {
		for _, f := range s.corpusRuns.Outputs(j.ID) {
			v.Files = append(v.Files, templates.Option{Value: f.Name, Label: fmt.Sprintf("%s (%s)", f.Name, bulk.Quantity(float64(f.Size), "bytes"))})
		}
		if sum := j.Summary; sum != nil {
			v.Summary = fmt.Sprintf("%d documents (%d refused), %d exact groups, %d candidate pairs, %d accepted; %d clusters, %d documents proposed for removal (%d exact duplicates)",
				sum.Docs, sum.Rejected, sum.ExactGroups, sum.Candidates, sum.Accepted, sum.Clusters, sum.Removed, sum.RemovedExact)
		}
	}
	s.render(w, r, http.StatusOK, templates.DedupJobPage(v))
}

func amount(done, total int64, unit string) string {
	if total > 0 {
		return fmt.Sprintf("%s of %s (%.0f%%)", bulk.Quantity(float64(done), unit), bulk.Quantity(float64(total), unit), 100*float64(done)/float64(total))
	}
	return bulk.Quantity(float64(done), unit)
}

// dedupJobAction takes an action (verb) on the run of the URL that only who started it,
// or an admin, may take, and goes back to the run's page, saying ok ("": nothing) or why
// the action was refused.
func (s *server) dedupJobAction(w http.ResponseWriter, r *http.Request, verb string, act func(j corpusrun.Run) error, ok string) {
	j, err := s.loadDedupJob(r)
	if err == nil && !mayControl(r, j) {
		err = &pageError{http.StatusForbidden, "Only who started this run, or an admin, may " + verb + " it."}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	back := fmt.Sprintf("/dedup-jobs/%d", j.ID)
	if err := act(j); err != nil {
		s.failBack(w, r, err, back)
		return
	}
	if ok == "" {
		http.Redirect(w, r, back, http.StatusSeeOther)
		return
	}
	s.redirect(w, r, back, done(ok))
}

// cancelDedupJob stops a running run; its stage markers stay for a resume.
func (s *server) cancelDedupJob(w http.ResponseWriter, r *http.Request) {
	s.dedupJobAction(w, r, "cancel", func(j corpusrun.Run) error { return s.corpusRuns.Cancel(r.Context(), j.ID) },
		"Cancelled. Resume picks up from the last completed stage.")
}

// resumeDedupJob runs a cancelled, interrupted or failed run again, from its stage
// markers.
func (s *server) resumeDedupJob(w http.ResponseWriter, r *http.Request) {
	s.dedupJobAction(w, r, "resume", func(j corpusrun.Run) error { return s.corpusRuns.Resume(r.Context(), j.ID, *userOf(r)) }, "")
}

// importDedupJob imports a finished run's removals (after the corpus was imported as a
// dataset, or again after a refused import).
func (s *server) importDedupJob(w http.ResponseWriter, r *http.Request, j corpusrun.Run) {
	back := fmt.Sprintf("/dedup-jobs/%d", j.ID)
	j, err := s.corpusRuns.Import(r.Context(), j.ID, *userOf(r))
	if err != nil {
		s.failBack(w, r, err, back)
		return
	}
	if j.ManifestID == 0 {
		s.redirect(w, r, back, refused(r, j.ImportNote))
		return
	}
	s.redirect(w, r, back, done(fmt.Sprintf("Imported as manifest %d, a draft to review.", j.ManifestID)))
}

// dedupJobFile serves one of a finished run's files.
func (s *server) dedupJobFile(w http.ResponseWriter, r *http.Request, j corpusrun.Run) {
	name := chi.URLParam(r, "file")
	f, err := s.corpusRuns.Open(j.ID, name)
	if errors.Is(err, db.ErrNotFound) {
		s.fail(w, r, notFound("file (the run has not written it)"))
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ct := "application/x-ndjson"
	switch filepath.Ext(name) {
	case ".csv":
		ct = "text/csv; charset=utf-8"
	case ".json":
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="dedup-job-%d-%s"`, j.ID, name))
	http.ServeContent(w, r, "", st.ModTime(), f)
}
