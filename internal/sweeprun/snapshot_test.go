package sweeprun

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/db"
)

// TestDecodeSnapshot: a stored snapshot decoded pair by pair is what decoding the list
// whole gives (null and the empty list included), and what is not a list of pairs,
// or is followed by more, is an error naming what is wrong.
func TestDecodeSnapshot(t *testing.T) {
	t.Parallel()
	var pairs []snapPair
	for i := range 50 {
		pairs = append(pairs, snapPair{ID: int64(i + 1), A: int64(i), B: int64(2*i + 1), Category: "minor {x}", Duplicate: i%3 == 0,
			Design: "jdraw", Stratum: fmt.Sprint(i % 4), FrameSize: 1000 * i, Origin: "import"})
	}
	full, err := json.Marshal(pairs)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{string(full), "[]", "null", " [ ] \n", `[{"id":7,"a":1,"b":2,"cat":"exact","dup":true}]`} {
		var want []snapPair
		if err := json.Unmarshal([]byte(text), &want); err != nil {
			t.Fatal(err)
		}
		got, err := decodeSnapshot(text)
		if err != nil || !slices.Equal(got, want) || (got == nil) != (want == nil) {
			t.Errorf("decodeSnapshot(%.40q) = %d pairs, %v; want %d pairs", text, len(got), err, len(want))
		}
	}
	for text, want := range map[string]string{
		"":                      "EOF",
		`{"id":1}`:              "not a list",
		`[{"id":1},`:            "pair 2",
		`[{"id":"one"}]`:        "pair 1",
		`[1]`:                   "pair 1",
		`[{"id":1}] [{"id":2}]`: "data after the list",
		`null x`:                "data after the list",
	} {
		if _, err := decodeSnapshot(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("decodeSnapshot(%q) = %v; want an error with %q", text, err, want)
		}
	}
}

// TestSnapshotMigrated: a sweep stored before migration 0022 (its label snapshot in
// sweeps.labels) still rescores after the upgrade: the slider gives the figures it gave
// before, and the comparison with the campaign's labels counts the same changes, both
// read from the snapshot the migration copied into sweep_labels by a new process.
func TestSnapshotMigrated(t *testing.T) {
	ctx := context.Background()
	path := demoCopy(t)
	e := openEnv(t, path)
	grid := smallGrid()
	grid.Specs = grid.Specs[len(grid.Specs)/2 : len(grid.Specs)/2+1] // word 5, k=64
	grid.Verifications = grid.Verifications[:1]
	sw := e.run(StartRequest{CampaignID: e.campaign.ID, Name: "before the upgrade", Grid: grid})
	rs := e.results(sw.ID)
	c := rs[len(rs)-1].Config
	// A label after the sweep: the comparison has something to count.
	ids, err := e.store.DatasetDocumentIDs(ctx, e.campaign.DatasetID)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.AddLabels(ctx, e.campaign.ID, []db.NewLabel{{DocA: ids[0], DocB: ids[len(ids)-1], Annotator: "ann",
		Category: "different"}}, "test"); err != nil {
		t.Fatal(err)
	}
	before, err := e.svc.Select(ctx, sw.ID, c, 0.62)
	if err != nil {
		t.Fatal(err)
	}
	diff, err := e.svc.LabelsChanged(ctx, sw.ID)
	if err != nil || diff.N() != 1 {
		t.Fatalf("LabelsChanged = %+v, %v; want the one new label", diff, err)
	}

	// The store as a binary before 0022 left it: the snapshot in sweeps.labels, no
	// sweep_labels, schema 21 (0022 changes nothing else).
	raw, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE sweeps SET labels = (SELECT l.labels FROM sweep_labels l WHERE l.sweep_id = sweeps.id)`,
		`DROP TABLE sweep_labels`,
		`DELETE FROM schema_migrations WHERE version = 22`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var n int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM sweeps WHERE id = ? AND length(labels) > 1000`, sw.ID).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the old layout: %d sweeps with their snapshot in sweeps.labels, %v", n, err)
	}
	raw.Close()

	up := openEnv(t, path) // a new process: migrates, nothing cached
	if v, err := up.store.SchemaVersion(ctx); err != nil || v < 22 {
		t.Fatalf("schema version %d, %v after the upgrade", v, err)
	}
	after, err := up.svc.Select(ctx, sw.ID, c, 0.62)
	if err != nil {
		t.Fatalf("Select after the upgrade: %v", err)
	}
	if g, w := figures(t, after.Result), figures(t, before.Result); g != w {
		t.Errorf("the slider after the upgrade:\n%s\nbefore:\n%s", g, w)
	}
	if after.Misses != before.Misses || after.FalseMerges != before.FalseMerges || len(after.Outcomes) != len(before.Outcomes) {
		t.Errorf("after the upgrade %d misses, %d false merges, %d outcomes; before %d, %d, %d", after.Misses, after.FalseMerges,
			len(after.Outcomes), before.Misses, before.FalseMerges, len(before.Outcomes))
	}
	if d, err := up.svc.LabelsChanged(ctx, sw.ID); err != nil || d != diff {
		t.Errorf("LabelsChanged after the upgrade = %+v, %v; before %+v", d, err, diff)
	}
}
