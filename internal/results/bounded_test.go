package results

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/memtest"
)

// gzipPairs is a gzipped pairs CSV: the pair d0,d1 repeated repeats times, then
// distinct pairs of unknown documents x0..x(distinct-1) with d2.
func gzipPairs(t testing.TB, repeats, distinct int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	zw.Write([]byte("id_a,id_b,score\n"))
	row := []byte("d0,d1,0.9\n")
	chunk := bytes.Repeat(row, 10_000)
	for n := repeats; n > 0; n -= 10_000 {
		zw.Write(chunk[:min(n, 10_000)*len(row)])
	}
	for i := range distinct {
		fmt.Fprintf(zw, "x%d,d2,0.8\n", i)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A results upload of one pair repeated millions of times (the report: a 35 MB .gz
// of one pair repeated 250M times grew the server to 24 GB, some 650 bytes a row)
// reads into one pair: the heap grows with the distinct pairs and documents, not with
// the rows.
func TestPairsMemoryBoundedByDistinctPairs(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short mode")
	}
	const repeats, distinct = 2_000_000, 20_000
	gz := gzipPairs(t, repeats, distinct)
	runtime.GC()
	memtest.SoftLimit(t, 32<<20)
	stop := memtest.HeapPeak()
	r, err := ReadFile(Source{Name: "pairs.csv.gz", Reader: bytes.NewReader(gz)}, Pairs, Source{}, Options{})
	if err != nil {
		stop()
		t.Fatal(err)
	}
	ds := dataset()
	b, err := Build(r, ds, BuildOptions{Rule: longest(t), SkipUnknown: true})
	peak := stop()
	if err != nil {
		t.Fatal(err)
	}
	if r.Records != repeats+distinct || len(r.Pairs) != 1+distinct || len(r.Docs) != 3+distinct {
		t.Errorf("read %d rows, %d pairs, %d documents; want %d, %d, %d", r.Records, len(r.Pairs), len(r.Docs), repeats+distinct, 1+distinct, 3+distinct)
	}
	if want := []shape{{"d0 d1", "d1", false, 0.9}}; !same(shapes(ds, b), want) || b.Skipped != distinct {
		t.Errorf("clusters %+v, %d skipped; want %+v, %d", shapes(ds, b), b.Skipped, want, distinct)
	}
	t.Logf("peak heap in use %d MB reading %d rows (%d kB gzipped) of %d distinct pairs", peak>>20, r.Records, len(gz)>>10, len(r.Pairs))
	if peak > 48<<20 {
		t.Errorf("peak heap in use %d MB reading %d rows of %d distinct pairs; want under 48 MB", peak>>20, r.Records, len(r.Pairs))
	}
}

// A pair given again, either way round, is one pair with the higher score; rows
// skipped as unknown are counted as rows.
func TestRepeatedRowsCollapse(t *testing.T) {
	t.Parallel()
	body := "id_a,id_b,score\nd0,d1,0.7\nd1,d0,0.9\nd0,d1,0.8\nd4,gone,0.5\nd4,gone,0.6\ngone,d4,0.7\n"
	r, err := ReadFile(Source{Name: "pairs.csv", Reader: strings.NewReader(body)}, Pairs, Source{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Pairs) != 2 || r.Pairs[0].Score != 0.9 || r.Pairs[0].Rows != 3 || r.Records != 6 {
		t.Errorf("pairs %+v of %d rows; want 2, the first at 0.9 from 3 rows, of 6 rows", r.Pairs, r.Records)
	}
	ds := dataset()
	_, err = Build(r, ds, BuildOptions{Rule: longest(t)})
	var ue *UnknownIDsError
	if !errors.As(err, &ue) || ue.Total != 1 || ue.Errors[0].Line != 5 || ue.Errors[0].Field != "id_b" {
		t.Fatalf("Build = %v; want one unknown document, named where first named (pairs.csv:5, id_b)", err)
	}
	b, err := Build(r, ds, BuildOptions{Rule: longest(t), SkipUnknown: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := []shape{{"d0 d1", "d1", false, 0.9}}; !same(shapes(ds, b), want) || b.Skipped != 3 || !slices.Equal(b.SkippedIDs, []string{"gone"}) {
		t.Errorf("clusters %+v, skipped %d %v; want %+v, 3 [gone]", shapes(ds, b), b.Skipped, b.SkippedIDs, want)
	}
	// A membership given again is one membership.
	td := `{"id": "d1", "__INDEX__": 1, "__CLUSTER__": 1}
{"id": "d2", "__INDEX__": 2, "__CLUSTER__": 1}
{"id": "d2", "__INDEX__": 2, "__CLUSTER__": 1}
`
	r, err = ReadFile(Source{Name: "td.jsonl", Reader: strings.NewReader(td)}, TextDedup, Source{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Members) != 2 || r.Members[1].Rows != 2 {
		t.Errorf("members %+v; want d1 and d2 (from 2 rows)", r.Members)
	}
}

// A file over the row cap is refused at the first row past it, by file and line, in
// every format.
func TestRowCap(t *testing.T) {
	t.Parallel()
	var pairs strings.Builder
	pairs.WriteString("id_a,id_b,score\n")
	for range 11 {
		pairs.WriteString("d0,d1,0.9\n")
	}
	var milvus strings.Builder
	for range 11 {
		milvus.WriteString(`{"id": "d1", "hits": [{"id": "d0", "distance": 0.9}]}` + "\n")
	}
	for _, c := range []struct {
		name, file, body string
		format           Format
		want             string
	}{
		{"pairs", "pairs.csv", pairs.String(), Pairs, "pairs.csv:12: more than 10 rows, the cap on one results import"},
		{"milvus", "dump.jsonl", milvus.String(), Milvus, "dump.jsonl:11: more than 10 rows, the cap on one results import"},
		{"clusters", "0.clusters", strings.Repeat("\x00\x00\x00\x00\x01\x00\x00\x00", 11), Datatrove, "0.clusters:11: more than 10 rows"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadFile(Source{Name: c.file, Reader: strings.NewReader(c.body)}, c.format, Source{}, Options{MaxRows: 10})
			var re *RowsError
			if !errors.As(err, &re) || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("ReadFile = %v; want a *RowsError %q", err, c.want)
			}
			if _, err := ReadFile(Source{Name: c.file, Reader: strings.NewReader(c.body)}, c.format, Source{}, Options{MaxRows: 11}); err != nil {
				t.Errorf("ReadFile with a cap of 11 rows: %v", err)
			}
		})
	}
}
