package db

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/migrations"
)

// A sweep's life in the store: created running and audited, results stored once per
// ordinal with the count of done configurations following them, finished, resumed only
// when not running or done, renamed, and marked interrupted when a process died.
// TestSweepRequestToken: a sweep created with a form's token is found again by it; a
// second create with the token stores nothing and returns the first id with ErrReplayed.
func TestSweepRequestToken(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	c, _ := withPairs(t, d, 4)
	ns := NewSweep{CampaignID: c.ID, Name: "once", Grid: `{}`, Total: 1, Labels: `[]`, Token: "tok-1"}
	id, err := d.CreateSweep(ctx, ns, "t")
	if err != nil {
		t.Fatal(err)
	}
	again, err := d.CreateSweep(ctx, ns, "t")
	if !errors.Is(err, ErrReplayed) || again != id {
		t.Errorf("CreateSweep with a used token = %d, %v; want %d, ErrReplayed", again, err, id)
	}
	ns.Token = ""
	for range 2 { // no token: no deduplication
		if _, err := d.CreateSweep(ctx, ns, "t"); err != nil {
			t.Fatal(err)
		}
	}
	if list, _ := d.Sweeps(ctx, c.ID); len(list) != 3 {
		t.Errorf("%d sweeps; want 3", len(list))
	}
	// Form tokens of runs.
	claimed, target, err := d.ClaimFormToken(ctx, "run-tok", "run")
	if err != nil || !claimed || target != "" {
		t.Fatalf("ClaimFormToken = %v, %q, %v; want claimed", claimed, target, err)
	}
	if claimed, target, _ = d.ClaimFormToken(ctx, "run-tok", "run"); claimed || target != "" {
		t.Errorf("second claim = %v, %q; want not claimed, no target yet", claimed, target)
	}
	if err := d.SetFormToken(ctx, "run-tok", "/runs/run-1"); err != nil {
		t.Fatal(err)
	}
	if claimed, target, _ = d.ClaimFormToken(ctx, "run-tok", "run"); claimed || target != "/runs/run-1" {
		t.Errorf("claim after the run started = %v, %q; want not claimed, /runs/run-1", claimed, target)
	}
	// A released token (the run did not start) can be claimed again.
	d.SetFormToken(ctx, "run-tok", "")
	if claimed, _, _ = d.ClaimFormToken(ctx, "run-tok", "run"); !claimed {
		t.Error("a released token cannot be claimed again")
	}
}

