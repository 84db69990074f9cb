package sigio

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

func jsonlDocs(n int) (string, []string) {
	var in strings.Builder
	var texts []string
	for i := range n {
		text := fmt.Sprintf("document number %d says something about topic %d", i, i%3)
		texts = append(texts, text)
		json.NewEncoder(&in).Encode(map[string]string{"id": fmt.Sprint("d", i), "text": text})
	}
	return in.String(), texts
}

func mustReader(t *testing.T, in string) corpus.Reader {
	t.Helper()
	r, err := corpus.NewReader(strings.NewReader(in), "in.jsonl", corpus.JSONL, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

type sigLine struct {
	ID        string
	Signature lsh.Signature
}

func parseOutput(t *testing.T, out string) []sigLine {
	t.Helper()
	var lines []sigLine
	for l := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		var rec sigLine
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("output line %q: %v", l, err)
		}
		lines = append(lines, rec)
	}
	return lines
}

// Batches must not change results or order, and progress must count every document.
func TestWriteBatchesInOrder(t *testing.T) {
	t.Parallel()
	in, texts := jsonlDocs(11)
	spec, _ := lsh.ParseSpec("size=2 k=16")
	want, _ := spec.Signatures(texts)
	var out bytes.Buffer
	var calls []Progress
	sum, err := Write(mustReader(t, in), &out, spec, Options{BatchSize: 4, Progress: func(p Progress) { calls = append(calls, p) }})
	if err != nil || sum.Docs != 11 {
		t.Fatalf("Write = %+v, %v; want 11 documents, nil", sum, err)
	}
	for i, rec := range parseOutput(t, out.String()) {
		if rec.ID != fmt.Sprint("d", i) || lsh.Estimate(rec.Signature, want[i]) != 1 {
			t.Errorf("line %d: id %s or signature out of order", i, rec.ID)
		}
	}
	// Batches of 4, 4, 3, then the final report.
	if len(calls) != 4 || calls[0].Docs != 4 || calls[2].Docs != 11 || !calls[3].Done || calls[3].Bytes != int64(len(in)) {
		t.Errorf("progress calls = %+v", calls)
	}
}

// The JSONL output is what encoding/json writes for the same values.
func TestWriteJSONLMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	in := `{"id":"<a&b> \"q\" é","text":"some words to sign here"}` + "\n"
	spec, _ := lsh.ParseSpec("size=2 k=8")
	var out bytes.Buffer
	if _, err := Write(mustReader(t, in), &out, spec, Options{}); err != nil {
		t.Fatal(err)
	}
	h, _ := lsh.NewHasher(spec)
	want, _ := json.Marshal(struct {
		ID        string   `json:"id"`
		Signature []uint32 `json:"signature"`
	}{`<a&b> "q" é`, h.Signature("some words to sign here", nil)})
	if got := strings.TrimSuffix(out.String(), "\n"); got != string(want) {
		t.Errorf("output = %s; want %s", got, want)
	}
}

func TestWriteBadRecords(t *testing.T) {
	t.Parallel()
	in := `{"id":"a","text":"one two three"}` + "\n" + `{"id":"b"}` + "\n" + `{"id":"c","text":"four five six"}` + "\n" + `{"id":"d","text":` + "\n"
	spec, _ := lsh.ParseSpec("size=2 k=8")
	t.Run("stop", func(t *testing.T) {
		var out bytes.Buffer
		sum, err := Write(mustReader(t, in), &out, spec, Options{BatchSize: 1})
		var re *corpus.RecordError
		if !errors.As(err, &re) || re.Line != 2 || re.Field != "text" {
			t.Fatalf("Write error = %v; want the record error of in.jsonl:2, field text", err)
		}
		if sum.Docs != 1 || len(parseOutput(t, out.String())) != 1 {
			t.Errorf("wrote %d documents (%q); want the one before the bad record", sum.Docs, out.String())
		}
	})
	t.Run("skip", func(t *testing.T) {
		var out bytes.Buffer
		var skipped []string
		sum, err := Write(mustReader(t, in), &out, spec, Options{SkipBad: true, Skipped: func(e *corpus.RecordError) { skipped = append(skipped, e.Error()) }})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"in.jsonl:2: field text: missing", "in.jsonl:4: malformed JSON: unexpected end of input"}
		if sum.Docs != 2 || sum.Skipped != 2 || strings.Join(skipped, "|") != strings.Join(want, "|") {
			t.Errorf("Write = %+v, skipped %q; want 2 written, %q", sum, skipped, want)
		}
		lines := parseOutput(t, out.String())
		if len(lines) != 2 || lines[0].ID != "a" || lines[1].ID != "c" {
			t.Errorf("output ids = %+v; want a, c", lines)
		}
	})
}

// slowReader is a corpus.Reader that notes whether Next is running when Close is called.
type slowReader struct {
	n, inNext        atomic.Int64
	closedDuringNext atomic.Bool
	nextAfterClose   atomic.Bool
	closed           atomic.Bool
}

func (r *slowReader) Next() (corpus.Record, error) {
	r.inNext.Add(1)
	defer r.inNext.Add(-1)
	if r.closed.Load() {
		r.nextAfterClose.Store(true)
	}
	time.Sleep(100 * time.Microsecond)
	i := r.n.Add(1)
	if i > 100_000 {
		return corpus.Record{}, io.EOF
	}
	return corpus.Record{ID: fmt.Sprint(i), Text: "a few words of text to sign"}, nil
}

