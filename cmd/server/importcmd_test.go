package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/db"
)

// TestImportCommandsAsAPersonTypesThem runs import and import-labels on the real files
// of internal/ingest/testdata the way the README shows them. It changes the working
// directory (default rejects files land there), so it does not run in parallel.
func TestImportCommandsAsAPersonTypesThem(t *testing.T) {
	dir := t.TempDir()
	testdata, err := filepath.Abs("../../internal/ingest/testdata")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	dbPath := filepath.Join(dir, "studio.db")
	cmd := func(args ...string) (string, string, error) {
		t.Helper()
		var out, errOut bytes.Buffer
		for i, a := range args {
			args[i] = strings.ReplaceAll(a, "TESTDATA", testdata)
		}
		err := run(args, &out, &errOut)
		return out.String(), errOut.String(), err
	}

	// A command that reads a database refuses one that is not there, and makes none.
	_, _, err = cmd("import-labels", "-dataset", "hb", "-in", "TESTDATA/numeric-labels.jsonl")
	if !errors.Is(err, db.ErrNoDatabase) {
		t.Errorf("import-labels without -db: err = %v; want db.ErrNoDatabase", err)
	}
	if _, err := os.Stat("dedupstudio.db"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("import-labels without -db made dedupstudio.db (stat: %v)", err)
	}
	_, _, err = cmd("manifest", "export", "-db", "nothere.db", "-manifest", "1", "-out", "x")
	if !errors.Is(err, db.ErrNoDatabase) {
		t.Errorf("manifest export of a missing database: err = %v; want db.ErrNoDatabase", err)
	}

	out, _, err := cmd("import", "-db", dbPath, "-in", "TESTDATA/numeric-ids.jsonl", "-dataset", "hb")
	if err != nil || !strings.HasPrefix(out, `imported 6 documents into dataset "hb" version 1`) {
		t.Fatalf("import: %q, %v", out, err)
	}
	// The same file again is refused, saying which version it repeats and how to go on.
	_, _, err = cmd("import", "-db", dbPath, "-in", "TESTDATA/numeric-ids.jsonl", "-dataset", "hb")
	if err == nil || !strings.Contains(err.Error(), `identical to dataset "hb" version 1`) || !strings.Contains(err.Error(), "add -new-version") {
		t.Errorf("identical import: err = %v", err)
	}
	out, _, err = cmd("import", "-db", dbPath, "-in", "TESTDATA/numeric-ids.jsonl", "-dataset", "hb", "-new-version")
	if err != nil || !strings.HasPrefix(out, `imported 6 documents into dataset "hb" version 2`) {
		t.Fatalf("import -new-version: %q, %v", out, err)
	}

	_, _, err = cmd("import-labels", "-db", dbPath, "-dataset", "hb", "-campaign", "gold", "-in", "TESTDATA/numeric-labels.jsonl")
	if err == nil || !strings.Contains(err.Error(), `no such campaign "gold" in this dataset (it has none yet)`) {
		t.Errorf("import-labels into a campaign that is not there: err = %v", err)
	}
	_, _, err = cmd("import-labels", "-db", dbPath, "-dataset", "hb", "-version", "7", "-in", "TESTDATA/numeric-labels.jsonl")
	if err == nil || !strings.Contains(err.Error(), `dataset "hb" has no version 7 (the newest is 2)`) {
		t.Errorf("import-labels -version 7: err = %v", err)
	}
	out, errOut, err := cmd("import-labels", "-db", dbPath, "-dataset", "hb", "-version", "1", "-campaign", "gold", "-create", "-in", "TESTDATA/numeric-labels.jsonl")
	if err != nil || out != "campaign \"gold\" (created) of dataset \"hb\" version 1: 4 new, 0 unchanged, 0 rejected of 4 rows\n" ||
		!strings.Contains(errOut, `labels for dataset "hb" version 1 (6 documents)`) {
		t.Fatalf("import-labels -create: %q %q, %v", out, errOut, err)
	}
	out, _, err = cmd("import-labels", "-db", dbPath, "-dataset", "hb", "-version", "1", "-campaign", "gold", "-in", "TESTDATA/numeric-labels.jsonl")
	if err != nil || out != "campaign \"gold\" of dataset \"hb\" version 1: 0 new, 4 unchanged, 0 rejected of 4 rows\n" {
		t.Errorf("repeated import-labels: %q, %v", out, err)
	}

	// Bad rows: refused with the count of all rows; with -skip-bad the rejects, whole,
	// go to a new file in the working directory whose path is printed.
	_, errOut, err = cmd("import-labels", "-db", dbPath, "-dataset", "hb", "-version", "1", "-campaign", "gold", "-in", "TESTDATA/eight-rows.csv")
	if err == nil || !strings.Contains(err.Error(), "5 bad rows of 8") || !strings.Contains(errOut, "eight-rows.csv:5: field b: unknown document id") {
		t.Errorf("eight rows, 5 bad: err = %v, stderr %q", err, errOut)
	}
	out, errOut, err = cmd("import-labels", "-db", dbPath, "-dataset", "hb", "-version", "1", "-campaign", "gold", "-skip-bad", "-in", "TESTDATA/eight-rows.csv")
	if err != nil || !strings.HasSuffix(out, ": 3 new, 0 unchanged, 5 rejected of 8 rows\n") {
		t.Errorf("eight rows -skip-bad: %q, %v", out, err)
	}
	m := regexp.MustCompile(`rejected records, with their reasons: (\S+)`).FindStringSubmatch(errOut)
	if m == nil || filepath.Dir(m[1]) != dir || !strings.HasPrefix(filepath.Base(m[1]), "rejects-hb-") {
		t.Fatalf("stderr does not name the rejects file in %s:\n%s", dir, errOut)
	}
	b, err := os.ReadFile(m[1])
	if err != nil || strings.Count(string(b), "\n") != 5 || !strings.Contains(string(b), `"note":"partial needs a duplicate answer"`) {
		t.Errorf("rejects file %s (%v):\n%s", m[1], err, b)
	}
	if entries, _ := filepath.Glob(filepath.Join(testdata, "*rejects*")); len(entries) != 0 {
		t.Errorf("rejects written next to the input: %v", entries)
	}

	// A row that contradicts its category is kept and named.
	out, errOut, err = cmd("import-labels", "-db", dbPath, "-dataset", "hb", "-version", "1", "-campaign", "gold", "-in", "TESTDATA/contradicting.csv")
	if err != nil || !strings.Contains(errOut, "2 rows override what their category says (kept as written):\n") || !strings.Contains(errOut, "contradicting.csv:4: field duplicate") ||
		!strings.HasSuffix(out, "0 rejected of 5 rows\n") {
		t.Errorf("contradicting rows: %q %q, %v", out, errOut, err)
	}
}

