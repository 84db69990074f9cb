package ingest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
)

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const goodJSONL = `{"id":"a","text":"the quick brown fox","source":"web","lang":"en","url":"http://x"}
{"id":"b","text":"the quick brown cat","source":"web","lang":"en"}
{"id":"c","text":"ein schneller brauner fuchs","source":"books","language":"de"}
`

// goodDataset imports goodJSONL into a new store in a new folder (where the test may
// write its other files) and returns the store, the folder and the import's report.
func goodDataset(t *testing.T) (*db.DB, string, Report) {
	t.Helper()
	dir := t.TempDir()
	store := dbtest.OpenFile(t, filepath.Join(dir, "s.db"))
	rep, err := File(context.Background(), store, writeFile(t, dir, "docs.jsonl", goodJSONL), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return store, dir, rep
}

func TestImportAllOrNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := dbtest.OpenFile(t, filepath.Join(dir, "s.db"))
	ctx := context.Background()
	rep, err := File(ctx, store, writeFile(t, dir, "sample.jsonl", goodJSONL), Options{Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Accepted != 3 || rep.Dataset.Name != "sample" || rep.Dataset.Version != 1 || rep.Dataset.ContentHash == "" {
		t.Fatalf("report = %+v", rep)
	}
	o, _ := store.DatasetOverview(ctx, rep.Dataset.ID)
	if fmt.Sprint(o.Langs) != "[{en 2} {de 1}]" || fmt.Sprint(o.Sources) != "[{web 2} {books 1}]" {
		t.Errorf("promoted columns: langs %v sources %v", o.Langs, o.Sources)
	}

	// A file with bad records: nothing lands, every bad record is reported with its place.
	bad := goodJSONL + `{"id":"d","text":"bad ` + "\xff" + `"}` + "\n" + `{"id":"a","text":"dup id"}` + "\n" + `not json` + "\n"
	_, err = File(ctx, store, writeFile(t, dir, "sample.jsonl", bad), Options{BatchSize: 2})
	var ie *Error
	if !errors.As(err, &ie) {
		t.Fatalf("bad file: err = %v; want *ingest.Error", err)
	}
	// The duplicate id is listed too, though an earlier record was bad already.
	if ie.Report.Rejected != 3 || len(ie.Report.Errors) != 3 || !strings.HasPrefix(ie.Report.Errors[0].Error(), "sample.jsonl:4: field text: invalid UTF-8") ||
		ie.Report.Errors[1].Error() != `sample.jsonl:5: field id: duplicate id "a"` {
		t.Errorf("report = %+v (errors %v)", ie.Report, ie.Report.Errors)
	}
	if !strings.Contains(err.Error(), "nothing was imported") {
		t.Errorf("message %q does not say nothing was imported", err)
	}
	list, _ := store.Datasets(ctx)
	if len(list) != 1 {
		t.Errorf("%d datasets after a refused import; want 1", len(list))
	}
	if n, _ := store.CountDocuments(ctx); n != 3 {
		t.Errorf("%d documents after a refused import; want 3", n)
	}

	// -skip-bad: the good records land as version 2 (the same documents as version 1,
	// hence NewVersion), the bad ones go to the rejects file.
	var rejects bytes.Buffer
	rep, err = File(ctx, store, writeFile(t, dir, "sample.jsonl", bad), Options{SkipBad: true, NewVersion: true, Rejects: &rejects, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Accepted != 3 || rep.Rejected != 3 || rep.Dataset.Version != 2 {
		t.Errorf("skip-bad report = %+v", rep)
	}
	lines := strings.Split(strings.TrimSpace(rejects.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], `duplicate id \"a\"`) || !strings.Contains(lines[1], `sample.jsonl:5`) {
		t.Errorf("rejects file:\n%s", rejects.String())
	}
}

func TestImportLabels(t *testing.T) {
	t.Parallel()
	store, dir, rep := goodDataset(t)
	ctx := context.Background()
	labelsCSV := "a,b,category,duplicate,annotator,note\n" +
		"a,b,minor edits,,ann1,one word\n" +
		"a,c,6,,ann1,\n" +
		"b,zz,different,,ann1,\n" +
		"a,b,lookalike,,ann1,\n" +
		"b,c,partial,,ann2,\n" +
		"a,a,exact,,ann2,\n"
	_, err := LabelsFile(ctx, store, writeFile(t, dir, "labels.csv", labelsCSV), LabelOptions{DatasetID: rep.Dataset.ID, Create: true})
	var le *LabelError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v; want *LabelError", err)
	}
	want := []string{
		`labels.csv:4: field b: unknown document id "zz"`,
		`labels.csv:5: field category: "lookalike" is not in the campaign's list`,
		`labels.csv:6: field duplicate: required for category "partial"`,
		`labels.csv:7: field b: the same document as a`,
	}
	for i, w := range want {
		if i >= len(le.Report.Errors) || !strings.HasPrefix(le.Report.Errors[i].Error(), w) {
			t.Errorf("error %d = %v; want %q", i, le.Report.Errors, w)
		}
	}
	if o, _ := store.DatasetOverview(ctx, rep.Dataset.ID); o.Pairs != 0 {
		t.Errorf("%d pairs after a refused label import; want 0", o.Pairs)
	}
	good := "a,b,category,duplicate,annotator,note\na,b,minor,,ann1,\na,c,translation,,ann1,\nb,c,partial,yes,ann2,\n"
	lrep, err := LabelsFile(ctx, store, writeFile(t, dir, "labels.csv", good), LabelOptions{DatasetID: rep.Dataset.ID, Create: true})
	if err != nil || lrep.Accepted != 3 {
		t.Fatalf("LabelsFile = %+v, %v", lrep, err)
	}
	jsonl := `{"a":"a","b":"b","category":"exact","duplicate":true,"annotator":"ann2"}` + "\n"
	if _, err := Labels(ctx, store, strings.NewReader(jsonl), "more.jsonl", LabelOptions{DatasetID: rep.Dataset.ID}); err != nil {
		t.Fatal(err)
	}
	o, _ := store.DatasetOverview(ctx, rep.Dataset.ID)
	if o.Pairs != 3 || o.Annotators != 2 || fmt.Sprint(o.Categories) != "[{exact 1} {minor 1} {partial 1} {translation 1}]" {
		t.Errorf("overview = %+v", o)
	}
}

// A file that gives one annotator two different answers on one pair (either order of
// the pair) is refused at the later row, naming the earlier one; the same answer twice,
// and another annotator's or an adjudication's answer on the pair, are not conflicts.
func TestImportLabelsContradictingRows(t *testing.T) {
	t.Parallel()
	store, dir, rep := goodDataset(t)
	ctx := context.Background()
	contradicting := "a,b,category,duplicate,annotator\n" +
		"a,b,exact,,ann1\n" +
		"a,b,exact,,ann1\n" + // the same answer again
		"a,b,different,,ann2\n" + // another annotator
		"b,a,different,,ann1\n" + // the pair the other way round: a conflict
		"a,c,partial,yes,ann1\n" +
		"c,a,partial,no,ann1\n" // the same category, another duplicate answer
	_, err := LabelsFile(ctx, store, writeFile(t, dir, "labels.csv", contradicting), LabelOptions{DatasetID: rep.Dataset.ID, Create: true})
	var le *LabelError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v; want *LabelError", err)
	}
	want := []string{
		`labels.csv:5: field category: labels.csv:2 already gives import:ann1's label on this pair as "exact" (duplicate); this row says "different" (not a duplicate)`,
		`labels.csv:7: field duplicate: labels.csv:6 already gives import:ann1's label on this pair as "partial" (duplicate); this row says "partial" (not a duplicate)`,
	}
	if len(le.Report.Errors) != len(want) {
		t.Fatalf("errors %v; want %d", le.Report.Errors, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(le.Report.Errors[i].Error(), w) {
			t.Errorf("error %d = %v;\nwant prefix %q", i, le.Report.Errors[i], w)
		}
	}
	if o, _ := store.DatasetOverview(ctx, rep.Dataset.ID); o.Pairs != 0 {
		t.Errorf("%d pairs after a refused label import; want 0", o.Pairs)
	}
	// With -skip-bad the first answers go in and the contradicting rows are left out.
	lrep, err := LabelsFile(ctx, store, writeFile(t, dir, "labels.csv", contradicting), LabelOptions{DatasetID: rep.Dataset.ID, Create: true, SkipBad: true})
	if err != nil || lrep.Accepted != 4 || lrep.Rejected != 2 {
		t.Fatalf("LabelsFile with SkipBad = %+v, %v; want 4 accepted, 2 refused", lrep, err)
	}
}

// TestKilledImportLeavesStoreIntact runs an import in a child process, kills it with
// SIGKILL while batches are landing, and checks the database: the earlier dataset is
// whole, the half-written import is invisible, and it is cleaned once stale.
func TestKilledImportLeavesStoreIntact(t *testing.T) {
	if os.Getenv("DEDUP_IMPORT_CHILD") != "" {
		return // the child's part is TestHelperImportChild
	}
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "s.db")
	ctx := context.Background()
	store, err := db.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := File(ctx, store, writeFile(t, dir, "first.jsonl", goodJSONL), Options{}); err != nil {
		t.Fatal(err)
	}
	store.Close()

	var big strings.Builder
	for i := range 200_000 {
		fmt.Fprintf(&big, `{"id":"doc-%d","text":"document %d with some words that repeat %d times"}`+"\n", i, i, i%17)
	}
	bigPath := writeFile(t, dir, "big.jsonl", big.String())

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperImportChild$", "-test.v")
	cmd.Env = append(os.Environ(), "DEDUP_IMPORT_CHILD=1", "DEDUP_DB="+dbPath, "DEDUP_IN="+bigPath)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	batches := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "progress ") {
			batches++
			if batches == 5 {
				break
			}
		}
	}
	if batches < 5 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child finished or failed before 5 batches landed (%d)", batches)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	store, err = db.Open(ctx, dbPath)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer store.Close()
	list, _ := store.Datasets(ctx)
	if len(list) != 1 || list[0].Name != "first" || list[0].Docs != 3 {
		t.Errorf("datasets after the kill = %+v; want only 'first' with 3 documents", list)
	}
	if n, _ := store.CountDocuments(ctx); n != 3 {
		t.Errorf("visible documents after the kill = %d; want 3", n)
	}
	if n, err := store.CleanStaleImports(ctx, -time.Hour); err != nil || n != 1 {
		t.Errorf("CleanStaleImports = %d, %v; want the killed import removed", n, err)
	}
	if ok, err := store.IntegrityCheck(ctx); err != nil || !ok {
		t.Errorf("integrity check after the kill: %v %v", ok, err)
	}
}

