package corpusrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/bulk"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/handoff"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// The service over a real store in t.TempDir(), a real job registry and the real
// pipeline, on a small generated corpus with near-duplicates.

type fixture struct {
	t     *testing.T
	store *db.DB
	reg   *jobs.Registry
	svc   *Service
	by    db.User
}

func newFixture(t *testing.T, cfg Config) *fixture {
	t.Helper()
	store := dbtest.Open(t)
	f := &fixture{t: t, store: store, reg: newJobs(t), by: db.User{ID: 0, Name: "cli"}}
	f.svc = New(store, f.reg, cfg)
	return f
}

// newJobs is a registry shut down before the store closes (cleanups run last first).
func newJobs(t *testing.T) *jobs.Registry {
	reg := jobs.NewRegistry(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := reg.Shutdown(ctx); err != nil {
			t.Errorf("jobs: %v", err)
		}
	})
	return reg
}

// corpusJSONL is n groups of three documents: a text and two copies with one word
// changed each, so a run at t=0.5 removes two of every three.
func corpusJSONL(n int) string {
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for g := range n {
		words := make([]string, 80)
		for i := range words {
			words[i] = fmt.Sprintf("w%d", rng.IntN(5000))
		}
		for c := range 3 {
			w := append([]string(nil), words...)
			if c > 0 {
				w[10*c] = "changed"
			}
			line, _ := json.Marshal(map[string]string{"id": fmt.Sprintf("d%d-%d", g, c), "text": strings.Join(w, " ")})
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// settings is the settings.json of a word-5 configuration at t=0.5.
func settings(t *testing.T) handoff.Settings {
	t.Helper()
	spec, err := lsh.ParseSpec("level=word size=5 k=128")
	if err != nil {
		t.Fatal(err)
	}
	p := review.Params{Spec: spec, Shape: lsh.Shape{Bands: 32, Rows: 4}, Threshold: 0.5, Verification: review.Exact,
		Policy: cluster.Components, Rule: cluster.Rule{By: []cluster.Criterion{cluster.Earliest}}}
	return handoff.Settings{Params: p}
}

// corpusFile writes a file under the service's corpus root.
func (f *fixture) corpusFile(rel, body string) string {
	f.t.Helper()
	path := filepath.Join(f.svc.Root(), filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return path
}

// wait waits until run id has ended: its job done (and with it any import).
func (f *fixture) wait(id int64) Run {
	f.t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		r, err := f.svc.Get(context.Background(), id)
		if err != nil {
			f.t.Fatal(err)
		}
		if r.JobID == "" && r.State != Running {
			return r
		}
	}
	f.t.Fatalf("run %d did not end in 2 minutes", id)
	return Run{}
}

// Paths are resolved inside the root only: every way out is a *PathError of kind
// Invalid naming the path, and the list of corpus files offers none of them.
func TestPathsStayInTheRoot(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Config{})
	if files, err := f.svc.CorpusFiles(); err != nil || len(files) != 0 {
		t.Fatalf("CorpusFiles() of a missing root = %v, %v; want none", files, err)
	}
	f.corpusFile("a.jsonl", corpusJSONL(1))
	f.corpusFile("sub/b.csv.gz", "not really gzip")
	f.corpusFile("notes.txt", "not a corpus")
	f.corpusFile(".hidden/c.jsonl", corpusJSONL(1))
	outside := filepath.Join(t.TempDir(), "secret.jsonl")
	if err := os.WriteFile(outside, []byte(corpusJSONL(1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.svc.Root(), "escape.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(f.svc.Root(), "sub", "out")); err != nil {
		t.Fatal(err)
	}
	files, err := f.svc.CorpusFiles()
	if err != nil || strings.Join(files, " ") != "a.jsonl sub/b.csv.gz" {
		t.Errorf("CorpusFiles() = %q, %v; want a.jsonl and sub/b.csv.gz", files, err)
	}
	for _, rel := range []string{"", "../runs.db", "/etc/passwd", outside, "escape.jsonl", "sub/out/secret.jsonl",
		"sub/../../runs.db", `sub\b.csv.gz`, "sub", "notes.txt", "missing.jsonl"} {
		_, err := f.svc.Path(rel)
		pe, ok := errors.AsType[*PathError](err)
		if !ok || pe.Path != rel || errkind.Of(err) != errkind.Invalid || !strings.HasPrefix(err.Error(), "corpus: ") {
			t.Errorf("Path(%q) = %v; want a *PathError of kind invalid naming it", rel, err)
		}
	}
	if p, err := f.svc.Path("sub/../a.jsonl"); err == nil {
		t.Errorf("Path(sub/../a.jsonl) = %s; want refused (not a clean path)", p)
	}
	if p, err := f.svc.Path("a.jsonl"); err != nil || filepath.Base(p) != "a.jsonl" {
		t.Errorf("Path(a.jsonl) = %s, %v", p, err)
	}
	// Start refuses the same paths, and stores nothing.
	if _, err := f.svc.Start(context.Background(), StartRequest{Source: "test", Settings: settings(t), Corpus: "escape.jsonl", By: f.by}); err == nil {
		t.Error("Start over a symlink out of the root succeeded")
	}
	if list, _ := f.svc.List(context.Background()); len(list) != 0 {
		t.Errorf("%d runs stored after a refused start", len(list))
	}
}

// Start takes the configuration typed and keeps it as the settings.json a resume reads:
// the file reads back as the same parameters and source. Parameters that do not
// validate are refused as invalid, and nothing is stored.
func TestStartKeepsSettings(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Config{})
	ctx := context.Background()
	f.corpusFile("dups.jsonl", corpusJSONL(5))
	want := settings(t)
	want.Source = handoff.Source{Sweep: 7, Config: 12, Dataset: review.Dataset{ID: 1, Name: "dups", Version: 2}}
	id, err := f.svc.Start(ctx, StartRequest{Source: "sweep 7", Settings: want, Corpus: "dups.jsonl", By: f.by})
	if err != nil {
		t.Fatal(err)
	}
	r := f.wait(id)
	body, err := want.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if r.Settings != string(body) {
		t.Errorf("stored settings:\n%s\nwant:\n%s", r.Settings, body)
	}
	p, desc, err := handoff.ParseSettings(strings.NewReader(r.Settings), "settings.json")
	if err != nil || !reflect.DeepEqual(p, want.Params) || desc.Source.Sweep != 7 || desc.Source.SweepConfig != 12 {
		t.Errorf("stored settings read back as %+v (source %+v), %v; want %+v from sweep 7 configuration 12", p, desc.Source, err, want.Params)
	}
	bad := settings(t)
	bad.Params.Threshold = 1.5
	if _, err := f.svc.Start(ctx, StartRequest{Source: "test", Settings: bad, Corpus: "dups.jsonl", By: f.by}); errkind.Of(err) != errkind.Invalid {
		t.Errorf("Start(threshold 1.5) = %v; want an invalid-input error", err)
	}
	if list, _ := f.svc.List(ctx); len(list) != 1 {
		t.Errorf("%d runs stored; want the first only", len(list))
	}
}

// A run held in its signatures stage is cancelled (Cancelled, resumable), resumes to
// the removals of a run never stopped, and imports them once the corpus is a dataset.
// The states are the service's: a second cancel, a resume of a finished run and an
// import of an imported one are refused with errors of kind Conflict.
func TestCancelResumeImport(t *testing.T) {
	t.Parallel()
	var held atomic.Bool
	f := newFixture(t, Config{StageHook: func(ctx context.Context, stage string) {
		if stage == bulk.StageSignatures && held.CompareAndSwap(false, true) {
			<-ctx.Done()
		}
	}})
	ctx := context.Background()
	path := f.corpusFile("dups.jsonl", corpusJSONL(20))
	id, err := f.svc.Start(ctx, StartRequest{Source: "test", Settings: settings(t), Corpus: "dups.jsonl", By: f.by})
	if err != nil {
		t.Fatal(err)
	}
	var r Run
	for deadline := time.Now().Add(time.Minute); !held.Load() && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
	}
	if r, _ = f.svc.Get(ctx, id); !r.InProgress() || r.State != Running || r.Progress == nil || r.Progress.Stage != bulk.StageSignatures {
		t.Fatalf("held run: %+v; want running in its signatures stage with progress", r)
	}
	if err := f.svc.Resume(ctx, id, f.by); !errors.Is(err, ErrRunning) || errkind.Of(err) != errkind.Conflict {
		t.Errorf("Resume(running) = %v; want ErrRunning, a conflict", err)
	}
	if err := f.svc.Cancel(ctx, id); err != nil {
		t.Fatalf("Cancel() = %v", err)
	}
	if r, _ = f.svc.Get(ctx, id); r.State != Cancelled || !r.State.Resumable() || r.JobID != "" || r.InProgress() {
		t.Fatalf("after Cancel: %+v; want cancelled, resumable, no job", r)
	}
	if err := f.svc.Cancel(ctx, id); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Cancel(cancelled) = %v; want ErrNotRunning", err)
	}
	if err := f.svc.Resume(ctx, id, f.by); err != nil {
		t.Fatalf("Resume() = %v", err)
	}
	r = f.wait(id)
	if r.State != Done || r.Summary == nil || r.Summary.Removed != 40 || r.ManifestID != 0 || !strings.Contains(r.ImportNote, "No dataset was imported from dups.jsonl") {
		t.Fatalf("resumed run: %s, summary %+v, manifest %d, note %q; want done, 40 removals, no dataset", r.State, r.Summary, r.ManifestID, r.ImportNote)
	}
	if err := f.svc.Resume(ctx, id, f.by); !errors.Is(err, ErrNotResumable) {
		t.Errorf("Resume(done) = %v; want ErrNotResumable", err)
	}

	// The same corpus never stopped: the same removals, byte for byte.
	id2, err := f.svc.Start(ctx, StartRequest{Source: "test", Settings: settings(t), Corpus: "dups.jsonl", By: f.by})
	if err != nil {
		t.Fatal(err)
	}
	if r2 := f.wait(id2); r2.State != Done {
		t.Fatalf("second run: %s %s", r2.State, r2.Error)
	}
	for _, name := range []string{bulk.RemovalsCSV, bulk.ClustersJSONL} {
		a, err1 := os.ReadFile(filepath.Join(f.svc.OutDir(id), name))
		b, err2 := os.ReadFile(filepath.Join(f.svc.OutDir(id2), name))
		if err1 != nil || err2 != nil || len(a) == 0 || string(a) != string(b) {
			t.Errorf("%s of the resumed run differs from the uninterrupted run's (%v %v, %d vs %d bytes)", name, err1, err2, len(a), len(b))
		}
	}
	if outs := f.svc.Outputs(id); len(outs) < 4 || outs[0].Name != bulk.SummaryJSON || outs[0].Size == 0 {
		t.Errorf("Outputs() = %+v; want the run's files with their sizes", outs)
	}
	for _, name := range []string{"signatures.bin", "../runs.db", bulk.RemovalsCSV + "x"} {
		if _, err := f.svc.Open(id, name); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("Open(%q) = %v; want not found", name, err)
		}
	}
	if file, err := f.svc.Open(id, bulk.RemovalsCSV); err != nil {
		t.Errorf("Open(removals.csv) = %v", err)
	} else {
		file.Close()
	}

	// Once the corpus is a dataset, Import makes the draft manifest, once.
	if _, err := ingest.File(ctx, f.store, path, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	r, err = f.svc.Import(ctx, id, f.by)
	if err != nil || r.ManifestID == 0 || r.ImportNote != "" {
		t.Fatalf("Import() = manifest %d, note %q, %v; want a manifest", r.ManifestID, r.ImportNote, err)
	}
	m, err := f.store.Manifest(ctx, r.ManifestID)
	if err != nil || m.Origin == nil || m.Origin.Removals != 40 {
		t.Errorf("imported manifest: %+v, %v; want 40 removals", m.Origin, err)
	}
	if _, err := f.svc.Import(ctx, id, f.by); !errors.Is(err, ErrNotImportable) {
		t.Errorf("Import() again = %v; want ErrNotImportable", err)
	}
}

// A run the store holds as running when a process starts was left by one that died:
// MarkInterrupted makes it Interrupted (with why), once, and it resumes.
func TestMarkInterruptedThenResume(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Config{})
	ctx := context.Background()
	f.corpusFile("dups.jsonl", corpusJSONL(5))
	body, err := settings(t).JSON()
	if err != nil {
		t.Fatal(err)
	}
	id, err := f.store.CreateDedupJob(ctx, db.DedupJob{Source: "test", Settings: string(body), Corpus: "dups.jsonl"}, f.by)
	if err != nil {
		t.Fatal(err)
	}
	fresh := New(f.store, f.reg, Config{Root: f.svc.Root()})
	if n, err := fresh.MarkInterrupted(ctx); err != nil || n != 1 {
		t.Fatalf("MarkInterrupted() = %d, %v; want 1", n, err)
	}
	if n, err := fresh.MarkInterrupted(ctx); err != nil || n != 0 {
		t.Errorf("MarkInterrupted() again = %d, %v; want 0", n, err)
	}
	r, err := fresh.Get(ctx, id)
	if err != nil || r.State != Interrupted || !r.State.Resumable() || r.Error != "the server stopped while it ran" {
		t.Fatalf("after MarkInterrupted: %+v, %v", r, err)
	}
	if err := fresh.Resume(ctx, id, f.by); err != nil {
		t.Fatal(err)
	}
	f.svc = fresh
	if r := f.wait(id); r.State != Done || r.Summary == nil || r.Summary.Removed != 10 {
		t.Errorf("resumed run: %s %q %+v; want done with 10 removals", r.State, r.Error, r.Summary)
	}
	if _, err := fresh.MarkInterrupted(ctx); err != nil {
		t.Errorf("MarkInterrupted() after a run ended = %v", err)
	}
}

// A run whose corpus the pipeline refuses (two documents with one id) fails, naming the
// file and line, and can be resumed once the file is fixed.
func TestFailedRunNamesTheLine(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Config{})
	ctx := context.Background()
	good := corpusJSONL(3)
	f.corpusFile("dups.jsonl", good+`{"id": "d0-0", "text": "again"}`+"\n")
	id, err := f.svc.Start(ctx, StartRequest{Source: "test", Settings: settings(t), Corpus: "dups.jsonl", By: f.by})
	if err != nil {
		t.Fatal(err)
	}
	r := f.wait(id)
	if r.State != Failed || !r.State.Resumable() || !strings.Contains(r.Error, "dups.jsonl:10") || !strings.Contains(r.Error, `duplicate id "d0-0"`) {
		t.Fatalf("run over a duplicate id: %s %q; want failed naming dups.jsonl:10 and the id", r.State, r.Error)
	}
	f.corpusFile("dups.jsonl", good)
	if err := f.svc.Resume(ctx, id, f.by); err != nil {
		t.Fatal(err)
	}
	if r := f.wait(id); r.State != Done {
		t.Errorf("resumed after the fix: %s %q", r.State, r.Error)
	}
}
