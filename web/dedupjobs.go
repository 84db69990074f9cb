package web

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/bulk"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/dedup"
	"github.com/dedupstudio/dedupstudio/internal/handoff"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/results"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// Whole-corpus runs from the UI: the dedup command's pipeline (internal/bulk) over a
// corpus file the server holds under its corpus root (CorpusDir: DBFILE-corpora by
// default), started from a manifest's page or a sweep result's settings, as a background
// job whose record (db.DedupJob) survives a restart. Its files go to DedupDir/<run id>;
// a run stopped by a cancel or a restart resumes from its stage markers there. Once done,
// its removals.jsonl is imported through internal/results (the same path as
// import-results -format manifest) as a draft manifest of the dataset the corpus was
// imported as.

// CorpusDir is the default corpus root of a database file: the folder next to it.
func CorpusDir(dbPath string) string { return dbPath + "-corpora" }

// DedupDir is where whole-corpus runs write, next to the database file.
func DedupDir(dbPath string) string { return dbPath + "-dedup" }

// dedupFiles are the files of a finished run that its page offers for download.
var dedupFiles = []string{bulk.SummaryJSON, bulk.RemovalsCSV, bulk.RemovalsJSONL, bulk.ClustersJSONL, bulk.RejectsJSONL}

// dedupRuns maps the runs this process is running to their job in the registry.
type dedupRuns struct {
	mu        sync.Mutex
	job       map[int64]string // run id -> registry job id
	cancelled map[int64]bool   // a person asked to cancel it (not a shutdown)
}

func (d *dedupRuns) get(id int64) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	j, ok := d.job[id]
	return j, ok
}

// dedupProgress is what a running run reports: the stage and how far, with the stage's
// rate and the time left at that rate.
type dedupProgress struct {
	Stage       string
	Index, Of   int
	Done, Total int64
	Unit        string
	Docs        int64
	Rate        float64 // units per second in this stage
	ETA         time.Duration
}