// TestHelperImportChild is the child process of TestKilledImportLeavesStoreIntact.
func TestHelperImportChild(t *testing.T) {
	if os.Getenv("DEDUP_IMPORT_CHILD") == "" {
		t.Skip("child process of TestKilledImportLeavesStoreIntact")
	}
	store, err := db.Open(context.Background(), os.Getenv("DEDUP_DB"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = File(context.Background(), store, os.Getenv("DEDUP_IN"), Options{
		BatchSize: 500,
		Corpus:    corpus.Options{},
		Progress: func(p Progress) {
			fmt.Printf("progress %d\n", p.Docs)
			time.Sleep(20 * time.Millisecond)
		},
	})
	t.Fatalf("import finished before it was killed: %v", err)
}

// A refused import counts its bad records in words, with thousands separators.
func TestRefusalCountsInWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&Error{Report: Report{Valid: 1, Rejected: 1}}, "import refused, nothing was imported: 1 bad record of 2 ("},
		{&Error{Report: Report{Valid: 1998, Rejected: 2}}, "import refused, nothing was imported: 2 bad records of 2,000 ("},
		{&LabelError{Report: LabelReport{Rows: 8, Rejected: 1}}, "label import refused, nothing was imported: 1 bad row of 8"},
		{&LabelError{Report: LabelReport{Rows: 1500, Rejected: 1200}}, "label import refused, nothing was imported: 1,200 bad rows of 1,500"},
	} {
		if got := tc.err.Error(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("Error() = %q; want it to start %q", got, tc.want)
		}
	}
}
