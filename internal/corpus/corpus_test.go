package corpus

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"
)

func readAll(t *testing.T, r *JSONLReader) (docs []Doc, bad []*RecordError) {
	t.Helper()
	for {
		d, err := r.Next()
		if errors.Is(err, io.EOF) {
			return docs, bad
		}
		var re *RecordError
		if errors.As(err, &re) {
			bad = append(bad, re)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
}

func TestJSONLReaderRejectsWithPlace(t *testing.T) {
	t.Parallel()
	input := strings.Join([]string{
		`{"id":"a","text":"fine"}`,
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
	}, "\n")
	r, err := NewJSONLReader(strings.NewReader(input), "docs.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	r.MaxBytes = 100
	docs, bad := readAll(t, r)
	var ids []string
	for _, d := range docs {
		ids = append(ids, d.ID)
	}
	if got := strings.Join(ids, ","); got != "a,b,7,i" {
		t.Errorf("accepted %s; want a,b,7,i", got)
	}
	want := []string{
		"docs.jsonl:4: malformed JSON",
		"docs.jsonl:5: field id: missing",
		"docs.jsonl:6: field text: missing",
		"docs.jsonl:7: invalid UTF-8 at byte 22",
		"docs.jsonl:9: field text: invalid UTF-16 surrogate escape",
		"docs.jsonl:10: field text: document of 200 bytes exceeds the 100-byte cap",
		"docs.jsonl:11: field text: want a string",
	}
	if len(bad) != len(want) {
		t.Fatalf("rejected %d records; want %d: %v", len(bad), len(want), bad)
	}
	for i, w := range want {
		if !strings.HasPrefix(bad[i].Error(), w) {
			t.Errorf("rejection %d = %q; want prefix %q", i, bad[i].Error(), w)
		}
	}
}

func TestJSONLReaderGzipAndHugeLine(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	io.WriteString(zw, `{"id":"a","text":"one"}`+"\n")
	io.WriteString(zw, `{"id":"big","text":"`+strings.Repeat("y", 300_000)+`"}`+"\n")
	io.WriteString(zw, `{"id":"b","text":"two"}`)
	zw.Close()
	r, err := NewJSONLReader(&buf, "docs.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	r.MaxBytes = 1000
	docs, bad := readAll(t, r)
	if len(docs) != 2 || docs[1].ID != "b" {
		t.Errorf("docs = %v; want a and b", docs)
	}
	if len(bad) != 1 || bad[0].Line != 2 || !strings.Contains(bad[0].Msg, "line longer than") {
		t.Errorf("rejections = %v; want line 2 too long", bad)
	}
}

func FuzzJSONLReader(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","text":"x"}`, "\xef\xbb\xbf{\"id\":\"a\",\"text\":\"bom\"}", "{\"id\":\"a\",\"text\":\"x\"}\r\n{\"id\":1}",
		"\x00\x00", `{"id":"a","text":"\ud800"}`, "\xff\xfe", strings.Repeat("z", 70_000),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := NewJSONLReader(strings.NewReader(s), "fuzz")
		if err != nil {
			return
		}
		r.MaxBytes = 1 << 10
		lines := 0
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
				return // gzip framing errors and the like
			default:
				accepted++
			}
			lines = r.Line()
		}
		nonBlank := 0
		for _, l := range strings.Split(s, "\n") {
			if strings.TrimSpace(strings.TrimRight(l, "\r")) != "" {
				nonBlank++
			}
		}
		if accepted+rejected != nonBlank {
			t.Fatalf("accepted %d + rejected %d != %d non-blank records (last line %d)", accepted, rejected, nonBlank, lines)
		}
	})
}
