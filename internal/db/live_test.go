package db

import (
	"context"
	"errors"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// A new keeper in a cluster that holds the highest removal ids of the table: the old
// keeper becomes a new removal, inserted before the removal that keeps its id. SQLite
// gave the new row the highest id left plus one, which was the kept removal's id:
// "UNIQUE constraint failed: manifest_items.id" (issue 25.6). Ids are now handed out
// above every id the table ever held, so the undo that puts the deleted removal back
// under its own id finds it free, even after other manifests were stored since.
func TestNewKeeperInTheClusterWithTheHighestIDs(t *testing.T) {
	t.Parallel()
	f := newReviewFixture(t)
	ctx := context.Background()
	c := f.cluster(t)
	k, x, y := f.docs["k"], f.docs["x"], f.docs["y"]
	if c.Keeper != k || len(c.Items) != 2 || c.Items[1].Doc != y {
		t.Fatalf("fixture cluster %+v; want k keeping x and y", c)
	}
	now := []Cluster{{Keeper: y, KeeperRule: c.KeeperRule, Override: "y is the maintained copy", Size: 3, WeakestLink: 0.8, Weakest: x,
		Links: c.Links, Items: []Item{{Doc: k, Keeper: y, Score: 0.8, Estimate: 0.8, Exact: 0.8, Reason: "near"},
			{Doc: x, Keeper: y, Score: 0.8, Estimate: 0.8, Exact: 0.8, Reason: "near"}}}}
	out, err := f.d.ReplaceCluster(ctx, f.prep, f.m.ID, c, now, "keeper", "made y the keeper", nil)
	if err != nil {
		t.Fatalf("ReplaceCluster making y the keeper: %v", err)
	}
	if len(out) != 1 || out[0].Keeper != y || len(out[0].Items) != 2 || out[0].Items[1].ID != c.Items[0].ID {
		t.Fatalf("after the new keeper: %+v; want y keeping k (a new id) and x (its id %d)", out, c.Items[0].ID)
	}
	if newID := out[0].Items[0].ID; newID <= c.Items[1].ID {
		t.Errorf("the new removal of k got id %d; want one above every id handed out (%d)", newID, c.Items[1].ID)
	}
	// Another manifest stored since takes fresh ids; the undo puts y's removal back under
	// its own id.
	other, err := f.d.CreateManifest(ctx, f.prep, NewManifest{DatasetID: f.m.DatasetID, Params: f.m.Params, DatasetHash: f.m.DatasetHash,
		Clusters: []Cluster{{Keeper: x, KeeperRule: "longest", Size: 2, WeakestLink: 0.9, Weakest: y, Links: []Link{{x, y, 0.9}},
			Items: []Item{{Doc: y, Keeper: x, Score: 0.9, Estimate: 0.9, Exact: 0.9, Reason: "near"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	oc, _ := f.d.Clusters(ctx, other.ID, ClusterFilter{})
	if len(oc) != 1 || oc[0].ID <= c.ID {
		t.Errorf("the other manifest's cluster got id %v; want one above %d", oc, c.ID)
	}
	if _, ok, err := f.d.Undo(ctx, f.prep, f.m.ID); err != nil || !ok {
		t.Fatalf("undo of the new keeper: %v, %v", ok, err)
	}
	if back := f.cluster(t); back.Keeper != k || len(back.Items) != 2 || back.Items[1].ID != c.Items[1].ID || back.Items[1].Doc != y {
		t.Errorf("after the undo: %+v; want k keeping x and y under their ids", back)
	}
}

// The same approval sent twice (a double click, a replayed post) is stored once and
// audited once (issue 25.8: 20 parallel approvals stored 20 review rows).
func TestRepeatedApprovalIsStoredOnce(t *testing.T) {
	t.Parallel()
	f := newReviewFixture(t)
	ctx := context.Background()
	second, _ := f.d.CreateUser(ctx, "t", "appr2", auth.Approver, "h")
	c := f.cluster(t)
	if _, err := f.d.Decide(ctx, f.prep, f.m.ID, Decision{Items: []int64{c.Items[0].ID, c.Items[1].ID}, Decision: review.Approved, Action: "decide"}); err != nil {
		t.Fatal(err)
	}
	if err := f.d.SetApprovalsRequired(ctx, f.prep, f.m.ID, 2, ""); err != nil {
		t.Fatal(err)
	}
	if err := f.d.RequestSignOff(ctx, f.prep, f.m.ID); err != nil {
		t.Fatal(err)
	}
	m, _ := f.d.Manifest(ctx, f.m.ID)
	events := f.count(t, `SELECT count(*) FROM audit_log`)
	for i := range 3 {
		res, err := f.d.AddReview(ctx, f.appr, m.ID, NewReview{Verdict: review.Approve, Hash: m.ContentHash}, nil)
		if err != nil || res.Signed || res.Repeated != (i > 0) {
			t.Fatalf("approval %d: %+v, %v; want stored the first time, repeated after", i+1, res, err)
		}
	}
	if n := f.count(t, `SELECT count(*) FROM reviews WHERE manifest_id = ?`, m.ID); n != 1 {
		t.Errorf("%d review rows for one approval sent three times; want 1", n)
	}
	if n := f.count(t, `SELECT count(*) FROM audit_log`) - events; n != 1 {
		t.Errorf("%d audit events for one approval sent three times; want 1", n)
	}
	res, err := f.d.AddReview(ctx, second, m.ID, NewReview{Verdict: review.Approve, Hash: m.ContentHash},
		func(s Sealing) (review.Record, error) {
			return review.Record{Manifest: s.Manifest.ID, Params: s.Manifest.Params, Deciders: s.Deciders}, nil
		})
	if err != nil || !res.Signed {
		t.Fatalf("the second approver's approval: %+v, %v; want signed off", res, err)
	}
}

// Whoever made the review decisions on a manifest may approve it but not alone: an
// admin who bulk-approved every removal of a manifest someone else ran, and approved it,
// signed it off by themselves (issue 25.4).
func TestDeciderIsNotTheOnlyApprover(t *testing.T) {
	t.Parallel()
	f := newReviewFixture(t)
	ctx := context.Background()
	admin, _ := f.d.CreateUser(ctx, "t", "root", auth.Admin, "h")
	c := f.cluster(t)
	if _, err := f.d.Decide(ctx, admin, f.m.ID, Decision{Items: []int64{c.Items[0].ID, c.Items[1].ID}, Decision: review.Approved, Action: "decide"}); err != nil {
		t.Fatal(err)
	}
	if err := f.d.RequestSignOff(ctx, admin, f.m.ID); err != nil {
		t.Fatal(err)
	}
	m, _ := f.d.Manifest(ctx, f.m.ID)
	if m.ApprovalsRequired != 1 {
		t.Fatalf("fixture asks %d approvals; want 1", m.ApprovalsRequired)
	}
	seal := func(s Sealing) (review.Record, error) {
		return review.Record{Manifest: s.Manifest.ID, Params: s.Manifest.Params, Deciders: s.Deciders}, nil
	}
	res, err := f.d.AddReview(ctx, admin, m.ID, NewReview{Verdict: review.Approve, Hash: m.ContentHash}, seal)
	if err != nil || res.Signed || res.Waiting == nil || len(res.Waiting.Deciders) != 1 || res.Waiting.Deciders[0] != "root" {
		t.Fatalf("the decider's own approval: %+v, %v; want recorded, not signed off, waiting for another approver", res, err)
	}
	if m, _ = f.d.Manifest(ctx, m.ID); m.State != review.InReview {
		t.Fatalf("state after the decider's approval: %s; want in review", m.State)
	}
	res, err = f.d.AddReview(ctx, f.appr, m.ID, NewReview{Verdict: review.Approve, Hash: m.ContentHash}, seal)
	if err != nil || !res.Signed {
		t.Fatalf("an approver who decided nothing: %+v, %v; want signed off", res, err)
	}
	sos, _ := f.d.SignOffs(ctx, m.ID)
	if len(sos) != 1 || len(sos[0].Record.Deciders) != 1 || sos[0].Record.Deciders[0] != "root" {
		t.Errorf("sign-off record deciders: %+v; want root", sos)
	}
}

// An export refuses removals whose document or keeper another manifest's export
// tombstoned, naming each, the manifest and when, and writes nothing.
func TestExportNamesTheConflict(t *testing.T) {
	t.Parallel()
	f := newReviewFixture(t)
	ctx := context.Background()
	m := f.signOff(t)
	// Another manifest tombstones k (this one's keeper) behind the log's back, as a
	// manifest stored before the log existed could have.
	other, err := f.d.CreateManifest(ctx, f.prep, NewManifest{DatasetID: m.DatasetID, Params: m.Params, DatasetHash: m.DatasetHash,
		Clusters: []Cluster{{Keeper: f.docs["z"], KeeperRule: "longest", Size: 2, WeakestLink: 0.9, Weakest: f.docs["k"],
			Items: []Item{{Doc: f.docs["k"], Keeper: f.docs["z"], Score: 0.9, Estimate: 0.9, Exact: 0.9, Reason: "near"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.d.w.ExecContext(ctx, `INSERT INTO tombstones (document_id, manifest_id, removed_at) VALUES (?, ?, ?)`,
		f.docs["k"], other.ID, f.d.stamp()); err != nil {
		t.Fatal(err)
	}
	_, err = f.d.Export(ctx, f.appr, m.ID)
	var ce *review.ConflictError
	if !errors.As(err, &ce) || ce.Total != 2 || ce.Conflicts[0].Role != "keeper" || ce.Conflicts[0].Manifest != other.ID ||
		ce.Conflicts[0].Keeper != "k" {
		t.Fatalf("export with its keeper tombstoned: %v; want a conflict naming k and manifest %d for both removals", err, other.ID)
	}
	if n := f.count(t, `SELECT count(*) FROM tombstones WHERE manifest_id = ?`, m.ID); n != 0 {
		t.Errorf("a refused export left %d tombstones", n)
	}
	if m, _ = f.d.Manifest(ctx, m.ID); m.State != review.SignedOff {
		t.Errorf("state after the refused export: %s", m.State)
	}
}
