package sweep

import (
	"context"
	"testing"
)

// BenchmarkDefaultSweep runs DefaultGrid on the demo sample (2,136 documents, 758
// rule-labeled pairs). Signatures are computed in the setup, as the store's cache would
// hold them; shingle sets, candidates, exact Jaccard, clustering and scoring are in the
// loop. DefaultGrid's shape search (lsh.OptimalShape, cached per process by lsh) is in
// the setup too.
func BenchmarkDefaultSweep(b *testing.B) {
	d := loadDemo(b)
	g := DefaultGrid()
	if _, err := g.Configs(); err != nil { // warms lsh's optimum cache
		b.Fatal(err)
	}
	in := textInput(d.texts, d.pairs, precompute(b, d.texts, g.Specs))
	b.ReportAllocs()
	var n int
	for b.Loop() {
		rep, err := Run(context.Background(), in, g, Options{})
		if err != nil {
			b.Fatal(err)
		}
		n = len(rep.Results)
	}
	b.ReportMetric(float64(n), "configs")
}
