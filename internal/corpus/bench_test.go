package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/realtext"
)

// BenchmarkJSONL measures JSONL reading from memory: splitting, parsing, validating and
// decoding into Records, on all cores (run with -cpu 1 for one core). "idtext" decodes
// only id and text (what `signatures` asks for), "meta" keeps every other field as
// metadata (what import asks for). "encoding-json" is the former reader's way, a map of
// raw values per line then each value decoded again, for comparison.
func BenchmarkJSONL(b *testing.B) {
	data := realtext.Bytes(b, realtext.Whole)
	docs := bytes.Count(data, []byte("\n"))
	for _, c := range []struct {
		name string
		meta []string
	}{{"idtext", []string{}}, {"meta", nil}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				r, err := NewReader(bytes.NewReader(data), "corpus.jsonl", JSONL, Options{MetaFields: c.meta})
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					_, err := r.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				r.Close()
				if n != docs {
					b.Fatalf("read %d documents; want %d", n, docs)
				}
			}
			b.ReportMetric(float64(docs)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
		})
	}
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(nil, 1<<24)
			for sc.Scan() {
				var fields map[string]json.RawMessage
				var id, text string
				if json.Unmarshal(sc.Bytes(), &fields) != nil || json.Unmarshal(fields["id"], &id) != nil || json.Unmarshal(fields["text"], &text) != nil {
					b.Fatal("bad line")
				}
			}
		}
		b.ReportMetric(float64(docs)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
	})
}
