package corpus

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func gzipped(t *testing.T, s string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(s))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func zstded(t *testing.T, s string) string {
	t.Helper()
	zw, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer zw.Close()
	return string(zw.EncodeAll([]byte(s), nil))
}

func TestTableReader(t *testing.T) {
	t.Parallel()
	csvIn := "\ufeff A ,b,Note\nd1,d2,\"two, words\"\n\nd3,d4,\xff\n"
	jsonlIn := `{"a":"d1","b":7,"ok":true,"x":null,"m":{"k":[1]}}` + "\n\n" + `{"a":"d2",` + "\n" + `{"a":"d3","a":"d4"}` + "\n"
	wantCSV := []string{
		`t.csv:2 map[a:d1 b:d2 note:two, words] {"a":"d1","b":"d2","note":"two, words"}`,
		`reject t.csv:4: field note: invalid UTF-8 at byte 0`,
	}
	wantJSONL := []string{
		`t.jsonl:1 map[a:d1 b:7 m:map[k:[1]] ok:true x:<nil>] {"a":"d1","b":7,"ok":true,"x":null,"m":{"k":[1]}}`,
		`reject t.jsonl:3: malformed JSON`,
		`reject t.jsonl:4: field a: key given twice`,
	}
	for _, tc := range []struct {
		name, file, in string
		format         Format
		want           []string
	}{
		{"csv", "t.csv", csvIn, CSV, wantCSV},
		{"csv gzip", "t.csv", gzipped(t, csvIn), CSV, wantCSV},
		{"jsonl", "t.jsonl", jsonlIn, JSONL, wantJSONL},
		{"jsonl zstd", "t.jsonl", zstded(t, jsonlIn), JSONL, wantJSONL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := NewTableReader(strings.NewReader(tc.in), tc.file, tc.format, []string{"a", "b"})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var got []string
			for {
				rec, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				var re *RecordError
				if errors.As(err, &re) {
					got = append(got, "reject "+re.Error())
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if rec.ID != "" || rec.Text != "" {
					t.Errorf("row %v has id %q text %q; want neither", rec.Place, rec.ID, rec.Text)
				}
				raw, err := json.Marshal(rec.Raw)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%v %v %s", rec.Place, rec.Meta, raw))
			}
			if len(got) != len(tc.want) {
				t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("row %d = %s; want %s", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestTableReaderRefusesTheFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, in string
		format         Format
		want           string
	}{
		{"missing column", "t.csv", "a,c\nx,y\n", CSV, "t.csv:1: field b: no such column in the header (a, c)"},
		{"empty csv", "t.csv", "", CSV, "t.csv: empty file"},
		{"bad header", "t.tsv", "a\t\xffb\n", TSV, "t.tsv:1: header column 2: invalid UTF-8"},
		{"parquet", "t.parquet", "PAR1", Parquet, "t.parquet: a table comes as JSONL, CSV or TSV"},
		{"bad gzip", "t.csv", "\x1f\x8bnot gzip", CSV, "t.csv: bad gzip data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewTableReader(strings.NewReader(tc.in), tc.file, tc.format, []string{"a", "b"})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("NewTableReader(%q) = %v; want %q", tc.in, err, tc.want)
			}
		})
	}
}

// A table row of a document reader's file: documents keep their id and text, and a
// table reader of the same bytes sees every field.
func TestTableReaderKeepsEveryField(t *testing.T) {
	t.Parallel()
	in := `{"id":"x","text":"t","lang":"en"}` + "\n"
	r, err := NewTableReader(strings.NewReader(in), "d.jsonl", JSONL, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Next()
	if want := map[string]any{"id": "x", "text": "t", "lang": "en"}; err != nil || !reflect.DeepEqual(rec.Meta, want) {
		t.Errorf("Next() = %v, %v; want Meta %v", rec.Meta, err, want)
	}
}
