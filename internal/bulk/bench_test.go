package bulk

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// BenchmarkRun is the whole pipeline over a generated corpus of 5,000 documents
// (gencorpus seed 1: real text recombined, 15% planted duplicates), k=128, 16x8,
// exact verification, keeper-star, every stage from scratch. MB/s is of the JSONL
// input; docs/s is documents per second of wall time. The 100k and 1M figures in the
// README come from the dedup command (see its section there).
func BenchmarkRun(b *testing.B) {
	dir := b.TempDir()
	in, _ := generate(b, dir, 5000)
	st, err := os.Stat(in)
	if err != nil {
		b.Fatal(err)
	}
	p := params(b, review.Exact, cluster.KeeperStar)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		opt := options(p, in, filepath.Join(dir, fmt.Sprint("out", i)))
		opt.ChunkDocs, opt.RunBytes, opt.Workers = 8192, 64<<20, 0
		if _, err := Run(context.Background(), opt); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(5000*b.N)/b.Elapsed().Seconds(), "docs/s")
}
