package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/dedupstudio/dedupstudio/internal/realtext"
)

// newJSONL opens a JSONL stream with a given chunk size and number of parsing goroutines.
func newJSONL(t testing.TB, input string, opt Options, chunkBytes, workers int) *jsonlReader {
	t.Helper()
	r, err := NewReader(strings.NewReader(input), "docs.jsonl", JSONL, opt)
	if err != nil {
		t.Fatal(err)
	}
	jr := r.(*jsonlReader)
	jr.chunkBytes, jr.workers = chunkBytes, workers
	return jr
}

// outcome is everything Next returned, in order, as comparable text.
func outcome(t testing.TB, r Reader) []string {
	t.Helper()
	defer r.Close()
	var out []string
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return append(out, fmt.Sprintf("EOF after %d bytes", r.BytesRead()))
		}
		var re *RecordError
		if errors.As(err, &re) {
			out = append(out, "reject "+re.Error())
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		meta, _ := json.Marshal(rec.Meta)
		out = append(out, fmt.Sprintf("%s %q %q %s", rec.Place, rec.ID, rec.Text, meta))
	}
}

var mixedJSONL = "\ufeff" + strings.Join([]string{
	`{"id":"a","text":"fine","source":"web","n":3}`,
	``,
	`   `,
	`{"id":"b","text":"crlf"}` + "\r",
	`{"id":"c","text":`,
	`{"id":"long","text":"` + strings.Repeat("long line ", 30) + `"}`,
	`{"id":"big","text":"` + strings.Repeat("y", 400) + `"}`,
	`{"id":"e","text":"bad ` + "\xff" + ` byte"}`,
	`{"id":7,"text":"numeric id"}`,
	`{"id":"f","text":"lone \ud800 surrogate"}`,
	`{"id":"i","text":"pair \ud83d\ude00 ok \u00e9\n\t\"q\"\\ \/"}`,
	`{"id":"j","text":"nul \u0000 inside"}`,
	`{"id":"k","text":"dup","id":"k2"}`,
	`{"\u0069d":"esc","text":"escaped key","meta":{"a":[1,2.5e3,true,null,"x"]}}`,
	`{"id":"m","text":"deep","x":[[[[{"y":[]}]]]]}`,
	`  {"id":"n","text":"spaces"}  `,
	`{"id":"o","text":"trailing"} x`,
	`{"id":"p","text":"unicode ` + "日本語 \u2028" + `"}`,
	`{"id":"q","text":null}`,
}, "\n") + "\n\n"

