package ingest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
)

// readOutcome is what readLabelRows made of a file, one line per row or refusal.
func readOutcome(t *testing.T, in []byte, name string, format corpus.Format) []string {
	t.Helper()
	rows, bad, err := readLabelRows(bytes.NewReader(in), name, format)
	if err != nil {
		return []string{"file: " + err.Error()}
	}
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%v a=%q b=%q category=%q duplicate=%q kind=%q frame=%q", r.place, r.a, r.b, r.category, r.duplicate, r.kind, r.frameSize))
	}
	for _, e := range bad {
		out = append(out, "refused "+e.Error())
	}
	return out
}

func TestReadLabelRows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, in string
		want           []string
	}{
		{"csv header without case or space", "l.csv", " A ,B,Category,Duplicate\nd1 , d2,exact,\n",
			[]string{`l.csv:2 a="d1" b="d2" category="exact" duplicate="" kind="" frame=""`}},
		{"tsv", "l.tsv", "a\tb\tcategory\nd1\td2\tminor\n",
			[]string{`l.tsv:2 a="d1" b="d2" category="minor" duplicate="" kind="" frame=""`}},
		{"jsonl numbers and booleans", "l.jsonl", `{"a":1e3,"b":"d2","category":3,"duplicate":true,"frame_size":40}`,
			[]string{`l.jsonl:1 a="1000" b="d2" category="3" duplicate="true" kind="" frame="40"`}},
		{"jsonl refusals name line and field", "l.jsonl", `{"a":"d1","b":["d2"],"category":"x"}` + "\n" + `{"a":2.5,"b":"d2","category":"x"}` + "\n" + `{"a":` + "\n",
			[]string{`refused l.jsonl:1: field b: want a string`, `refused l.jsonl:2: field a: `, `refused l.jsonl:3: malformed JSON`}},
		{"csv refusals", "l.csv", "a,b,category\nd1,d2\n\"d1,d2,x\n",
			[]string{`refused l.csv:2: wrong number of fields`, `refused l.csv:3: `}},
		{"missing column", "l.csv", "a,category\nd1,x\n", []string{`file: l.csv:1: field b: no such column in the header (a, category)`}},
		{"parquet", "l.parquet", "PAR1", []string{"file: l.parquet: labels come as CSV, TSV or JSONL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			format, err := corpus.DetectFormat(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			got := readOutcome(t, []byte(tc.in), tc.file, format)
			if len(got) != len(tc.want) {
				t.Fatalf("readLabelRows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("readLabelRows line %d = %s; want %s", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// Label files may come gzipped (or zstd-compressed), like document files.
func TestLabelsFromGzip(t *testing.T) {
	t.Parallel()
	in := []byte("a,b,category\nd1,d2,exact\n")
	plain := readOutcome(t, in, "l.csv", corpus.CSV)
	if zipped := readOutcome(t, gzipBytes(t, in), "l.csv", corpus.CSV); !slices.Equal(plain, zipped) {
		t.Errorf("gzipped: %v; want %v", zipped, plain)
	}
}

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzLabelRows: no panic; every row and refusal names the file and a line of it; a
// gzipped copy of the file reads the same.
func FuzzLabelRows(f *testing.F) {
	for _, s := range []string{
		"a,b,category\nd1,d2,exact\n", "a,b,category\n\"d1\n", "\ufeffa,b,category,duplicate\nx,y,z,yes\n", "a\tb\tcategory\n1\t2\t3\n",
		`{"a":"d1","b":"d2","category":"exact"}`, `{"a":1e400,"b":-0,"category":[1]}`, `{"a":"\ud800"}`, "{\"a\":\"x\"}\r\n\xff\n", "",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, asCSV bool) {
		if strings.HasPrefix(s, "\x1f\x8b") || strings.HasPrefix(s, "\x28\xb5\x2f\xfd") {
			return // compressed framing: the gzipped copy below covers it
		}
		name, format := "f.jsonl", corpus.JSONL
		if asCSV {
			name, format = "f.csv", corpus.CSV
		}
		rows, bad, err := readLabelRows(strings.NewReader(s), name, format)
		if err != nil {
			var re *corpus.RecordError
			var fe *corpus.FormatError
			if !errors.As(err, &re) && !errors.As(err, &fe) {
				t.Fatalf("file refused with %T %v; want a RecordError or FormatError", err, err)
			}
		}
		lines := strings.Count(s, "\n") + 1
		for _, r := range rows {
			if r.place.File != name || r.place.Line < 1 || r.place.Line > lines {
				t.Fatalf("row at %v; want a line of %s (1-%d)", r.place, name, lines)
			}
		}
		for _, e := range bad {
			if e.File != name || e.Line < 1 || e.Line > lines {
				t.Fatalf("refusal %v; want a line of %s (1-%d)", e, name, lines)
			}
		}
		if plain, zipped := readOutcome(t, []byte(s), name, format), readOutcome(t, gzipBytes(t, []byte(s)), name, format); !slices.Equal(plain, zipped) {
			t.Fatalf("gzipped copy read\n%s\nwant\n%s", strings.Join(zipped, "\n"), strings.Join(plain, "\n"))
		}
	})
}