// gzJSONL writes n compressible documents of about size bytes as a gzip JSONL file.
func gzJSONL(t *testing.T, path string, n, size int) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for i := range n {
		fmt.Fprintf(zw, `{"id":"d%d","text":"document %d %s"}`+"\n", i, i, strings.Repeat("word ", size/5))
	}
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The caps on one import refuse a small file that decompresses into much, and a cut
// gzip stream says so and how far it got; nothing lands either way.
func TestImportCapsAndTruncatedGzip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "studio.db")
	in := filepath.Join(dir, "docs.jsonl.gz")
	gzJSONL(t, in, 300, 10_000) // 3 MB of JSONL in a few kB
	cmd := func(args ...string) error {
		var out, errOut bytes.Buffer
		return run(append([]string{"import", "-db", dbPath}, args...), &out, &errOut)
	}
	err := cmd("-in", in, "-max-docs", "100")
	if err == nil || !strings.Contains(err.Error(), "nothing was imported: docs.jsonl.gz: more than 100 records, the cap on one import") {
		t.Errorf("-max-docs 100: err = %v", err)
	}
	err = cmd("-in", in, "-max-input-mb", "1")
	if err == nil || !strings.Contains(err.Error(), "nothing was imported: docs.jsonl.gz: more than 1 MiB of data once decompressed, the cap on one import") {
		t.Errorf("-max-input-mb 1: err = %v", err)
	}
	data, _ := os.ReadFile(in)
	cut := filepath.Join(dir, "cut.jsonl.gz")
	os.WriteFile(cut, data[:len(data)/2], 0o644)
	err = cmd("-in", cut)
	if err == nil || !regexp.MustCompile(`nothing was imported: cut\.jsonl\.gz: truncated gzip stream after \d+ bytes$`).MatchString(err.Error()) {
		t.Errorf("truncated gzip: err = %v; want the file, \"truncated gzip stream\" and how far", err)
	}
	store, err := db.OpenExisting(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if n, _ := store.CountDocuments(context.Background()); n != 0 {
		t.Errorf("%d documents stored by refused imports; want 0", n)
	}
	// Within the caps the file imports.
	if err := cmd("-in", in, "-max-docs", "300", "-max-input-mb", "4"); err != nil {
		t.Errorf("within the caps: %v", err)
	}
}
