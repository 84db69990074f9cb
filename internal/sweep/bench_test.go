package sweep

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// cpuTime is the process's user+system CPU time so far.
func cpuTime(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds cpu-s/op: CPU time per iteration across all goroutines, which on a
// machine shared with other work says more than wall time (wall ≈ cpu-s/op ÷ cores
// when the work spreads over them).
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric((cpuTime(b)-start).Seconds()/float64(b.N), "cpu-s/op")
}

// BenchmarkDefaultSweep runs DefaultGrid on the demo sample (2,136 documents, 758
// rule-labeled pairs). Signatures are computed in the setup, as the store's cache would
// hold them; shingle sets, candidates, exact Jaccard, clustering and scoring are in the
// loop. DefaultGrid's shape search (lsh.OptimalShape, cached per process by lsh) is in
// the setup too. "labels" are the demo's labels without their design columns (the model
// pools them per bin of the default representation, over the frame); "demo-design"
// scores the demo's own design (demo-strata-v6: its strata are the model's cells).
func BenchmarkDefaultSweep(b *testing.B) {
	d := loadDemo(b)
	g := DefaultGrid()
	if _, err := g.Configs(); err != nil { // warms lsh's optimum cache
		b.Fatal(err)
	}
	sigs := precompute(b, d.texts, g.Specs)
	for _, variant := range []string{"labels", "demo-design"} {
		b.Run(variant, func(b *testing.B) {
			in := textInput(d.texts, d.pairs, sigs)
			var opt Options
			if variant == "demo-design" {
				in.Pairs = d.design
			}
			var n int
			b.ReportAllocs()
			start := cpuTime(b)
			for b.Loop() {
				rep, err := Run(context.Background(), in, g, opt)
				if err != nil {
					b.Fatal(err)
				}
				n = len(rep.Results)
			}
			reportCPU(b, start)
			b.ReportMetric(float64(n), "configs")
		})
	}
}

// BenchmarkRescore moves the threshold of one prepared configuration of the demo
// sample: what the live threshold slider costs per step. word5 is word 5-shingles,
// k=128, 25x5, exact Jaccard, connected components (10k candidates); char3 the
// default grid's heaviest shape it scores, char 3-shingles, k=128, 32x4 (37x3 proposes
// more pairs than a sweep scores, and is declined).
// "design" includes the bootstrap of the dataset estimates (1,000 replicates).
func BenchmarkRescore(b *testing.B) {
	d := loadDemo(b)
	char3, _ := lsh.ParseSpec("level=char size=3 k=128")
	configs := map[string]Config{
		"word5": {Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 25, Rows: 5}, Threshold: 0.5,
			Verification: ExactJaccard, Policy: cluster.Components},
		"char3": {Spec: char3, Shape: lsh.Shape{Bands: 32, Rows: 4}, Threshold: 0.5,
			Verification: ExactJaccard, Policy: cluster.Components},
	}
	for _, variant := range []string{"word5", "word5-design", "char3-design"} {
		b.Run(variant, func(b *testing.B) {
			c := configs[variant[:5]]
			in := textInput(d.texts, d.pairs, precompute(b, d.texts, []lsh.Spec{c.Spec}))
			if strings.HasSuffix(variant, "design") {
				in.Pairs = withDesign(b, d.texts, d.pairs)
			}
			st, err := Prepare(context.Background(), in, c, Options{})
			if err != nil {
				b.Fatal(err)
			}
			ths := Steps(0.3, 0.95, 0.01)
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				// A new threshold each time, so no memo answers.
				if _, err := st.Rescore(context.Background(), ths[i%len(ths)]+0.001*float64(i/len(ths)%7)); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(st.base.Candidates), "candidates")
		})
	}
}
