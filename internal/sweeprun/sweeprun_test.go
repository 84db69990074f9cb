package sweeprun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/demo"
	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// The demo store is built once (import of 2,136 documents and 826 labeled pairs, as on
// a server's first start) and copied for each test.
var (
	demoOnce sync.Once
	demoPath string
	demoErr  error
)

func demoTemplate() (string, error) {
	demoOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sweeprun-demo-")
		if err != nil {
			demoErr = err
			return
		}
		demoPath = filepath.Join(dir, "demo.db")
		ctx := context.Background()
		store, err := db.Open(ctx, demoPath)
		if err != nil {
			demoErr = err
			return
		}
		if _, _, err := demo.Load(ctx, store); err != nil {
			demoErr = err
		}
		if err := store.Close(); err != nil && demoErr == nil {
			demoErr = err
		}
	})
	return demoPath, demoErr
}

func TestMain(m *testing.M) {
	code := m.Run()
	if demoPath != "" {
		os.RemoveAll(filepath.Dir(demoPath))
	}
	os.Exit(code)
}

// env is a Service over a copy of the demo store.
type env struct {
	t        testing.TB
	store    *db.DB
	svc      *Service
	reg      *jobs.Registry
	campaign db.Campaign
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return openEnv(t, demoCopy(t))
}

// demoCopy copies the demo store into the test's temporary folder and returns its path,
// for a test that opens the store again (as a new process would).
func demoCopy(t testing.TB) string {
	t.Helper()
	src, err := demoTemplate()
	if err != nil {
		t.Fatalf("demo store: %v", err)
	}
	path := filepath.Join(t.TempDir(), "studio.db")
	copyFile(t, src, path)
	return path
}

func openEnv(t testing.TB, path string) *env {
	t.Helper()
	store, svc, reg := openService(t, path)
	cs, err := store.Campaigns(context.Background())
	if err != nil || len(cs) != 1 {
		t.Fatalf("Campaigns() = %d campaigns, %v; want the demo's one", len(cs), err)
	}
	return &env{t: t, store: store, svc: svc, reg: reg, campaign: cs[0]}
}

// openService opens the store at path (made when missing) and a Service over it, both
// closed when the test ends.
func openService(t testing.TB, path string) (*db.DB, *Service, *jobs.Registry) {
	t.Helper()
	ctx := context.Background()
	store, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	reg := jobs.NewRegistry(ctx)
	t.Cleanup(func() {
		reg.Shutdown(ctx)
		store.Close()
	})
	return store, New(store, sigcache.New(store), reg), reg
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
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

// smallGrid is 72 configurations over two representations at two k (prefix sharing),
// three shapes, three thresholds and both verifications; with -short (CI's race run) 36,
// at k=64 alone.
func smallGrid() sweep.Grid {
	ks := []int{64, 128}
	if testing.Short() {
		ks = ks[:1]
	}
	return sweep.Grid{
		Specs:         sweep.Representations(lsh.DefaultSpec(), []int{3, 5}, nil, ks),
		Shapes:        []lsh.Shape{{Bands: 16, Rows: 4}, {Bands: 8, Rows: 8}, {Bands: 20, Rows: 3}},
		Thresholds:    []float64{0.5, 0.7, 0.9},
		Verifications: []sweep.Verification{sweep.MinHashEstimate, sweep.ExactJaccard},
		Policies:      []cluster.Policy{cluster.Components},
	}
}

func (e *env) run(req StartRequest) Sweep {
	e.t.Helper()
	ctx := context.Background()
	sw, err := e.svc.Start(ctx, req)
	if err != nil {
		e.t.Fatalf("Start: %v", err)
	}
	if sw, err = e.svc.Wait(ctx, sw.ID); err != nil {
		e.t.Fatalf("Wait: %v", err)
	}
	return sw
}

// runSmall runs a sweep named name of smallGrid's first representation and first
// verification alone: enough for the tests of labels and snapshots.
func (e *env) runSmall(name string) Sweep {
	e.t.Helper()
	grid := smallGrid()
	grid.Specs = grid.Specs[:1]
	grid.Verifications = grid.Verifications[:1]
	return e.run(StartRequest{CampaignID: e.campaign.ID, Name: name, Grid: grid})
}

// onFirstFlush makes svc flush every five configurations and call fn, once, with the
// sweep of the first flush, in its job.
func onFirstFlush(svc *Service, fn func(id int64)) {
	var once sync.Once
	svc.flushEvery = 5
	svc.afterFlush = func(id int64, done int) {
		once.Do(func() { fn(id) })
	}
}

// holdFirstFlush makes svc's next job stop after its first flush: the job's sweep id
// is sent on reached, and the job goes on once release is closed.
func holdFirstFlush(svc *Service) (reached chan int64, release chan struct{}) {
	reached, release = make(chan int64), make(chan struct{})
	onFirstFlush(svc, func(id int64) {
		reached <- id
		<-release
	})
	return reached, release
}

// sameResults checks got has the results of want, figure for figure (timings aside);
// what says whose results got are.
func sameResults(t testing.TB, what string, got, want []Result) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d results; want %d", what, len(got), len(want))
	}
	for i := range want {
		if g, w := figures(t, got[i].Result), figures(t, want[i].Result); g != w {
			t.Errorf("%s: result %d differs:\n%s\n%s", what, i, g, w)
		}
	}
}

