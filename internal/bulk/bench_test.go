package bulk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/sigio"
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

// BenchmarkSignatureStage compares the run's first stage with the signatures command's
// pipeline (sigio.Write, binary vectors) on the same file: DEDUP_BENCH_CORPUS (a JSONL
// file, e.g. gencorpus -n 1000000), or else 20,000 generated documents. Both sign with
// the run's spec (k=128) on GOMAXPROCS workers; the stage also hashes each text and its
// normalized form and writes its chunk files. MB/s is of the JSONL input. Issue 29 wants
// the stage at 80% or more of the command's MB/s.
func BenchmarkSignatureStage(b *testing.B) {
	dir := b.TempDir()
	in := os.Getenv("DEDUP_BENCH_CORPUS")
	if in == "" {
		in, _ = generate(b, dir, 20000)
	}
	st, err := os.Stat(in)
	if err != nil {
		b.Fatal(err)
	}
	p := params(b, review.Exact, cluster.KeeperStar)
	stop := errors.New("stop after the signatures stage")
	b.Run("dedup-stage", func(b *testing.B) {
		b.SetBytes(st.Size())
		defer reportCPU(b)()
		i := 0
		for b.Loop() {
			opt := options(p, in, filepath.Join(dir, fmt.Sprint("out", i)))
			opt.ChunkDocs, opt.Workers = 8192, 0
			opt.crash = func(stage string, _ int) error {
				if stage == StageSignatures+"-done" {
					return stop
				}
				return nil
			}
			if _, err := Run(context.Background(), opt); !errors.Is(err, stop) {
				b.Fatal(err)
			}
			os.RemoveAll(opt.Out)
			i++
		}
	})
	b.Run("signatures-command", func(b *testing.B) {
		b.SetBytes(st.Size())
		defer reportCPU(b)()
		for b.Loop() {
			r, err := corpus.OpenFile(in, corpus.JSONL, corpus.Options{MetaFields: []string{}})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := sigio.Write(r, io.Discard, p.Spec, sigio.Options{Format: sigio.Binary}); err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
	})
}

// reportCPU reports the process's CPU time (user + system) per iteration as cpu-s/op,
// from its call to the call of the function it returns: the figure to compare when other
// work shares the machine.
func reportCPU(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() { b.ReportMetric((cpu()-start).Seconds()/float64(b.N), "cpu-s/op") }
}
