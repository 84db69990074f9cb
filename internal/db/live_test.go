package db

import (
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
	f, ctx := newReviewFixture(t), t.Context()
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
	f, ctx := newReviewFixture(t), t.Context()
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
	f, ctx := newReviewFixture(t), t.Context()
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
	f, ctx := newReviewFixture(t), t.Context()
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

// What the live documents say around an export: another open manifest that keeps a
// document this one removes conflicts with it both ways; the export takes the removals
// out of the live documents (LiveState, RemovedDocuments, Tombstoned) and makes the
// other manifest stale, naming the document of its own the export took; labels of its
// campaign make it stale too; the revoke puts the live documents back as the other's
// run read them, which undoes that part of its staleness.
func TestLiveDocumentsAndStaleness(t *testing.T) {
	t.Parallel()
	f := newReviewFixture(t)
	d, ctx := f.d, t.Context()
	k, x, y, z := f.docs["k"], f.docs["x"], f.docs["y"], f.docs["z"]
	before, err := d.LiveState(ctx, f.m.DatasetID)
	if err != nil || len(before.Docs) != 4 || len(before.Removed) != 0 || before.Snapshot != f.m.DatasetHash || before.LiveMark != 0 {
		t.Fatalf("LiveState before any export = %+v, %v; want the 4 documents, nothing removed, the manifest's snapshot", before, err)
	}
	camp, err := d.EnsureCampaign(ctx, f.m.DatasetID, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.AddPairs(ctx, camp.ID, []NewPair{{DocA: k, DocB: z, Origin: "test", Wanted: 1}}, "test"); err != nil {
		t.Fatal(err)
	}
	pairs, _ := d.PairDocs(ctx, camp.ID)
	other, err := d.CreateManifest(ctx, f.other, NewManifest{DatasetID: f.m.DatasetID, CampaignID: camp.ID, Params: f.m.Params,
		DatasetHash: before.Snapshot, LiveMark: before.LiveMark, LabelMark: before.LabelMark,
		CarriedOver: &review.CarriedOver{From: f.m.ID},
		Clusters: []Cluster{{Keeper: x, KeeperRule: "longest", Size: 2, WeakestLink: 0.9, Weakest: z, Links: []Link{{x, z, 0.9}},
			Items: []Item{{Doc: z, Keeper: x, Score: 0.9, Estimate: 0.9, Exact: 0.9, Reason: "near"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if again, err := d.PreparedAgain(ctx, f.m.ID); err != nil || len(again) != 1 || again[0] != other.ID {
		t.Errorf("PreparedAgain(%d) = %v, %v; want [%d]", f.m.ID, again, err, other.ID)
	}

	// Both open: each sees the other's claim on x.
	mine, n, err := d.CrossConflicts(ctx, f.m)
	if err != nil || n != 1 || len(mine) != 1 || mine[0].Doc != x || mine[0].ExtID != "x" || mine[0].Other != other.ID || mine[0].KeptHere || mine[0].State != review.Draft {
		t.Errorf("CrossConflicts of the fixture = %+v, %d, %v; want x, removed here and kept by %d", mine, n, err, other.ID)
	}
	oc, err := d.Clusters(ctx, other.ID, ClusterFilter{})
	if err != nil || len(oc) != 1 {
		t.Fatalf("clusters of the other = %v, %v", oc, err)
	}
	theirs, err := d.CrossConflictsIn(ctx, other, oc[0].ID)
	if err != nil || len(theirs) != 1 || theirs[0].Doc != x || !theirs[0].KeptHere || theirs[0].Other != f.m.ID {
		t.Errorf("CrossConflictsIn of the other's cluster = %+v, %v; want x, kept there and removed by %d", theirs, err, f.m.ID)
	}

	m := f.signOff(t)
	if ids, names, err := d.Deciders(ctx, m.ID); err != nil || !ids[f.prep.ID] || len(ids) != 1 || len(names) != 1 || names[0] != "prep" {
		t.Errorf("Deciders = %v, %v, %v; want prep alone", ids, names, err)
	}
	if _, err := d.Export(ctx, f.appr, m.ID); err != nil {
		t.Fatal(err)
	}
	after, err := d.LiveState(ctx, m.DatasetID)
	if err != nil || len(after.Docs) != 2 || after.Docs[0].ID != k || after.Docs[1].ID != z || after.LiveMark == 0 || after.Snapshot == before.Snapshot {
		t.Fatalf("LiveState after the export = %+v, %v; want k and z live, a new mark and snapshot", after, err)
	}
	if len(after.Removed) != 1 || after.Removed[0].Manifest != m.ID || after.Removed[0].Documents != 2 || after.Removed[0].At.IsZero() {
		t.Errorf("LiveState.Removed = %+v; want 2 documents by manifest %d", after.Removed, m.ID)
	}
	if rb, err := d.RemovedDocuments(ctx, m.DatasetID); err != nil || len(rb) != 1 || rb[0] != after.Removed[0] {
		t.Errorf("RemovedDocuments = %+v, %v; want %+v", rb, err, after.Removed)
	}
	if ts, err := d.Tombstoned(ctx, m.DatasetID); err != nil || len(ts) != 2 || ts[x] != m.ID || ts[y] != m.ID {
		t.Errorf("Tombstoned = %v, %v; want x and y by %d", ts, err, m.ID)
	}
	// An exported manifest is no longer open: no conflicts, never stale.
	if m, err = d.Manifest(ctx, m.ID); err != nil || m.State != review.Exported {
		t.Fatalf("the manifest after its export = %+v, %v; want exported", m, err)
	}
	if list, n, err := d.CrossConflicts(ctx, m); err != nil || n != 0 || list != nil {
		t.Errorf("CrossConflicts of the exported manifest = %v, %d, %v; want none", list, n, err)
	}
	if st, err := d.Staleness(ctx, m); err != nil || st.Stale() {
		t.Errorf("Staleness of the exported manifest = %+v, %v; want none", st, err)
	}

	st, err := d.Staleness(ctx, other)
	if err != nil || len(st.Changes) != 1 || st.LabelEvents != 0 {
		t.Fatalf("Staleness of the other = %+v, %v; want the export alone", st, err)
	}
	if c := st.Changes[0]; c.Manifest != m.ID || c.Kind != review.ChangeExport || c.Documents != 2 || c.By != "appr" || c.Touched != 1 || len(c.Examples) != 1 || c.Examples[0] != "x" {
		t.Errorf("the export as a change = %+v; want 2 documents by appr, touching x of the other", c)
	}
	if _, err := d.RecordEvent(ctx, camp.ID, pairs[0].ID, NewLabel{Annotator: "ann", Category: "exact", Duplicate: true}, 0); err != nil {
		t.Fatal(err)
	}
	if events, labelled, last, err := d.LabelsSince(ctx, camp.ID, 0); err != nil || events != 1 || labelled != 1 || last.IsZero() {
		t.Errorf("LabelsSince(0) = %d, %d, %v, %v; want one event on one pair", events, labelled, last, err)
	}
	if _, err := d.Revoke(ctx, f.appr, m.ID, "wrong threshold"); err != nil {
		t.Fatal(err)
	}
	all, err := d.StalenessOf(ctx, []Manifest{m, other})
	if err != nil || len(all) != 2 || all[m.ID].Stale() {
		t.Fatalf("StalenessOf = %+v, %v; want both, the revoked manifest not stale", all, err)
	}
	if s := all[other.ID]; len(s.Changes) != 0 || s.LabelEvents != 1 || s.LabelPairs != 1 || s.Campaign != "default" || s.LabelsAt.IsZero() {
		t.Errorf("the other after the revoke = %+v; want the live documents as its run read them, and the label", s)
	}
	if ls, _ := d.LiveState(ctx, m.DatasetID); len(ls.Docs) != 4 || ls.Snapshot != before.Snapshot || ls.LabelMark == 0 {
		t.Errorf("LiveState after the revoke = %+v; want the 4 documents and the first snapshot", ls)
	}
}
