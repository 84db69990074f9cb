package sigio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// Batches must not change results or order, and progress must count every document.
func TestWriteBatchesInOrder(t *testing.T) {
	t.Parallel()
	var in strings.Builder
	var texts []string
	for i := range 11 {
		text := fmt.Sprintf("document number %d says something about topic %d", i, i%3)
		texts = append(texts, text)
		json.NewEncoder(&in).Encode(map[string]string{"id": fmt.Sprint("d", i), "text": text})
	}
	spec, _ := lsh.ParseSpec("size=2 k=16")
	want, _ := spec.Signatures(texts)
	r, _ := corpus.NewReader(strings.NewReader(in.String()), "in.jsonl", corpus.JSONL, corpus.Options{})
	var out bytes.Buffer
	var calls []Progress
	n, err := Write(r, &out, spec, Options{BatchSize: 4, Progress: func(p Progress) { calls = append(calls, p) }})
	if err != nil || n != 11 {
		t.Fatalf("Write = %d, %v; want 11, nil", n, err)
	}
	for i, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var rec struct {
			ID        string
			Signature lsh.Signature
		}
		json.Unmarshal([]byte(line), &rec)
		if rec.ID != fmt.Sprint("d", i) || lsh.Estimate(rec.Signature, want[i]) != 1 {
			t.Errorf("line %d: id %s or signature out of order", i, rec.ID)
		}
	}
	// Batches of 4, 4, 3, then the final report.
	if len(calls) != 4 || calls[0].Docs != 4 || calls[2].Docs != 11 || !calls[3].Done || calls[3].Bytes != int64(in.Len()) {
		t.Errorf("progress calls = %+v", calls)
	}
}
