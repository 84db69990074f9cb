package campaign

import (
	"context"
	"fmt"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
)

// TestDrawWithoutTextsIsTheDrawWithThem checks issue 15 item 9's change: Draw no longer
// holds every text of the dataset, reading only the drawn documents' texts afterwards,
// and draws exactly the pairs, scores and wanted labels that the draw over all texts in
// memory (labels.DrawWith with texts, as before) gives for the same seed.
func TestDrawWithoutTextsIsTheDrawWithThem(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 600)
	ctx := context.Background()
	cache := sigcache.New(f.store)
	set, err := cache.Signatures(ctx, f.c.DatasetID, f.c.Spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(f.docs))
	for i, d := range f.docs {
		if set.IDs[i] != d.ID {
			t.Fatalf("signature %d is of document %d, not %d", i, set.IDs[i], d.ID)
		}
		texts[i] = d.Text
	}
	plan := DrawPlan{PerBin: 20, Bin: -1, Boundary: 10, Random: 30, Seed: 11}
	c := f.campaign()
	want, err := labels.DrawWith(texts, set.Sigs, c.Spec, labels.Plan{Bins: Bins, PerBin: plan.PerBin, TargetBin: plan.Bin,
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
		t.Fatalf("Draw added %d pairs; the draw over all texts gives %d", added, len(want))
	}
	got := map[string]string{}
	for i, r := range refs {
		got[fmt.Sprint(r.DocA, r.DocB)] = fmt.Sprintf("%s %.12f %d", stats[i].Origin, stats[i].Similarity.Float64, stats[i].Wanted)
	}
	for _, d := range want {
		key := fmt.Sprint(f.docs[d.A].ID, f.docs[d.B].ID)
		if w := fmt.Sprintf("%s %.12f %d", d.Origin, d.Similarity, d.Wanted); got[key] != w {
			t.Errorf("pair %s: stored %q; the draw over all texts gives %q", key, got[key], w)
		}
	}
}