// Cutting the input into chunks anywhere, parsed by any number of goroutines, must not
// change a record, a rejection, a line number or the byte count.
func TestJSONLChunksDoNotChangeResults(t *testing.T) {
	t.Parallel()
	opt := Options{MaxBytes: 300}
	want := outcome(t, newJSONL(t, mixedJSONL, opt, 1<<20, 1))
	for _, chunk := range []int{1, 2, 3, 7, 16, 64, 333, 4096} {
		for _, workers := range []int{1, 2, 5} {
			got := outcome(t, newJSONL(t, mixedJSONL, opt, chunk, workers))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("chunk %d, %d workers:\n%s\nwant:\n%s", chunk, workers, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
	checks := map[int]string{
		0:  `docs.jsonl:1 "a" "fine" {"n":3,"source":"web"}`,
		1:  `docs.jsonl:4 "b" "crlf" null`,
		2:  `reject docs.jsonl:5: malformed JSON: unexpected end of input`,
		3:  `docs.jsonl:6 "long" "` + strings.Repeat("long line ", 30) + `" null`, // exactly the cap
		4:  `reject docs.jsonl:7: field text: document of 400 bytes exceeds the 300-byte cap`,
		5:  `reject docs.jsonl:8: field text: invalid UTF-8 at byte 4 of the value`,
		6:  `docs.jsonl:9 "7" "numeric id" null`,
		7:  `reject docs.jsonl:10: field text: invalid UTF-16 surrogate escape`,
		8:  `docs.jsonl:11 "i" "pair 😀 ok é\n\t\"q\"\\ /" null`,
		9:  `reject docs.jsonl:12: field text: contains a NUL character`,
		10: `reject docs.jsonl:13: field id: key given twice`,
		11: `docs.jsonl:14 "esc" "escaped key" {"meta":{"a":[1,2.5e3,true,null,"x"]}}`,
		12: `docs.jsonl:15 "m" "deep" {"x":[[[[{"y":[]}]]]]}`,
		13: `docs.jsonl:16 "n" "spaces" null`,
		14: `reject docs.jsonl:17: malformed JSON: invalid character 'x' after the top-level object at byte 29`,
		15: `docs.jsonl:18 "p" "unicode 日本語 \u2028" null`,
		16: `reject docs.jsonl:19: field text: empty`,
		17: fmt.Sprintf("EOF after %d bytes", len(mixedJSONL)),
	}
	if len(want) != len(checks) {
		t.Fatalf("%d outcomes; want %d:\n%s", len(want), len(checks), strings.Join(want, "\n"))
	}
	for i, w := range checks {
		if want[i] != w {
			t.Errorf("outcome %d = %s; want %s", i, want[i], w)
		}
	}
}

func TestJSONLLongLinesAcrossChunks(t *testing.T) {
	t.Parallel()
	// MaxBytes 10 makes the line limit 2*10 + 65536 = 65556 bytes.
	long := `{"id":"x","text":"` + strings.Repeat("z", 70_000) + `"}`
	input := `{"id":"a","text":"one"}` + "\n" + long + "\n" + `{"id":"b","text":"two"}` + "\n" + long
	for _, chunk := range []int{16, 1000, 1 << 20} {
		got := outcome(t, newJSONL(t, input, Options{MaxBytes: 10}, chunk, 2))
		want := []string{
			`docs.jsonl:1 "a" "one" null`,
			`reject docs.jsonl:2: line longer than 65556 bytes`,
			`docs.jsonl:3 "b" "two" null`,
			`reject docs.jsonl:4: line longer than 65556 bytes`,
			fmt.Sprintf("EOF after %d bytes", len(input)),
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("chunk %d:\n%s\nwant:\n%s", chunk, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// A failing input yields the records before the failure, then the failure, every time.
func TestJSONLInputFailure(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk on fire")
	input := strings.Repeat(`{"id":"a","text":"one"}`+"\n", 100)
	r, _ := NewReader(io.MultiReader(strings.NewReader(input), iotest.ErrReader(boom)), "docs.jsonl", JSONL, Options{})
	defer r.Close()
	r.(*jsonlReader).chunkBytes = 100
	n := 0
	for {
		_, err := r.Next()
		if err != nil {
			if !errors.Is(err, boom) {
				t.Fatalf("after %d records: %v; want %v", n, err, boom)
			}
			break
		}
		n++
	}
	if n != 100 {
		t.Errorf("%d records before the failure; want 100", n)
	}
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Errorf("Next after the failure = %v; want %v again", err, boom)
	}
}

// Close in the middle of the input ends the reader's goroutines (run with -race).
func TestJSONLCloseMidway(t *testing.T) {
	t.Parallel()
	input := strings.Repeat(`{"id":"a","text":"some text here"}`+"\n", 20_000)
	jr := newJSONL(t, input, Options{}, 256, 3)
	for range 10 {
		if _, err := jr.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if err := jr.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-jr.pipe.stop:
	default:
		t.Error("Close returned with the pipe still running")
	}
}

// The scanner accepts exactly what encoding/json accepts as JSON text, and decodes the
// same strings.
func TestScannerAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, line := range scannerCases {
		checkScanner(t, line)
	}
}

var scannerCases = []string{
	`{}`, `{"a":1}`, ` { "a" : [ 1 , 2 ] } `, `{"a":-0.5e+10}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`,
	`{"a":-}`, `{"a":1e}`, `{"a":tru}`, `{"a":nul}`, `{"a":falsey}`, `{"a":[1,]}`, `{"a":1,}`,
	`{,}`, `{"a"}`, `{"a":}`, `{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12G4"}`, "{\"a\":\"tab\there\"}",
	`{"a":"\ud800\udc00"}`, `{"a":{"b":{"c":{}}}}`, `{"a":[[],[[]],{}]}`, `[]`, `"x"`, `{"a":1}}`,
	`{"a":1]`, `{"a":[1}`, `{"a" 1}`, `{"a":"unterminated`, `{"a":"esc\`, `{"a":"\"`, `{"a":1 2}`,
	`{"a":true,"b":false,"c":null}`, `{"a":"\/\b\f\n\r\t"}`, `{"a":1E5}`, `{"a":-01}`, `{"a":"` + "\x7f" + `"}`,
	`{"\u0061":1}`, `{"a":[` + strings.Repeat("[", 50) + strings.Repeat("]", 50) + `]}`,
	// A bad byte in the 8-byte word (or 32-byte block) that holds the string's end.
	"{\"text\":\"ab\xc3\",\"id\":\"x\"}", "{\"t\":\"\xff\"}", "{\"t\":\"abcdefg\xe2\x82\"}",
	"{\"t\":\"" + strings.Repeat("a", 30) + "\xc3\"}", "{\"t\":\"" + strings.Repeat("a", 37) + "\xf0\x9f\"}",
	"{\"\xc3\":1}", "{\"t\":\"ok\xc3\xa9\",\"u\":\"x\xc3\"}",
}

func checkScanner(t *testing.T, line string) {
	t.Helper()
	var s lineScanner
	s.scan([]byte(line))
	// A line is one JSON object: json.Valid takes any value.
	object := strings.HasPrefix(strings.TrimLeft(line, " \t\r"), "{")
	if ok, want := s.syntax == "", json.Valid([]byte(line)) && object; ok != want {
		t.Fatalf("scan(%q): well-formed %v (%s); want %v", line, ok, s.syntax, want)
	}
	// Outside strings a byte from 0x80 is a syntax error, so a well-formed line holds
	// invalid UTF-8 exactly when one of its strings does, and the scan must say so.
	if s.syntax == "" && (s.badUTF8 >= 0) != !utf8.ValidString(line) {
		t.Fatalf("scan(%q): first invalid byte %d; the line is valid UTF-8: %v", line, s.badUTF8, utf8.ValidString(line))
	}
	if s.syntax != "" || !utf8.ValidString(line) || s.badEscape >= 0 {
		return
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(line), &m) != nil {
		return
	}
	for _, f := range s.fields {
		if f.kind != '"' {
			continue
		}
		var want string
		json.Unmarshal(m[f.keyName()], &want)
		if got := decodeString([]byte(line[f.start+1:f.end-1]), f.escaped); got != want {
			t.Fatalf("decode %q in %q = %q; want %q", f.keyName(), line, got, want)
		}
	}
}

func FuzzScanner(f *testing.F) {
	for _, s := range scannerCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n") {
			return
		}
		checkScanner(t, line)
	})
}

func TestMetaValuesAsEncodingJSON(t *testing.T) {
	t.Parallel()
	line := `{"id":"a","text":"t","s":"x\u00e9","n":-1.5e3,"b":true,"f":false,"z":null,"o":{"k":[1,"v"]}}`
	jr := newJSONL(t, line, Options{}, 0, 1)
	rec, err := jr.Next()
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	var want map[string]any
	dec.Decode(&want)
	delete(want, "id")
	delete(want, "text")
	if !reflect.DeepEqual(rec.Meta, want) {
		t.Errorf("Meta = %#v; want %#v", rec.Meta, want)
	}
}

// Real documents decode to what encoding/json gives, field for field.
func TestJSONLRealCorpusMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	data := realtext.Bytes(t, realtext.Corpus)
	r, err := NewReader(bytes.NewReader(data), "corpus.jsonl", JSONL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	recs, bad := readAll(t, r)
	if len(bad) > 0 {
		t.Fatalf("rejected %d real records, first %v", len(bad), bad[0])
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	if len(recs) != len(lines) {
		t.Fatalf("%d records; want %d", len(recs), len(lines))
	}
	for i, l := range lines {
		var want struct{ ID, Text string }
		json.Unmarshal(l, &want)
		if recs[i].ID != want.ID || recs[i].Text != want.Text || recs[i].Place.Line != i+1 {
			t.Fatalf("record %d = %q at line %d; want %q at line %d", i, recs[i].ID, recs[i].Place.Line, want.ID, i+1)
		}
	}
}

// The reader's text is encoding/json's for every kind of escape, side by side and at the
// ends of the value.
func TestJSONLEscapesAsEncodingJSON(t *testing.T) {
	t.Parallel()
	var lines []string
	for _, text := range []string{
		`\n`, `a\nb`, `\"\\\/\b\f\n\r\t`, `x\u00e9y`, `\ud83d\ude00`, `a\ud83d\ude00\n\u0041`,
		`\t\t\tindented\n\n`, `q\"q\"`, `\\n`, `\u2028\u000a`,
	} {
		lines = append(lines, `{"id":"x","text":"`+text+`"}`)
	}
	r, err := NewReader(strings.NewReader(strings.Join(lines, "\n")), "esc.jsonl", JSONL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	recs, bad := readAll(t, r)
	if len(bad) > 0 || len(recs) != len(lines) {
		t.Fatalf("read %d records, %d rejected; want %d, none", len(recs), len(bad), len(lines))
	}
	for i, l := range lines {
		var want struct{ Text string }
		json.Unmarshal([]byte(l), &want)
		if recs[i].Text != want.Text {
			t.Errorf("text of %s = %q; want %q", l, recs[i].Text, want.Text)
		}
	}
}

// A bad byte in a string value is placed in the decoded value, as the CSV reader places
// it: the opening quote is not counted, and an escape counts as what it stands for, so
// the same text gives the same byte in either format (it gave one more in JSONL).
func TestInvalidUTF8SameByteInJSONLAndCSV(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		json, csv string // the text field as each format writes it
		at        int
	}{
		{`bad ` + "\xff", "bad \xff", 4},
		{"\xc3\x28", "\xc3\x28", 0},
		{`a\n\u00e9\"b ` + "\xfe", "\"a\n\u00e9\"\"b \xfe\"", 7},
	} {
		msg := func(name string, format Format, input string) string {
			r, err := NewReader(strings.NewReader(input), name, format, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			_, err = r.Next()
			var re *RecordError
			if !errors.As(err, &re) {
				t.Fatalf("%s: %v, want a record error", name, err)
			}
			return re.Error()
		}
		want := fmt.Sprintf("field text: invalid UTF-8 at byte %d", c.at)
		j := msg("d.jsonl", JSONL, `{"id":"x","text":"`+c.json+`"}`+"\n")
		v := msg("d.csv", CSV, "id,text\nx,"+c.csv+"\n")
		if !strings.Contains(j, want) || !strings.Contains(v, want) {
			t.Errorf("text %q: JSONL says %q, CSV says %q; want both to say %q", c.csv, j, v, want)
		}
	}
}
