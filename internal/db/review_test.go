package db

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// The audit chain verifies, and names the first row edited (with the triggers dropped,
// as someone with the database file could) or following a deleted row.
func TestAuditChainDetectsEditedAndDeletedRows(t *testing.T) {
	t.Parallel()
	d, ctx := openTest(t), t.Context()
	for i := range 6 {
		if err := d.Audit(ctx, "tester", "test.event", fmt.Sprintf("thing:%d", i), map[string]any{"n": i}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := d.VerifyAudit(ctx, review.AuditHead{})
	if err != nil || !c.Intact() || c.Rows != 6 || len(c.Head) != 64 {
		t.Fatalf("VerifyAudit of an untouched log = %+v, %v", c, err)
	}
	// Append-only holds while the triggers stand.
	if _, err := d.w.ExecContext(ctx, `UPDATE audit_log SET detail = '{"n":99}' WHERE id = 3`); err == nil {
		t.Fatal("an audit row was updated with the triggers in place")
	}
	if _, err := d.w.ExecContext(ctx, `DELETE FROM audit_log WHERE id = 3`); err == nil {
		t.Fatal("an audit row was deleted with the triggers in place")
	}
	for _, tc := range []struct {
		name, sql string
		broken    int64
		problem   string
	}{
		{"edited detail", `UPDATE audit_log SET detail = '{"n":99}' WHERE id = 3`, 3, "edited after it was written"},
		{"edited actor and its hash", `UPDATE audit_log SET actor = 'mallory', hash = 'x' WHERE id = 2`, 2, "edited after it was written"},
		{"deleted row", `DELETE FROM audit_log WHERE id = 5`, 6, "does not link to row 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := openTest(t)
			for i := range 6 {
				if err := d.Audit(ctx, "tester", "test.event", fmt.Sprintf("thing:%d", i), map[string]any{"n": i}); err != nil {
					t.Fatal(err)
				}
			}
			for _, q := range []string{`DROP TRIGGER audit_log_no_update`, `DROP TRIGGER audit_log_no_delete`, tc.sql} {
				if _, err := d.w.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			c, err := d.VerifyAudit(ctx, review.AuditHead{})
			if err != nil {
				t.Fatal(err)
			}
			if c.BrokenAt != tc.broken || !strings.Contains(c.Problem, tc.problem) {
				t.Errorf("VerifyAudit after %s = broken at %d (%s); want row %d, %q", tc.name, c.BrokenAt, c.Problem, tc.broken, tc.problem)
			}
		})
	}
}

// reviewFixture is a dataset of four documents, a manifest removing two of them, and
// the people of a review.
type reviewFixture struct {
	d                 *DB
	m                 Manifest
	prep, appr, other User
	docs              map[string]int64
}

func newReviewFixture(t *testing.T) *reviewFixture {
	t.Helper()
	d, ctx := openTest(t), t.Context()
	ds, _ := d.BeginDataset(ctx, "r", "r.jsonl", 0)
	if _, err := d.InsertDocuments(ctx, ds.ID, []NewDocument{{ExtID: "k", Text: "keep", ContentHash: "hk"}, {ExtID: "x", Text: "x", ContentHash: "hx"},
		{ExtID: "y", Text: "y", ContentHash: "hy"}, {ExtID: "z", Text: "z", ContentHash: "hz"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.FinishDataset(ctx, ds.ID, "h", 0, "t"); err != nil {
		t.Fatal(err)
	}
	f := &reviewFixture{d: d}
	f.docs, _ = d.DocumentIDs(ctx, ds.ID, []string{"k", "x", "y", "z"})
	f.prep, _ = d.CreateUser(ctx, "t", "prep", auth.Reviewer, "h")
	f.appr, _ = d.CreateUser(ctx, "t", "appr", auth.Approver, "h")
	f.other, _ = d.CreateUser(ctx, "t", "other", auth.Reviewer, "h")
	rule, _ := cluster.ParseRule("longest")
	p := review.Params{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 16, Rows: 8}, Threshold: 0.7, Verification: review.Exact,
		Policy: cluster.Components, Rule: rule, CodeVersion: "t"}
	snap, _ := d.DatasetSnapshot(ctx, ds.ID, 0)
	k, x, y := f.docs["k"], f.docs["x"], f.docs["y"]
	m, err := d.CreateManifest(ctx, f.prep, NewManifest{DatasetID: ds.ID, Params: p, DatasetHash: snap, ApprovalsRequired: 1, Clusters: []Cluster{{
		Keeper: k, KeeperRule: "longest", Size: 3, WeakestLink: 0.8, Weakest: y, Links: []Link{{k, x, 0.9}, {k, y, 0.8}},
		Items: []Item{{Doc: x, Keeper: k, Score: 0.9, Estimate: 0.9, Exact: 0.9, Reason: cluster.Near},
			{Doc: y, Keeper: k, Score: 0.8, Estimate: 0.8, Exact: 0.8, Reason: cluster.Near}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	f.m = m
	return f
}

func (f *reviewFixture) cluster(t *testing.T) Cluster {
	t.Helper()
	rows, err := f.d.Clusters(t.Context(), f.m.ID, ClusterFilter{})
	if err != nil || len(rows) != 1 {
		t.Fatalf("clusters: %v, %v", rows, err)
	}
	c, err := f.d.Cluster(t.Context(), f.m.ID, rows[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *reviewFixture) signOff(t *testing.T) Manifest {
	t.Helper()
	ctx := t.Context()
	c := f.cluster(t)
	if _, err := f.d.Decide(ctx, f.prep, f.m.ID, Decision{Items: []int64{c.Items[0].ID, c.Items[1].ID}, Decision: review.Approved, Action: "decide"}); err != nil {
		t.Fatal(err)
	}
	if err := f.d.RequestSignOff(ctx, f.prep, f.m.ID); err != nil {
		t.Fatal(err)
	}
	m, _ := f.d.Manifest(ctx, f.m.ID)
	signed, err := f.d.AddReview(ctx, f.appr, m.ID, NewReview{Verdict: review.Approve, Hash: m.ContentHash},
		func(s Sealing) (review.Record, error) {
			return review.Record{Manifest: s.Manifest.ID, ManifestHash: s.Manifest.ContentHash, Params: s.Manifest.Params}, nil
		})
	if err != nil || !signed.Signed {
		t.Fatalf("sign-off: %v, %v", signed, err)
	}
	m, _ = f.d.Manifest(ctx, f.m.ID)
	return m
}

// An export recomputes the hashes from the stored rows and documents: a row edited in
// the database behind the store's back, or a document changed, is refused, and so are
// the downloads of an export whose rows were edited afterwards.
func TestExportRefusesATamperedManifestOrDataset(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for _, tc := range []struct {
		name, sql, doc, what string
	}{
		{"approved row excluded in the database", `UPDATE manifest_items SET decision = 'keep' WHERE document_id = %d`, "x", "manifest"},
		{"similarity edited", `UPDATE manifest_items SET exact = 0.99 WHERE document_id = %d`, "x", "manifest"},
		{"removed document changed", `UPDATE documents SET content_hash = 'changed' WHERE id = %d`, "x", "manifest"},
		{"another document changed", `UPDATE documents SET content_hash = 'changed' WHERE id = %d`, "z", "dataset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newReviewFixture(t)
			m := f.signOff(t)
			if _, err := f.d.w.ExecContext(ctx, fmt.Sprintf(tc.sql, f.docs[tc.doc])); err != nil {
				t.Fatal(err)
			}
			_, err := f.d.Export(ctx, f.appr, m.ID)
			var stale *review.StaleError
			if !errors.As(err, &stale) || stale.What != tc.what {
				t.Fatalf("Export after %s = %v; want a stale %s", tc.name, err, tc.what)
			}
			if n := f.count(t, `SELECT count(*) FROM tombstones`); n != 0 {
				t.Errorf("a refused export left %d tombstones", n)
			}
		})
	}
	f := newReviewFixture(t)
	m := f.signOff(t)
	rows, err := f.d.Export(ctx, f.appr, m.ID)
	if err != nil || len(rows) != 2 {
		t.Fatalf("Export = %d rows, %v", len(rows), err)
	}
	if _, _, err := f.d.ExportedRows(ctx, m.ID); err != nil {
		t.Fatalf("ExportedRows of an intact export: %v", err)
	}
	f.d.w.ExecContext(ctx, `UPDATE manifest_items SET exact = 0.5 WHERE document_id = ?`, f.docs["y"])
	if _, _, err := f.d.ExportedRows(ctx, m.ID); err == nil {
		t.Error("the downloads of an export whose rows were edited were served")
	}
}

func (f *reviewFixture) count(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	if err := f.d.w.QueryRowContext(t.Context(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Undo restores what a person changed, and refuses when someone changed it since;
// every change and undo is one audit event in the same transaction as the change.
func TestUndoAndAuditPerChange(t *testing.T) {
	t.Parallel()
	f, ctx := newReviewFixture(t), t.Context()
	c := f.cluster(t)
	x := c.Items[0]
	before := f.count(t, `SELECT count(*) FROM audit_log`)
	if n, err := f.d.Decide(ctx, f.prep, f.m.ID, Decision{Items: []int64{x.ID}, Decision: review.Approved, Action: "decide", Summary: "ok x"}); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	// The same decision again changes nothing and writes nothing.
	if n, err := f.d.Decide(ctx, f.prep, f.m.ID, Decision{Items: []int64{x.ID}, Decision: review.Approved, Action: "decide"}); err != nil || n != 0 {
		t.Fatalf("repeated decision = %d, %v; want 0", n, err)
	}
	if got := f.count(t, `SELECT count(*) FROM audit_log`) - before; got != 1 {
		t.Errorf("%d audit events for one decision; want 1", got)
	}
	// Someone else excludes x: prep's undo would overwrite it, and is refused.
	if _, err := f.d.Decide(ctx, f.other, f.m.ID, Decision{Items: []int64{x.ID}, Decision: review.Excluded, Action: "decide"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.d.Undo(ctx, f.prep, f.m.ID); !errors.Is(err, ErrStale) {
		t.Errorf("undo of a decision changed since: %v; want ErrStale", err)
	}
	// The other's undo restores prep's approval.
	if _, ok, err := f.d.Undo(ctx, f.other, f.m.ID); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if c := f.cluster(t); c.Items[0].Decision != review.Approved || c.Items[0].DecidedBy != f.prep.ID {
		t.Errorf("after the undo: %+v; want prep's approval back", c.Items[0])
	}
	// Items of another manifest are not found.
	if _, err := f.d.Decide(ctx, f.prep, f.m.ID, Decision{Items: []int64{9999}, Decision: review.Approved}); !errors.Is(err, ErrNotFound) {
		t.Errorf("decision on an unknown item: %v; want ErrNotFound", err)
	}
	acts, _ := f.d.RecentActions(ctx, f.m.ID, f.other.ID, 10)
	if len(acts) != 2 || acts[0].Action != "undo" || !acts[1].Undone {
		t.Errorf("other's recent actions: %+v", acts)
	}
	if c, err := f.d.VerifyAudit(ctx, review.AuditHead{}); err != nil || !c.Intact() {
		t.Errorf("audit chain: %+v, %v", c, err)
	}
}

// Bulk review verbs, cluster re-derivation and the sample, over the review fixture's
// manifest (one cluster: keeper k, x at exact 0.9, y at 0.8).

// BulkApprove approves only clusters whose every removal reaches the bar, records the
// bar on each row and as one undoable action, and refuses a manifest that is exported.
func TestBulkApprove(t *testing.T) {
	t.Parallel()
	f, ctx := newReviewFixture(t), t.Context()
	if n, c, err := f.d.BulkApprove(ctx, f.prep, f.m.ID, 0.85, -1); err != nil || n != 0 || c != 0 {
		t.Fatalf("BulkApprove(0.85) = %d, %d, %v; want nothing (y is at 0.8)", n, c, err)
	}
	if acts, _ := f.d.RecentActions(ctx, f.m.ID, f.prep.ID, 10); len(acts) != 0 {
		t.Errorf("a bulk approval that approved nothing recorded %d actions", len(acts))
	}
	if n, c, err := f.d.BulkCandidates(ctx, f.m.ID, 0.8); err != nil || n != 2 || c != 1 {
		t.Errorf("BulkCandidates(0.8) = %d, %d, %v; want 2 removals in 1 cluster", n, c, err)
	}
	// What the page counted changed since: refused, nothing written.
	fp := f.d.fingerprint(t)
	_, _, err := f.d.BulkApprove(ctx, f.prep, f.m.ID, 0.8, 1)
	if _, ok := errors.AsType[*review.RefusedError](err); !ok {
		t.Errorf("BulkApprove(0.8) expecting 1 removal = %v; want refused", err)
	}
	if f.d.fingerprint(t) != fp {
		t.Error("a refused bulk approval wrote to the store")
	}
	before, _ := f.d.Manifest(ctx, f.m.ID)
	n, c, err := f.d.BulkApprove(ctx, f.prep, f.m.ID, 0.8, 2)
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
	if err != nil || len(acts) != 1 || acts[0].Action != "bulk-approve" || acts[0].Summary != "bulk-approved 2 removals in 1 low-risk cluster at bar 0.8" {
		t.Errorf("actions: %+v, %v; want one bulk-approve", acts, err)
	}
	if bulk, err := f.d.BulkApprovals(ctx, f.m.ID); err != nil || len(bulk) != 1 || bulk[0].Name != "prep" || bulk[0].Bar != 0.8 ||
		bulk[0].Items != 2 || bulk[0].OutsideSample || bulk[0].At.IsZero() {
		t.Errorf("BulkApprovals = %+v, %v; want prep's 2 removals at 0.8", bulk, err)
	}
	if n, c, err := f.d.BulkCandidates(ctx, f.m.ID, 0.5); err != nil || n != 0 || c != 0 {
		t.Errorf("BulkCandidates after the approval = %d, %d, %v; want none", n, c, err)
	}
	if n, _, err := f.d.BulkApprove(ctx, f.prep, f.m.ID, 0.5, -1); err != nil || n != 0 {
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
	_, _, err = g.d.BulkApprove(ctx, g.prep, m.ID, 0.5, -1)
	if _, ok := errors.AsType[*review.RefusedError](err); !ok {
		t.Errorf("BulkApprove on an exported manifest = %v; want refused", err)
	}
}

// ReplaceCluster cuts a cluster in two: the first keeps its id and its items' ids, the
// second is new; the change is recorded for undo, and a caller holding the cluster as
// it was before is refused with ErrStale.
func TestReplaceCluster(t *testing.T) {
	t.Parallel()
	f, ctx := newReviewFixture(t), t.Context()
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

// A manifest asks at least one approval from someone other than its preparer: 0 (or
// fewer) is refused as input, whatever the team looks like, and the stored number stays;
// lowering to 1 is recorded with who and why.
func TestApprovalsNeverUnderOne(t *testing.T) {
	t.Parallel()
	f, ctx := newReviewFixture(t), t.Context()
	if err := f.d.SetApprovalsRequired(ctx, f.prep, f.m.ID, 2, ""); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, -1, review.MaxApprovals + 1} {
		if err := f.d.SetApprovalsRequired(ctx, f.prep, f.m.ID, n, "0 enabled account(s) other than the preparer may approve"); errkind.Of(err) != errkind.Invalid {
			t.Errorf("SetApprovalsRequired(%d) = %v; want an input error", n, err)
		}
	}
	if m, _ := f.d.Manifest(ctx, f.m.ID); m.ApprovalsRequired != 2 || m.ApprovalsLowered != nil {
		t.Errorf("after refused settings: %d approvals, lowering %+v; want 2, none", m.ApprovalsRequired, m.ApprovalsLowered)
	}
	if err := f.d.SetApprovalsRequired(ctx, f.prep, f.m.ID, 1, "1 enabled account(s) other than the preparer may approve"); err != nil {
		t.Fatal(err)
	}
	m, _ := f.d.Manifest(ctx, f.m.ID)
	if l := m.ApprovalsLowered; m.ApprovalsRequired != 1 || l == nil || l.By != "prep" || l.From != review.DefaultApprovals || l.To != 1 ||
		l.Why != "1 enabled account(s) other than the preparer may approve" {
		t.Errorf("lowered to 1: %d approvals, lowering %+v; want 1, recorded by prep with why", m.ApprovalsRequired, l)
	}
}

// The number of approvals is a draft's setting, audited; ApproveOutsideSample waits for
// the sample to be decided, then approves every other removal, and a manifest without a
// sample has nothing outside it.
func TestApprovalsAndTheSample(t *testing.T) {
	t.Parallel()
	f, ctx := newReviewFixture(t), t.Context()
	if err := f.d.SetApprovalsRequired(ctx, f.prep, f.m.ID, 2, ""); err != nil {
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
	if err := f.d.SetApprovalsRequired(ctx, f.prep, f.m.ID, 1, ""); err == nil {
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
