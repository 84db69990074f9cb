package demo

import (
	"context"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/labels"
)

// The shipped sample loads cleanly and covers what the demo promises.
func TestLoadDemo(t *testing.T) {
	ctx := context.Background()
	store := dbtest.Open(t)
	rep, lrep, err := Load(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Accepted < 2000 || rep.Accepted > 5000 || rep.Rejected != 0 {
		t.Errorf("documents: %d accepted, %d rejected; want 2,000-5,000 and none rejected", rep.Accepted, rep.Rejected)
	}
	if lrep.Accepted < 600 || lrep.Rejected != 0 {
		t.Errorf("labels: %d accepted, %d rejected; want at least 600, none rejected", lrep.Accepted, lrep.Rejected)
	}
	o, err := store.DatasetOverview(ctx, rep.Dataset.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, c := range o.Categories {
		got[c.Key] = c.N
	}
	for _, c := range labels.DefaultCategories {
		if got[c.Key] < 50 {
			t.Errorf("category %s has %d labeled pairs; want at least 50", c.Key, got[c.Key])
		}
	}
	stats, _ := store.PairStats(ctx, 1)
	twice := 0
	for _, p := range stats {
		if p.Wanted == 2 {
			twice++
		}
	}
	if twice < len(stats)/6 || twice > len(stats)/4 {
		t.Errorf("%d of %d demo pairs want a second label; want about a fifth", twice, len(stats))
	}
	if len(o.Langs) < 10 || len(o.Sources) != 6 {
		t.Errorf("languages %v, sources %v; want many languages and all six sources", o.Langs, o.Sources)
	}
}