func (r *slowReader) BytesRead() int64 { return r.n.Load() }

func (r *slowReader) Close() error {
	if r.inNext.Load() > 0 {
		r.closedDuringNext.Store(true)
	}
	r.closed.Store(true)
	return nil
}

// failingWriter fails every write after the first n bytes.
type failingWriter struct{ n int }

var errDiskFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errDiskFull
	}
	w.n -= len(p)
	return len(p), nil
}

// A write error ends Write only after its reader goroutine has stopped calling Next, so
// closing the reader right after Write returns races nothing (run with -race).
func TestWriteErrorWaitsForReader(t *testing.T) {
	t.Parallel()
	spec, _ := lsh.ParseSpec("size=2 k=256") // 2.6 KB a line: the 1 MB output buffer fills soon
	for range 5 {
		r := &slowReader{}
		_, err := Write(r, &failingWriter{n: 10}, spec, Options{BatchSize: 2})
		if !errors.Is(err, errDiskFull) {
			t.Fatalf("Write = %v; want %v", err, errDiskFull)
		}
		r.Close()
		time.Sleep(2 * time.Millisecond) // a goroutine left running would call Next now
		if r.closedDuringNext.Load() || r.nextAfterClose.Load() {
			t.Fatalf("reader used after Write returned: Close during Next %v, Next after Close %v", r.closedDuringNext.Load(), r.nextAfterClose.Load())
		}
		if n := r.n.Load(); n >= 100_000 {
			t.Fatalf("reader read all %d documents after the write error", n)
		}
	}
}

func TestWriteBinary(t *testing.T) {
	t.Parallel()
	in, texts := jsonlDocs(5)
	spec, _ := lsh.ParseSpec("size=2 k=8")
	want, _ := spec.Signatures(texts)
	var out, ids bytes.Buffer
	if _, err := Write(mustReader(t, in), &out, spec, Options{Format: Binary, IDs: &ids, BatchSize: 2}); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 5*8*4 || ids.String() != "d0\nd1\nd2\nd3\nd4\n" {
		t.Fatalf("binary output %d bytes, ids %q", out.Len(), ids.String())
	}
	for i := range want {
		got, _ := lsh.SignatureFromBytes(out.Bytes()[i*32 : (i+1)*32])
		if lsh.Estimate(got, want[i]) != 1 {
			t.Errorf("vector %d differs from the engine's signature", i)
		}
	}
}

// appendJSONL writes ids and numbers itself; every line must be what encoding/json writes:
// numbers at every digit count and its edges, ids with each ASCII byte and beyond.
func TestAppendJSONLMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	var sig lsh.Signature
	for p := uint64(1); p <= 1e10; p *= 10 {
		for _, v := range []uint64{p - 1, p, p + 1, 2 * p, 5*p - 1} {
			if v <= 0xFFFFFFFF {
				sig = append(sig, uint32(v))
			}
		}
	}
	sig = append(sig, 0xFFFFFFFF, 0xFFFFFFFE, 1<<31, 1<<31-1, 4294967295/3)
	for v := uint32(12345); v < 1<<31; v = v*7 + 13 {
		sig = append(sig, v)
	}
	ids := []string{"", "plain-id", "a b", "é", "\u2028", "日本", "\xff", "x\x7f"}
	for c := range 128 {
		ids = append(ids, "id"+string(rune(c)))
	}
	for _, id := range ids {
		want, _ := json.Marshal(struct {
			ID        string   `json:"id"`
			Signature []uint32 `json:"signature"`
		}{id, sig})
		want = append(want, '\n')
		if got := appendJSONL([]byte("prefix"), id, sig); string(got) != "prefix"+string(want) {
			t.Errorf("appendJSONL(%q) = %s; want %s", id, got[len("prefix"):], want)
		}
	}
}

// BenchmarkAppendJSONL measures writing output lines, k=256, with values spread over
// every digit count as real signatures are (the minimum of n hashes is about 2^32/n),
// a different signature each line.
func BenchmarkAppendJSONL(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	sigs := make([]lsh.Signature, 512)
	for i := range sigs {
		sigs[i] = make(lsh.Signature, 256)
		for j := range sigs[i] {
			sigs[i][j] = rng.Uint32() / uint32(1+rng.IntN(100_000))
		}
	}
	var buf []byte
	for _, sig := range sigs {
		buf = appendJSONL(buf, "doc-12345", sig)
	}
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		buf = buf[:0]
		for _, sig := range sigs {
			buf = appendJSONL(buf, "doc-12345", sig)
		}
	}
}

// eightDigits is exact for every value of each of its lanes: the 4-digit halves (all
// 10,000 values of one half beside values of the other), and random values.
func TestEightDigits(t *testing.T) {
	t.Parallel()
	check := func(x uint32) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], eightDigits(x))
		if want := fmt.Sprintf("%08d", x); string(b[:]) != want {
			t.Fatalf("eightDigits(%d) = %q; want %q", x, b[:], want)
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for half := range uint32(10000) {
		other := rng.Uint32N(10000)
		check(half*10000 + other)
		check(other*10000 + half)
	}
	for range 1_000_000 {
		check(rng.Uint32N(1e8))
	}
	check(1e8 - 1)
}
