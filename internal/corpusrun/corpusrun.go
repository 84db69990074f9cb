// Package corpusrun runs the dedup command's pipeline (internal/bulk) over a whole
// corpus file the server holds, as a background service started from the web UI: a run
// takes the settings.json of a manifest or of a sweep result and a corpus file under the
// service's corpus root, and its record (db.DedupJob) survives a restart.
//
// A run is a job (internal/jobs) reporting the pipeline's stage, how far it is, the
// stage's rate and the time left. Its files go to OutDir(id); a run stopped by a cancel
// or by the process ending resumes from the pipeline's stage markers there, and ends
// with the removals an uninterrupted run would have had. Once done, its removals.jsonl
// is imported through internal/manifests (the path of import-results -format manifest) as a
// draft manifest of the dataset the corpus file was imported as, found by the file's
// name; without one, the run says so and Import makes the manifest later.
//
// The shape is internal/sweeprun's: a typed State, progress, Cancel, Resume, and
// MarkInterrupted, which the server calls at start for the runs a dead process left
// running. Paths are checked against the corpus root (os.Root): nothing outside it is
// listed or read, through "..", an absolute path or a symlink.
package corpusrun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/bulk"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/handoff"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
	"github.com/dedupstudio/dedupstudio/internal/results"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// State is a stored run's lifecycle state.
type State string

// States. A run is Running from Start (or Resume) until the pipeline returns: Done, or
// Failed (the error says why: a bad line of the corpus, a full disk), or Cancelled by a
// person. A run found running at start-up was left by a process that died and becomes
// Interrupted (MarkInterrupted). Failed, Cancelled and Interrupted runs can be resumed.
const (
	Running     State = "running"
	Done        State = "done"
	Failed      State = "failed"
	Cancelled   State = "cancelled"
	Interrupted State = "interrupted"
)

// Resumable reports whether a run in state s can continue (Resume).
func (s State) Resumable() bool { return s == Cancelled || s == Interrupted || s == Failed }

// JobKind is the jobs.Registry kind of a run's job.
const JobKind = "dedup"

// Errors a caller may act on (besides db.ErrNotFound for a run that does not exist and
// *PathError for a corpus path refused).
var (
	// ErrRunning refuses to resume a run that is running.
	ErrRunning = errkind.New(errkind.Conflict, "this run is running already")
	// ErrNotRunning is a cancel of a run that runs in no job of this process.
	ErrNotRunning = errkind.New(errkind.Conflict, "this run is not running (it finished, or the server restarted since)")
	// ErrNotResumable refuses to resume a run that finished.
	ErrNotResumable = errkind.New(errkind.Conflict, "this run finished: there is nothing to resume")
	// ErrNotImportable refuses to import the removals of a run that has not finished,
	// or whose removals are a manifest already.
	ErrNotImportable = errkind.New(errkind.Conflict, "only a finished run without a manifest imports its removals")
)

// PathError is a corpus path the service refuses: empty, outside the corpus root, not
// a file, or not a corpus file.
type PathError struct {
	Path string // as given, relative to the root
	Msg  string
}

func (e *PathError) Error() string {
	if e.Path == "" {
		return "corpus: " + e.Msg
	}
	return fmt.Sprintf("corpus: %q: %s", e.Path, e.Msg)
}

// Kind is Invalid: the person chooses another file.
func (e *PathError) Kind() errkind.Kind { return errkind.Invalid }

// CorpusDir is the default corpus root of a database file: the folder next to it.
func CorpusDir(dbPath string) string { return dbPath + "-corpora" }

// DedupDir is the default folder runs write to, next to the database file.
func DedupDir(dbPath string) string { return dbPath + "-dedup" }

// Files are the files of a finished run that may be downloaded (Open).
var Files = []string{bulk.SummaryJSON, bulk.RemovalsCSV, bulk.RemovalsJSONL, bulk.ClustersJSONL, bulk.RejectsJSONL}

// Config is where a Service reads and writes.
type Config struct {
	// Root is the folder whose corpus files runs may read; "" is CorpusDir of the
	// store's file.
	Root string
	// Out is the folder runs write to, one folder per run; "" is DedupDir of the
	// store's file.
	Out string
	// Log receives the failures that are not the person's to fix; nil discards them.
	Log *slog.Logger
	// StageHook, for tests, is called with every progress report of a run, on the
	// run's goroutine, and may block until ctx ends (to hold a run in a stage).
	StageHook func(ctx context.Context, stage string)
}

