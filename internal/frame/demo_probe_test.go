package frame_test

import (
	"context"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/demo"
	"github.com/dedupstudio/dedupstudio/internal/frame"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

func TestProbeDemo(t *testing.T) {
	docs, err := demo.Sample()
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.Text
	}
	rep := lsh.DefaultSpec()
	start := time.Now()
	sets, err := frame.NewSets(context.Background(), len(texts), func(i int) string { return texts[i] }, rep, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sets %v classes %d textclasses %d", time.Since(start), sets.Classes(), sets.TextClasses())
	start = time.Now()
	sigs, err := rep.Signatures(texts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sigs %v", time.Since(start))
	start = time.Now()
	f, err := frame.Build(context.Background(), sigs, sets, frame.J21, frame.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("frame %v shape %v skipped %d identical %d total %d floor %.4f", time.Since(start), f.Shape, f.Skipped, f.Identical, f.Total, f.Floor(0.999))
	for b := range f.Listed {
		t.Logf("%-12s entries %7d listed %9d size %12.1f", frame.J21.Label(b), len(f.Entries[b]), f.Listed[b], f.Sizes[b])
	}
}
