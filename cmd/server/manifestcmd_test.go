package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/dedup"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
)

// signedManifests makes a store with a dataset of real documents, each of the first
// three twice (once uppercased), and two signed-off manifests removing the copies under
// two policies; it returns the path and the manifests' ids.
func signedManifests(t *testing.T) (string, int64, int64) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cli.db")
	store, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	f, err := os.Open("../../internal/lsh/testdata/corpus5000.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, _ := gzip.NewReader(f)
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var lines []string
	for i := 0; sc.Scan() && i < 8; i++ {
		var d struct{ ID, Text string }
		json.Unmarshal(sc.Bytes(), &d)
		lines = append(lines, sc.Text())
		if i < 3 {
			b, _ := json.Marshal(map[string]string{"id": "@copy-" + d.ID, "text": strings.ToUpper(d.Text)})
			lines = append(lines, string(b))
		}
	}
	r, _ := corpus.NewReader(strings.NewReader(strings.Join(lines, "\n")), "c.jsonl", corpus.JSONL, corpus.Options{})
	rep, err := ingest.Documents(ctx, store, r, "c.jsonl", ingest.Options{Dataset: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	prep, _ := store.CreateUser(ctx, "t", "prep", auth.Reviewer, "x")
	appr, _ := store.CreateUser(ctx, "t", "appr", auth.Approver, "x")
	var ids []int64
	for _, pol := range []cluster.Policy{cluster.Components, cluster.KeeperStar} {
		rule, _ := cluster.ParseRule("shortest")
		p := review.Params{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 16, Rows: 8}, Threshold: 0.9, Verification: review.Estimate,
			Policy: pol, Rule: rule, CodeVersion: "test"}
		m, err := dedup.Run(ctx, store, sigcache.New(store), dedup.Request{DatasetID: rep.Dataset.ID, Params: p, By: prep, ApprovalsRequired: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := dedup.BulkApprove(ctx, store, prep, m, 0.99); err != nil {
			t.Fatal(err)
		}
		m, _ = store.Manifest(ctx, m.ID)
		if err := dedup.RequestSignOff(ctx, store, prep, m); err != nil {
			t.Fatal(err)
		}
		m, _ = store.Manifest(ctx, m.ID)
		if signed, err := dedup.Review(ctx, store, appr, m, review.Approve, "", m.ContentHash, "test"); err != nil || !signed.Signed {
			t.Fatalf("sign-off: %v %v", signed, err)
		}
		ids = append(ids, m.ID)
	}
	return path, ids[0], ids[1]
}

// "manifest export" exports a signed-off manifest and writes its four files; a second
// manifest whose dataset changed since (the first export tombstoned its removals) is
// refused with nothing written.
func TestManifestExportCommand(t *testing.T) {
	t.Parallel()
	path, first, second := signedManifests(t)
	out := filepath.Join(t.TempDir(), "export")
	var stdout, stderr bytes.Buffer
	if err := run([]string{"manifest", "export", "-db", path, "-manifest", fmt.Sprint(first), "-out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("manifest export: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "3 document(s) tombstoned") {
		t.Errorf("stdout: %s", stdout.String())
	}
	for _, name := range dedup.ExportFiles {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("%s not written: %v", name, err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(out, dedup.RemovalsCSV))
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(recs) != 4 {
		t.Fatalf("removals.csv: %v, %d records\n%s", err, len(recs), b)
	}
	for _, r := range recs[1:] {
		if !strings.HasPrefix(r[3], "'@copy-") || r[6] != "exact" || r[17] != "approved" {
			t.Errorf("removal row %v; want a neutralised '@copy- id removed as an exact duplicate", r)
		}
	}
	b, _ = os.ReadFile(filepath.Join(out, dedup.SignOffJSON))
	var so struct {
		Status string
		Record review.Record
	}
	if err := json.Unmarshal(b, &so); err != nil || so.Status != "current" || so.Record.Manifest != first {
		t.Errorf("signoff.json: %v %+v", err, so)
	}
	// Running it again rewrites the files of the exported manifest.
	if err := run([]string{"manifest", "export", "-db", path, "-manifest", fmt.Sprint(first), "-out", out}, &stdout, &stderr); err != nil {
		t.Errorf("second export of the same manifest: %v", err)
	}
	if err := run([]string{"manifest", "export", "-db", path, "-manifest", "999", "-out", t.TempDir()}, &stdout, &stderr); err == nil ||
		!strings.Contains(err.Error(), "-manifest: no manifest 999 in "+path) {
		t.Errorf("export of a manifest that does not exist: %v; want it and the database named", err)
	}
	out2 := filepath.Join(t.TempDir(), "export2")
	err = run([]string{"manifest", "export", "-db", path, "-manifest", fmt.Sprint(second), "-out", out2}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the dataset changed since the run: manifest %d was exported", first)) {
		t.Errorf("export of a manifest whose dataset changed: %v", err)
	}
	if entries, _ := os.ReadDir(out2); len(entries) != 0 {
		t.Errorf("a refused export wrote %d file(s)", len(entries))
	}
}

// "audit verify" passes an intact log and names the first edited entry.
func TestAuditVerifyCommand(t *testing.T) {
	t.Parallel()
	path, _, _ := signedManifests(t)
	var stdout, stderr bytes.Buffer
	if err := run([]string{"audit", "verify", "-db", path}, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "audit log intact") {
		t.Fatalf("audit verify of an intact log: %v\n%s", err, stdout.String())
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`DROP TRIGGER audit_log_no_update`, `UPDATE audit_log SET actor = 'mallory' WHERE id = 4`} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	err = run([]string{"audit", "verify", "-db", path}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "broken at entry 4") {
		t.Errorf("audit verify after an edit: %v; want entry 4 named", err)
	}
}