// Service starts, cancels, resumes and reads whole-corpus runs. It is safe for
// concurrent use; one Service serves a process (it remembers which run is in which
// job).
type Service struct {
	store *db.DB
	jobs  *jobs.Registry
	log   *slog.Logger
	root  string
	out   string
	hook  func(ctx context.Context, stage string)

	mu      sync.Mutex
	running map[int64]*run // by run id: the runs whose job runs in this process
}

// run is a run whose job runs in this process.
type run struct {
	jobID    string
	progress *Progress
}

// New returns a Service over the store and the registry its runs' jobs run in.
func New(store *db.DB, reg *jobs.Registry, cfg Config) *Service {
	s := &Service{store: store, jobs: reg, log: cfg.Log, root: cfg.Root, out: cfg.Out, hook: cfg.StageHook, running: map[int64]*run{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.root == "" {
		s.root = CorpusDir(store.Path())
	}
	if s.out == "" {
		s.out = DedupDir(store.Path())
	}
	return s
}

// Root is the corpus root.
func (s *Service) Root() string { return s.root }

// OutDir is where run id writes its files.
func (s *Service) OutDir(id int64) string { return filepath.Join(s.out, strconv.FormatInt(id, 10)) }

// Run is a stored run.
type Run struct {
	ID               int64
	Source           string // where the settings came from: "manifest 3 (draft)", "sweep 2, configuration 5 at t=0.50"
	SourceManifestID int64  // 0 when the settings came from a sweep
	Settings         string // settings.json
	Corpus           string // relative to the corpus root
	State            State
	Error            string        // why it failed or stopped; "" otherwise
	Summary          *bulk.Summary // nil until done
	ManifestID       int64         // the draft manifest its removals became; 0 for none yet
	ImportNote       string        // why there is no manifest yet
	StartedBy        int64
	StartedName      string
	CreatedAt        time.Time
	StartedAt        time.Time // the last start or resume
	FinishedAt       time.Time // zero while running or interrupted
	// JobID is the job working on it in this process, "" when none is; Progress is
	// that job's last report (nil before the first).
	JobID    string
	Progress *Progress
}

// InProgress reports whether a job of this process works on the run: the pipeline
// runs, or its removals are being imported.
func (r Run) InProgress() bool {
	return r.JobID != "" && (r.State == Running || r.State == Done && r.ManifestID == 0 && r.ImportNote == "")
}

// Progress is what a running run reports: the pipeline's stage and how far it is, with
// the stage's rate and the time left at that rate. Stage is ImportStage while the
// removals are imported.
type Progress struct {
	Stage       string
	Index, Of   int // the stage's place (1-based) of the pipeline's stages
	Done, Total int64
	Unit        string
	Docs        int64
	Rate        float64 // Unit per second in this stage
	ETA         time.Duration
}

// ImportStage is Progress.Stage once the pipeline is done and its removals are
// imported.
const ImportStage = "import"

func runOf(j db.DedupJob) Run {
	r := Run{ID: j.ID, Source: j.Source, SourceManifestID: j.SourceManifestID, Settings: j.Settings, Corpus: j.Corpus,
		State: State(j.State), Error: j.Error, ManifestID: j.ManifestID, ImportNote: j.ImportNote, StartedBy: j.StartedBy,
		StartedName: j.StartedName, CreatedAt: j.CreatedAt, StartedAt: j.StartedAt, FinishedAt: j.FinishedAt}
	if r.State == Done {
		var sum bulk.Summary
		if json.Unmarshal([]byte(j.Summary), &sum) == nil {
			r.Summary = &sum
		}
	}
	return r
}

// Get returns a stored run, with its job and progress when one works on it here.
func (s *Service) Get(ctx context.Context, id int64) (Run, error) {
	j, err := s.store.DedupJob(ctx, id)
	if err != nil {
		return Run{}, err
	}
	r := runOf(j)
	s.mu.Lock()
	if rr, ok := s.running[id]; ok {
		r.JobID = rr.jobID
		if rr.progress != nil {
			p := *rr.progress
			r.Progress = &p
		}
	}
	s.mu.Unlock()
	return r, nil
}

// List returns every stored run, newest first.
func (s *Service) List(ctx context.Context) ([]Run, error) {
	list, err := s.store.DedupJobs(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Run, len(list))
	for i, j := range list {
		out[i] = runOf(j)
	}
	return out, nil
}

// CorpusFiles lists the corpus files under the root (relative, slash-separated,
// sorted), following no symlink out of it; a root that does not exist holds none.
func (s *Service) CorpusFiles() ([]string, error) {
	root, err := os.OpenRoot(s.root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list corpus files: %w", err)
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
		if _, err := s.Path(p); err == nil {
			out = append(out, p)
		}
		return nil
	})
	slices.Sort(out)
	if err != nil {
		return out, fmt.Errorf("list corpus files: %w", err)
	}
	return out, nil
}

// Path resolves rel, a corpus file's path relative to the root, to the file it names,
// refusing (*PathError) anything outside the root: an absolute path, "..", a symlink
// that leads out, something not a regular file or not a corpus file.
func (s *Service) Path(rel string) (string, error) {
	bad := func(msg string) error { return &PathError{Path: rel, Msg: msg} }
	if rel == "" {
		return "", &PathError{Msg: "choose a corpus file"}
	}
	if filepath.IsAbs(rel) || strings.Contains(rel, `\`) || !fs.ValidPath(rel) {
		return "", bad("not a path inside the corpus folder")
	}
	root, err := os.OpenRoot(s.root)
	if err != nil {
		return "", bad("the corpus folder " + s.root + " cannot be opened")
	}
	defer root.Close()
	st, err := root.Stat(rel) // os.Root refuses a symlink or ".." that escapes
	if err != nil {
		return "", bad("no such file in the corpus folder")
	}
	if !st.Mode().IsRegular() {
		return "", bad("not a file")
	}
	base, err := filepath.EvalSymlinks(s.root)
	if err != nil {
		return "", fmt.Errorf("corpus folder: %w", err)
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

// Datasets maps a source file's name to the newest ready dataset imported from it: the
// dataset a corpus file of that name was imported as.
func (s *Service) Datasets(ctx context.Context) (map[string]db.Dataset, error) {
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

// dataset is the dataset the corpus file rel was imported as; ok is false when there
// is none.
func (s *Service) dataset(ctx context.Context, rel string) (db.Dataset, bool, error) {
	byFile, err := s.Datasets(ctx)
	if err != nil {
		return db.Dataset{}, false, err
	}
	d, ok := byFile[filepath.Base(rel)]
	return d, ok, nil
}

// StartRequest is a new run.
type StartRequest struct {
	Source           string // where Settings come from, for people
	SourceManifestID int64  // the manifest they come from; 0 for a sweep result
	// Settings is the configuration the run takes; the run's record keeps it as
	// settings.json (internal/handoff), which a resume reads.
	Settings handoff.Settings
	Corpus   string // relative to the root
	By       db.User
}

// Start checks the corpus path, stores the run and starts its job. It returns the
// run's id, also when the run was stored but its job could not start (then the run
// is stored interrupted and can be resumed).
func (s *Service) Start(ctx context.Context, req StartRequest) (int64, error) {
	if _, err := s.Path(req.Corpus); err != nil {
		return 0, err
	}
	settings, err := req.Settings.JSON() // validates the parameters
	if err != nil {
		return 0, err
	}
	id, err := s.store.CreateDedupJob(ctx, db.DedupJob{Source: req.Source, SourceManifestID: req.SourceManifestID,
		Settings: string(settings), Corpus: req.Corpus}, req.By)
	if err != nil {
		return 0, err
	}
	return id, s.launch(id, req.By)
}

// Resume runs a cancelled, interrupted or failed run again, from its stage markers.
// Permissions are the caller's to check.
func (s *Service) Resume(ctx context.Context, id int64, by db.User) error {
	r, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	switch {
	case r.JobID != "" || r.State == Running:
		return ErrRunning
	case !r.State.Resumable():
		return ErrNotResumable
	}
	// The store changes the state only from a resumable one: of two resumes at once,
	// the second finds the run running (db.ErrStale).
	if err := s.store.ResumeDedupJob(ctx, id, by); err != nil {
		if errors.Is(err, db.ErrStale) {
			return ErrRunning
		}
		return err
	}
	return s.launch(id, by)
}

// Cancel stops a running run and waits (as long as ctx allows) for its job to end; its
// stage markers stay for a resume. Permissions are the caller's to check.
func (s *Service) Cancel(ctx context.Context, id int64) error {
	s.mu.Lock()
	r, ok := s.running[id]
	s.mu.Unlock()
	if !ok || r.jobID == "" {
		return ErrNotRunning
	}
	if err := s.jobs.Cancel(r.jobID, jobs.Caller{All: true}); err != nil && !errors.Is(err, jobs.ErrNotFound) {
		return err
	}
	s.jobs.Wait(ctx, r.jobID) // a cancelled run stops within a chunk
	return nil
}

// MarkInterrupted marks every run the store holds as running as interrupted: the
// process that ran them died. The server calls it at start, before any run starts; it
// returns how many it marked.
func (s *Service) MarkInterrupted(ctx context.Context) (int, error) {
	s.mu.Lock()
	mine := len(s.running)
	s.mu.Unlock()
	if mine > 0 {
		return 0, errors.New("mark interrupted whole-corpus runs: runs have started in this process")
	}
	return s.store.InterruptDedupJobs(ctx)
}

// Import imports the removals of a finished run without a manifest (once the corpus
// was imported as a dataset, or again after a refused import) and returns the run
// then: with the manifest, or with the note saying why there is none.
func (s *Service) Import(ctx context.Context, id int64, by db.User) (Run, error) {
	r, err := s.Get(ctx, id)
	if err != nil {
		return Run{}, err
	}
	if r.State != Done || r.ManifestID != 0 || r.InProgress() {
		return r, ErrNotImportable
	}
	if err := s.importRemovals(ctx, r, by); err != nil {
		return r, err
	}
	return s.Get(ctx, id)
}

// Output is a file a finished run wrote.
type Output struct {
	Name string
	Size int64
}

// Outputs lists the files of Files that run id has written.
func (s *Service) Outputs(id int64) []Output {
	var out []Output
	for _, f := range Files {
		if st, err := os.Stat(filepath.Join(s.OutDir(id), f)); err == nil && st.Mode().IsRegular() {
			out = append(out, Output{Name: f, Size: st.Size()})
		}
	}
	return out
}

// Open opens one of the Files of run id; db.ErrNotFound for a name not among them or a
// file the run has not written.
func (s *Service) Open(id int64, name string) (*os.File, error) {
	if !slices.Contains(Files, name) {
		return nil, fmt.Errorf("file %q of whole-corpus run %d: %w", name, id, db.ErrNotFound)
	}
	f, err := os.Open(filepath.Join(s.OutDir(id), name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("file %q of whole-corpus run %d: %w", name, id, db.ErrNotFound)
	}
	return f, err
}

// launch runs a stored run (new or resumed) as a background job.
func (s *Service) launch(id int64, by db.User) error {
	ctx := context.Background()
	j, err := s.store.DedupJob(ctx, id)
	if err != nil {
		return err
	}
	r := &run{}
	s.mu.Lock()
	s.running[id] = r // held from here, so a second launch or resume sees it running
	s.mu.Unlock()
	jobID, err := s.jobs.Start(JobKind, fmt.Sprintf("whole-corpus run %d: %s", id, j.Corpus), by.ID, func(ctx context.Context, report jobs.Reporter) (any, error) {
		defer s.forget(id)
		return nil, s.run(ctx, runOf(j), r, by, report)
	})
	if err != nil {
		s.forget(id)
		// Nothing ran: the stored run waits to be resumed.
		if ferr := s.store.FinishDedupJob(ctx, id, string(Interrupted), err.Error(), ""); ferr != nil {
			err = errors.Join(err, ferr)
		}
		return fmt.Errorf("start whole-corpus run %d: %w", id, err)
	}
	s.mu.Lock()
	r.jobID = jobID
	s.mu.Unlock()
	return nil
}

func (s *Service) forget(id int64) {
	s.mu.Lock()
	delete(s.running, id)
	s.mu.Unlock()
}

// run runs the pipeline, records how it ended and imports its removals.
func (s *Service) run(ctx context.Context, j Run, r *run, by db.User, report jobs.Reporter) error {
	store := context.WithoutCancel(ctx)
	finish := func(err error) error {
		state, msg := Failed, ""
		if err != nil {
			msg = err.Error()
		}
		switch {
		case jobs.CancelRequested(ctx):
			state, msg = Cancelled, "cancelled"
		case ctx.Err() != nil:
			state, msg = Interrupted, "the server stopped while it ran"
		}
		if ferr := s.store.FinishDedupJob(store, j.ID, string(state), msg, ""); ferr != nil {
			s.log.Error("whole-corpus run: record its end", "run", j.ID, "err", ferr)
		}
		return err
	}
	params, _, err := handoff.ParseSettings(strings.NewReader(j.Settings), "settings.json")
	if err != nil {
		return finish(err)
	}
	in, err := s.Path(j.Corpus)
	if err != nil {
		return finish(err)
	}
	ds, haveDS, err := s.dataset(store, j.Corpus)
	if err != nil {
		return finish(err)
	}
	name := filepath.Base(j.Corpus)
	if haveDS {
		name = ds.Name
	}
	setProgress := func(p Progress) {
		s.mu.Lock()
		r.progress = &p
		s.mu.Unlock()
		report(p)
	}
	var stage string
	var stageStart time.Time
	progress := func(p bulk.Progress) {
		now := time.Now()
		if p.Stage != stage {
			stage, stageStart = p.Stage, now
		}
		rp := Progress{Stage: p.Stage, Index: p.Index, Of: len(bulk.Stages), Done: p.Done, Total: p.Total, Unit: p.Unit, Docs: p.Docs}
		rp.Rate, rp.ETA = p.Speed(now.Sub(stageStart))
		setProgress(rp)
		if s.hook != nil {
			s.hook(ctx, p.Stage)
		}
	}
	sum, err := bulk.Run(ctx, bulk.Options{Params: params, In: in, Out: s.OutDir(j.ID), Dataset: name, Progress: progress,
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
	if err := s.store.FinishDedupJob(store, j.ID, string(Done), "", string(sj)); err != nil {
		return err
	}
	setProgress(Progress{Stage: ImportStage, Index: len(bulk.Stages), Of: len(bulk.Stages)})
	if err := s.importRemovals(store, j, by); err != nil {
		s.log.Error("whole-corpus run: import its removals", "run", j.ID, "err", err)
		return s.store.SetDedupJobManifest(store, j.ID, 0, "Importing the removals failed on an internal error, which has been logged: try again.")
	}
	return nil
}

// importRemovals imports a finished run's removals.jsonl as a draft manifest of the
// dataset the corpus was imported as, or notes why it cannot: no such dataset, no
// removals file, removals the import refuses (its message, when it is the person's to
// act on; a reference to the log otherwise).
func (s *Service) importRemovals(ctx context.Context, j Run, by db.User) error {
	ds, ok, err := s.dataset(ctx, j.Corpus)
	if err != nil {
		return err
	}
	if !ok {
		note := fmt.Sprintf("No dataset was imported from %s, so its removals cannot be reviewed yet: import the same file as a dataset (Import), then press “Import the removals for review”.", filepath.Base(j.Corpus))
		return s.store.SetDedupJobManifest(ctx, j.ID, 0, note)
	}
	f, err := os.Open(filepath.Join(s.OutDir(j.ID), bulk.RemovalsJSONL))
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
	// The default number of approvals, never lowered for want of approvers: the
	// manifest's page says whom to invite.
	req := manifests.ImportRequest{DatasetID: ds.ID, Format: results.Manifest, Sample: manifests.DefaultSample, Seed: 1, ApprovalsRequired: review.DefaultApprovals,
		OtherDataset: true, By: by, ByName: by.Name, File: results.Source{Name: fmt.Sprintf("dedup-job-%d-%s", j.ID, bulk.RemovalsJSONL), Reader: f, At: f, Size: st.Size()}}
	m, err := manifests.ImportResults(ctx, s.store, req, func(manifests.Progress) {})
	if err != nil {
		msg, ok := errkind.Message(err)
		if !ok && errors.Is(err, context.Canceled) {
			msg = err.Error()
		} else if !ok {
			ref := make([]byte, 8)
			rand.Read(ref)
			s.log.Error("import of a whole-corpus run failed", "run", j.ID, "corpus", j.Corpus, "err", err, "ref", hex.EncodeToString(ref))
			msg = "the import failed on an internal error (reference " + hex.EncodeToString(ref) + "), which has been logged; no manifest was made"
		}
		return s.store.SetDedupJobManifest(ctx, j.ID, 0, fmt.Sprintf("Importing the removals into %s v%d was refused: %s", ds.Name, ds.Version, msg))
	}
	return s.store.SetDedupJobManifest(ctx, j.ID, m.ID, "")
}
