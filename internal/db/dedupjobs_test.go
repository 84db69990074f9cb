package db

import (
	"errors"
	"slices"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
)

// A whole-corpus run's record: stored running with who started it (audited), finished
// with its summary, resumed only from a state that stopped, marked interrupted at
// start, and pointed at the manifest its removals became or at why there is none.
func TestDedupJobs(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	u := mustUser(t, d, "rev", auth.Reviewer)
	id, err := d.CreateDedupJob(ctx, DedupJob{Source: "manifest 3 (draft)", SourceManifestID: 0, Settings: `{"format":"x"}`, Corpus: "sub/c.jsonl"}, u)
	if err != nil {
		t.Fatal(err)
	}
	j, err := d.DedupJob(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != "running" || j.Corpus != "sub/c.jsonl" || j.Source != "manifest 3 (draft)" || j.Settings != `{"format":"x"}` ||
		j.StartedBy != u.ID || j.StartedName != "rev" || j.Summary != "{}" || !j.FinishedAt.IsZero() || j.StartedAt.IsZero() || j.CreatedAt.IsZero() {
		t.Errorf("stored run: %+v", j)
	}
	if !slices.Contains(auditActions(t, d), "dedup-job.start") {
		t.Error("the start is not in the audit log")
	}
	if _, err := d.DedupJob(ctx, id+1); !errors.Is(err, ErrNotFound) {
		t.Errorf("DedupJob of no run: %v; want ErrNotFound", err)
	}
	// Running: not resumable.
	if err := d.ResumeDedupJob(ctx, id, u); !errors.Is(err, ErrStale) {
		t.Errorf("ResumeDedupJob of a running run = %v; want ErrStale", err)
	}
	if err := d.FinishDedupJob(ctx, id, "cancelled", "cancelled", ""); err != nil {
		t.Fatal(err)
	}
	if j, _ := d.DedupJob(ctx, id); j.State != "cancelled" || j.FinishedAt.IsZero() {
		t.Errorf("after FinishDedupJob: %+v", j)
	}
	if err := d.ResumeDedupJob(ctx, id, u); err != nil {
		t.Fatalf("ResumeDedupJob of a cancelled run: %v", err)
	}
	if j, _ := d.DedupJob(ctx, id); j.State != "running" || j.Error != "" || !j.FinishedAt.IsZero() {
		t.Errorf("after resume: %+v; want running, no error, not finished", j)
	}
	// A second run, left running by a process that died, and the first one done.
	id2, err := d.CreateDedupJob(ctx, DedupJob{Source: "sweep 1", Settings: "{}", Corpus: "d.jsonl"}, User{Name: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.FinishDedupJob(ctx, id, "done", "", `{"docs":3}`); err != nil {
		t.Fatal(err)
	}
	if n, err := d.InterruptDedupJobs(ctx); err != nil || n != 1 {
		t.Fatalf("InterruptDedupJobs = %d, %v; want 1", n, err)
	}
	if j, _ := d.DedupJob(ctx, id2); j.State != "interrupted" || j.Error != "the server stopped while it ran" || j.StartedBy != 0 {
		t.Errorf("the run left running: %+v; want interrupted, with no account", j)
	}
	if err := d.ResumeDedupJob(ctx, id, u); !errors.Is(err, ErrStale) {
		t.Errorf("ResumeDedupJob of a done run = %v; want ErrStale", err)
	}
	if err := d.SetDedupJobManifest(ctx, id, 0, "No dataset was imported from c.jsonl"); err != nil {
		t.Fatal(err)
	}
	list, err := d.DedupJobs(ctx)
	if err != nil || len(list) != 2 || list[0].ID != id2 || list[1].ID != id || list[1].Summary != `{"docs":3}` ||
		list[1].ImportNote != "No dataset was imported from c.jsonl" || list[1].ManifestID != 0 {
		t.Errorf("DedupJobs = %+v, %v; want both, newest first, with the summary and note", list, err)
	}
	if err := d.SetDedupJobManifest(ctx, id+5, 0, "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetDedupJobManifest of no run = %v; want ErrNotFound", err)
	}
}
