package manifests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/demo"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/realtext"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
)

// fixture is a store with a dataset holding a crafted chain A~B~C (A and C far apart),
// a pair of exact duplicates D, D2 (equal after normalization), unrelated real
// documents, labels on (A,B) duplicate and (A,C) not, and the people of a review.
type fixture struct {
	t                  *testing.T
	store              *db.DB
	sigs               *sigcache.Cache
	ds                 db.Dataset
	ids                map[string]int64
	prep, appr1, appr2 db.User
	admin              db.User
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	store := dbtest.Open(t)
	f := &fixture{t: t, store: store, sigs: sigcache.New(store)}
	texts := realtext.Texts(t, 8, 260)
	// Twelve 20-word segments of one real document: A = S1..S10, B = S2..S11,
	// C = S3..S12, so J(A,B) = J(B,C) ~ 0.81 and J(A,C) ~ 0.66.
	words := strings.Fields(texts[0])
	seg := func(from, to int) string { return strings.Join(words[20*from:20*to], " ") }
	var lines []string
	add := func(id, text, source string) {
		b, _ := json.Marshal(map[string]string{"id": id, "text": text, "source": source, "date": "2024-01-0" + fmt.Sprint(len(lines)%9+1)})
		lines = append(lines, string(b))
	}
	add("A", seg(0, 10), "npm")
	add("B", seg(1, 11), "npm")
	add("C", seg(2, 12), "npm")
	add("D", texts[1], "debian")
	add("D2", "  "+strings.ToUpper(texts[1])+"\n", "debian")
	for i, tx := range texts[2:] {
		add(fmt.Sprintf("other%d", i), tx, "debian")
	}
	r, err := corpus.NewReader(strings.NewReader(strings.Join(lines, "\n")), "chain.jsonl", corpus.JSONL, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ingest.Documents(ctx, store, r, "chain.jsonl", ingest.Options{Dataset: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	f.ds = rep.Dataset
	_, err = ingest.Labels(ctx, store, strings.NewReader("a,b,category,annotator\nA,B,minor,ann\nA,C,different,ann\nD,D2,exact,ann\n"),
		"l.csv", ingest.LabelOptions{DatasetID: f.ds.ID, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	f.ids, err = store.DocumentIDs(ctx, f.ds.ID, []string{"A", "B", "C", "D", "D2"})
	if err != nil {
		t.Fatal(err)
	}
	user := func(name string, role auth.Role) db.User {
		u, err := store.CreateUser(ctx, "test", name, role, "x")
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	f.prep, f.appr1, f.appr2, f.admin = user("prep", auth.Reviewer), user("appr1", auth.Approver), user("appr2", auth.Approver), user("root", auth.Admin)
	return f
}

// demoStore is a store holding the demo sample (2,136 documents, 826 labeled pairs),
// the report of its import, and a reviewer, prep, to run manifests as.
func demoStore(tb testing.TB) (*db.DB, ingest.Report, db.User) {
	tb.Helper()
	ctx := context.Background()
	store := dbtest.Open(tb)
	rep, _, err := demo.Load(ctx, store)
	if err != nil {
		tb.Fatal(err)
	}
	u, _ := store.CreateUser(ctx, "t", "prep", auth.Reviewer, "x")
	return store, rep, u
}

func (f *fixture) params(policy cluster.Policy, rule string) review.Params {
	f.t.Helper()
	return exactParams(f.t, 0.75, policy, rule)
}

// exactParams is the default representation at 32 × 4, verified exactly, at threshold t
// with the cluster policy and keeper rule given.
func exactParams(tb testing.TB, t float64, policy cluster.Policy, rule string) review.Params {
	tb.Helper()
	r, err := cluster.ParseRule(rule)
	if err != nil {
		tb.Fatal(err)
	}
	return review.Params{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 32, Rows: 4}, Threshold: t,
		Verification: review.Exact, Policy: policy, Rule: r, CodeVersion: "test"}
}

func (f *fixture) run(p review.Params) db.Manifest {
	f.t.Helper()
	var phases []string
	m, err := Run(context.Background(), f.store, f.sigs, Request{DatasetID: f.ds.ID, Params: p, By: f.prep, ApprovalsRequired: 1}, func(pr Progress) {
		if len(phases) == 0 || phases[len(phases)-1] != pr.Phase {
			phases = append(phases, pr.Phase)
		}
	})
	if err != nil {
		f.t.Fatalf("Run: %v", err)
	}
	if phases[0] != PhaseSignatures || phases[len(phases)-1] != PhaseSave {
		f.t.Errorf("phases reported: %v", phases)
	}
	return m
}

// signOff requests manifest id's sign-off as the preparer and gives it as the first
// approver (the fixture's manifests need one approval).
func (f *fixture) signOff(id int64) {
	f.t.Helper()
	ctx := context.Background()
	if err := RequestSignOff(ctx, f.store, f.prep, f.manifest(id)); err != nil {
		f.t.Fatal(err)
	}
	m := f.manifest(id)
	if res, err := Review(ctx, f.store, f.appr1, m, review.Approve, "", m.ContentHash, "test"); err != nil || !res.Signed {
		f.t.Fatalf("sign-off: %+v, %v", res, err)
	}
}

func (f *fixture) manifest(id int64) db.Manifest {
	f.t.Helper()
	m, err := f.store.Manifest(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return m
}

// chainCluster returns the manifest's cluster holding A.
func (f *fixture) clusterOf(m db.Manifest, ext string) db.Cluster {
	f.t.Helper()
	ctx := context.Background()
	rows, err := f.store.Clusters(ctx, m.ID, db.ClusterFilter{})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, r := range rows {
		c, err := f.store.Cluster(ctx, m.ID, r.ID)
		if err != nil {
			f.t.Fatal(err)
		}
		for _, d := range c.Members() {
			if d == f.ids[ext] {
				return c
			}
		}
	}
	f.t.Fatalf("no cluster holds %s", ext)
	return db.Cluster{}
}

func (f *fixture) item(c db.Cluster, ext string) db.Item {
	f.t.Helper()
	for _, it := range c.Items {
		if it.Doc == f.ids[ext] {
			return it
		}
	}
	f.t.Fatalf("cluster %d removes no %s", c.ID, ext)
	return db.Item{}
}

// The crafted chain under each policy: components removes C through B although C is
// far from the keeper A; keeper-star and complete-link keep C. Labels count the false
// merge, and the exact duplicates are removed for their reason.
func TestRunComparesPoliciesOnACraftedChain(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	m := f.run(f.params(cluster.Components, "earliest"))
	stats := map[cluster.Policy]review.PolicyStats{}
	for _, s := range m.Comparison {
		stats[s.Policy] = s
	}
	for _, tc := range []struct {
		policy                cluster.Policy
		removed, chained      int
		falseMerges, together int
	}{
		{cluster.Components, 3, 1, 1, 2},
		{cluster.KeeperStar, 2, 0, 0, 2},
		{cluster.CompleteLink, 2, 0, 0, 2},
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			s := stats[tc.policy]
			if s.Removed != tc.removed || s.Chained != tc.chained || s.RemovedExact != 1 {
				t.Errorf("%s: removed %d (exact %d), chained %d; want %d (exact 1), %d", tc.policy, s.Removed, s.RemovedExact, s.Chained, tc.removed, tc.chained)
			}
			if s.LabeledNonDuplicates != 1 || s.FalseMerges != tc.falseMerges || s.LabeledDuplicates != 2 || s.DuplicatesTogether != tc.together {
				t.Errorf("%s: labeled %d/%d duplicates together, %d/%d false merges; want %d/2, %d/1", tc.policy,
					s.DuplicatesTogether, s.LabeledDuplicates, s.FalseMerges, s.LabeledNonDuplicates, tc.together, tc.falseMerges)
			}
		})
	}
	if m.State != review.Draft || m.PreparedBy != f.prep.ID || !strings.HasPrefix(m.ContentHash, "m") || !strings.HasPrefix(m.DatasetHash, "d") {
		t.Errorf("manifest: state %s, preparer %d, hash %q, dataset %q", m.State, m.PreparedBy, m.ContentHash, m.DatasetHash)
	}
	c := f.clusterOf(m, "A")
	if c.Keeper != f.ids["A"] || !c.Chained || c.ChainedMembers != 1 || len(c.Items) != 2 {
		t.Fatalf("chain cluster: keeper %d, chained %v (%d), %d items; want A, chained 1, 2 items", c.Keeper, c.Chained, c.ChainedMembers, len(c.Items))
	}
	if cut := c.Cut; !(cut.A == f.ids["B"] && cut.B == f.ids["C"]) || cut.Chained != 1 || cut.Unchained != 0 {
		t.Errorf("suggested cut %+v; want B~C separating 1 chained member", cut)
	}
	if got := c.Chain.Docs; len(got) != 3 || got[0] != f.ids["A"] || got[2] != f.ids["C"] {
		t.Errorf("longest chain %v; want A~B~C", got)
	}
	b, cc := f.item(c, "B"), f.item(c, "C")
	if !(b.Exact > 0.75 && cc.Exact < 0.75 && cc.Exact > 0.5) || b.Reason != cluster.Near || math.Abs(b.Estimate-b.Exact) > 0.2 {
		t.Errorf("B: exact %.3f est %.3f (%s); C: exact %.3f; want B above 0.75, C between 0.5 and 0.75", b.Exact, b.Estimate, b.Reason, cc.Exact)
	}
	d := f.clusterOf(m, "D")
	if it := f.item(d, "D2"); it.Reason != cluster.Exact || it.Exact != 1 {
		t.Errorf("D2: %s at %.3f; want an exact duplicate at 1", it.Reason, it.Exact)
	}
	if m.Estimates == nil || m.Estimates.Counted != 3 || m.Estimates.FalseMerges.N != 1 || float64(m.Estimates.FalseMerges.Value) != 1 {
		t.Errorf("estimates = %+v; want 3 counted pairs and the one non-duplicate merged", m.Estimates)
	}
	// The manifest's hash is the one its rows give.
	rows, err := f.store.ManifestRows(context.Background(), m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := review.ManifestHash(m.Dataset, m.Params, rows); got != m.ContentHash || len(rows) != 3 {
		t.Errorf("%d rows hash to %s; stored %s", len(rows), got, m.ContentHash)
	}
}

// Keeper rules and overrides: "longest" picks another keeper than "earliest", and a
// keeper chosen by hand re-derives the cluster with a reason, keeping decisions only
// where the keeper stayed.
func TestKeeperRulesAndOverride(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	m := f.run(f.params(cluster.KeeperStar, "source(debian,npm)>shortest"))
	c := f.clusterOf(m, "D")
	// D2 is D uppercased with extra spaces: longer, so "shortest" keeps D.
	if c.Keeper != f.ids["D"] || c.KeeperRule != "source(debian,npm)>shortest" {
		t.Errorf("keeper %d by %q; want D by the rule", c.Keeper, c.KeeperRule)
	}
	m2 := f.run(f.params(cluster.KeeperStar, "longest"))
	if c2 := f.clusterOf(m2, "D"); c2.Keeper != f.ids["D2"] {
		t.Errorf("longest kept %d; want D2", c2.Keeper)
	}
	// Override in the chain cluster (keeper-star: A keeps B, C stays alone).
	ab := f.clusterOf(m, "A")
	if len(ab.Items) != 1 || ab.Items[0].Doc != f.ids["B"] {
		t.Fatalf("keeper-star chain cluster %+v; want A keeping B", ab)
	}
	if _, err := MakeKeeper(ctx, f.store, f.prep, m, ab, f.ids["B"], ""); err == nil {
		t.Error("an override without a reason was accepted")
	}
	out, err := MakeKeeper(ctx, f.store, f.prep, m, ab, f.ids["B"], "B is the maintained copy")
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].ID != ab.ID || out[0].Keeper != f.ids["B"] || out[0].Override != "B is the maintained copy" {
		t.Fatalf("after the override: %+v", out)
	}
	if it := out[0].Items[0]; it.Doc != f.ids["A"] || it.Decision != review.Proposed || it.Keeper != f.ids["B"] {
		t.Errorf("after the override the removal is %+v; want A proposed, kept by B", it)
	}
	m = f.manifest(m.ID)
	if m.ContentHash == f.manifest(m2.ID).ContentHash {
		t.Error("two manifests share a content hash")
	}
}

// The whole review: decisions, a cut and its undo, sign-off rules (no self-approval,
// stale approvals dismissed by a change), export bound to the hashes, a changed dataset
// refused, revocation restoring the tombstones.
func TestReviewSignOffExport(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	m := f.run(f.params(cluster.Components, "earliest"))
	c := f.clusterOf(m, "A")
	h0 := m.ContentHash

	if err := DecideItem(ctx, f.store, f.prep, m, c, f.item(c, "C").ID, review.Excluded); err != nil {
		t.Fatal(err)
	}
	m = f.manifest(m.ID)
	if m.ContentHash == h0 {
		t.Error("excluding a removal left the content hash unchanged")
	}
	// Cut the chain at the suggested link: C leaves the cluster (alone, so kept).
	c = f.clusterOf(m, "A")
	out, err := Cut(ctx, f.store, f.prep, m, c, [2]int64{c.Cut.A, c.Cut.B})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || len(out[0].Items) != 1 || out[0].Items[0].Doc != f.ids["B"] || out[0].Chained {
		t.Fatalf("after the cut: %+v; want A keeping B, not chained", out)
	}
	// Undo the cut: C is back, still excluded.
	cl, ok, err := f.store.Undo(ctx, f.prep, m.ID)
	if err != nil || !ok || cl != c.ID {
		t.Fatalf("undo = %d, %v, %v; want cluster %d", cl, ok, err, c.ID)
	}
	c = f.clusterOf(m, "A")
	if it := f.item(c, "C"); it.Decision != review.Excluded || len(c.Items) != 2 || !c.Chained {
		t.Fatalf("after undoing the cut: %+v", c)
	}
	// Cut again, approve the rest.
	m = f.manifest(m.ID)
	if _, err := Cut(ctx, f.store, f.prep, m, c, [2]int64{c.Cut.A, c.Cut.B}); err != nil {
		t.Fatal(err)
	}
	if err := RequestSignOff(ctx, f.store, f.prep, f.manifest(m.ID)); err == nil {
		t.Error("sign-off requested with undecided removals")
	}
	items, clusters, err := BulkApprove(ctx, f.store, f.prep, f.manifest(m.ID), 0.99, -1)
	if err != nil || items != 1 || clusters != 1 {
		t.Fatalf("bulk approval at 0.99 = %d items in %d clusters, %v; want D2 alone", items, clusters, err)
	}
	m = f.manifest(m.ID)
	c = f.clusterOf(m, "A")
	if n, err := DecideCluster(ctx, f.store, f.prep, m, c, review.Approved, Scope{}); err != nil || n != 1 {
		t.Fatalf("approve cluster = %d, %v", n, err)
	}
	if err := RequestSignOff(ctx, f.store, f.prep, f.manifest(m.ID)); err != nil {
		t.Fatal(err)
	}
	m = f.manifest(m.ID)
	if m.State != review.InReview {
		t.Fatalf("state %s; want in review", m.State)
	}
	// The preparer cannot approve; an approver can, and one approval signs off.
	if _, err := Review(ctx, f.store, f.prep, m, review.Approve, "", m.ContentHash, "test"); !errors.Is(err, review.ErrSelfApproval) {
		t.Errorf("self-approval: %v; want ErrSelfApproval", err)
	}
	if _, err := Review(ctx, f.store, f.appr1, m, review.Approve, "", "mstale", "test"); !errors.Is(err, db.ErrStale) {
		t.Errorf("approval of a hash not current: %v; want ErrStale", err)
	}
	signed, err := Review(ctx, f.store, f.appr1, m, review.Approve, "looks right", m.ContentHash, "test")
	if err != nil || !signed.Signed {
		t.Fatalf("approval = %v, %v; want signed", signed, err)
	}
	m = f.manifest(m.ID)
	sos, _ := f.store.SignOffs(ctx, m.ID)
	if m.State != review.SignedOff || len(sos) != 1 || sos[0].ManifestHash != m.ContentHash || sos[0].DatasetHash != m.DatasetHash {
		t.Fatalf("after sign-off: state %s, sign-offs %+v", m.State, sos)
	}
	rec := sos[0].Record
	if rec.Preparer.Name != "prep" || rec.Preparer.Role != "reviewer" || len(rec.Approvals) != 1 || rec.Approvals[0].Name != "appr1" ||
		rec.Approvals[0].Role != "approver" || rec.Approvals[0].Comment != "looks right" || rec.Params.Spec.ID() != lsh.DefaultSpec().ID() ||
		rec.Labels == nil || rec.Removals != 2 || len(rec.BulkApprovals) != 1 || rec.BulkApprovals[0].Bar != 0.99 {
		t.Errorf("sign-off record: %+v", rec)
	}
	// A change after the sign-off dismisses the approval and supersedes the sign-off.
	c = f.clusterOf(m, "A")
	if err := DecideItem(ctx, f.store, f.prep, m, c, f.item(c, "B").ID, review.Excluded); err != nil {
		t.Fatal(err)
	}
	m = f.manifest(m.ID)
	revs, _ := f.store.Reviews(ctx, m.ID)
	sos, _ = f.store.SignOffs(ctx, m.ID)
	if m.State != review.InReview || !revs[len(revs)-1].Dismissed || !sos[0].Superseded {
		t.Fatalf("after a change: state %s, approval dismissed %v, sign-off superseded %v", m.State, revs[len(revs)-1].Dismissed, sos[0].Superseded)
	}
	if _, err := exportShown(ctx, f.store, f.admin, m); err == nil {
		t.Error("a manifest back in review was exported")
	}
	// Undo the change, approve again (a second approver), export.
	if _, _, err := f.store.Undo(ctx, f.prep, m.ID); err != nil {
		t.Fatal(err)
	}
	m = f.manifest(m.ID)
	if signed, err := Review(ctx, f.store, f.appr2, m, review.Approve, "", m.ContentHash, "test"); err != nil || !signed.Signed {
		t.Fatalf("second sign-off = %v, %v", signed, err)
	}
	// A second manifest on the same dataset, signed off too.
	m2 := f.run(f.params(cluster.KeeperStar, "earliest"))
	if n, _, err := BulkApprove(ctx, f.store, f.prep, m2, 0.75, -1); err != nil || n != 2 {
		t.Fatalf("bulk approval of manifest 2: %d, %v", n, err)
	}
	if err := RequestSignOff(ctx, f.store, f.prep, f.manifest(m2.ID)); err != nil {
		t.Fatal(err)
	}
	m2 = f.manifest(m2.ID)
	if signed, err := Review(ctx, f.store, f.appr1, m2, review.Approve, "", m2.ContentHash, "test"); err != nil || !signed.Signed {
		t.Fatalf("sign-off of manifest 2: %v, %v", signed, err)
	}
	// A third, prepared before the first export and approved after it: the dataset it
	// was computed on has changed, and the approval that would sign it off is refused.
	m3 := f.run(f.params(cluster.CompleteLink, "earliest"))
	if _, _, err := BulkApprove(ctx, f.store, f.prep, m3, 0.75, -1); err != nil {
		t.Fatal(err)
	}
	if err := RequestSignOff(ctx, f.store, f.prep, f.manifest(m3.ID)); err != nil {
		t.Fatal(err)
	}
	m = f.manifest(m.ID)
	n, err := exportShown(ctx, f.store, f.admin, m)
	if err != nil || n != 2 {
		t.Fatalf("export = %d, %v; want the 2 approved removals", n, err)
	}
	var csvBuf bytes.Buffer
	if err := WriteExport(ctx, f.store, f.manifest(m.ID), RemovalsCSV, &csvBuf); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(csvBuf.String(), "\n"); got != 3 || !strings.Contains(csvBuf.String(), ",B,A,") || strings.Contains(csvBuf.String(), ",C,") {
		t.Errorf("removals.csv:\n%s", csvBuf.String())
	}
	// The first export tombstoned B and D2, which manifest 2 also removes: the dataset it
	// was signed on has changed, and its export is refused, naming what changed.
	_, err = exportShown(ctx, f.store, f.admin, f.manifest(m2.ID))
	var outdated *review.OutdatedError
	if !errors.As(err, &outdated) || len(outdated.Changes) != 1 || outdated.Changes[0].Manifest != m.ID ||
		outdated.Changes[0].Touched != 2 || !strings.Contains(err.Error(), "(B, D2)") {
		t.Errorf("export of manifest 2 after manifest 1's: %v; want refused naming manifest 1's export and B, D2", err)
	}
	m3 = f.manifest(m3.ID)
	_, err = Review(ctx, f.store, f.appr1, m3, review.Approve, "", m3.ContentHash, "test")
	if !errors.As(err, &outdated) || f.manifest(m3.ID).State != review.InReview {
		t.Errorf("sign-off of a manifest whose dataset changed since its run: %v; want refused", err)
	}
	// Revoking manifest 1 restores its tombstones; then manifest 2 exports.
	if _, err := Revoke(ctx, f.store, f.appr1, f.manifest(m.ID), ""); err == nil {
		t.Error("a revocation without a reason was accepted")
	}
	if n, err := Revoke(ctx, f.store, f.appr1, f.manifest(m.ID), "wrong keeper policy"); err != nil || n != 2 {
		t.Fatalf("revoke = %d, %v", n, err)
	}
	if n, err := exportShown(ctx, f.store, f.admin, f.manifest(m2.ID)); err != nil || n != 2 {
		t.Errorf("export of manifest 2 after the revocation = %d, %v", n, err)
	}
	check, err := f.store.VerifyAudit(ctx, review.AuditHead{})
	if err != nil || !check.Intact() || check.Rows < 15 {
		t.Errorf("audit chain: %+v, %v", check, err)
	}
}

// The estimates (a one-configuration sweep, the manifest's policy given to the sweep as
// its clusterer) agree with the run's own count of the labeled pairs under every policy.
func TestEstimatesAgreeWithTheRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, pol := range cluster.Policies() {
		t.Run(string(pol), func(t *testing.T) {
			m := f.run(f.params(pol, "earliest"))
			var s review.PolicyStats
			for _, c := range m.Comparison {
				if c.Policy == pol {
					s = c
				}
			}
			e := m.Estimates
			if e == nil || e.LabelRule == "" || !strings.HasPrefix(e.LabelVersion, "l") || e.Counted != 3 {
				t.Fatalf("estimates %+v", e)
			}
			if e.FalseMerges.N != s.LabeledNonDuplicates || float64(e.FalseMerges.Value) != float64(s.FalseMerges)/float64(s.LabeledNonDuplicates) {
				t.Errorf("false merges: sweep %v of %d, run %d of %d", e.FalseMerges.Value, e.FalseMerges.N, s.FalseMerges, s.LabeledNonDuplicates)
			}
			if e.ClusterRecall.N != s.LabeledDuplicates || float64(e.ClusterRecall.Value) != float64(s.DuplicatesTogether)/float64(s.LabeledDuplicates) {
				t.Errorf("cluster recall: sweep %v of %d, run %d of %d", e.ClusterRecall.Value, e.ClusterRecall.N, s.DuplicatesTogether, s.LabeledDuplicates)
			}
			if float64(e.Recall.Value) != 1 || e.Design != "" || len(e.Notes) == 0 {
				t.Errorf("recall %v, design %q, notes %v; want 1, none, a note saying the rates are on labeled pairs", e.Recall.Value, e.Design, e.Notes)
			}
		})
	}
}

// On the demo sample (2,136 real documents, 826 labeled pairs) at a generous threshold,
// single linkage chains licenses and templated READMEs: keeper-star and complete-link
// remove a subset of what components removes (cluster package doc), never more chained
// clusters, and never more false merges of the labeled pairs.
func TestRunOnTheDemoSample(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three policies over 2,136 documents")
	}
	t.Parallel()
	ctx := context.Background()
	store, rep, u := demoStore(t)
	p := exactParams(t, 0.5, cluster.KeeperStar, "longest")
	m, err := Run(ctx, store, sigcache.New(store), Request{DatasetID: rep.Dataset.ID, Params: p, By: u}, nil)
	if err != nil {
		t.Fatal(err)
	}
	stats := map[cluster.Policy]review.PolicyStats{}
	for _, s := range m.Comparison {
		stats[s.Policy] = s
		t.Logf("%-13s removed %4d (exact %3d) in %3d clusters, %3d chained, largest %3d; false merges %d of %d; duplicates together %d of %d",
			s.Policy, s.Removed, s.RemovedExact, s.Clusters, s.Chained, s.Largest, s.FalseMerges, s.LabeledNonDuplicates, s.DuplicatesTogether, s.LabeledDuplicates)
	}
	comp := stats[cluster.Components]
	if comp.Chained == 0 || comp.LabeledNonDuplicates < 100 {
		t.Fatalf("components: %+v; want chained clusters and labeled pairs on real text", comp)
	}
	for _, pol := range []cluster.Policy{cluster.KeeperStar, cluster.CompleteLink} {
		s := stats[pol]
		if s.Removed > comp.Removed || s.Chained != 0 || s.FalseMerges > comp.FalseMerges {
			t.Errorf("%s: %+v; want at most components' removals and false merges, and no chain (%+v)", pol, s, comp)
		}
	}
	// The demo's pairs carry the design that drew them: the estimates reach the dataset,
	// under the manifest's own keeper rule and policy, over exactly the removals it makes.
	if e := m.Estimates; e == nil || e.Counted < 700 || math.IsNaN(float64(e.Recall.Value)) || len(e.Notes) == 0 ||
		e.Design != "design "+demo.Design || e.DesignPairs != e.Counted || math.IsNaN(float64(e.DatasetRecall.Value)) ||
		e.KeeperRule != m.Params.Rule.String() || e.Removals != stats[cluster.KeeperStar].Removed {
		t.Errorf("estimates on the demo labels: %+v; want the design, keeper rule %s and %d removals", e, m.Params.Rule, stats[cluster.KeeperStar].Removed)
	}
	counts, _ := store.CountManifest(ctx, m.ID)
	if counts.Rows != stats[cluster.KeeperStar].Removed {
		t.Errorf("the manifest has %d rows; the run removed %d", counts.Rows, stats[cluster.KeeperStar].Removed)
	}
}

// exportShown exports m as its page shows it (its current content hash).
func exportShown(ctx context.Context, store *db.DB, by db.User, m db.Manifest) (int, error) {
	return Export(ctx, store, by, m, m.ContentHash)
}

// A manifest computed on an export's removals goes stale when the export is revoked (its
// removals were computed without documents that are back), and one computed before new
// labels goes stale with them: both are refused sign-off with the reason, and a run
// prepared again is fresh.
func TestRevocationAndLabelsMakeManifestsStale(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	first := f.run(f.params(cluster.KeeperStar, "earliest"))
	if _, _, err := BulkApprove(ctx, f.store, f.prep, first, 0.75, -1); err != nil {
		t.Fatal(err)
	}
	f.signOff(first.ID)
	if _, err := exportShown(ctx, f.store, f.appr1, f.manifest(first.ID)); err != nil {
		t.Fatal(err)
	}
	// Computed on the documents the export left: fresh until the revocation.
	dependant := f.run(f.params(cluster.Components, "earliest"))
	if st, _ := f.store.Staleness(ctx, dependant); st.Stale() {
		t.Fatalf("a manifest run after the export is stale: %+v", st)
	}
	if _, err := Revoke(ctx, f.store, f.appr1, f.manifest(first.ID), "wrong threshold"); err != nil {
		t.Fatal(err)
	}
	st, err := f.store.Staleness(ctx, dependant)
	if err != nil || len(st.Changes) != 1 || st.Changes[0].Kind != review.ChangeRevoke || st.Changes[0].Manifest != first.ID {
		t.Fatalf("staleness after the revocation: %+v, %v; want manifest %d's revocation", st, err, first.ID)
	}
	// (With B and D2 gone it removes nothing: A and C are far apart.)
	err = RequestSignOff(ctx, f.store, f.prep, f.manifest(dependant.ID))
	var outdated *review.OutdatedError
	if !errors.As(err, &outdated) || !strings.Contains(err.Error(), fmt.Sprintf("manifest %d was revoked", first.ID)) {
		t.Errorf("request sign-off after the revocation of what it was computed on: %v", err)
	}
	// Prepared again: fresh; then a new label makes it stale, naming the labels.
	again, err := Run(ctx, f.store, f.sigs, Request{DatasetID: f.ds.ID, Params: dependant.Params, By: f.prep, CarryFrom: dependant.ID}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := f.store.Staleness(ctx, again); st.Stale() || again.CarriedOver == nil || again.CarriedOver.From != dependant.ID {
		t.Fatalf("the manifest prepared again: stale %+v, carried %+v", st, again.CarriedOver)
	}
	if _, err := ingest.Labels(ctx, f.store, strings.NewReader("a,b,category,annotator\nB,C,minor,late\n"), "late.csv",
		ingest.LabelOptions{DatasetID: f.ds.ID}); err != nil {
		t.Fatal(err)
	}
	st, err = f.store.Staleness(ctx, again)
	if err != nil || st.LabelEvents != 1 || st.LabelPairs != 1 || st.Dataset() {
		t.Fatalf("staleness after a new label: %+v, %v; want 1 label event, the dataset as it was", st, err)
	}
	if _, _, err := BulkApprove(ctx, f.store, f.prep, f.manifest(again.ID), 0.75, -1); err != nil {
		t.Fatal(err)
	}
	chain := f.clusterOf(again, "A")
	if _, err := DecideCluster(ctx, f.store, f.prep, f.manifest(again.ID), chain, review.Approved, Scope{Chained: ChainedUndecided(chain, again.Params.Threshold)}); err != nil {
		t.Fatal(err)
	}
	err = RequestSignOff(ctx, f.store, f.prep, f.manifest(again.ID))
	if !errors.As(err, &outdated) || !strings.Contains(err.Error(), "the labels changed since the run: 1 label event on 1 pair of campaign default,") {
		t.Errorf("request sign-off after a new label: %v", err)
	}
}

// Issue 27's guard rails on bulk verbs: approving a chained cluster whole is refused
// unless the chained removals are confirmed by their number (or only the direct ones are
// approved); a bulk bar under the threshold is refused, and a count that changed since it
// was shown is refused with nothing approved.
func TestBulkVerbsAskFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	m := f.run(f.params(cluster.Components, "earliest"))
	c := f.clusterOf(m, "A")
	if got := ChainedUndecided(c, m.Params.Threshold); got != 1 {
		t.Fatalf("ChainedUndecided = %d; want 1 (C)", got)
	}
	var refusedErr *review.RefusedError
	for _, scope := range []Scope{{}, {Chained: 2}} {
		if n, err := DecideCluster(ctx, f.store, f.prep, m, c, review.Approved, scope); !errors.As(err, &refusedErr) || n != 0 ||
			!strings.Contains(err.Error(), "is chained: 1 of its undecided removals are under 0.75") {
			t.Errorf("DecideCluster(%+v) = %d, %v; want refused, saying it is chained", scope, n, err)
		}
	}
	if n, err := DecideCluster(ctx, f.store, f.prep, f.manifest(m.ID), c, review.Approved, Scope{Direct: true}); err != nil || n != 1 {
		t.Fatalf("DecideCluster(direct) = %d, %v; want B approved", n, err)
	}
	c = f.clusterOf(m, "A")
	if f.item(c, "B").Decision != review.Approved || f.item(c, "C").Decision != review.Proposed {
		t.Errorf("after approving the direct ones: B %s, C %s; want approved, proposed", f.item(c, "B").Decision, f.item(c, "C").Decision)
	}
	if n, err := DecideCluster(ctx, f.store, f.prep, f.manifest(m.ID), c, review.Approved, Scope{Chained: 1}); err != nil || n != 1 {
		t.Fatalf("DecideCluster(chained confirmed) = %d, %v; want C approved", n, err)
	}
	// The bulk bar and its count.
	m = f.manifest(m.ID)
	var inputErr *review.InputError
	for _, bar := range []float64{0.01, 0.5, math.NaN(), 1.5} {
		if _, _, err := BulkApprove(ctx, f.store, f.prep, m, bar, -1); !errors.As(err, &inputErr) || inputErr.Field != "bar" {
			t.Errorf("BulkApprove(bar %g) = %v; want refused on the bar", bar, err)
		}
	}
	items, clusters, err := BulkPreview(ctx, f.store, m, 0.99)
	if err != nil || items != 1 || clusters != 1 {
		t.Fatalf("BulkPreview(0.99) = %d, %d, %v; want D2's cluster", items, clusters, err)
	}
	if n, _, err := BulkApprove(ctx, f.store, f.prep, m, 0.99, 5); !errors.As(err, &refusedErr) || n != 0 {
		t.Errorf("BulkApprove with a count that changed = %d, %v; want refused", n, err)
	}
	if it := f.item(f.clusterOf(m, "D"), "D2"); it.Decision != review.Proposed {
		t.Errorf("a refused bulk approval decided D2: %s", it.Decision)
	}
	if n, _, err := BulkApprove(ctx, f.store, f.prep, m, 0.99, items); err != nil || n != 1 {
		t.Errorf("BulkApprove with the count shown = %d, %v; want 1", n, err)
	}
}

// SuggestCut over a stored cluster: the links to cut separate every chained member, and
// cutting them leaves the keeper's cluster without one.
func TestSuggestCutSeparatesTheChain(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	m := f.run(f.params(cluster.Components, "earliest"))
	c := f.clusterOf(m, "A")
	plan := SuggestCut(c, m.Params.Threshold)
	if !plan.OK || len(plan.Links) != 1 || plan.Chained != 1 {
		t.Fatalf("SuggestCut = %+v; want one link separating C", plan)
	}
	var links [][2]int64
	for _, l := range plan.Links {
		links = append(links, [2]int64{l.A, l.B})
	}
	out, err := Cut(ctx, f.store, f.prep, m, c, links...)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Chained {
		t.Errorf("after cutting the suggested links the cluster is still chained: %+v", out[0])
	}
	if plan := SuggestCut(f.clusterOf(m, "A"), m.Params.Threshold); !plan.OK || len(plan.Links) != 0 {
		t.Errorf("SuggestCut of a cluster that is not chained = %+v; want nothing to cut", plan)
	}
}

// Two exports of one signed-off manifest, each from a page read before either: the
// second is refused inside its transaction ("exported already"), and its audit record
// gave the state read before it ("signed off"), contradicting the reason. It gives the
// state the refusal saw.
func TestRefusalAfterARaceLogsTheStateItSaw(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	m := f.run(f.params(cluster.KeeperStar, "earliest"))
	if _, _, err := BulkApprove(ctx, f.store, f.prep, m, 0.75, -1); err != nil {
		t.Fatal(err)
	}
	f.signOff(m.ID)
	seen := f.manifest(m.ID) // both pages, read before either export
	if seen.State != review.SignedOff {
		t.Fatalf("state %s; want signed off", seen.State)
	}
	if _, err := exportShown(ctx, f.store, f.appr1, seen); err != nil {
		t.Fatal(err)
	}
	_, err := exportShown(ctx, f.store, f.admin, seen)
	if err == nil || !strings.Contains(err.Error(), "exported already") || !Recorded(err) {
		t.Fatalf("the second export: %v; want refused as exported already, recorded", err)
	}
	events, err := f.store.AuditOf(ctx, "manifest:"+itoa(m.ID), 100)
	if err != nil {
		t.Fatal(err)
	}
	var detail map[string]any
	for _, e := range events {
		if e.Action == "manifest.refused" && strings.Contains(e.Detail, "exported already") {
			if err := json.Unmarshal([]byte(e.Detail), &detail); err != nil {
				t.Fatal(err)
			}
		}
	}
	if want := review.Exported.Label(); detail["state"] != want {
		t.Errorf("the refusal's record: state %v; want %q (detail %v)", detail["state"], want, detail)
	}
}
