package corpus

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
)

func readAll(t *testing.T, r Reader) (recs []Record, bad []*RecordError) {
	t.Helper()
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return recs, bad
		}
		var re *RecordError
		if errors.As(err, &re) {
			bad = append(bad, re)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
}

func ids(recs []Record) string {
	var out []string
	for _, r := range recs {
		out = append(out, r.ID)
	}
	return strings.Join(out, ",")
}

func checkRejects(t *testing.T, bad []*RecordError, want []string) {
	t.Helper()
	if len(bad) != len(want) {
		t.Fatalf("rejected %d records; want %d:\n%v", len(bad), len(want), bad)
	}
	for i, w := range want {
		if !strings.HasPrefix(bad[i].Error(), w) {
			t.Errorf("rejection %d = %q; want prefix %q", i, bad[i].Error(), w)
		}
	}
}

func TestJSONLRejectsWithPlace(t *testing.T) {
	t.Parallel()
	input := strings.Join([]string{
		`{"id":"a","text":"fine","source":"web","n":3}`,
		``,
		`{"id":"b","text":"crlf"}` + "\r",
		`{"id":"c","text":`,
		`{"text":"no id"}`,
		`{"id":"d"}`,
		`{"id":"e","text":"bad ` + "\xff" + ` byte"}`,
		`{"id":7,"text":"numeric id"}`,
		`{"id":"f","text":"lone \ud800 surrogate"}`,
		`{"id":"g","text":"` + strings.Repeat("x", 200) + `"}`,
		`{"id":"h","text":["not","a","string"]}`,
		`{"id":"i","text":"pair \ud83d\ude00 ok"}`,
		`{"id":"j","text":"nul \u0000 inside"}`,
		`{"id":"","text":"empty id"}`,
		`{"id":"k","text":"meta bad","lang":"` + "\xc3" + `"}`,
	}, "\n")
	r, err := NewReader(strings.NewReader(input), "docs.jsonl", JSONL, Options{MaxBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	recs, bad := readAll(t, r)
	if got := ids(recs); got != "a,b,7,i" {
		t.Errorf("accepted %s; want a,b,7,i", got)
	}
	if recs[0].Meta["source"] != "web" || recs[0].Meta["n"] == nil || recs[0].Meta["id"] != nil {
		t.Errorf("metadata = %v; want source and n, not id", recs[0].Meta)
	}
	checkRejects(t, bad, []string{
		"docs.jsonl:4: malformed JSON",
		"docs.jsonl:5: field id: missing",
		"docs.jsonl:6: field text: missing",
		"docs.jsonl:7: field text: invalid UTF-8",
		"docs.jsonl:9: field text: invalid UTF-16 surrogate escape",
		"docs.jsonl:10: field text: document of 200 bytes exceeds the 100-byte cap",
		"docs.jsonl:11: field text: want a string",
		"docs.jsonl:13: field text: contains a NUL character",
		"docs.jsonl:14: field id: missing or empty",
		"docs.jsonl:15: field lang: invalid UTF-8",
	})
}

func TestCompressedAndHugeLine(t *testing.T) {
	t.Parallel()
	body := `{"id":"a","text":"one"}` + "\n" + `{"id":"big","text":"` + strings.Repeat("y", 300_000) + `"}` + "\n" + `{"id":"b","text":"two"}`
	var gz, zs bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, body)
	zw.Close()
	ze, _ := zstd.NewWriter(&zs)
	io.WriteString(ze, body)
	ze.Close()
	for name, data := range map[string][]byte{"docs.jsonl.gz": gz.Bytes(), "docs.jsonl.zst": zs.Bytes()} {
		r, err := NewReader(bytes.NewReader(data), name, JSONL, Options{MaxBytes: 1000})
		if err != nil {
			t.Fatal(err)
		}
		recs, bad := readAll(t, r)
		if ids(recs) != "a,b" {
			t.Errorf("%s: accepted %s; want a,b", name, ids(recs))
		}
		checkRejects(t, bad, []string{name + ":2: line longer than"})
		if r.BytesRead() != int64(len(body)) {
			t.Errorf("%s: BytesRead = %d; want %d (uncompressed)", name, r.BytesRead(), len(body))
		}
	}
}

func TestCSVAndTSV(t *testing.T) {
	t.Parallel()
	csvText := "\ufeffdoc,body,lang,source\r\n" +
		"a,\"hello, world\",en,web\r\n" +
		"b,\"multi\nline\",de,web\r\n" +
		"c,short row\r\n" +
		"d,\"bad \xff\",en,web\r\n" +
		",no id,en,web\r\n" +
		"e,\"unterminated\n"
	r, err := NewReader(strings.NewReader(csvText), "docs.csv", CSV, Options{IDField: "doc", TextField: "body", MetaFields: []string{"lang"}})
	if err != nil {
		t.Fatal(err)
	}
	recs, bad := readAll(t, r)
	if ids(recs) != "a,b" {
		t.Errorf("accepted %s; want a,b", ids(recs))
	}
	if recs[1].Text != "multi\nline" || recs[1].Meta["lang"] != "de" || recs[1].Meta["source"] != nil {
		t.Errorf("record b = %+v", recs[1])
	}
	checkRejects(t, bad, []string{
		"docs.csv:5: wrong number of fields", // record b spans lines 3-4
		"docs.csv:6: field body: invalid UTF-8",
		"docs.csv:7: field doc: missing or empty",
		"docs.csv:8: extraneous or missing \" in quoted-field",
	})
	if _, err := NewReader(strings.NewReader("id,content\n1,x\n"), "x.csv", CSV, Options{}); err == nil || !strings.Contains(err.Error(), "field text: no such column") {
		t.Errorf("missing text column: %v", err)
	}
	tsv := "id\ttext\n1\tit's \"quoted\" freely\n"
	r, _ = NewReader(strings.NewReader(tsv), "docs.tsv", TSV, Options{})
	recs, bad = readAll(t, r)
	if len(recs) != 1 || recs[0].Text != `it's "quoted" freely` || len(bad) != 0 {
		t.Errorf("TSV: %v %v", recs, bad)
	}
}

type pqRow struct {
	ID    string  `parquet:"id"`
	Text  string  `parquet:"text"`
	Lang  string  `parquet:"lang"`
	Score float64 `parquet:"score"`
}

func TestParquet(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "docs.parquet")
	f, _ := os.Create(path)
	w := parquet.NewGenericWriter[pqRow](f, parquet.MaxRowsPerRowGroup(2))
	rows := []pqRow{{"a", "one", "en", 1}, {"b", "two", "de", 2}, {"c", "bad \xff", "en", 3}, {"", "no id", "en", 4}, {"d", "four", "fr", 5}}
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f.Close()
	r, err := OpenFile(path, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs, bad := readAll(t, r)
	if ids(recs) != "a,b,d" {
		t.Errorf("accepted %s; want a,b,d", ids(recs))
	}
	if recs[2].Meta["lang"] != "fr" || recs[2].Meta["score"] != 5.0 || recs[2].Place.RowGroup != 2 {
		t.Errorf("record d = %+v", recs[2])
	}
	checkRejects(t, bad, []string{
		"docs.parquet: row group 1, row 0: field text: invalid UTF-8",
		"docs.parquet: row group 1, row 1: field id: missing or empty",
	})
	if _, err := OpenFile(path, "", Options{TextField: "body"}); err == nil || !strings.Contains(err.Error(), "field body: no such column") {
		t.Errorf("missing column: %v", err)
	}
	junk := filepath.Join(t.TempDir(), "junk.parquet")
	os.WriteFile(junk, []byte("not parquet at all"), 0o644)
	if _, err := OpenFile(junk, "", Options{}); err == nil || !strings.Contains(err.Error(), "junk.parquet: not a readable Parquet file") {
		t.Errorf("junk parquet: %v", err)
	}
}

func TestDetectFormat(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]Format{"a.jsonl": JSONL, "a.JSONL.gz": JSONL, "b.ndjson.zst": JSONL, "c.csv": CSV, "d.tsv.gz": TSV, "e.parquet": Parquet} {
		if got, err := DetectFormat(name); got != want || err != nil {
			t.Errorf("DetectFormat(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := DetectFormat("x.txt"); err == nil {
		t.Error("DetectFormat(x.txt) succeeded")
	}
}

// FuzzReaders: no panic, and every non-blank record is either accepted or rejected.
func FuzzReaders(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","text":"x"}`, "\xef\xbb\xbf{\"id\":\"a\",\"text\":\"bom\"}", "{\"id\":\"a\",\"text\":\"x\"}\r\n{\"id\":1}",
		"\x00\x00", `{"id":"a","text":"\ud800"}`, "\xff\xfe", strings.Repeat("z", 70_000),
		"id,text\na,b\n", "id,text\n\"a\n",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, asCSV bool) {
		if strings.HasPrefix(s, "\x1f\x8b") || strings.HasPrefix(s, "\x28\xb5\x2f\xfd") {
			return // compressed framing: covered by TestCompressedAndHugeLine
		}
		format := JSONL
		if asCSV {
			format = CSV
		}
		r, err := NewReader(strings.NewReader(s), "fuzz", format, Options{MaxBytes: 1 << 10})
		if err != nil {
			return // CSV without a usable header
		}
		accepted, rejected := 0, 0
		for {
			_, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			var re *RecordError
			switch {
			case errors.As(err, &re):
				rejected++
			case err != nil:
				t.Fatalf("reader failed: %v", err)
			default:
				accepted++
			}
			if accepted+rejected > len(s)+1 {
				t.Fatal("more records than bytes")
			}
		}
		if format == JSONL {
			// Parallel parsing of tiny chunks changes nothing.
			opt := Options{MaxBytes: 1 << 10}
			if whole, cut := outcome(t, newJSONL(t, s, opt, 0, 1)), outcome(t, newJSONL(t, s, opt, 16, 3)); !slices.Equal(whole, cut) {
				t.Fatalf("16-byte chunks on 3 goroutines:\n%s\nwant:\n%s", strings.Join(cut, "\n"), strings.Join(whole, "\n"))
			}
			nonBlank := 0
			for i, l := range strings.Split(s, "\n") {
				if i == 0 {
					l = strings.TrimPrefix(l, "\xef\xbb\xbf")
				}
				if strings.TrimSpace(strings.TrimRight(l, "\r")) != "" {
					nonBlank++
				}
			}
			if accepted+rejected != nonBlank {
				t.Fatalf("accepted %d + rejected %d != %d non-blank lines", accepted, rejected, nonBlank)
			}
		}
	})
}

func TestCSVHugeRecordStops(t *testing.T) {
	t.Parallel()
	in := "id,text\na,short\nb,\"" + strings.Repeat("z", 3<<20) + "\"\nc,never\n"
	r, err := NewReader(strings.NewReader(in), "big.csv", CSV, Options{MaxBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := r.Next(); err != nil || rec.ID != "a" {
		t.Fatalf("first record: %v %v", rec, err)
	}
	_, err = r.Next()
	var fe *FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "big.csv: after line 2: a record longer than") {
		t.Errorf("huge record: %v", err)
	}
	// The first record after the header too says where it starts.
	in = "id,text\n\"" + strings.Repeat("z", 3<<20) + "\",x\n"
	r, err = NewReader(strings.NewReader(in), "first.csv", CSV, Options{MaxBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err = r.Next(); !errors.As(err, &fe) || !strings.Contains(err.Error(), "first.csv: after line 1: a record longer than") {
		t.Errorf("huge first record: %v; want it placed after the header, line 1", err)
	}
}
