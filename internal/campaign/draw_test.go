package campaign

import (
	"context"
	"fmt"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/frame"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
)

// TestDrawIsTheFrameDraw: Draw stores exactly the pairs, scores and wanted labels that
// labels.Draw gives over the dataset's frame for the same seed.
func TestDrawIsTheFrameDraw(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 600)
	ctx := context.Background()
	cache := sigcache.New(f.store)
	c := f.campaign()
	fr, set, err := cache.Frame(ctx, c.DatasetID, c.Spec, frame.Default)
	if err != nil {
		t.Fatal(err)
	}
	plan := DrawPlan{PerBin: 20, Bin: -1, Boundary: 10, Random: 30, Seed: 11}
	want, err := labels.Draw(fr, set.Sigs, labels.Plan{PerBin: plan.PerBin, TargetBin: plan.Bin,
		Boundary: plan.Boundary, Threshold: c.Threshold, Random: plan.Random, Overlap: c.Overlap, DoubleShare: c.DoubleShare, Seed: plan.Seed}, nil)
	if err != nil {
		t.Fatal(err)
	}
	added, err := Draw(ctx, f.store, cache, "rev", c, plan)
	if err != nil {
		t.Fatal(err)
	}
	refs, _ := f.store.PairDocs(ctx, c.ID)
	stats, _ := f.store.PairStats(ctx, c.ID)
	if added != len(want) || len(refs) != len(want) {
		t.Fatalf("Draw added %d pairs; the frame's draw gives %d", added, len(want))
	}
	got := map[string]string{}
	for i, r := range refs {
		got[fmt.Sprint(r.DocA, r.DocB)] = fmt.Sprintf("%s %.12f %d", stats[i].Origin, stats[i].Similarity.Float64, stats[i].Wanted)
	}
	for _, d := range want {
		key := fmt.Sprint(set.IDs[d.A], set.IDs[d.B])
		if w := fmt.Sprintf("%s %.12f %d", d.Origin, d.Similarity, d.Wanted); got[key] != w {
			t.Errorf("pair %s: stored %q; the frame's draw gives %q", key, got[key], w)
		}
	}
}

// TestTwoDrawsOneDesign: two draws of one campaign from one dataset record the same
// design name and the same frame size for every stratum (their samples pool into one);
// a dataset with other documents is another frame and another design.
func TestTwoDrawsOneDesign(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 300)
	ctx := context.Background()
	cache := sigcache.New(f.store)
	c := f.campaign()
	for _, seed := range []uint64{1, 2} {
		if _, err := Draw(ctx, f.store, cache, "rev", c, DrawPlan{PerBin: 4, Bin: -1, Random: 3, Seed: seed}); err != nil {
			t.Fatal(err)
		}
	}
	pairs, err := f.store.SweepPairs(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	designs := map[string]bool{}
	sizes := map[string]map[int]bool{}
	for _, p := range pairs {
		designs[p.Design] = true
		if sizes[p.Stratum] == nil {
			sizes[p.Stratum] = map[int]bool{}
		}
		sizes[p.Stratum][p.FrameSize] = true
	}
	if len(designs) != 1 {
		t.Errorf("two draws recorded designs %v; want one", designs)
	}
	for s, n := range sizes {
		if len(n) != 1 {
			t.Errorf("stratum %s: frame sizes %v in two draws of one frame", s, n)
		}
	}
	// Another version of the dataset (one document less) is another design.
	ds, err := f.store.BeginDataset(ctx, "corpus", "v2", 0)
	if err != nil {
		t.Fatal(err)
	}
	var docs []db.NewDocument
	for _, d := range f.docs[1:] {
		docs = append(docs, db.NewDocument{ExtID: d.ExtID, Text: d.Text})
	}
	if _, err := f.store.InsertDocuments(ctx, ds.ID, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.FinishDataset(ctx, ds.ID, "h2", 0, "test"); err != nil {
		t.Fatal(err)
	}
	f1, _, err := cache.Frame(ctx, c.DatasetID, c.Spec, frame.Default)
	if err != nil {
		t.Fatal(err)
	}
	f2, _, err := cache.Frame(ctx, ds.ID, c.Spec, frame.Default)
	if err != nil {
		t.Fatal(err)
	}
	if labels.DrawDesign(f1) == labels.DrawDesign(f2) {
		t.Errorf("two datasets share design %q", labels.DrawDesign(f1))
	}
}
