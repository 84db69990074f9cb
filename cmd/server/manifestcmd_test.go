package main

import (
	"bytes"
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
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
	"github.com/dedupstudio/dedupstudio/internal/realtext"
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
	var lines []string
	for i, d := range realtext.Docs(t, 8) {
		line, _ := json.Marshal(d)
		lines = append(lines, string(line))
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
		m, err := manifests.Run(ctx, store, sigcache.New(store), manifests.Request{DatasetID: rep.Dataset.ID, Params: p, By: prep, ApprovalsRequired: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := manifests.BulkApprove(ctx, store, prep, m, 0.99, -1); err != nil {
			t.Fatal(err)
		}
		m, _ = store.Manifest(ctx, m.ID)
		if err := manifests.RequestSignOff(ctx, store, prep, m); err != nil {
			t.Fatal(err)
		}
		m, _ = store.Manifest(ctx, m.ID)
		if signed, err := manifests.Review(ctx, store, appr, m, review.Approve, "", m.ContentHash, "test"); err != nil || !signed.Signed {
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
	// -out with a trailing slash, as docs/cli.md writes it: the files it names have one
	// slash before their names (walk 8 saw "export//removals.csv").
	if err := run([]string{"manifest", "export", "-db", path, "-manifest", fmt.Sprint(first), "-out", out + "/"}, &stdout, &stderr); err != nil {
		t.Fatalf("manifest export: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "3 documents tombstoned") || strings.Contains(stdout.String(), "//") {
		t.Errorf("stdout: %s", stdout.String())
	}
	for _, name := range manifests.ExportFiles {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("%s not written: %v", name, err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(out, manifests.RemovalsCSV))
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(recs) != 4 {
		t.Fatalf("removals.csv: %v, %d records\n%s", err, len(recs), b)
	}
	for _, r := range recs[1:] {
		if !strings.HasPrefix(r[3], "'@copy-") || r[6] != "exact" || r[17] != "approved" {
			t.Errorf("removal row %v; want a neutralised '@copy- id removed as an exact duplicate", r)
		}
	}
	b, _ = os.ReadFile(filepath.Join(out, manifests.SignOffJSON))
	var so struct {
		Status     string
		Record     review.Record
		ExportHead *review.AuditHead `json:"audit_head_at_export"`
	}
	if err := json.Unmarshal(b, &so); err != nil || so.Status != "current" || so.Record.Manifest != first {
		t.Errorf("signoff.json: %v %+v", err, so)
	}
	// The audit chain's head, published at sign-off and at the export, with the export
	// the head's last entry.
	if h := so.Record.AuditHead; h == nil || len(h.Hash) != 64 || so.ExportHead == nil || so.ExportHead.Entries <= h.Entries ||
		!strings.Contains(stdout.String(), "audit chain head at the export: "+so.ExportHead.Hash) {
		t.Errorf("signoff.json's heads: at sign-off %+v, at export %+v; stdout %s", h, so.ExportHead, stdout.String())
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

// "audit verify" passes an intact log and names the first edited entry, a forged row
// without hashes (which it used to seal, then call intact) and a log cut short behind
// the head a sign-off record kept; it reads only.
func TestAuditVerifyCommand(t *testing.T) {
	t.Parallel()
	path, first, _ := signedManifests(t)
	var stdout, stderr bytes.Buffer
	if err := run([]string{"audit", "verify", "-db", path}, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "audit log intact") {
		t.Fatalf("audit verify of an intact log: %v\n%s", err, stdout.String())
	}
	ctx := context.Background()
	store, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	sos, err := store.SignOffs(ctx, first)
	store.Close()
	if err != nil || len(sos) == 0 || sos[0].Record.AuditHead == nil {
		t.Fatalf("the first manifest's sign-off: %+v, %v; want a record with the audit head", sos, err)
	}
	kept := *sos[0].Record.AuditHead
	withHead := []string{"audit", "verify", "-db", path, "-head", kept.Hash, "-entries", fmt.Sprint(kept.Entries)}
	stdout.Reset()
	if err := run(withHead, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), fmt.Sprintf("the head kept elsewhere is entry %d", kept.Entries)) {
		t.Errorf("audit verify against the sign-off's head: %v\n%s", err, stdout.String())
	}
	// Entries cut off the end, back to before the sign-off: the chain alone still holds.
	cut := filepath.Join(t.TempDir(), "cut.db")
	copyFile(t, path, cut)
	rawExec(t, cut, `DROP TRIGGER audit_log_no_delete`, fmt.Sprintf(`DELETE FROM audit_log WHERE id >= %d`, kept.Entries))
	if err := run([]string{"audit", "verify", "-db", cut}, &stdout, &stderr); err != nil {
		t.Errorf("audit verify of a log cut short, without a head: %v (the chain alone holds)", err)
	}
	withHead[3] = cut
	if err := run(withHead, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "no entry carries the head kept elsewhere") {
		t.Errorf("audit verify -head of a log cut short: %v; want the kept head missing", err)
	}
	// A forged tail row with empty hashes: reported, and the file left as it was.
	forged := filepath.Join(t.TempDir(), "forged.db")
	copyFile(t, path, forged)
	rawExec(t, forged, `DROP TRIGGER audit_log_chained`, `INSERT INTO audit_log (id, at, actor, action, subject, detail)
		VALUES ((SELECT max(id) + 1 FROM audit_log), '2026-01-01T00:00:00Z', 'mallory', 'user.role', 'user:1', '{}')`)
	before, _ := os.ReadFile(forged)
	err = run([]string{"audit", "verify", "-db", forged}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "the row has no hash") {
		t.Errorf("audit verify of a forged tail row: %v; want it reported", err)
	}
	if after, _ := os.ReadFile(forged); !bytes.Equal(before, after) {
		t.Error("audit verify changed the database file")
	}
	if _, err := os.Stat(forged + "-wal"); err == nil {
		t.Error("audit verify left a -wal file beside the database")
	}
	rawExec(t, path, `DROP TRIGGER audit_log_no_update`, `UPDATE audit_log SET actor = 'mallory' WHERE id = 4`)
	err = run([]string{"audit", "verify", "-db", path}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "broken at entry 4") {
		t.Errorf("audit verify after an edit: %v; want entry 4 named", err)
	}
}

// rawExec runs statements on the database file as someone holding it would.
func rawExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range stmts {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