func TestSweepLifecycle(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	c, _ := withPairs(t, d, 4)
	id, err := d.CreateSweep(ctx, NewSweep{CampaignID: c.ID, Name: "first", Grid: `{"bands":[8]}`, Seed: 1 << 63, Total: 3,
		LabelVersion: "v1", Labels: `[]`}, "cli:t")
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.Sweep(ctx, id)
	if err != nil || s.State != "queued" || s.Seed != 1<<63 || s.DatasetID != c.DatasetID || !s.StartedAt.IsZero() || !s.FinishedAt.IsZero() {
		t.Fatalf("Sweep(%d) = %+v, %v; want queued, seed 2^63, not started", id, s, err)
	}
	if err := d.ResumeSweep(ctx, id, 0, "t"); !errors.Is(err, ErrStale) {
		t.Errorf("ResumeSweep of a queued sweep = %v; want ErrStale", err)
	}
	// Its turn comes.
	if err := d.StartSweep(ctx, id); err != nil {
		t.Fatal(err)
	}
	if s, err = d.Sweep(ctx, id); err != nil || s.State != "running" || s.StartedAt.IsZero() {
		t.Fatalf("Sweep(%d) after StartSweep = %+v, %v; want running, started", id, s, err)
	}
	if err := d.StartSweep(ctx, id); !errors.Is(err, ErrStale) {
		t.Errorf("StartSweep of a running sweep = %v; want ErrStale", err)
	}
	if ev, err := d.AuditOf(ctx, fmt.Sprintf("sweep:%d", id), 10); err != nil || len(ev) != 1 || ev[0].Action != "sweep.start" {
		t.Errorf("audit of the sweep = %+v, %v; want one sweep.start", ev, err)
	}
	if got, err := d.SweepLabels(ctx, id); err != nil || got != `[]` {
		t.Errorf("SweepLabels = %q, %v; want []", got, err)
	}
	if err := d.ResumeSweep(ctx, id, 0, "t"); !errors.Is(err, ErrStale) {
		t.Errorf("ResumeSweep of a running sweep = %v; want ErrStale", err)
	}

	rs := []SweepResult{{Ordinal: 0, Spec: "k=64", Bands: 8, Rows: 8, Threshold: 0.5, Verification: "exact", Policy: "components", Metrics: `{"r":1}`},
		{Ordinal: 2, Spec: "k=64", Bands: 16, Rows: 4, Threshold: 0.5, Verification: "none", Policy: "components", Metrics: `{}`}}
	if err := d.AddSweepResults(ctx, id, rs); err != nil {
		t.Fatal(err)
	}
	// Stored again (a resumed run) with another metric: the first is kept.
	again := []SweepResult{{Ordinal: 2, Spec: "k=64", Bands: 16, Rows: 4, Metrics: `{"changed":true}`}, {Ordinal: 1, Spec: "k=64", Bands: 4, Rows: 16, Metrics: `{}`}}
	if err := d.AddSweepResults(ctx, id, again); err != nil {
		t.Fatal(err)
	}
	all, err := d.SweepResults(ctx, id)
	if err != nil || len(all) != 3 || all[2].Metrics != `{}` || all[0].Bands != 8 {
		t.Fatalf("SweepResults = %+v, %v; want 3 by ordinal, ordinal 2 as first stored", all, err)
	}
	if ords, err := d.SweepOrdinals(ctx, id); err != nil || len(ords) != 3 || ords[0] != 0 || ords[2] != 2 {
		t.Errorf("SweepOrdinals = %v, %v; want [0 1 2]", ords, err)
	}
	if after, err := d.SweepResultsAfter(ctx, id, all[0].ID); err != nil || len(after) != 2 {
		t.Errorf("SweepResultsAfter(first) = %+v, %v; want the 2 stored after it", after, err)
	}
	if r, err := d.SweepResultByID(ctx, all[1].ID); err != nil || r.Ordinal != 1 {
		t.Errorf("SweepResultByID = %+v, %v; want ordinal 1", r, err)
	}
	if _, err := d.SweepResultByID(ctx, 1<<40); !errors.Is(err, ErrNotFound) {
		t.Errorf("SweepResultByID(missing) = %v; want ErrNotFound", err)
	}
	if s, _ := d.Sweep(ctx, id); s.Done != 3 {
		t.Errorf("configurations done = %d; want 3", s.Done)
	}

	if err := d.SetSweepSummary(ctx, id, `{"best":1}`); err != nil {
		t.Fatal(err)
	}
	if err := d.FinishSweep(ctx, id, "cancelled", "", ""); err != nil {
		t.Fatal(err)
	}
	if s, _ := d.Sweep(ctx, id); s.State != "cancelled" || s.Summary != `{"best":1}` || s.FinishedAt.IsZero() {
		t.Errorf("after FinishSweep: %+v; want cancelled, the summary kept, finished", s)
	}
	if err := d.ResumeSweep(ctx, id, 0, "t"); err != nil {
		t.Fatal(err)
	}
	if err := d.SetSweepNotes(ctx, id, "renamed", "why"); err != nil {
		t.Fatal(err)
	}
	if err := d.SetSweepNotes(ctx, 1<<40, "x", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetSweepNotes(missing) = %v; want ErrNotFound", err)
	}

	other, err := d.CreateSweep(ctx, NewSweep{CampaignID: c.ID, Name: "second", Grid: `{}`, Total: 1, Labels: `[]`, RerunOf: id}, "t")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := d.InterruptSweeps(ctx, []int64{other}); err != nil || n != 1 {
		t.Errorf("InterruptSweeps(except the second) = %d, %v; want 1", n, err)
	}
	list, err := d.Sweeps(ctx, c.ID)
	if err != nil || len(list) != 2 || list[0].ID != other || list[0].RerunOf != id || list[1].State != "interrupted" || list[1].Name != "renamed" {
		t.Fatalf("Sweeps = %+v, %v; want the re-run first (running), then the renamed one interrupted", list, err)
	}
	if every, _ := d.Sweeps(ctx, 0); len(every) != 2 {
		t.Errorf("Sweeps(0) = %d sweeps; want 2", len(every))
	}
	if _, err := d.Sweep(ctx, 1<<40); !errors.Is(err, ErrNotFound) {
		t.Errorf("Sweep(missing) = %v; want ErrNotFound", err)
	}
}

