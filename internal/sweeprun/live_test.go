package sweeprun

import (
	"context"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
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
		Verifications: []sweep.Verification{sweep.ExactJaccard}, Policies: []string{sweep.ConnectedComponents}}
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
	exportRemovals(t, e.store, e.campaign.DatasetID, group)
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

// exportRemovals has a manifest remove every document of group but the first, signed
// off and exported, through the store.
func exportRemovals(t *testing.T, store *db.DB, datasetID int64, group []int64) {
	t.Helper()
	ctx := context.Background()
	prep, err := store.CreateUser(ctx, "test", "prep", auth.Reviewer, "x")
	if err != nil {
		t.Fatal(err)
	}
	appr, err := store.CreateUser(ctx, "test", "appr", auth.Approver, "x")
	if err != nil {
		t.Fatal(err)
	}
	live, err := store.LiveState(ctx, datasetID)
	if err != nil {
		t.Fatal(err)
	}
	rule, _ := cluster.ParseRule("earliest")
	p := review.Params{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 32, Rows: 4}, Threshold: 0.8, Verification: review.Exact,
		Policy: cluster.Components, Rule: rule, CodeVersion: "test"}
	c := db.Cluster{Keeper: group[0], KeeperRule: "earliest", Size: len(group), WeakestLink: 1, Weakest: group[1]}
	for _, d := range group[1:] {
		c.Items = append(c.Items, db.Item{Doc: d, Keeper: group[0], Score: 1, Estimate: 1, Exact: 1, Reason: cluster.Exact, Decision: review.Approved,
			DecidedBy: prep.ID, DecidedAt: "2026-01-01T00:00:00Z"})
		c.Links = append(c.Links, db.Link{A: group[0], B: d, Sim: 1})
	}
	m, err := store.CreateManifest(ctx, prep, db.NewManifest{DatasetID: datasetID, Params: p, DatasetHash: live.Snapshot, ApprovalsRequired: 1,
		LiveMark: live.LiveMark, LabelMark: -1, Clusters: []db.Cluster{c}})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.RequestSignOff(ctx, prep, m.ID); err != nil {
		t.Fatal(err)
	}
	res, err := store.AddReview(ctx, appr, m.ID, db.NewReview{Verdict: review.Approve, Hash: m.ContentHash}, func(s db.Sealing) (review.Record, error) {
		return review.Record{Manifest: s.Manifest.ID, Params: s.Manifest.Params}, nil
	})
	if err != nil || !res.Signed {
		t.Fatalf("sign-off: %+v, %v", res, err)
	}
	if _, err := store.Export(ctx, appr, m.ID); err != nil {
		t.Fatal(err)
	}
}
