package db

import (
	"context"
	"errors"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// Bulk review verbs, cluster re-derivation and the sample, over the review fixture's
// manifest (one cluster: keeper k, x at exact 0.9, y at 0.8).

// BulkApprove approves only clusters whose every removal reaches the bar, records the
// bar on each row and as one undoable action, and refuses a manifest that is exported.
func TestBulkApprove(t *testing.T) {
	t.Parallel()
	f := newReviewFixture(t)
	ctx := context.Background()
	if n, c, err := f.d.BulkApprove(ctx, f.prep, f.m.ID, 0.85); err != nil || n != 0 || c != 0 {
		t.Fatalf("BulkApprove(0.85) = %d, %d, %v; want nothing (y is at 0.8)", n, c, err)
	}
	if acts, _ := f.d.RecentActions(ctx, f.m.ID, f.prep.ID, 10); len(acts) != 0 {
		t.Errorf("a bulk approval that approved nothing recorded %d actions", len(acts))
	}
	before, _ := f.d.Manifest(ctx, f.m.ID)
	n, c, err := f.d.BulkApprove(ctx, f.prep, f.m.ID, 0.8)
	if err != nil || n != 2 || c != 1 {
		t.Fatalf("BulkApprove(0.8) = %d, %d, %v; want 2 removals in 1 cluster", n, c, err)
	}
	for _, it := range f.cluster(t).Items {
		if it.Decision != review.Approved || it.BulkBar != 0.8 || it.DecidedBy != f.prep.ID || it.DecidedAt == "" {
			t.Errorf("item %d after the bulk approval: %+v; want approved by prep at bar 0.8", it.ID, it)
		}
	}
	after, _ := f.d.Manifest(ctx, f.m.ID)
	if after.ContentHash == before.ContentHash {
		t.Error("the content hash did not move with the decisions")
	}
	acts, err := f.d.RecentActions(ctx, f.m.ID, f.prep.ID, 10)
	if err != nil || len(acts) != 1 || acts[0].Action != "bulk-approve" || acts[0].Summary != "bulk-approved 2 removal(s) in 1 low-risk cluster(s) at bar 0.8" {
		t.Errorf("actions: %+v, %v; want one bulk-approve", acts, err)
	}
	if n, _, err := f.d.BulkApprove(ctx, f.prep, f.m.ID, 0.5); err != nil || n != 0 {
		t.Errorf("BulkApprove again = %d, %v; want nothing left to approve", n, err)
	}
	if _, ok, err := f.d.Undo(ctx, f.prep, f.m.ID); err != nil || !ok {
		t.Fatalf("Undo = %v, %v", ok, err)
	}
	if counts, _ := f.d.CountManifest(ctx, f.m.ID); counts.Proposed != 2 || counts.Approved != 0 {
		t.Errorf("after undo: %+v; want both proposed again", counts)
	}

	g := newReviewFixture(t)
	m := g.signOff(t)
	if _, err := g.d.Export(ctx, g.appr, m.ID); err != nil {
		t.Fatal(err)
	}
	_, _, err = g.d.BulkApprove(ctx, g.prep, m.ID, 0.5)
	if _, ok := errors.AsType[*review.RefusedError](err); !ok {
		t.Errorf("BulkApprove on an exported manifest = %v; want refused", err)
	}
}

// ReplaceCluster cuts a cluster in two: the first keeps its id and its items' ids, the
// second is new; the change is recorded for undo, and a caller holding the cluster as
// it was before is refused with ErrStale.
func TestReplaceCluster(t *testing.T) {
	t.Parallel()
	f := newReviewFixture(t)
	ctx := context.Background()
	was := f.cluster(t)
	k, x, y, z := f.docs["k"], f.docs["x"], f.docs["y"], f.docs["z"]
	keepX := Cluster{Keeper: k, KeeperRule: "longest", Size: 2, WeakestLink: 0.9, Weakest: x, Links: []Link{{k, x, 0.9}},
		Items: []Item{{Doc: x, Keeper: k, Score: 0.9, Estimate: 0.9, Exact: 0.9, Reason: was.Items[0].Reason}}}
	yz := Cluster{Keeper: z, KeeperRule: "longest", Size: 2, WeakestLink: 0.6, Weakest: y, Links: []Link{{z, y, 0.6}},
		Items: []Item{{Doc: y, Keeper: z, Score: 0.6, Estimate: 0.6, Exact: 0.6, Reason: was.Items[1].Reason}}}
	stored, err := f.d.ReplaceCluster(ctx, f.prep, f.m.ID, was, []Cluster{keepX, yz}, "cut", "cut y off", map[string]any{"at": y})
	if err != nil || len(stored) != 2 {
		t.Fatalf("ReplaceCluster = %d clusters, %v", len(stored), err)
	}
	var xID int64
	for _, it := range was.Items {
		if it.Doc == x {
			xID = it.ID
		}
	}
	if stored[0].ID != was.ID || len(stored[0].Items) != 1 || stored[0].Items[0].ID != xID {
		t.Errorf("first cluster: id %d items %+v; want id %d keeping x's item %d", stored[0].ID, stored[0].Items, was.ID, xID)
	}
	if stored[1].ID == was.ID || stored[1].Keeper != z || stored[1].Items[0].Doc != y {
		t.Errorf("second cluster: %+v; want a new cluster of y kept by z", stored[1])
	}
	if rows, _ := f.d.Clusters(ctx, f.m.ID, ClusterFilter{}); len(rows) != 2 {
		t.Errorf("%d clusters stored; want 2", len(rows))
	}
	// The cluster as it was read before the cut is stale now.
	if _, err := f.d.ReplaceCluster(ctx, f.prep, f.m.ID, was, []Cluster{keepX}, "cut", "again", nil); !errors.Is(err, ErrStale) {
		t.Errorf("ReplaceCluster with the old cluster = %v; want ErrStale", err)
	}
	cl, ok, err := f.d.Undo(ctx, f.prep, f.m.ID)
	if err != nil || !ok || cl != was.ID {
		t.Fatalf("Undo = %d, %v, %v; want the cut undone in cluster %d", cl, ok, err, was.ID)
	}
	if back := f.cluster(t); len(back.Items) != 2 || back.ID != was.ID {
		t.Errorf("after undo: %+v; want the one cluster of three again", back)
	}
}

// The number of approvals is a draft's setting, audited; ApproveOutsideSample waits for
// the sample to be decided, then approves every other removal, and a manifest without a
// sample has nothing outside it.
func TestApprovalsAndTheSample(t *testing.T) {
	t.Parallel()
	f := newReviewFixture(t)
	ctx := context.Background()
	if err := f.d.SetApprovalsRequired(ctx, f.prep, f.m.ID, 2); err != nil {
		t.Fatal(err)
	}
	if m, _ := f.d.Manifest(ctx, f.m.ID); m.ApprovalsRequired != 2 {
		t.Errorf("ApprovalsRequired = %d; want 2", m.ApprovalsRequired)
	}
	if ev, _ := f.d.AuditOf(ctx, manifestSubject(f.m.ID), 10); len(ev) == 0 || ev[len(ev)-1].Action != "manifest.settings" ||
		ev[len(ev)-1].Detail != `{"approvals_required":{"after":2,"before":1}}` {
		t.Errorf("audit of the setting: %+v", ev)
	}
	if _, _, err := f.d.ApproveOutsideSample(ctx, f.prep, f.m.ID); errkind.Of(err) != errkind.Invalid {
		t.Errorf("ApproveOutsideSample without a sample = %v; want an input error", err)
	}
	if in, out, err := f.d.SampleCounts(ctx, f.m.ID); err != nil || in != 0 || out != 2 {
		t.Errorf("SampleCounts = %d, %d, %v; want 0 inside, 2 outside", in, out, err)
	}
	c := f.cluster(t)
	if got := c.Members(); len(got) != 3 || got[0] != f.docs["k"] {
		t.Errorf("Members() = %v; want the keeper first, then x and y", got)
	}
	if err := f.d.RequestSignOff(ctx, f.prep, f.m.ID); err == nil {
		t.Error("sign-off requested with undecided removals")
	}
	if _, err := f.d.Decide(ctx, f.prep, f.m.ID, Decision{Items: []int64{c.Items[0].ID, c.Items[1].ID}, Decision: review.Approved, Action: "decide"}); err != nil {
		t.Fatal(err)
	}
	if err := f.d.RequestSignOff(ctx, f.prep, f.m.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.d.SetApprovalsRequired(ctx, f.prep, f.m.ID, 1); err == nil {
		t.Error("the approvals of a manifest in review changed")
	}

	// A manifest with a review sample: the cluster of x is in it, the one of y is not.
	g := newReviewFixture(t)
	k, x, y, z := g.docs["k"], g.docs["x"], g.docs["y"], g.docs["z"]
	snap, _ := g.d.DatasetSnapshot(ctx, g.m.DatasetID, 0)
	m, err := g.d.CreateManifest(ctx, g.prep, NewManifest{DatasetID: g.m.DatasetID, Params: g.m.Params, DatasetHash: snap, Clusters: []Cluster{
		{Keeper: k, KeeperRule: "longest", Size: 2, WeakestLink: 0.9, Weakest: x, Links: []Link{{k, x, 0.9}}, SampleStratum: "0.9-1",
			Items: []Item{{Doc: x, Keeper: k, Score: 0.9, Estimate: 0.9, Exact: 0.9, Reason: c.Items[0].Reason}}},
		{Keeper: z, KeeperRule: "longest", Size: 2, WeakestLink: 0.8, Weakest: y, Links: []Link{{z, y, 0.8}},
			Items: []Item{{Doc: y, Keeper: z, Score: 0.8, Estimate: 0.8, Exact: 0.8, Reason: c.Items[1].Reason}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if in, out, err := g.d.SampleCounts(ctx, m.ID); err != nil || in != 1 || out != 1 {
		t.Errorf("SampleCounts = %d, %d, %v; want 1 and 1", in, out, err)
	}
	if _, _, err := g.d.ApproveOutsideSample(ctx, g.prep, m.ID); !errors.Is(err, ErrSampleUndecided) {
		t.Errorf("ApproveOutsideSample before the sample is decided = %v; want ErrSampleUndecided", err)
	}
	rows, _ := g.d.Clusters(ctx, m.ID, ClusterFilter{Sample: true})
	if len(rows) != 1 || rows[0].SampleStratum != "0.9-1" {
		t.Fatalf("sampled clusters: %+v; want the one of x", rows)
	}
	sampled, _ := g.d.Cluster(ctx, m.ID, rows[0].ID)
	if _, err := g.d.Decide(ctx, g.prep, m.ID, Decision{Items: []int64{sampled.Items[0].ID}, Decision: review.Excluded, Action: "decide"}); err != nil {
		t.Fatal(err)
	}
	n, cl, err := g.d.ApproveOutsideSample(ctx, g.prep, m.ID)
	if err != nil || n != 1 || cl != 1 {
		t.Fatalf("ApproveOutsideSample = %d, %d, %v; want y's removal in 1 cluster", n, cl, err)
	}
	counts, _ := g.d.CountManifest(ctx, m.ID)
	if counts.Proposed != 0 || counts.Approved != 1 || counts.Excluded != 1 {
		t.Errorf("counts after: %+v; want 1 approved outside, 1 excluded inside", counts)
	}
	all, _ := g.d.Clusters(ctx, m.ID, ClusterFilter{})
	for _, r := range all {
		if r.SampleStratum == "" {
			if out, _ := g.d.Cluster(ctx, m.ID, r.ID); out.Items[0].BulkBar != OutsideSampleBar {
				t.Errorf("the removal outside the sample has bar %v; want OutsideSampleBar", out.Items[0].BulkBar)
			}
		}
	}
}