// What a sweep reads of a dataset and a campaign: documents with their hashes, in id
// order, and every pair with its standing labels.
func TestSweepInputs(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	c, pairs := withPairs(t, d, 3)
	if _, err := d.SweepDocuments(ctx, c.DatasetID); err == nil {
		t.Error("SweepDocuments of documents without a content hash succeeded; want the hash named")
	}
	ds, err := d.BeginDataset(ctx, "hashed", "h.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.InsertDocuments(ctx, ds.ID, []NewDocument{{ExtID: "x", Text: "one", ContentHash: strings.Repeat("01", 32)},
		{ExtID: "y", Text: "two", ContentHash: strings.Repeat("ff", 32)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.FinishDataset(ctx, ds.ID, "h", 0, "t"); err != nil {
		t.Fatal(err)
	}
	docs, err := d.SweepDocuments(ctx, ds.ID)
	if err != nil || len(docs.IDs) != 2 || docs.Hashes[0] != 0x0101010101010101 || docs.Hashes[1] != 1<<64-1 || docs.Texts[1] != "two" {
		t.Fatalf("SweepDocuments = %+v, %v; want 2 documents, hashes from the first 8 bytes", docs, err)
	}
	ids, err := d.DatasetDocumentIDs(ctx, ds.ID)
	if err != nil || len(ids) != 2 || ids[0] != docs.IDs[0] {
		t.Errorf("DatasetDocumentIDs = %v, %v; want %v", ids, err, docs.IDs)
	}
	if _, err := d.RecordEvent(ctx, c.ID, pairs[0], NewLabel{Annotator: "ann", Category: "exact", Duplicate: true}, 0); err != nil {
		t.Fatal(err)
	}
	sp, err := d.SweepPairs(ctx, c.ID)
	if err != nil || len(sp) != 2 || len(sp[0].Labels) != 1 || len(sp[1].Labels) != 0 {
		t.Fatalf("SweepPairs = %+v, %v; want 2 pairs, the first with one label", sp, err)
	}
}

// TestSweepLabelsMigrated: a store from before migration 0022 kept each sweep's label
// snapshot in sweeps.labels. Migrating copies every snapshot into sweep_labels, where
// SweepLabels reads it, and empties the old column, so that reading a sweep's row no
// longer walks its snapshot; a sweep created afterwards stores its snapshot there too,
// and deleting a sweep deletes its snapshot.
func TestSweepLabelsMigrated(t *testing.T) {
	t.Parallel()
	d := openAt(t, 22)
	ctx := t.Context()
	c, pairs := withPairs(t, d, 4)
	// Snapshots as the sweeps of an older binary stored them: a large one (its JSON
	// spills over many overflow pages) and a small one.
	var b strings.Builder
	b.WriteString("[")
	for i := range 20000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%d,"a":%d,"b":%d,"cat":"minor","dup":%t,"design":"jdraw","stratum":"%d","n":%d}`,
			i+1, i%97, i%89+100, i%3 == 0, i%5, 1000+i)
	}
	b.WriteString("]")
	snaps := []string{b.String(), fmt.Sprintf(`[{"id":%d,"a":1,"b":2,"cat":"exact","dup":true}]`, pairs[0])}
	var ids []int64
	for i, snap := range snaps {
		res, err := d.w.ExecContext(ctx, `INSERT INTO sweeps (campaign_id, name, grid, state, configs_total, label_version, labels,
			created_at, left_out) VALUES (?, ?, '{}', 'done', 1, ?, ?, ?, '[]')`, c.ID, fmt.Sprint("old ", i), fmt.Sprint("v", i), snap, d.stamp())
		if err != nil {
			t.Fatal(err)
		}
		id, _ := res.LastInsertId()
		ids = append(ids, id)
	}
	if err := d.migrate(ctx, migrations.Files); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		got, err := d.SweepLabels(ctx, id)
		if err != nil || got != snaps[i] {
			t.Errorf("SweepLabels(%d) after the migration = %d bytes, %v; want the %d bytes it had", id, len(got), err, len(snaps[i]))
		}
		if s, err := d.Sweep(ctx, id); err != nil || s.LabelVersion != fmt.Sprint("v", i) || s.Name != fmt.Sprint("old ", i) {
			t.Errorf("Sweep(%d) after the migration = %+v, %v", id, s, err)
		}
	}
	var left int
	if err := d.r.QueryRowContext(ctx, `SELECT count(*) FROM sweeps WHERE labels <> '[]'`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d sweeps still hold a snapshot in sweeps.labels (%v); want none", left, err)
	}

	// A new sweep's snapshot goes to sweep_labels, the old column keeps its default.
	id, err := d.CreateSweep(ctx, NewSweep{CampaignID: c.ID, Name: "new", Grid: `{}`, Total: 1, LabelVersion: "v2", Labels: snaps[1]}, "t")
	if err != nil {
		t.Fatal(err)
	}
	var old string
	if err := d.r.QueryRowContext(ctx, `SELECT labels FROM sweeps WHERE id = ?`, id).Scan(&old); err != nil || old != "[]" {
		t.Errorf("sweeps.labels of a new sweep = %q, %v; want the default []", old, err)
	}
	if got, err := d.SweepLabels(ctx, id); err != nil || got != snaps[1] {
		t.Errorf("SweepLabels(%d) = %q, %v; want %q", id, got, err, snaps[1])
	}
	if _, err := d.CreateSweep(ctx, NewSweep{CampaignID: c.ID, Name: "bad", Grid: `{}`, Total: 1, Labels: `[{`}, "t"); err == nil {
		t.Error("a sweep with a snapshot that is not JSON was stored")
	}
	if _, err := d.w.ExecContext(ctx, `DELETE FROM sweeps WHERE id = ?`, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := d.SweepLabels(ctx, ids[0]); !errors.Is(err, ErrNotFound) {
		t.Errorf("SweepLabels of a deleted sweep = %v; want ErrNotFound", err)
	}
}
