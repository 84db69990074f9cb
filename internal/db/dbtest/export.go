package dbtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// ExportRemovals has a manifest remove every document of group but the first (kept),
// prepared and signed off by two accounts it makes, and exports it through the store: the
// documents are then under a standing tombstone, as after a real export.
func ExportRemovals(t testing.TB, store *db.DB, datasetID int64, group []int64) {
	t.Helper()
	ctx := context.Background()
	prep, err := store.CreateUser(ctx, "test", fmt.Sprintf("export-prep-%d", group[0]), auth.Reviewer, "x")
	if err != nil {
		t.Fatal(err)
	}
	appr, err := store.CreateUser(ctx, "test", fmt.Sprintf("export-appr-%d", group[0]), auth.Approver, "x")
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
