package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/memtest"
)

// A refused import still lists every bad record: a duplicate id after an earlier bad
// record too, and an empty text.
func TestRefusedImportListsEveryBadRecord(t *testing.T) {
	t.Parallel()
	store := dbtest.OpenFile(t, filepath.Join(t.TempDir(), "s.db"))
	in := `{"id":"a","text":"one"}` + "\n" +
		`{"id":"b","txt":"typo"}` + "\n" +
		`{"id":"c","text":""}` + "\n" +
		`{"id":"a","text":"again"}` + "\n"
	r, err := corpus.NewReader(strings.NewReader(in), "docs.jsonl", corpus.JSONL, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var rejects bytes.Buffer
	_, err = Documents(context.Background(), store, r, "docs.jsonl", Options{BatchSize: 1, Rejects: &rejects})
	var ie *Error
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v; want an *Error", err)
	}
	var got []string
	for _, e := range ie.Report.Errors {
		got = append(got, e.Error())
	}
	want := []string{"docs.jsonl:2: field text: missing", "docs.jsonl:3: field text: empty", `docs.jsonl:4: field id: duplicate id "a"`}
	if fmt.Sprint(got) != fmt.Sprint(want) || ie.Report.Rejected != 3 {
		t.Errorf("listed %q (%d rejected); want %q", got, ie.Report.Rejected, want)
	}
	if !strings.Contains(rejects.String(), `"record":{"id":"a","text":"again"}`) {
		t.Errorf("rejects file does not hold the duplicate whole:\n%s", rejects.String())
	}
	if n, _ := store.CountDocuments(context.Background()); n != 0 {
		t.Errorf("%d documents stored; want 0", n)
	}
}

// writeParquet writes n documents of about size bytes each (highly compressible, as in
// the report: 1,000 documents of 1 MB in a file of a few hundred kB) to path, pageBytes
// of text per page at most (a page holds at least one value).
func writeParquet(t testing.TB, path string, n, size, pageBytes int) {
	t.Helper()
	type row struct {
		ID   string `parquet:"id"`
		Text string `parquet:"text"`
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[row](f, parquet.Compression(&zstd.Codec{}), parquet.DataPageStatistics(false),
		parquet.SkipPageBounds("text"), parquet.PageBufferSize(pageBytes))
	for i := range n {
		text := fmt.Sprintf("document %d ", i) + strings.Repeat(fmt.Sprintf("w%d ", i%97), size/4)
		if _, err := w.Write([]row{{ID: fmt.Sprint("doc-", i), Text: text}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// The writer's buffers sit in pools that two collections empty.
	runtime.GC()
	runtime.GC()
}

// A Parquet import of large, highly compressible documents streams too: the report's
// 1,000 documents of 1 MB in a file of a few hundred kB took 2.47 GB. The heap stays
// bounded by a page of each column and a batch of a bounded number of bytes.
func TestParquetImportMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short mode")
	}
	dir := t.TempDir()
	store := dbtest.OpenFile(t, filepath.Join(dir, "mem.db"))
	path := filepath.Join(dir, "big.parquet")
	const docs, size = 1000, 1_000_000
	writeParquet(t, path, docs, size, 1<<20)
	memtest.SoftLimit(t, 48<<20)
	stop := memtest.HeapPeak()
	rep, err := File(context.Background(), store, path, Options{})
	peak := stop()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Accepted != docs {
		t.Fatalf("imported %d; want %d", rep.Accepted, docs)
	}
	st, _ := os.Stat(path)
	t.Logf("peak heap in use %d MB while importing %d documents of 1 MB from a %d kB Parquet file", peak>>20, docs, st.Size()>>10)
	if peak > 64<<20 {
		t.Errorf("peak heap in use %d MB; want under 64 MB", peak>>20)
	}
}

// A page larger than the cap is refused from its header, before it is decompressed.
func TestParquetHugePageRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short mode")
	}
	dir := t.TempDir()
	store := dbtest.OpenFile(t, filepath.Join(dir, "mem.db"))
	path := filepath.Join(dir, "huge-page.parquet")
	writeParquet(t, path, 100, 1_000_000, 1<<30) // one page of 100 MB
	memtest.SoftLimit(t, 24<<20)
	stop := memtest.HeapPeak()
	_, err := File(context.Background(), store, path, Options{})
	peak := stop()
	var fe *corpus.FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "huge-page.parquet: row group 0, column text: a page of") || !strings.Contains(err.Error(), "exceeds the 64 MiB cap on a Parquet page") {
		t.Fatalf("err = %v; want a *corpus.FormatError naming the page over the cap", err)
	}
	if peak > 32<<20 {
		t.Errorf("peak heap in use %d MB refusing a 100 MB page; want under 32 MB", peak>>20)
	}
	if n, _ := store.CountDocuments(context.Background()); n != 0 {
		t.Errorf("%d documents stored; want 0", n)
	}
}
