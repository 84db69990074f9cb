package manifests

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
)

// TestLaunchKeepsTheRunRecord: a launched run's record names its job, follows its
// phases and ends done with the manifest it made; a run that fails ends failed with the
// error as the caller's wrap put it, and the job reports the same.
func TestLaunchKeepsTheRunRecord(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	reg := jobs.NewRegistry(ctx)
	t.Cleanup(func() { reg.Shutdown(context.Background()) })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	wrap := func(err error) error { return errors.New("wrapped: " + err.Error()) }

	req := Request{DatasetID: f.ds.ID, Params: f.params(cluster.Components, "earliest"), By: f.prep, ApprovalsRequired: 1}
	id, err := Launch(ctx, f.store, f.sigs, reg, log, req, db.NewRun{DatasetID: f.ds.ID, Title: "a run", Form: "bands=32"}, wrap)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := reg.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := f.store.RunByJob(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != db.RunDone || rec.ManifestID == 0 || rec.Phase == "" || rec.Title != "a run" || rec.Form != "bands=32" || rec.StartedBy != f.prep.ID {
		t.Errorf("record of a finished run: %+v (job %+v); want done with its manifest, a phase, title, form and starter", rec, snap)
	}
	if snap.Result != rec.ManifestID {
		t.Errorf("job result %v; want the manifest %d", snap.Result, rec.ManifestID)
	}

	bad := req
	bad.DatasetID = f.ds.ID + 1000 // no such dataset
	id, err = Launch(ctx, f.store, f.sigs, reg, log, bad, db.NewRun{DatasetID: f.ds.ID, Title: "a bad run"}, wrap)
	if err != nil {
		t.Fatal(err)
	}
	snap, _ = reg.Wait(ctx, id)
	rec, err = f.store.RunByJob(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != db.RunFailed || !strings.HasPrefix(rec.Error, "wrapped: ") || rec.ManifestID != 0 {
		t.Errorf("record of a failed run: %+v; want failed with the wrapped error and no manifest", rec)
	}
	if !strings.HasPrefix(snap.Err, "wrapped: ") {
		t.Errorf("job error %q; want the wrapped one", snap.Err)
	}
}
