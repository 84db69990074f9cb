package db

import (
	"errors"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
)

// A run's record: started running by someone, given its job and phases while it runs,
// finished once (a finished run keeps how it ended), found again by job and by id, and
// marked interrupted at start when a process left it running.
func TestRunRecords(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	ds, _ := withDocs(t, d, "runs", 2)
	u := mustUser(t, d, "rev", auth.Reviewer)
	id, err := d.StartRun(ctx, u, NewRun{DatasetID: ds.ID, Title: "first", Form: "threshold=0.8"})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.SetRunJob(ctx, id, "job-1"); err != nil {
		t.Fatal(err)
	}
	if err := d.SetRunPhase(ctx, id, "signatures"); err != nil {
		t.Fatal(err)
	}
	r, err := d.RunByJob(ctx, "job-1")
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != id || r.State != RunRunning || r.Phase != "signatures" || r.DatasetID != ds.ID || r.Title != "first" ||
		r.Form != "threshold=0.8" || r.StartedBy != u.ID || r.CarriedFrom != 0 || r.CreatedAt.IsZero() || !r.FinishedAt.IsZero() {
		t.Errorf("RunByJob(job-1) = %+v; want the running run with its phase", r)
	}
	if err := d.FinishRun(ctx, id, RunFailed, "out of memory"); err != nil {
		t.Fatal(err)
	}
	// Finished: neither a phase nor another ending changes it.
	if err := d.SetRunPhase(ctx, id, "late phase"); err != nil {
		t.Fatal(err)
	}
	if err := d.FinishRun(ctx, id, RunDone, ""); err != nil {
		t.Fatal(err)
	}
	if r, err := d.Run(ctx, id); err != nil || r.State != RunFailed || r.Error != "out of memory" || r.Phase != "signatures" || r.FinishedAt.IsZero() {
		t.Errorf("Run(%d) after it failed = %+v, %v; want failed with its error and last phase", id, r, err)
	}

	// Two runs of one job: the newer is the job's. One left running, started by no
	// account, is marked interrupted; the finished one is left as it is.
	id2, err := d.StartRun(ctx, User{Name: "cli"}, NewRun{JobID: "job-1", DatasetID: ds.ID, Title: "again"})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := d.RunByJob(ctx, "job-1"); err != nil || r.ID != id2 || r.StartedBy != 0 {
		t.Errorf("RunByJob(job-1) = %+v, %v; want the newer run %d, by no account", r, err, id2)
	}
	if n, err := d.MarkRunsInterrupted(ctx); err != nil || n != 1 {
		t.Fatalf("MarkRunsInterrupted = %d, %v; want 1", n, err)
	}
	if r, _ := d.Run(ctx, id2); r.State != RunInterrupted || r.FinishedAt.IsZero() {
		t.Errorf("the run left running = %+v; want interrupted, finished", r)
	}
	if r, _ := d.Run(ctx, id); r.State != RunFailed {
		t.Errorf("the failed run after MarkRunsInterrupted = %s; want failed", r.State)
	}
	if n, err := d.MarkRunsInterrupted(ctx); err != nil || n != 0 {
		t.Errorf("MarkRunsInterrupted again = %d, %v; want 0", n, err)
	}

	if _, err := d.Run(ctx, id2+1); !errors.Is(err, ErrNotFound) {
		t.Errorf("Run of no run = %v; want ErrNotFound", err)
	}
	if _, err := d.RunByJob(ctx, "job-2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("RunByJob of no job = %v; want ErrNotFound", err)
	}
	if _, err := d.StartRun(ctx, u, NewRun{DatasetID: ds.ID + 100, Title: "nowhere"}); err == nil {
		t.Error("StartRun of a dataset that does not exist: no error")
	}
}

// A run that makes its manifest is marked done by CreateManifest, in the same
// transaction, pointing at the manifest; the run it prepares again is recorded.
func TestRunDoneByItsManifest(t *testing.T) {
	t.Parallel()
	f, ctx := newReviewFixture(t), t.Context()
	id, err := f.d.StartRun(ctx, f.prep, NewRun{JobID: "j", DatasetID: f.m.DatasetID, Title: "again", CarriedFrom: f.m.ID})
	if err != nil {
		t.Fatal(err)
	}
	m, err := f.d.CreateManifest(ctx, f.prep, NewManifest{DatasetID: f.m.DatasetID, Params: f.m.Params, DatasetHash: f.m.DatasetHash, RunID: id,
		Clusters: []Cluster{{Keeper: f.docs["x"], KeeperRule: "longest", Size: 2, WeakestLink: 0.9, Weakest: f.docs["z"],
			Links: []Link{{f.docs["x"], f.docs["z"], 0.9}}, Items: []Item{{Doc: f.docs["z"], Keeper: f.docs["x"], Score: 0.9, Estimate: 0.9, Exact: 0.9, Reason: "near"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.d.Run(ctx, id)
	if err != nil || r.State != RunDone || r.ManifestID != m.ID || r.CarriedFrom != f.m.ID || r.FinishedAt.IsZero() {
		t.Errorf("Run after its manifest = %+v, %v; want done, manifest %d, carried from %d", r, err, m.ID, f.m.ID)
	}
}
