package ingest

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
)

// genJSONL is an io.Reader of n generated JSONL documents of about size bytes each,
// produced on the fly, so a large import needs no large file or buffer.
type genJSONL struct {
	n, i, size int
	buf        []byte
}

func (g *genJSONL) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		if g.i == g.n {
			return 0, io.EOF
		}
		words := strings.Repeat(fmt.Sprintf("word%d ", g.i%97), g.size/7)
		g.buf = fmt.Appendf(nil, `{"id":"doc-%d","text":"document %d %s","lang":"en"}`+"\n", g.i, g.i, words)
		g.i++
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// A large import streams: the heap stays far below the input size.
func TestImportMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short mode")
	}
	store := dbtest.OpenFile(t, filepath.Join(t.TempDir(), "mem.db"))
	const docs, size = 40_000, 2_000 // about 80 MB of JSONL
	r, err := corpus.NewReader(&genJSONL{n: docs, size: size}, "gen.jsonl", corpus.JSONL, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var peak atomic.Uint64
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > peak.Load() {
			peak.Store(ms.HeapInuse)
		}
	}
	rep, err := Documents(context.Background(), store, r, "gen.jsonl", Options{Progress: func(Progress) { sample() }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Accepted != docs {
		t.Fatalf("imported %d; want %d", rep.Accepted, docs)
	}
	if rep.Bytes < 70<<20 {
		t.Fatalf("input was only %d bytes", rep.Bytes)
	}
	t.Logf("peak heap in use %d MB while importing %d MB", peak.Load()>>20, rep.Bytes>>20)
	if p := peak.Load(); p > 48<<20 {
		t.Errorf("peak heap in use %d MB while importing %d MB; want under 48 MB", p>>20, rep.Bytes>>20)
	}
}

// BenchmarkImport measures a streamed JSONL import into a fresh SQLite file
// (synchronous=FULL, batches of 1,000): MB/s of input and docs/s.
func BenchmarkImport(b *testing.B) {
	const docs, size = 10_000, 2_000
	var bytes int64
	b.ReportAllocs()
	start := time.Now()
	n := 0
	for b.Loop() {
		store, err := db.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		r, _ := corpus.NewReader(&genJSONL{n: docs, size: size}, "gen.jsonl", corpus.JSONL, corpus.Options{})
		rep, err := Documents(context.Background(), store, r, "gen.jsonl", Options{})
		if err != nil {
			b.Fatal(err)
		}
		bytes = rep.Bytes
		store.Close()
		n++
	}
	b.SetBytes(bytes)
	b.ReportMetric(float64(docs*n)/time.Since(start).Seconds(), "docs/s")
}
