package sweeprun

import (
	"context"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// A sweep scores the live documents: the documents an exported manifest removed are
// neither counted as removals again nor kept (issue 24: a sweep's removals counted every
// document). The set is the one the sweep started on: an export after it changes neither
// its stored results nor what Select rescores.
func TestSweepScoresTheLiveDocuments(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	grid := sweep.Grid{Specs: []lsh.Spec{lsh.DefaultSpec()}, Shapes: []lsh.Shape{{Bands: 32, Rows: 4}}, Thresholds: []float64{0.8},
		Verifications: []sweep.Verification{sweep.ExactJaccard}, Policies: []cluster.Policy{cluster.Components}}
	before := e.run(StartRequest{CampaignID: e.campaign.ID, Grid: grid})
	// Copies of one text: an exported manifest removes all but the first.
	docs, err := e.store.DatasetDocs(ctx, e.campaign.DatasetID)
	if err != nil {
		t.Fatal(err)
	}
	byHash := map[string][]int64{}
	for _, d := range docs {
		byHash[d.ContentHash] = append(byHash[d.ContentHash], d.ID)
	}
	var group []int64
	for _, g := range byHash {
		if len(g) > len(group) {
			group = g
		}
	}
	if len(group) < 2 {
		t.Fatal("the demo holds no exact copies")
	}
	removed := len(group) - 1
	dbtest.ExportRemovals(t, e.store, e.campaign.DatasetID, group)
	after := e.run(StartRequest{CampaignID: e.campaign.ID, Grid: grid})
	b, a := e.results(before.ID)[0], e.results(after.ID)[0]
	if got := before.Summary.Baseline.Removals - after.Summary.Baseline.Removals; got != removed {
		t.Errorf("exact-hash removals %d before the export, %d after; want %d fewer (the copies already removed)",
			before.Summary.Baseline.Removals, after.Summary.Baseline.Removals, removed)
	}
	if b.Removals-a.Removals != removed {
		t.Errorf("the configuration removes %d before the export, %d after; want %d fewer", b.Removals, a.Removals, removed)
	}
	// Each sweep rescores on the documents it started on.
	for _, tc := range []struct {
		sw   Sweep
		want int
	}{{before, b.Removals}, {after, a.Removals}} {
		sel, err := e.svc.Select(ctx, tc.sw.ID, b.Config, 0.8)
		if err != nil {
			t.Fatal(err)
		}
		if sel.Result.Removals != tc.want {
			t.Errorf("sweep %d rescored at its threshold: %d removals; its result says %d", tc.sw.ID, sel.Result.Removals, tc.want)
		}
	}
}
