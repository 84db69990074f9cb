package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/corpusrun"
	"github.com/dedupstudio/dedupstudio/internal/db"
)

// Whole-corpus runs from the UI, through the real router over a real SQLite file.

// waitDedupRow waits until run id has ended (and, when done, its import has too).
func (f *fixture) waitDedupRow(id int64) db.DedupJob {
	f.t.Helper()
	for deadline := time.Now().Add(120 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		j, err := f.store.DedupJob(context.Background(), id)
		if err != nil {
			f.t.Fatal(err)
		}
		if j.State != "running" && (j.State != "done" || j.ManifestID != 0 || j.ImportNote != "") {
			return j
		}
	}
	f.t.Fatalf("whole-corpus run %d did not end in 2 minutes", id)
	return db.DedupJob{}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// From a manifest's page: the empty state names the folder; paths outside it are
// refused; the run ends in a draft manifest of the dataset the corpus was imported as,
// with its summary.json and removals.csv to download.
func TestDedupJobFromAManifest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 8<<20)
	run := f.withRun(chainRun)
	reviewer := f.signIn("reviewer")
	root := corpusrun.CorpusDir(f.store.Path())
	newPath := "/manifests/" + itoa64(run.ID) + "/dedup-jobs/new"

	_, page := get(t, f.h, "/manifests/"+itoa64(run.ID), reviewer)
	if !strings.Contains(page, `href="`+newPath+`" data-testid="dedup-run"`) {
		t.Error("the manifest page does not link the whole-corpus run")
	}
	res, body := get(t, f.h, newPath, reviewer)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `data-testid="dedup-no-corpora"`) || !strings.Contains(body, root) {
		t.Fatalf("empty state: %d\n%s", res.StatusCode, body)
	}

	// The corpus: the very file the dataset was imported from, under the root. Beside
	// it, ways out of the root.
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "chain.jsonl"), []byte(chainDocs(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.jsonl")
	if err := os.WriteFile(outside, []byte(`{"id":"s","text":"outside the root"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "escape.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(root, "sub", "out")); err != nil {
		t.Fatal(err)
	}
	_, body = get(t, f.h, newPath, reviewer)
	if !strings.Contains(body, `<option value="chain.jsonl">chain.jsonl (imported as chain v1)</option>`) {
		t.Errorf("form does not offer chain.jsonl with its dataset\n%s", body)
	}
	if strings.Contains(body, "escape.jsonl") || strings.Contains(body, "secret.jsonl") {
		t.Error("form offers a file outside the root")
	}
	for _, bad := range []string{"../web.db", "/etc/passwd", outside, "escape.jsonl", "sub/out/secret.jsonl", "sub/../../web.db",
		"sub/../chain.jsonl", "", "sub"} {
		rec := f.do("POST", "/manifests/"+itoa64(run.ID)+"/dedup-jobs", reviewer, url.Values{"corpus": {bad}})
		if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), newPath) {
			t.Errorf("corpus %q: %d %s; want sent back to the form", bad, rec.Code, rec.Header().Get("Location"))
			continue
		}
		if _, body := f.follow(rec, reviewer); !strings.Contains(body, "corpus: ") {
			t.Errorf("corpus %q: the form does not say what was wrong", bad)
		}
	}
	if list, _ := f.store.DedupJobs(context.Background()); len(list) != 0 {
		t.Fatalf("%d runs stored after refused paths", len(list))
	}
	// An annotator may not start one.
	if rec := f.do("POST", "/manifests/"+itoa64(run.ID)+"/dedup-jobs", f.signIn("annotator"), url.Values{"corpus": {"chain.jsonl"}}); rec.Code != http.StatusForbidden {
		t.Errorf("annotator starts a run: %d", rec.Code)
	}

	rec := f.do("POST", "/manifests/"+itoa64(run.ID)+"/dedup-jobs", reviewer, url.Values{"corpus": {"chain.jsonl"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/dedup-jobs/1" {
		t.Fatalf("start: %d %s\n%s", rec.Code, rec.Header().Get("Location"), rec.Body.String())
	}
	j := f.waitDedupRow(1)
	if j.State != "done" || j.ManifestID == 0 {
		t.Fatalf("run ended %s, manifest %d: %s %s", j.State, j.ManifestID, j.Error, j.ImportNote)
	}
	_, body = get(t, f.h, "/dedup-jobs/1", reviewer)
	for _, w := range []string{`data-state="done"`, `href="/manifests/` + itoa64(j.ManifestID) + `" data-testid="dedup-manifest"`,
		`href="/dedup-jobs/1/files/summary.json"`, `href="/dedup-jobs/1/files/removals.csv"`, "documents proposed for removal"} {
		if !strings.Contains(body, w) {
			t.Errorf("run page lacks %s\n%s", w, body)
		}
	}
	m, err := f.store.Manifest(context.Background(), j.ManifestID)
	if err != nil {
		t.Fatal(err)
	}
	if m.DatasetID != run.DatasetID || m.Origin == nil || m.Origin.Format != "manifest" || m.Origin.Removals == 0 {
		t.Errorf("imported manifest: dataset %d origin %+v; want dataset %d, format manifest, removals", m.DatasetID, m.Origin, run.DatasetID)
	}
	res, csv := get(t, f.h, "/dedup-jobs/1/files/removals.csv", reviewer)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(csv, "manifest,dataset,dataset_version,ext_id,keeper_ext_id") ||
		res.Header.Get("Content-Disposition") != `attachment; filename="dedup-job-1-removals.csv"` {
		t.Errorf("removals.csv: %d %q\n%s", res.StatusCode, res.Header.Get("Content-Disposition"), csv)
	}
	if res, js := get(t, f.h, "/dedup-jobs/1/files/summary.json", reviewer); res.StatusCode != http.StatusOK || !strings.Contains(js, `"format": "dedupstudio-bulk/1"`) {
		t.Errorf("summary.json: %d\n%s", res.StatusCode, js)
	}
	for _, p := range []string{"/dedup-jobs/1/files/..%2f..%2fweb.db", "/dedup-jobs/1/files/signatures.bin", "/dedup-jobs/9"} {
		if res, _ := get(t, f.h, p, reviewer); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d; want 404", p, res.StatusCode)
		}
	}
	if _, list := get(t, f.h, "/dedup-jobs", reviewer); !strings.Contains(list, `<a href="/dedup-jobs/1">1</a>`) {
		t.Error("the list of runs lacks run 1")
	}
}

// A run cancelled in its signatures stage resumes to the same removals as a run never
// stopped; with no dataset of the corpus the page says what to do, and once the corpus
// is imported, the removals are. A restart marks a running run interrupted, and it
// resumes too.
func TestDedupJobCancelledResumedInterrupted(t *testing.T) {
	t.Parallel()
	// The first run is held in its signatures stage until it is cancelled, so the cancel
	// lands mid-run however fast the machine is.
	var held atomic.Bool
	f := newFixtureWith(t, func(d *Deps) {
		d.CorpusRuns = corpusrun.New(d.Store, d.Jobs, corpusrun.Config{StageHook: func(ctx context.Context, stage string) {
			if stage == "signatures" && held.CompareAndSwap(false, true) {
				<-ctx.Done()
			}
		}})
	})
	run := f.withRun(chainRun)
	reviewer := f.signIn("reviewer")
	root := corpusrun.CorpusDir(f.store.Path())
	copyFile(t, "../internal/lsh/testdata/corpus5000.jsonl.gz", filepath.Join(root, "big", "c5000.jsonl.gz"))
	start := "/manifests/" + itoa64(run.ID) + "/dedup-jobs"

	rec := f.do("POST", start, reviewer, url.Values{"corpus": {"big/c5000.jsonl.gz"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("start: %d\n%s", rec.Code, rec.Body.String())
	}
	loc := rec.Header().Get("Location")
	progress := regexp.MustCompile(`stage [1-5] of 7: [a-z]+`)
	var page string
	for deadline := time.Now().Add(60 * time.Second); !progress.MatchString(page) && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		_, page = get(t, f.h, loc, reviewer)
	}
	if !progress.MatchString(page) || !strings.Contains(page, `data-testid="dedup-cancel"`) || !strings.Contains(page, `http-equiv="refresh"`) {
		t.Fatalf("no progress on the run's page:\n%s", page)
	}
	// An approver (no runs of its own) may not watch or cancel.
	if rec := f.do("POST", loc+"/cancel", f.signIn("approver"), nil); rec.Code != http.StatusForbidden {
		t.Errorf("approver cancels: %d", rec.Code)
	}
	_, page = f.follow(f.do("POST", loc+"/cancel", reviewer, nil), reviewer)
	if !held.Load() {
		t.Fatal("the run was never held in its signatures stage")
	}
	if !strings.Contains(page, `data-state="cancelled"`) || !strings.Contains(page, `data-testid="dedup-resume"`) {
		t.Fatalf("after cancel:\n%s", page)
	}
	rec = f.do("POST", loc+"/resume", reviewer, nil)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("resume: %d\n%s", rec.Code, rec.Body.String())
	}
	j := f.waitDedupRow(1)
	if j.State != "done" || j.ManifestID != 0 || !strings.Contains(j.ImportNote, "No dataset was imported from c5000.jsonl.gz") {
		t.Fatalf("resumed run: %s %q %q", j.State, j.Error, j.ImportNote)
	}
	_, page = get(t, f.h, loc, reviewer)
	if !strings.Contains(page, `data-testid="dedup-import-note"`) || !strings.Contains(page, `data-testid="dedup-import"`) {
		t.Errorf("run page does not say what to do without a dataset:\n%s", page)
	}

	// The same corpus, never stopped: the same removals, byte for byte.
	if rec := f.do("POST", start, reviewer, url.Values{"corpus": {"big/c5000.jsonl.gz"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("second start: %d", rec.Code)
	}
	if j := f.waitDedupRow(2); j.State != "done" {
		t.Fatalf("uninterrupted run: %s %s", j.State, j.Error)
	}
	for _, name := range []string{"removals.csv", "clusters.jsonl"} {
		a, err1 := os.ReadFile(filepath.Join(corpusrun.DedupDir(f.store.Path()), "1", name))
		b, err2 := os.ReadFile(filepath.Join(corpusrun.DedupDir(f.store.Path()), "2", name))
		if err1 != nil || err2 != nil || len(a) == 0 || string(a) != string(b) {
			t.Errorf("%s of the resumed run differs from the uninterrupted run's (%v %v, %d vs %d bytes)", name, err1, err2, len(a), len(b))
		}
	}

	// A restart: a row left running by a dead process is interrupted, and resumes.
	id, err := f.store.CreateDedupJob(context.Background(), db.DedupJob{Source: "manifest 1", Settings: mustSettings(t, f, run.ID), Corpus: "chain.jsonl"},
		db.User{ID: 0, Name: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	// A new process: its services are built afresh, and the server marks what the dead
	// one left running before it serves (cmd/server's serveUntil).
	d := testDeps(f.store, newJobs(t))
	if n, err := d.CorpusRuns.MarkInterrupted(context.Background()); err != nil || n != 1 {
		t.Fatalf("MarkInterrupted() = %d, %v; want 1", n, err)
	}
	h2 := New(d)
	_, page = get(t, h2, "/dedup-jobs/"+itoa64(id), f.admin)
	if !strings.Contains(page, `data-state="interrupted"`) || !strings.Contains(page, "the server stopped while it ran") ||
		!strings.Contains(page, `data-testid="dedup-resume"`) {
		t.Fatalf("after a restart:\n%s", page)
	}
	if err := os.WriteFile(filepath.Join(root, "chain.jsonl"), []byte(chainDocs(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	f.h = h2
	if rec := f.do("POST", "/dedup-jobs/"+itoa64(id)+"/resume", f.admin, nil); rec.Code != http.StatusSeeOther {
		t.Fatalf("resume after restart: %d\n%s", rec.Code, rec.Body.String())
	}
	if j := f.waitDedupRow(id); j.State != "done" || j.ManifestID == 0 {
		t.Errorf("run resumed after a restart: %s %q %q", j.State, j.Error, j.ImportNote)
	}
}

func mustSettings(t *testing.T, f *fixture, manifest int64) string {
	t.Helper()
	res, body := get(t, f.h, "/manifests/"+itoa64(manifest)+"/settings.json", f.admin)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("settings.json: %d", res.StatusCode)
	}
	return body
}

// From a sweep result (chosen on the list of runs): the form carries the configuration at the slider's
// threshold; the run has no dataset of its corpus until one is imported from the same
// file, and then "Import the removals for review" makes the manifest.
func TestDedupJobFromASweepResult(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 8<<20)
	c := newSweepCorpus(3)
	cid := f.withSweepCorpus(c)
	id := f.startSweep(cid, smallGridForm("small"))
	results, err := f.sweeps.Results(context.Background(), id)
	if err != nil || len(results) == 0 {
		t.Fatalf("results: %d, %v", len(results), err)
	}
	last := results[len(results)-1]
	q := "?config=" + itoa64(int64(last.Ordinal)) + "&t=0.5"
	newPath := "/sweeps/" + itoa64(id) + "/dedup-jobs/new" + q
	if _, list := get(t, f.h, "/dedup-jobs", f.admin); !strings.Contains(list, `data-testid="dedup-from-sweep"`) ||
		!strings.Contains(list, `<option value="`+itoa64(id)+`">`+itoa64(id)+`: small (done)</option>`) {
		t.Errorf("the list of runs offers no sweep result\n%s", list)
	}
	rec := f.do("GET", "/dedup-jobs/from-sweep?sweep="+itoa64(id)+"&config="+itoa64(int64(last.Ordinal))+"&t=0.5", f.admin, nil)
	if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || loc != newPath {
		t.Errorf("from-sweep: %d %s; want %s", rec.Code, loc, newPath)
	}
	f.corpusFile("fresh.jsonl", c.jsonl())
	res, body := get(t, f.h, newPath, f.admin)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "sweep "+itoa64(id)+", configuration "+itoa64(int64(last.Ordinal))+" at t=0.50") ||
		!strings.Contains(body, `<option value="fresh.jsonl">fresh.jsonl</option>`) {
		t.Fatalf("form: %d\n%s", res.StatusCode, body)
	}
	rec = f.do("POST", "/sweeps/"+itoa64(id)+"/dedup-jobs"+q, f.admin, url.Values{"corpus": {"fresh.jsonl"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("start: %d\n%s", rec.Code, rec.Body.String())
	}
	j := f.waitDedupRow(1)
	if j.State != "done" || j.ManifestID != 0 || !strings.Contains(j.ImportNote, "import the same file as a dataset") {
		t.Fatalf("run: %s %q %q", j.State, j.Error, j.ImportNote)
	}
	var sum struct{ Removed int }
	if err := json.Unmarshal([]byte(j.Summary), &sum); err != nil || sum.Removed == 0 {
		t.Fatalf("summary %s: %v; want removals at t=0.5", j.Summary, err)
	}
	if _, body := f.waitJob(f.upload("/datasets", "fresh.jsonl", c.jsonl(), nil).Header().Get("Location")); !strings.Contains(body, "import-done") {
		t.Fatalf("import failed:\n%s", body)
	}
	_, body = f.follow(f.do("POST", "/dedup-jobs/1/import", f.admin, nil), f.admin)
	j, _ = f.store.DedupJob(context.Background(), 1)
	if j.ManifestID == 0 || !strings.Contains(body, "Imported as manifest") || !strings.Contains(body, `data-testid="dedup-manifest"`) {
		t.Fatalf("import after the dataset: manifest %d\n%s", j.ManifestID, body)
	}
}

// The whole-corpus run form carries a one-time token: the same form sent several times
// at once (a double click, a replayed POST) starts one run over the whole corpus, and
// every other post is sent to it.
func TestDedupJobFormSentTwice(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 8<<20)
	run := f.withRun(chainRun)
	reviewer := f.signIn("reviewer")
	f.corpusFile("chain.jsonl", chainDocs(t))
	_, body := get(t, f.h, "/manifests/"+itoa64(run.ID)+"/dedup-jobs/new", reviewer)
	m := regexp.MustCompile(`name="token" value="([0-9a-f]{32})"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("the whole-corpus run form has no one-time token\n%s", body)
	}
	form := url.Values{"corpus": {"chain.jsonl"}, "token": {m[1]}}
	const posts = 4
	codes := make([]int, posts)
	locs := make([]string, posts)
	done := make(chan int)
	for i := range posts {
		go func() {
			rec := f.do("POST", "/manifests/"+itoa64(run.ID)+"/dedup-jobs", reviewer, form)
			codes[i], locs[i] = rec.Code, strings.Split(rec.Header().Get("Location"), "?")[0]
			done <- i
		}()
	}
	for range posts {
		<-done
	}
	list, err := f.store.DedupJobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range list {
		f.waitDedupRow(j.ID)
	}
	if len(list) != 1 {
		t.Fatalf("%d whole-corpus runs started by one form sent %d times; want 1", len(list), posts)
	}
	want := "/dedup-jobs/" + itoa64(list[0].ID)
	for i := range posts {
		if codes[i] != http.StatusSeeOther || locs[i] != want {
			t.Errorf("post %d: %d to %s; want 303 to %s", i, codes[i], locs[i], want)
		}
	}
}

// corpusFile writes a corpus file under the server's corpus folder (CorpusDir), where the
// whole-corpus run form lists it.
func (f *fixture) corpusFile(name, body string) {
	f.t.Helper()
	root := corpusrun.CorpusDir(f.store.Path())
	if err := os.MkdirAll(root, 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
		f.t.Fatal(err)
	}
}
