package manifests

import (
	"context"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// TestRunAfterAnExportKeepsItsLabels: a manifest run after an export estimates from
// every labeled pair, those naming a document the export removed included (they count
// for their bins' shares, as in a sweep), and says so; before, the run dropped them and
// its estimates rested on fewer labels than the campaign holds.
func TestRunAfterAnExportKeepsItsLabels(t *testing.T) {
	if testing.Short() {
		t.Skip("runs over the demo's 2,136 documents twice")
	}
	t.Parallel()
	ctx := context.Background()
	store, rep, u := demoStore(t)
	p := exactParams(t, 0.8, cluster.Components, "earliest")
	run := func() *review.Estimates {
		t.Helper()
		m, err := Run(ctx, store, sigcache.New(store), Request{DatasetID: rep.Dataset.ID, Params: p, By: u}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if m.Estimates == nil || m.Estimates.DesignPairs == 0 {
			t.Fatalf("estimates %+v; want the design's", m.Estimates)
		}
		return m.Estimates
	}
	before := run()

	// Remove one document of a labeled pair through a signed-off export.
	c, err := campaignFor(ctx, store, rep.Dataset.ID, 0)
	if err != nil || c.ID == 0 {
		t.Fatalf("the demo's campaign: %+v, %v", c, err)
	}
	pairs, err := store.SweepPairs(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	pick := -1
	for i, pl := range pairs {
		if len(pl.Labels) > 0 && pl.Design != "" && strings.HasSuffix(pl.Stratum, "|j0.9-1") {
			pick = i
			break
		}
	}
	if pick < 0 {
		t.Fatal("no labeled pair of the demo's design in J 0.9-1")
	}
	dbtest.ExportRemovals(t, store, rep.Dataset.ID, []int64{pairs[pick].A, pairs[pick].B})
	after := run()

	if after.DesignPairs != before.DesignPairs || after.Counted != before.Counted {
		t.Errorf("after the export the estimates rest on %d design pairs (%d counted); before %d (%d): want every label still counting",
			after.DesignPairs, after.Counted, before.DesignPairs, before.Counted)
	}
	if !strings.Contains(after.Assumption, sweep.GoneAssumption) || strings.Contains(before.Assumption, sweep.GoneAssumption) {
		t.Errorf("assumption after the export %q; want it to say the labels of removed documents still count (and not before)", after.Assumption)
	}
}