// corpusFiles lists the corpus files under the root (relative, slash-separated, sorted),
// following no symlink out of it.
func (s *server) corpusFiles() ([]string, error) {
	root, err := os.OpenRoot(s.corpusRoot)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var out []string
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: not offered
		}
		if d.IsDir() {
			if p != "." && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if _, err := corpus.DetectFormat(p); err != nil || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		if _, err := s.corpusPath(p); err == nil {
			out = append(out, p)
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}

// corpusPath resolves rel, a corpus file's path relative to the root, to the file it
// names, refusing anything outside the root: an absolute path, "..", a symlink that
// leads out, something not a regular file.
func (s *server) corpusPath(rel string) (string, error) {
	bad := func(msg string) error { return &formError{field: "corpus", msg: fmt.Sprintf("%q: %s", rel, msg)} }
	if rel == "" {
		return "", &formError{field: "corpus", msg: "choose a corpus file"}
	}
	if filepath.IsAbs(rel) || strings.Contains(rel, `\`) || !fs.ValidPath(rel) {
		return "", bad("not a path inside the corpus folder")
	}
	root, err := os.OpenRoot(s.corpusRoot)
	if err != nil {
		return "", bad("the corpus folder " + s.corpusRoot + " cannot be opened")
	}
	defer root.Close()
	st, err := root.Stat(rel) // os.Root refuses a symlink or ".." that escapes
	if err != nil {
		return "", bad("no such file in the corpus folder")
	}
	if !st.Mode().IsRegular() {
		return "", bad("not a file")
	}
	base, err := filepath.EvalSymlinks(s.corpusRoot)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(filepath.Join(base, filepath.FromSlash(rel)))
	if err != nil {
		return "", bad("no such file in the corpus folder")
	}
	if r, err := filepath.Rel(base, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", bad("not inside the corpus folder")
	}
	if _, err := corpus.DetectFormat(real); err != nil {
		return "", bad("not a corpus file (.jsonl, .csv, .tsv or .parquet, optionally .gz or .zst)")
	}
	return real, nil
}

// corpusDataset is the dataset the corpus file was imported as: the newest ready one
// whose source file has its name. ok is false when there is none.
func (s *server) corpusDataset(ctx context.Context, rel string) (db.Dataset, bool, error) {
	byFile, err := s.corpusDatasets(ctx)
	if err != nil {
		return db.Dataset{}, false, err
	}
	d, ok := byFile[filepath.Base(rel)]
	return d, ok, nil
}

// corpusDatasets maps a source file's name to the newest ready dataset imported from it:
// one query for a whole list of corpus files.
func (s *server) corpusDatasets(ctx context.Context) (map[string]db.Dataset, error) {
	all, err := s.store.Datasets(ctx)
	if err != nil {
		return nil, err
	}
	byFile := map[string]db.Dataset{}
	for _, d := range all {
		if best, ok := byFile[d.SourceFile]; d.State == "ready" && (!ok || d.ID > best.ID) {
			byFile[d.SourceFile] = d
		}
	}
	return byFile, nil
}

// dedupSettings is the settings.json of the manifest or sweep result the URL names,
// what the run reads, and where it comes from.
func (s *server) dedupSettings(r *http.Request) (body []byte, source string, manifestID int64, back string, err error) {
	if chi.URLParam(r, "manifest") != "" {
		m, err := s.loadManifest(r)
		if err != nil {
			return nil, "", 0, "", err
		}
		files, err := handoff.Files(handoff.Settings{Params: m.Params, Source: handoffSource(m)}, handoff.JSON)
		if err != nil {
			return nil, "", 0, "", err
		}
		return files[0].Body, fmt.Sprintf("manifest %d (%s)", m.ID, m.State.Label()), m.ID, fmt.Sprintf("/manifests/%d", m.ID), nil
	}
	body, p, sweepID, ord, err := s.selectedSettings(r)
	if err != nil {
		return nil, "", 0, "", err
	}
	return body, fmt.Sprintf("sweep %d, configuration %d at t=%s", sweepID, ord, fmtNum(p.Threshold, 2)), 0,
		fmt.Sprintf("/sweeps/%d?config=%d", sweepID, ord), nil
}

// newDedupJob shows the form: the configuration (from the URL) and the corpus files.
func (s *server) newDedupJob(w http.ResponseWriter, r *http.Request) {
	body, source, _, back, err := s.dedupSettings(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	params, desc, err := handoff.ParseSettings(strings.NewReader(string(body)), "settings.json")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	files, err := s.corpusFiles()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := templates.DedupJobForm{Page: s.page(r, "Run on a whole corpus"), Source: source, Back: back, Root: s.corpusRoot,
		Action: r.URL.Path[:len(r.URL.Path)-len("/new")] + queryOf(r), Draft: !desc.Source.SignedOff, Token: newFormToken(),
		Config: fmt.Sprintf("%s, %d bands x %d rows, threshold %s, %s verification, %s, keeper rule %s", params.Spec, params.Shape.Bands,
			params.Shape.Rows, fmtNum(params.Threshold, 2), params.Verification, params.Policy, params.Rule)}
	byFile, err := s.corpusDatasets(r.Context())
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
	body, source, mid, _, err := s.dedupSettings(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, badInput(err))
		return
	}
	rel := r.PostForm.Get("corpus")
	if _, err := s.corpusPath(rel); err != nil {
		s.failOn(w, r, err, func(_ int, msg string) { s.redirect(w, r, r.URL.Path+"/new"+queryOf(r), refused(r, msg)) })
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
	u := userOf(r)
	j := db.DedupJob{Source: source, SourceManifestID: mid, Settings: string(body), Corpus: rel}
	id, err := s.store.CreateDedupJob(r.Context(), j, *u)
	if token != "" {
		target := ""
		if err == nil {
			target = fmt.Sprintf("/dedup-jobs/%d", id)
		}
		// Released when no run was stored, so the form may be sent again.
		if terr := s.store.SetFormToken(context.WithoutCancel(r.Context()), token, target); terr != nil && err == nil {
			err = terr
		}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.launchDedupJob(id, *u); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/dedup-jobs/%d", id), http.StatusSeeOther)
}

// launchDedupJob runs a stored run (new or resumed) as a background job.
func (s *server) launchDedupJob(id int64, by db.User) error {
	ctx := context.Background()
	j, err := s.store.DedupJob(ctx, id)
	if err != nil {
		return err
	}
	s.dedup.mu.Lock()
	defer s.dedup.mu.Unlock()
	delete(s.dedup.cancelled, id)
	jid, err := s.jobs.Start("dedup", fmt.Sprintf("whole-corpus run %d: %s", id, j.Corpus), by.ID, func(ctx context.Context, report jobs.Reporter) (any, error) {
		defer func() {
			s.dedup.mu.Lock()
			delete(s.dedup.job, id)
			s.dedup.mu.Unlock()
		}()
		return nil, s.runDedupJob(ctx, j, by, report)
	})
	if err != nil {
		s.store.FinishDedupJob(ctx, id, "interrupted", err.Error(), "")
		return err
	}
	s.dedup.job[id] = jid
	return nil
}

// runDedupJob runs the pipeline, records how it ended and imports its removals.
func (s *server) runDedupJob(ctx context.Context, j db.DedupJob, by db.User, report jobs.Reporter) error {
	store := context.WithoutCancel(ctx)
	finish := func(err error) error {
		state, msg := "failed", ""
		if err != nil {
			msg = err.Error()
		}
		if ctx.Err() != nil {
			s.dedup.mu.Lock()
			byPerson := s.dedup.cancelled[j.ID]
			s.dedup.mu.Unlock()
			state, msg = "interrupted", "the server stopped while it ran"
			if byPerson {
				state, msg = "cancelled", "cancelled"
			}
		}
		if ferr := s.store.FinishDedupJob(store, j.ID, state, msg, ""); ferr != nil {
			s.log.Error("whole-corpus run: record its end", "run", j.ID, "err", ferr)
		}
		return err
	}
	params, _, err := handoff.ParseSettings(strings.NewReader(j.Settings), "settings.json")
	if err != nil {
		return finish(err)
	}
	in, err := s.corpusPath(j.Corpus)
	if err != nil {
		return finish(err)
	}
	ds, haveDS, err := s.corpusDataset(store, j.Corpus)
	if err != nil {
		return finish(err)
	}
	name := filepath.Base(j.Corpus)
	if haveDS {
		name = ds.Name
	}
	var stage string
	var stageStart time.Time
	progress := func(p bulk.Progress) {
		now := time.Now()
		if p.Stage != stage {
			stage, stageStart = p.Stage, now
		}
		dp := dedupProgress{Stage: p.Stage, Index: p.Index, Of: len(bulk.Stages), Done: p.Done, Total: p.Total, Unit: p.Unit, Docs: p.Docs}
		dp.Rate, dp.ETA = p.Speed(now.Sub(stageStart))
		report(dp)
		if s.dedupHook != nil {
			s.dedupHook(ctx, p.Stage)
		}
	}
	out := s.dedupOut(j.ID)
	sum, err := bulk.Run(ctx, bulk.Options{Params: params, In: in, Out: out, Dataset: name, Progress: progress,
		Corpus: corpus.Options{IDField: "id", TextField: "text", MaxBytes: corpus.DefaultMaxDocBytes, MetaFields: []string{"source", "lang", "date"}}})
	if err != nil {
		// The pipeline's errors name the corpus file, line and field, or the disk: shown
		// as they are (a person fixes the file and resumes), and logged.
		if ctx.Err() == nil {
			s.log.Error("whole-corpus run failed", "run", j.ID, "corpus", j.Corpus, "err", err)
		}
		return finish(err)
	}
	sj, err := json.Marshal(sum)
	if err != nil {
		return finish(err)
	}
	if err := s.store.FinishDedupJob(store, j.ID, "done", "", string(sj)); err != nil {
		return err
	}
	report(dedupProgress{Stage: "import", Index: len(bulk.Stages), Of: len(bulk.Stages)})
	if err := s.importDedupRemovals(store, j, by); err != nil {
		s.log.Error("whole-corpus run: import its removals", "run", j.ID, "err", err)
		return s.store.SetDedupJobManifest(store, j.ID, 0, "Importing the removals failed on an internal error, which has been logged: try again.")
	}
	return nil
}

func (s *server) dedupOut(id int64) string {
	return filepath.Join(s.dedupDir, strconv.FormatInt(id, 10))
}

// importDedupRemovals imports a finished run's removals.jsonl as a draft manifest of the
// dataset the corpus was imported as, or notes why it cannot.
func (s *server) importDedupRemovals(ctx context.Context, j db.DedupJob, by db.User) error {
	ds, ok, err := s.corpusDataset(ctx, j.Corpus)
	if err != nil {
		return err
	}
	if !ok {
		note := fmt.Sprintf("No dataset was imported from %s, so its removals cannot be reviewed yet: import the same file as a dataset (Import), then press “Import the removals for review”.", filepath.Base(j.Corpus))
		return s.store.SetDedupJobManifest(ctx, j.ID, 0, note)
	}
	path := filepath.Join(s.dedupOut(j.ID), bulk.RemovalsJSONL)
	f, err := os.Open(path)
	if err != nil {
		return s.store.SetDedupJobManifest(ctx, j.ID, 0, "The run's removals file is gone ("+err.Error()+"): resume or start the run again.")
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	// The dataset was found by the corpus file's name; a run started before the corpus was
	// imported names the file in its rows, so the rows' dataset may differ by design.
	approvals, team, err := s.defaultApprovals(ctx)
	if err != nil {
		return err
	}
	req := dedup.ImportRequest{DatasetID: ds.ID, Format: results.Manifest, Sample: dedup.DefaultSample, Seed: 1, ApprovalsRequired: approvals,
		Team: team, OtherDataset: true, By: by, ByName: by.Name, File: results.Source{Name: fmt.Sprintf("dedup-job-%d-%s", j.ID, bulk.RemovalsJSONL), Reader: f, At: f, Size: st.Size()}}
	m, err := dedup.ImportResults(ctx, s.store, req, func(dedup.Progress) {})
	if err != nil {
		msg, ok := userMessage(err)
		if !ok {
			msg = s.jobError("import of a whole-corpus run", j.Corpus, err, "no manifest was made").Error()
		}
		return s.store.SetDedupJobManifest(ctx, j.ID, 0, fmt.Sprintf("Importing the removals into %s v%d was refused: %s", ds.Name, ds.Version, msg))
	}
	return s.store.SetDedupJobManifest(ctx, j.ID, m.ID, "")
}

func (s *server) loadDedupJob(r *http.Request) (db.DedupJob, error) {
	return loadByID(r, "dedupJob", "whole-corpus run", s.store.DedupJob)
}

// mayControl: who started a run, or an admin, cancels and resumes it.
func mayControl(r *http.Request, j db.DedupJob) bool {
	u := userOf(r)
	return u.Role == auth.Admin || u.ID == j.StartedBy
}

// listDedupJobs shows every whole-corpus run, and where corpus files go.
func (s *server) listDedupJobs(w http.ResponseWriter, r *http.Request) {
	list, err := s.store.DedupJobs(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	files, err := s.corpusFiles()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := templates.DedupJobsPage{Page: s.page(r, "Whole-corpus runs"), Root: s.corpusRoot, Files: files}
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
		v.Jobs = append(v.Jobs, templates.DedupJobRow{ID: j.ID, Corpus: j.Corpus, Source: j.Source, State: j.State,
			By: j.StartedName, Started: j.CreatedAt.Format("2006-01-02 15:04"), ManifestID: j.ManifestID})
	}
	s.render(w, r, http.StatusOK, templates.DedupJobsListPage(v))
}

// dedupFromSweep sends the list page's sweep choice to that sweep result's form.
func (s *server) dedupFromSweep(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id, err := strconv.ParseInt(q.Get("sweep"), 10, 64)
	if err != nil || id <= 0 {
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
func (s *server) showDedupJob(w http.ResponseWriter, r *http.Request) {
	j, err := s.loadDedupJob(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := templates.DedupJob{Page: s.page(r, fmt.Sprintf("Whole-corpus run %d", j.ID)), ID: j.ID, Corpus: j.Corpus, Source: j.Source,
		State: j.State, Error: j.Error, By: j.StartedName, ManifestID: j.ManifestID, ImportNote: j.ImportNote,
		CanControl: mayControl(r, j), Out: s.dedupOut(j.ID)}
	end := j.FinishedAt
	if j.State == "running" || end.IsZero() {
		end = s.now()
	}
	v.Elapsed = end.Sub(j.StartedAt).Round(time.Second).String()
	if jid, ok := s.dedup.get(j.ID); ok && j.State == "running" || (ok && j.State == "done" && j.ManifestID == 0 && j.ImportNote == "") {
		v.Running, v.Page.Refresh = true, 2
		if snap, err := s.jobs.Get(jid, jobs.Caller{All: true}); err == nil {
			if p, ok := snap.Progress.(dedupProgress); ok {
				v.Stage = fmt.Sprintf("stage %d of %d: %s", p.Index, p.Of, p.Stage)
				if p.Stage == "import" {
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
	}
	v.Line = cmp.Or(v.Stage, "starting") + "; " + v.Elapsed + " so far."
	if j.State == "done" {
		for _, f := range dedupFiles {
			if st, err := os.Stat(filepath.Join(s.dedupOut(j.ID), f)); err == nil && st.Mode().IsRegular() {
				v.Files = append(v.Files, templates.Option{Value: f, Label: fmt.Sprintf("%s (%s)", f, bulk.Quantity(float64(st.Size()), "bytes"))})
			}
		}
		var sum bulk.Summary
		if json.Unmarshal([]byte(j.Summary), &sum) == nil {
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

// controlledDedupJob loads the run of the URL for an action (verb) only who started it,
// or an admin, may take; it answers the request itself when the run is not found or the
// caller may not.
func (s *server) controlledDedupJob(w http.ResponseWriter, r *http.Request, verb string) (db.DedupJob, bool) {
	j, err := s.loadDedupJob(r)
	if err == nil && !mayControl(r, j) {
		err = &pageError{http.StatusForbidden, "Only who started this run, or an admin, may " + verb + " it."}
	}
	if err != nil {
		s.fail(w, r, err)
		return db.DedupJob{}, false
	}
	return j, true
}

// cancelDedupJob stops a running run; its stage markers stay for a resume.
func (s *server) cancelDedupJob(w http.ResponseWriter, r *http.Request) {
	j, ok := s.controlledDedupJob(w, r, "cancel")
	if !ok {
		return
	}
	s.dedup.mu.Lock()
	jid, ok := s.dedup.job[j.ID]
	if ok {
		s.dedup.cancelled[j.ID] = true
	}
	s.dedup.mu.Unlock()
	if !ok {
		s.redirect(w, r, fmt.Sprintf("/dedup-jobs/%d", j.ID), refused(r, "This run is not running (it finished, or the server restarted since)."))
		return
	}
	if err := s.jobs.Cancel(jid, jobs.Caller{All: true}); err != nil {
		s.fail(w, r, err)
		return
	}
	s.jobs.Wait(r.Context(), jid) // a cancelled run stops within a chunk; the page then shows it stopped
	s.redirect(w, r, fmt.Sprintf("/dedup-jobs/%d", j.ID), done("Cancelled. Resume picks up from the last completed stage."))
}

// resumeDedupJob runs a cancelled, interrupted or failed run again, from its stage
// markers.
func (s *server) resumeDedupJob(w http.ResponseWriter, r *http.Request) {
	j, ok := s.controlledDedupJob(w, r, "resume")
	if !ok {
		return
	}
	if _, running := s.dedup.get(j.ID); running {
		s.redirect(w, r, fmt.Sprintf("/dedup-jobs/%d", j.ID), refused(r, "This run is running already."))
		return
	}
	u := userOf(r)
	if err := s.store.ResumeDedupJob(r.Context(), j.ID, *u); err != nil {
		s.failOn(w, r, err, func(_ int, msg string) { s.redirect(w, r, fmt.Sprintf("/dedup-jobs/%d", j.ID), refused(r, msg)) })
		return
	}
	if err := s.launchDedupJob(j.ID, *u); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/dedup-jobs/%d", j.ID), http.StatusSeeOther)
}

// importDedupJob imports a finished run's removals (after the corpus was imported as a
// dataset, or again after a refused import).
func (s *server) importDedupJob(w http.ResponseWriter, r *http.Request) {
	j, err := s.loadDedupJob(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	back := fmt.Sprintf("/dedup-jobs/%d", j.ID)
	if j.State != "done" || j.ManifestID != 0 {
		s.redirect(w, r, back, refused(r, "Only a finished run without a manifest imports its removals."))
		return
	}
	if err := s.importDedupRemovals(r.Context(), j, *userOf(r)); err != nil {
		s.fail(w, r, err)
		return
	}
	if j, err = s.store.DedupJob(r.Context(), j.ID); err != nil {
		s.fail(w, r, err)
		return
	}
	if j.ManifestID == 0 {
		s.redirect(w, r, back, refused(r, j.ImportNote))
		return
	}
	s.redirect(w, r, back, done(fmt.Sprintf("Imported as manifest %d, a draft to review.", j.ManifestID)))
}

// dedupJobFile serves one of a finished run's files.
func (s *server) dedupJobFile(w http.ResponseWriter, r *http.Request) {
	j, err := s.loadDedupJob(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	name := chi.URLParam(r, "file")
	if !slices.Contains(dedupFiles, name) {
		s.fail(w, r, notFound("file"))
		return
	}
	f, err := os.Open(filepath.Join(s.dedupOut(j.ID), name))
	if err != nil {
		s.fail(w, r, notFound("file (the run has not written it)"))
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

// initDedupJobs sets the folders and marks the runs a dead process left running as
// interrupted (they resume from their stage markers).
func (s *server) initDedupJobs(d Deps) {
	s.dedup.job, s.dedup.cancelled = map[int64]string{}, map[int64]bool{}
	s.corpusRoot, s.dedupDir, s.dedupHook = d.CorpusRoot, d.DedupDir, d.DedupStageHook
	if s.store == nil {
		return
	}
	if s.corpusRoot == "" {
		s.corpusRoot = CorpusDir(s.store.Path())
	}
	if s.dedupDir == "" {
		s.dedupDir = DedupDir(s.store.Path())
	}
	if n, err := s.store.InterruptDedupJobs(context.Background()); err != nil {
		s.log.Error("whole-corpus runs left running: mark them interrupted", "err", err)
	} else if n > 0 {
		s.log.Info("whole-corpus runs left running by an earlier process marked interrupted", "runs", n)
	}
}
