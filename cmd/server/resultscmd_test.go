package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/db"
)

// import-results as a person types it: a CSV of pairs from the engine, an unknown id
// refused by line and field, then skipped and counted; the configuration from a manifest.
func TestImportResultsCommand(t *testing.T) {
	t.Parallel()
	path, configID, _ := signedManifests(t)
	ctx := context.Background()
	store, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := store.ManifestRows(ctx, configID)
	store.Close()
	if err != nil || len(rows) == 0 {
		t.Fatalf("rows %v, %v", rows, err)
	}
	var csv strings.Builder
	csv.WriteString("id_a,id_b,score\n")
	for _, r := range rows {
		fmt.Fprintf(&csv, "%s,%s,0.97\n", r.KeeperExtID, r.ExtID)
	}
	csv.WriteString(rows[0].KeeperExtID + ",not-in-the-dataset,0.91\n")
	in := filepath.Join(t.TempDir(), "pairs.csv")
	if err := os.WriteFile(in, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"import-results", "-db", path, "-dataset", "cli", "-format", "pairs", "-in", in, "-manifest", fmt.Sprint(configID)}
	var stdout, stderr bytes.Buffer
	err = run(args, &stdout, &stderr)
	want := fmt.Sprintf(`pairs.csv:%d: field id_b: no document "not-in-the-dataset" in the dataset`, len(rows)+2)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("import-results = %v; want %q", err, want)
	}
	stdout.Reset()
	if err := run(append(args, "-skip-unknown"), &stdout, &stderr); err != nil {
		t.Fatalf("import-results -skip-unknown: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, w := range []string{"(draft) of dataset \"cli\"", fmt.Sprintf("%d removal(s) from pairs.csv (pairs, %d record(s)); keepers by rule", len(rows), len(rows)+1),
		"skipped 1 record(s) naming documents the dataset does not have (e.g. not-in-the-dataset)", "review: every cluster"} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout %q; want %q", out, w)
		}
	}
	if err := run([]string{"import-results", "-db", path, "-dataset", "cli", "-format", "pairs", "-in", in}, &stdout, &stderr); err == nil ||
		!strings.Contains(err.Error(), "name the configuration production ran") {
		t.Errorf("without a configuration: %v", err)
	}
	if err := run([]string{"import-results", "-db", path, "-dataset", "nope", "-format", "pairs", "-in", in}, &stdout, &stderr); err == nil ||
		!strings.Contains(err.Error(), `no dataset named or numbered "nope"`) {
		t.Errorf("unknown dataset: %v", err)
	}
}