// figures is a result without its timings, as JSON: what must not depend on how the
// sweep was run.
func figures(t testing.TB, r sweep.Result) string {
	t.Helper()
	r.CandidateTime, r.ScoreTime = 0, 0
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (e *env) results(id int64) []Result {
	e.t.Helper()
	rs, err := e.svc.Results(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return rs
}

// checkConsistent checks what the store says of a sweep agrees with itself.
func (e *env) checkConsistent(sw Sweep) {
	e.t.Helper()
	rs := e.results(sw.ID)
	if sw.Done != len(rs) {
		e.t.Errorf("sweep %d: configs_done %d, %d results stored", sw.ID, sw.Done, len(rs))
	}
	configs, err := sw.Grid.Configs()
	if err != nil {
		e.t.Fatal(err)
	}
	if sw.Total != len(configs) {
		e.t.Errorf("sweep %d: configs_total %d; the grid has %d", sw.ID, sw.Total, len(configs))
	}
	for _, r := range rs {
		if r.Ordinal < 0 || r.Ordinal >= len(configs) || configs[r.Ordinal] != r.Config {
			e.t.Errorf("sweep %d: result %d at ordinal %d is %v; the grid has another configuration there", sw.ID, r.ID, r.Ordinal, r.Config)
		}
	}
	if ok, err := e.store.IntegrityCheck(context.Background()); err != nil || !ok {
		e.t.Errorf("IntegrityCheck() = %v, %v", ok, err)
	}
}

func TestDemoSweepEstimatesOverTheDataset(t *testing.T) {
	e := newEnv(t)
	sw := e.run(StartRequest{CampaignID: e.campaign.ID, Name: "first", Notes: "demo", Grid: smallGrid(), By: 0})
	if sw.State != Done || sw.Error != "" {
		t.Fatalf("sweep state %s (%q); want done", sw.State, sw.Error)
	}
	e.checkConsistent(sw)
	if configs, _ := smallGrid().Configs(); sw.Done != len(configs) || sw.Total != len(configs) {
		t.Errorf("Done/Total = %d/%d; want %d/%d", sw.Done, sw.Total, len(configs), len(configs))
	}
	if sw.Summary == nil {
		t.Fatal("no summary stored")
	}
	m := sw.Summary.Model
	if m == nil || m.Basis != "design "+demo.Design || m.Pairs == 0 || len(m.Bins) == 0 {
		t.Fatalf("Model = %+v; want the demo's design %s with its pairs", m, demo.Design)
	}
	if sw.Summary.Labels.Counted != m.Pairs+m.Unused {
		t.Errorf("counted %d pairs; the model uses %d and %d count on the labeled basis", sw.Summary.Labels.Counted, m.Pairs, m.Unused)
	}
	if sw.Summary.Baseline == nil {
		t.Error("no exact-hash baseline")
	}
	for _, r := range e.results(sw.ID) {
		if r.Dataset == nil || r.Headline().Basis != sweep.DatasetBasis {
			t.Fatalf("result %v has no dataset estimate", r.Config)
		}
	}
	if sw.LabelVersion == "" || sw.LabelVersion != sw.Summary.Labels.Version {
		t.Errorf("LabelVersion %q, summary's %q", sw.LabelVersion, sw.Summary.Labels.Version)
	}
	list, err := e.svc.List(context.Background(), e.campaign.ID)
	if err != nil || len(list) != 1 || list[0].ID != sw.ID || list[0].Notes != "demo" {
		t.Errorf("List() = %+v, %v; want the sweep", list, err)
	}
}

// TestCancelResume cancels a sweep after its first stored results and checks the store
// is consistent, then resumes it and checks it ends with the results of a sweep that was
// never interrupted.
func TestCancelResume(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	whole := e.run(StartRequest{CampaignID: e.campaign.ID, Grid: smallGrid()})
	want := e.results(whole.ID)

	onFirstFlush(e.svc, func(id int64) {
		if err := e.svc.Cancel(id); err != nil {
			t.Errorf("Cancel(%d): %v", id, err)
		}
	})
	cut := e.run(StartRequest{CampaignID: e.campaign.ID, Grid: smallGrid()})
	e.svc.afterFlush = nil
	if cut.State != Cancelled {
		t.Fatalf("cancelled sweep is %s; want cancelled", cut.State)
	}
	if cut.Done == 0 || cut.Done >= cut.Total {
		t.Fatalf("cancelled sweep stored %d of %d; want some, not all", cut.Done, cut.Total)
	}
	e.checkConsistent(cut)
	for _, r := range e.results(cut.ID) {
		if got, w := figures(t, r.Result), figures(t, want[r.Ordinal].Result); got != w {
			t.Errorf("cancelled sweep's result %d differs from the whole sweep's:\n%s\n%s", r.Ordinal, got, w)
		}
	}
	if err := e.svc.Cancel(cut.ID); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Cancel of a stopped sweep = %v; want ErrNotRunning", err)
	}

	resumed, err := e.svc.Resume(ctx, cut.ID, 0)
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if resumed, err = e.svc.Wait(ctx, resumed.ID); err != nil {
		t.Fatal(err)
	}
	if resumed.State != Done {
		t.Fatalf("resumed sweep is %s (%q); want done", resumed.State, resumed.Error)
	}
	e.checkConsistent(resumed)
	sameResults(t, "after resume", e.results(cut.ID), want)
	if _, err := e.svc.Resume(ctx, cut.ID, 0); !errors.Is(err, ErrNotResumable) {
		t.Errorf("Resume of a finished sweep = %v; want ErrNotResumable", err)
	}
	a, _ := json.Marshal(whole.Summary.Model)
	b, _ := json.Marshal(resumed.Summary.Model)
	if string(a) != string(b) {
		t.Errorf("model after resume differs:\n%s\n%s", b, a)
	}
}

// TestRestartMarksInterrupted leaves a sweep running in one process (its job blocked
// mid-way) while another opens the store and starts up: that one marks it interrupted
// and resumes it to the results of an uninterrupted sweep.
func TestRestartMarksInterrupted(t *testing.T) {
	first := newEnv(t)
	ctx := context.Background()
	whole := first.run(StartRequest{CampaignID: first.campaign.ID, Grid: smallGrid()})
	want := first.results(whole.ID)

	reached, release := holdFirstFlush(first.svc)
	sw, err := first.svc.Start(ctx, StartRequest{CampaignID: first.campaign.ID, Grid: smallGrid()})
	if err != nil {
		t.Fatal(err)
	}
	<-reached

	second := openEnv(t, first.store.Path())
	if n, err := second.svc.MarkInterrupted(ctx); err != nil || n != 1 {
		t.Fatalf("MarkInterrupted() = %d, %v; want 1", n, err)
	}
	got, err := second.svc.Get(ctx, sw.ID)
	if err != nil || got.State != Interrupted || got.Done == 0 || got.Done >= got.Total {
		t.Fatalf("after restart: %s, %d of %d, %v; want interrupted, part done", got.State, got.Done, got.Total, err)
	}
	if n, err := second.svc.MarkInterrupted(ctx); err != nil || n != 0 {
		t.Errorf("MarkInterrupted() again = %d, %v; want 0", n, err)
	}
	// The first process dies: its job is cancelled and never writes again.
	if err := first.svc.Cancel(sw.ID); err != nil {
		t.Fatal(err)
	}
	close(release)
	if _, err := first.svc.Wait(ctx, sw.ID); err != nil {
		t.Fatal(err)
	}

	if _, err := second.svc.Resume(ctx, sw.ID, 0); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	done, err := second.svc.Wait(ctx, sw.ID)
	if err != nil || done.State != Done {
		t.Fatalf("resumed: %s, %v; want done", done.State, err)
	}
	second.checkConsistent(done)
	sameResults(t, "after restart and resume", second.results(sw.ID), want)
}

func TestLabelsChangedAndRerun(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	sw := e.runSmall("before")
	if d, err := e.svc.LabelsChanged(ctx, sw.ID); err != nil || d.N() != 0 || d.Version != sw.LabelVersion {
		t.Fatalf("LabelsChanged right after = %+v, %v; want none, version %s", d, err, sw.LabelVersion)
	}
	ids, err := e.store.DatasetDocumentIDs(ctx, e.campaign.DatasetID)
	if err != nil {
		t.Fatal(err)
	}
	// A person labels a new pair (the first and last documents: no demo pair) and
	// overrides the rules on a labeled one with an adjudication.
	pairs, err := e.store.SweepPairs(ctx, e.campaign.ID)
	if err != nil {
		t.Fatal(err)
	}
	p := pairs[0]
	flip := "different"
	if !p.Labels[0].Duplicate {
		flip = "exact"
	}
	err = e.store.AddLabels(ctx, e.campaign.ID, []db.NewLabel{
		{DocA: ids[0], DocB: ids[len(ids)-1], Annotator: "ann", Category: "different"},
		{DocA: p.A, DocB: p.B, Annotator: "adj", Kind: "adjudication", Category: flip, Duplicate: flip == "exact"},
	}, "test")
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.svc.LabelsChanged(ctx, sw.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Added != 1 || d.Changed != 1 || d.Removed != 0 || d.N() != 2 || d.Version == sw.LabelVersion {
		t.Errorf("LabelsChanged = %+v; want 1 added, 1 changed, a new version", d)
	}
	re, err := e.svc.Rerun(ctx, sw.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if re, err = e.svc.Wait(ctx, re.ID); err != nil || re.State != Done {
		t.Fatalf("re-run: %s, %v", re.State, err)
	}
	if re.ID == sw.ID || re.LabelVersion != d.Version || re.Name != "before (re-run)" {
		t.Errorf("re-run %d %q on %s; want a new sweep on %s", re.ID, re.Name, re.LabelVersion, d.Version)
	}
	if d, err := e.svc.LabelsChanged(ctx, re.ID); err != nil || d.N() != 0 {
		t.Errorf("LabelsChanged of the re-run = %+v, %v; want none", d, err)
	}
	if re.Summary.Labels.Counted != sw.Summary.Labels.Counted+1 {
		t.Errorf("re-run counted %d pairs; want %d", re.Summary.Labels.Counted, sw.Summary.Labels.Counted+1)
	}
}

// TestSelectMatchesRescore checks the slider's figures: at a configuration's own
// threshold they are the stored result's, and at any threshold they are what the
// engine's own Prepare and Rescore give on the sweep's labels.
func TestSelectMatchesRescore(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	grid := smallGrid()
	grid.Specs = grid.Specs[len(grid.Specs)/2 : len(grid.Specs)/2+1] // word 5, k=64
	sw := e.run(StartRequest{CampaignID: e.campaign.ID, Grid: grid})
	rs := e.results(sw.ID)
	for _, i := range []int{0, len(rs) / 2, len(rs) - 1} {
		r := rs[i]
		sel, err := e.svc.Select(ctx, sw.ID, r.Config, r.Config.Threshold)
		if err != nil {
			t.Fatalf("Select(%v): %v", r.Config, err)
		}
		want := r.Result
		want.Optimal, want.Observed = lsh.ShapeChoice{}, nil
		if g, w := figures(t, sel.Result), figures(t, want); g != w {
			t.Errorf("Select(%v) differs from the stored result:\n%s\n%s", r.Config, g, w)
		}
	}

	c := rs[len(rs)-1].Config
	sel, err := e.svc.Select(ctx, sw.ID, c, 0.62)
	if err != nil {
		t.Fatal(err)
	}
	// The engine's own, on an input built here from the store.
	docs, err := e.store.SweepDocuments(ctx, e.campaign.DatasetID)
	if err != nil {
		t.Fatal(err)
	}
	pairs, _, _, err := e.svc.labelsNow(ctx, e.campaign, docs.IDs, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sweep.Prepare(ctx, e.svc.input(ctx, e.campaign, sweepDocs{SweepDocs: docs}, pairs, nil), c, sweep.Options{Seed: Seed})
	if err != nil {
		t.Fatal(err)
	}
	want, err := st.Rescore(ctx, 0.62)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := figures(t, sel.Result), figures(t, want); g != w {
		t.Errorf("Select at 0.62 differs from State.Rescore:\n%s\n%s", g, w)
	}
	outs, err := st.Outcomes(ctx, 0.62)
	if err != nil {
		t.Fatal(err)
	}
	misses, fms := 0, 0
	for _, o := range outs {
		if o.Missed() {
			misses++
		}
		if o.FalseMerge() {
			fms++
		}
	}
	if len(sel.Outcomes) != len(outs) || sel.Misses != misses || sel.FalseMerges != fms {
		t.Errorf("Select: %d outcomes, %d misses, %d false merges; want %d, %d, %d", len(sel.Outcomes), sel.Misses, sel.FalseMerges,
			len(outs), misses, fms)
	}
	if len(sel.Collisions) != CollisionBins {
		t.Errorf("%d collision bins; want %d", len(sel.Collisions), CollisionBins)
	}
	if _, err := e.svc.Select(ctx, sw.ID, c, 1.5); err == nil {
		t.Error("Select at threshold 1.5: no error")
	}
}

func TestStartRefuses(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	bad := smallGrid()
	bad.Thresholds = []float64{0.5, 0.5}
	var ge *sweep.GridError
	if _, err := e.svc.Start(ctx, StartRequest{CampaignID: e.campaign.ID, Grid: bad}); !errors.As(err, &ge) || ge.Axis != "thresholds" {
		t.Errorf("Start with a threshold listed twice = %v; want a GridError on thresholds", err)
	}
	if _, err := e.svc.Start(ctx, StartRequest{CampaignID: 999, Grid: smallGrid()}); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("Start on no campaign = %v; want db.ErrNotFound", err)
	}
	if _, err := e.svc.Get(ctx, 999); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("Get(999) = %v; want db.ErrNotFound", err)
	}
	list, err := e.svc.List(ctx, 0)
	if err != nil || len(list) != 0 {
		t.Errorf("List after refusals = %d sweeps, %v; want none", len(list), err)
	}
}

// TestDocsQuoteLabelRule: docs/sweeps.md states the rule that decides which label counts,
// and what a false removal is, in the words the sweep page uses.
func TestDocsQuoteLabelRule(t *testing.T) {
	b, err := os.ReadFile("../../docs/sweeps.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	if !strings.Contains(text, sweep.LabelRule) {
		t.Errorf("docs/sweeps.md does not quote sweep.LabelRule:\n%s", sweep.LabelRule)
	}
	if !strings.Contains(text, sweep.FalseRemovalDefinition) {
		t.Errorf("docs/sweeps.md does not quote sweep.FalseRemovalDefinition:\n%s", sweep.FalseRemovalDefinition)
	}
}

// A failed sweep stores what a person can act on, and nothing of an internal error's
// text: that goes to the log.
func TestFailureMessage(t *testing.T) {
	grid := &sweep.GridError{Axis: "thresholds", Index: 2, Msg: "1.5 is over 1"}
	for _, tc := range []struct {
		name      string
		err       error
		want, not string
	}{
		{"grid", fmt.Errorf("scoring: %w", grid), grid.Error(), ""},
		{"input", &sweep.InputError{Field: "design", Index: -1, Msg: `no counted pair carries design "x"`}, `sweep input design: no counted pair carries design "x"`, ""},
		{"no labels", ErrNoLabels, ErrNoLabels.Error(), ""},
		{"deleted", fmt.Errorf("campaign 3: %w", db.ErrNotFound), "was deleted while the sweep ran", ""},
		{"internal", errors.New("open /var/tmp/studio-123/sig.bin: no space left on device"), "the server log has the details (sweep 7)", "/var/tmp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := failureMessage(7, tc.err)
			if !strings.Contains(got, tc.want) || (tc.not != "" && strings.Contains(got, tc.not)) {
				t.Errorf("failureMessage(%v) = %q; want it to contain %q and not %q", tc.err, got, tc.want, tc.not)
			}
		})
	}
}

// TestQueueRunsOneAtATime holds the first sweep mid-way and starts two more: they wait
// in the queue with their positions, the same form posted again starts nothing, a queued
// sweep can be cancelled, and the next runs only once the first has finished.
func TestQueueRunsOneAtATime(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	reached, release := make(chan int64, 1), make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	var flushed []int64 // the sweep of every flush, in order
	e.svc.flushEvery = 5
	e.svc.afterFlush = func(id int64, done int) {
		mu.Lock()
		flushed = append(flushed, id)
		mu.Unlock()
		once.Do(func() {
			reached <- id
			<-release
		})
	}
	start := func(token string) Sweep {
		t.Helper()
		sw, err := e.svc.Start(ctx, StartRequest{CampaignID: e.campaign.ID, Grid: smallGrid(), Token: token})
		if err != nil {
			t.Fatalf("Start(%s): %v", token, err)
		}
		return sw
	}
	first := start("form-1")
	<-reached
	second, third := start("form-2"), start("form-3")
	for i, sw := range []Sweep{second, third} {
		got, _ := e.svc.Get(ctx, sw.ID)
		p, ok := e.svc.Progress(sw.ID)
		if got.State != Queued || !ok || p.Phase != "queued" || p.Position != i+1 {
			t.Errorf("sweep %d: state %s, progress %+v; want queued at position %d", sw.ID, got.State, p, i+1)
		}
	}
	if got, _ := e.svc.Get(ctx, first.ID); got.State != Running {
		t.Errorf("first sweep is %s; want running", got.State)
	}
	// A double submit of the second form starts nothing.
	again, err := e.svc.Start(ctx, StartRequest{CampaignID: e.campaign.ID, Grid: smallGrid(), Token: "form-2"})
	if !errors.Is(err, ErrReplayed) || again.ID != second.ID {
		t.Errorf("Start with a used token = sweep %d, %v; want sweep %d, ErrReplayed", again.ID, err, second.ID)
	}
	if list, _ := e.svc.List(ctx, e.campaign.ID); len(list) != 3 {
		t.Errorf("%d sweeps stored; want 3", len(list))
	}
	// Cancelling a queued sweep takes it out of the queue; the one behind moves up.
	if err := e.svc.Cancel(third.ID); err != nil {
		t.Fatalf("Cancel(queued): %v", err)
	}
	if got, err := e.svc.Wait(ctx, third.ID); err != nil || got.State != Cancelled || got.Done != 0 || !got.StartedAt.IsZero() {
		t.Errorf("cancelled while queued: %s, %d done, started %v, %v; want cancelled, nothing scored, never started", got.State, got.Done, got.StartedAt, err)
	}
	if p, _ := e.svc.Progress(second.ID); p.Position != 1 {
		t.Errorf("second sweep at position %d; want 1", p.Position)
	}
	close(release)
	for _, sw := range []Sweep{first, second} {
		got, err := e.svc.Wait(ctx, sw.ID)
		if err != nil || got.State != Done {
			t.Fatalf("sweep %d: %s, %v; want done", sw.ID, got.State, err)
		}
		e.checkConsistent(got)
	}
	mu.Lock()
	order := slices.Clone(flushed)
	mu.Unlock()
	seenSecond := false
	for _, id := range order {
		switch id {
		case second.ID:
			seenSecond = true
		case first.ID:
			if seenSecond {
				t.Fatalf("the second sweep stored results before the first finished: %v", order)
			}
		case third.ID:
			t.Errorf("the cancelled queued sweep stored results")
		}
	}
	// The queue is free again: a new sweep starts at once.
	if sw := e.run(StartRequest{CampaignID: e.campaign.ID, Grid: smallGrid()}); sw.State != Done {
		t.Errorf("sweep after the queue drained: %s", sw.State)
	}
}

// TestRestartMarksQueuedInterrupted: a sweep queued behind a running one when its
// process dies is interrupted after the restart, like the running one, and resumes.
func TestRestartMarksQueuedInterrupted(t *testing.T) {
	first := newEnv(t)
	ctx := context.Background()
	reached, release := holdFirstFlush(first.svc)
	running, err := first.svc.Start(ctx, StartRequest{CampaignID: first.campaign.ID, Grid: smallGrid()})
	if err != nil {
		t.Fatal(err)
	}
	<-reached
	queued, err := first.svc.Start(ctx, StartRequest{CampaignID: first.campaign.ID, Grid: smallGrid()})
	if err != nil {
		t.Fatal(err)
	}
	second := openEnv(t, first.store.Path())
	if n, err := second.svc.MarkInterrupted(ctx); err != nil || n != 2 {
		t.Fatalf("MarkInterrupted() = %d, %v; want 2 (the running and the queued sweep)", n, err)
	}
	for _, id := range []int64{running.ID, queued.ID} {
		if got, _ := second.svc.Get(ctx, id); got.State != Interrupted {
			t.Errorf("sweep %d after restart: %s; want interrupted", id, got.State)
		}
	}
	// The first process dies.
	first.svc.Cancel(queued.ID)
	first.svc.Cancel(running.ID)
	close(release)
	first.svc.Wait(ctx, running.ID)
	first.svc.Wait(ctx, queued.ID)

	if _, err := second.svc.Resume(ctx, queued.ID, 0); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if got, err := second.svc.Wait(ctx, queued.ID); err != nil || got.State != Done || got.Done != got.Total {
		t.Fatalf("resumed queued sweep: %s, %d of %d, %v; want done", got.State, got.Done, got.Total, err)
	}
}

// TestStartRefusesSignatureVolume: 64 representations at k=4096 over the demo's 2,136
// documents are 560 million signature values, over MaxSignatureValues.
func TestStartRefusesSignatureVolume(t *testing.T) {
	e := newEnv(t)
	var sizes []int
	for n := 1; n <= 32; n++ {
		sizes = append(sizes, n)
	}
	g := smallGrid()
	g.Specs = sweep.Representations(lsh.DefaultSpec(), sizes, sizes, []int{4096})
	_, err := e.svc.Start(context.Background(), StartRequest{CampaignID: e.campaign.ID, Grid: g})
	var ve *VolumeError
	if !errors.As(err, &ve) || ve.Representations != 64 || ve.MaxK != 4096 || ve.Values <= MaxSignatureValues {
		t.Fatalf("Start = %v; want a VolumeError of 64 representations at k=4096", err)
	}
	if list, _ := e.svc.List(context.Background(), 0); len(list) != 0 {
		t.Errorf("%d sweeps stored after the refusal; want none", len(list))
	}
}

// TestStartRefusesPairless: a sweep over a dataset of one document, or of two where an
// exported manifest removed one (its label keeps counting, so the label check passes), is
// refused before anything is stored, saying why; a re-run of a sweep made before the
// export likewise.
func TestStartRefusesPairless(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, svc, _ := openService(t, filepath.Join(t.TempDir(), "studio.db"))
	campaignOf := func(name, jsonl, labels string) db.Campaign {
		t.Helper()
		r, err := corpus.NewReader(strings.NewReader(jsonl), name+".jsonl", corpus.JSONL, corpus.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := ingest.Documents(ctx, store, r, name+".jsonl", ingest.Options{Dataset: name})
		if err != nil {
			t.Fatal(err)
		}
		if labels == "" {
			c, err := store.EnsureCampaign(ctx, rep.Dataset.ID, "default", nil)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		lr, err := ingest.Labels(ctx, store, strings.NewReader(labels), "l.csv", ingest.LabelOptions{DatasetID: rep.Dataset.ID, Create: true})
		if err != nil {
			t.Fatal(err)
		}
		c, err := store.Campaign(ctx, lr.CampaignID)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	one := campaignOf("one", `{"id":"only","text":"the one and only document of this dataset"}`+"\n", "")
	two := campaignOf("two", `{"id":"a","text":"a document and its copy, word for word"}`+"\n"+`{"id":"b","text":"a document and its copy, word for word"}`+"\n",
		"a,b,category,annotator\na,b,exact,ann\n")
	ran, err := svc.Start(ctx, StartRequest{CampaignID: two.ID, Name: "before the export", Grid: smallGrid()})
	if err != nil {
		t.Fatalf("Start on two documents: %v", err)
	}
	if _, err := svc.Wait(ctx, ran.ID); err != nil {
		t.Fatal(err)
	}
	ids, err := store.DatasetDocumentIDs(ctx, two.DatasetID)
	if err != nil {
		t.Fatal(err)
	}
	dbtest.ExportRemovals(t, store, two.DatasetID, ids)

	before, err := svc.List(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		start func() error
		why   string
	}{
		{"one document", func() error {
			_, err := svc.Start(ctx, StartRequest{CampaignID: one.ID, Grid: smallGrid()})
			return err
		},
			"one has 1 document, so no pairs: a pair takes two documents; import a sample of at least two"},
		{"one live document", func() error {
			_, err := svc.Start(ctx, StartRequest{CampaignID: two.ID, Grid: smallGrid()})
			return err
		},
			"two has 1 live document (1 removed by exported manifests): nothing to deduplicate"},
		{"re-run", func() error { _, err := svc.Rerun(ctx, ran.ID, 0, ""); return err },
			"two has 1 live document (1 removed by exported manifests): nothing to deduplicate"},
		{"Pairless", func() error { return svc.Pairless(ctx, one) }, "one has 1 document, so no pairs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.start()
			if errkind.Of(err) != errkind.Invalid || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("= %v (kind %v); want an Invalid refusal saying %q", err, errkind.Of(err), tc.why)
			}
		})
	}
	if err := svc.Pairless(ctx, db.Campaign{DatasetID: 999}); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("Pairless on no dataset = %v; want db.ErrNotFound", err)
	}
	after, err := svc.List(ctx, 0)
	if err != nil || len(after) != len(before) {
		t.Errorf("after the refusals: %d sweeps, %v; want %d (nothing stored)", len(after), err, len(before))
	}
}
