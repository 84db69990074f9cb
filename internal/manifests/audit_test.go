package manifests

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/audit"
	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// The manifest's own audit (issue 23, item 4), on the crafted chain: connected
// components with the earliest keeper removes B and C in favour of A (texts differ: the
// uncertain stratum) and D2 in favour of D (identical after normalization: certain).

// auditFixture runs the chain under components and returns the fixture, the manifest,
// and two labelers who are neither its author nor its deciders.
func auditFixture(t *testing.T) (*fixture, db.Manifest, db.User, db.User) {
	t.Helper()
	f := newFixture(t)
	m := f.run(f.params(cluster.Components, "earliest"))
	ctx := context.Background()
	ann, err := f.store.CreateUser(ctx, "test", "ann1", auth.Annotator, "x")
	if err != nil {
		t.Fatal(err)
	}
	rev, err := f.store.CreateUser(ctx, "test", "rev2", auth.Reviewer, "x")
	if err != nil {
		t.Fatal(err)
	}
	return f, m, ann, rev
}

// label records by's label on pair p of the manifest's campaign, as the pair page does.
func (f *fixture) label(c db.Campaign, p int64, by db.User, category string) {
	f.t.Helper()
	ev, err := f.store.LatestEvent(context.Background(), p, by.Name)
	prev := ev.ID
	if errors.Is(err, db.ErrNotFound) {
		prev = 0
	} else if err != nil {
		f.t.Fatal(err)
	}
	if err := campaign.Record(context.Background(), f.store, c, p, by, campaign.Decision{Kind: labels.KindLabel, Category: category, Previous: prev}); err != nil {
		f.t.Fatalf("label pair %d as %s: %v", p, by.Name, err)
	}
}

// next is who's next pair in c (0 when the queue is empty).
func (f *fixture) next(c db.Campaign, who db.User) int64 {
	f.t.Helper()
	id, ok, err := campaign.Next(context.Background(), f.store, c, who.Name, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	if !ok {
		return 0
	}
	return id
}

// auditPairs returns the audit's pairs in the order the queue serves them.
func auditPairs(t *testing.T, store *db.DB, m db.Manifest) []db.AuditPairState {
	t.Helper()
	st, err := store.AuditState(context.Background(), m.ID)
	if err != nil {
		t.Fatal(err)
	}
	return st.Pairs
}

// The queue serves an audit's pairs first, to people whose labels count, and never to
// the manifest's author (nor to whoever decided that removal); labels the author gives
// another way (the pair page) are kept for the campaign but do not count for the audit.
func TestAuditQueueExcludesTheAuthor(t *testing.T) {
	t.Parallel()
	f, m, ann, rev := auditFixture(t)
	ctx := context.Background()
	c, err := f.store.Campaign(ctx, m.CampaignID)
	if err != nil {
		t.Fatal(err)
	}
	// Pairs waiting in the ordinary queue, which the audit's pairs must come before.
	waiting := []db.NewPair{{DocA: f.ids["B"], DocB: f.ids["D"], Origin: "random"}, {DocA: f.ids["C"], DocB: f.ids["D2"], Origin: "random"},
		{DocA: f.ids["A"], DocB: f.ids["D"], Origin: "random"}}
	if _, err := f.store.AddPairs(ctx, c.ID, waiting, "test"); err != nil {
		t.Fatal(err)
	}
	out, err := RequestAudit(ctx, f.store, f.appr1, m, 300, 7)
	if err != nil {
		t.Fatal(err)
	}
	if out.Added != 2 || out.Uncertain != 2 || out.Audit.Removals != 3 || out.Audit.Certain != 1 {
		t.Fatalf("audit of the chain: %+v; want 2 of 2 uncertain pairs drawn from 3 removals, 1 certain", out)
	}
	pairs := auditPairs(t, f.store, m)
	inAudit := map[int64]bool{}
	for _, p := range pairs {
		inAudit[p.PairID] = true
	}
	// The author: never an audit pair, though they are the only labels those pairs lack.
	author := f.prep
	var served []int64
	for id := f.next(c, author); id != 0; id = f.next(c, author) {
		if inAudit[id] {
			t.Fatalf("the queue served audit pair %d to the manifest's author", id)
		}
		served = append(served, id)
		f.label(c, id, author, "different")
	}
	if len(served) != len(waiting) {
		t.Errorf("the author was served %d pairs; want the %d ordinary ones", len(served), len(waiting))
	}
	// Someone else: the audit's pairs first, in their drawn order.
	if got := f.next(c, ann); got != pairs[0].PairID {
		t.Errorf("ann1's first pair: %d; want the audit's first, %d", got, pairs[0].PairID)
	}
	// The author labels an audit pair on its page anyway: kept, not counted.
	f.label(c, pairs[0].PairID, author, "different")
	a, err := AuditOf(ctx, f.store, m)
	if err != nil {
		t.Fatal(err)
	}
	if a.Labeled != 0 || a.Mistakes != 0 {
		t.Errorf("the author's label counted for the audit: %d labeled, %d mistakes", a.Labeled, a.Mistakes)
	}
	if got := f.next(c, ann); got != pairs[0].PairID {
		t.Errorf("after the author's label, ann1's first pair: %d; want still %d", got, pairs[0].PairID)
	}
	// Whoever decided a removal is not served its pair either, and their label does not
	// count; the other pair is theirs to label.
	cl := f.clusterOf(m, "A")
	decided := pairs[1]
	var item db.Item
	for _, it := range cl.Items {
		if it.Doc == decided.Doc {
			item = it
		}
	}
	if err := DecideItem(ctx, f.store, rev, m, cl, item.ID, review.Approved); err != nil {
		t.Fatal(err)
	}
	for id := f.next(c, rev); id != 0; id = f.next(c, rev) {
		if id == decided.PairID {
			t.Fatalf("the queue served rev2 the audit pair of the removal rev2 decided")
		}
		f.label(c, id, rev, "minor")
	}
	f.label(c, decided.PairID, rev, "minor")
	if a, _ = AuditOf(ctx, f.store, m); a.Labeled != 1 {
		t.Errorf("rev2's labels: %d counted; want 1 (the pair rev2 did not decide)", a.Labeled)
	}
	f.label(c, decided.PairID, ann, "different")
	if a, _ = AuditOf(ctx, f.store, m); a.Labeled != 2 || a.Mistakes != 1 {
		t.Errorf("after ann1's label: %d labeled, %d mistakes; want 2, 1", a.Labeled, a.Mistakes)
	}
}

// The figure is audit.Estimate of the stored counts: the frame's removals and certain
// ones, and the labels that count; a request while the audit covers the manifest tops it
// up from the same frame, and one after the manifest changed beyond it replaces it.
func TestAuditBoundIsTheEstimateOfItsCounts(t *testing.T) {
	t.Parallel()
	f, m, ann, rev := auditFixture(t)
	ctx := context.Background()
	c, _ := f.store.Campaign(ctx, m.CampaignID)
	out, err := RequestAudit(ctx, f.store, f.prep, m, 1, 11)
	if err != nil {
		t.Fatal(err)
	}
	if out.Added != 1 || out.Audit.Design != "audit-m"+itoa(m.ID)+"-"+itoa(out.Audit.ID) {
		t.Fatalf("first request: %+v", out)
	}
	check := func(labeled, mistakes int) review.Audit {
		t.Helper()
		a, err := AuditOf(ctx, f.store, m)
		if err != nil || a == nil {
			t.Fatalf("AuditOf: %v, %v", a, err)
		}
		stored, err := f.store.OpenAudit(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		want, err := audit.Estimate(stored.Removals, stored.Certain, labeled, mistakes)
		if err != nil {
			t.Fatal(err)
		}
		if a.Labeled != labeled || a.Mistakes != mistakes || float64(a.Upper) != want.Upper || a.Drawn != stored.Size ||
			float64(a.UpperRate) != want.UpperRate {
			t.Errorf("audit %d/%d with %d mistakes, upper %d (%v); want %d/%d, %d, audit.Estimate %v (%v)", a.Labeled, a.Drawn, a.Mistakes,
				a.Upper, a.UpperRate, labeled, stored.Size, mistakes, want.Upper, want.UpperRate)
		}
		return *a
	}
	if a := check(0, 0); a.Upper != 2 || !strings.Contains(a.Text(), "0 of 1 labeled, 0 mistakes: at most 2 documents removed by mistake (95%), 67% of 3 removals; 1 removal is an identical text") {
		t.Errorf("before any label: %q", a.Text())
	}
	// Asking for no more than it has is refused; more tops it up from the same frame.
	if _, err := RequestAudit(ctx, f.store, f.prep, m, 1, 12); !refusedWith(err, "ask for more than 1") {
		t.Errorf("a second request of 1: %v", err)
	}
	out2, err := RequestAudit(ctx, f.store, f.prep, m, 300, 12)
	if err != nil || !out2.TopUp || out2.Added != 1 || out2.Audit.ID != out.Audit.ID || out2.Audit.Size != 2 {
		t.Fatalf("top-up: %+v, %v", out2, err)
	}
	if got := out2.Audit.Seeds(); !slices.Equal(got, []uint64{11, 12}) {
		t.Errorf("seeds %v; want the request's and the top-up's", got)
	}
	pairs := auditPairs(t, f.store, m)
	if len(pairs) != 2 || pairs[0].Doc == pairs[1].Doc {
		t.Fatalf("pairs after the top-up: %+v", pairs)
	}
	// Labels: a duplicate, then a mistake; the label of a party to the decision does not.
	f.label(c, pairs[0].PairID, ann, "minor")
	check(1, 0)
	f.label(c, pairs[1].PairID, ann, "different")
	check(2, 1)
	// Two counting labels that disagree tie: the pair waits for an adjudication.
	f.label(c, pairs[1].PairID, rev, "minor")
	if a := check(1, 0); a.Tied != 1 {
		t.Errorf("a tied pair: %+v", a)
	}
	if err := campaign.Record(ctx, f.store, c, pairs[1].PairID, f.admin, campaign.Decision{Kind: labels.KindAdjudication, Category: "different"}); err != nil {
		t.Fatal(err)
	}
	check(2, 1)
	// The mistake excluded: the bound drops by one (the frame's bound less a mistake it
	// found that the manifest no longer removes).
	cl := f.clusterOf(m, "A")
	var it db.Item
	for _, x := range cl.Items {
		if x.Doc == pairs[1].Doc {
			it = x
		}
	}
	if err := DecideItem(ctx, f.store, f.prep, f.manifest(m.ID), cl, it.ID, review.Excluded); err != nil {
		t.Fatal(err)
	}
	a, _ := AuditOf(ctx, f.store, m)
	if a.MistakesGone != 1 || a.Upper != 0 || a.Removals != 2 || !a.Covers {
		t.Errorf("after excluding the mistake: %+v", a)
	}
	// A keeper changed: the removals leave the frame, the audit no longer covers the
	// manifest, and a new request replaces it.
	m = f.manifest(m.ID)
	cl = f.clusterOf(m, "A")
	if _, err := MakeKeeper(ctx, f.store, f.prep, m, cl, f.ids["B"], "B is the original"); err != nil {
		t.Fatal(err)
	}
	m = f.manifest(m.ID)
	if a, _ = AuditOf(ctx, f.store, m); a.Covers || a.Uncovered == 0 || !strings.Contains(a.Text(), "request a new audit") {
		t.Errorf("after a keeper change: %+v %q", a, a.Text())
	}
	out3, err := RequestAudit(ctx, f.store, f.prep, m, 300, 13)
	if err != nil || out3.TopUp || out3.Replaced != out.Audit.ID || out3.Audit.ID == out.Audit.ID {
		t.Fatalf("request after the change: %+v, %v", out3, err)
	}
	if a, _ = AuditOf(ctx, f.store, m); !a.Covers || a.ID != out3.Audit.ID {
		t.Errorf("the new audit: %+v", a)
	}
	events, _ := f.store.AuditOf(ctx, "manifest:"+itoa(m.ID), 100)
	var actions []string
	for _, e := range events {
		if strings.HasPrefix(e.Action, "manifest.audit") || e.Action == "manifest.refused" {
			actions = append(actions, e.Action)
		}
	}
	if want := []string{"manifest.audit", "manifest.refused", "manifest.audit-top-up", "manifest.audit"}; !slices.Equal(actions, want) {
		t.Errorf("audit log: %v; want %v", actions, want)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func refusedWith(err error, text string) bool {
	var re *review.RefusedError
	return errors.As(err, &re) && strings.Contains(re.Msg, text)
}

// The team's rule refuses the approval that would sign off while the audit's upper end
// is over the target, allows earlier ones, and lets the last one count once labels bring
// the bound under it; the record carries the audit and the rule.
func TestAuditGateRefusesThenAllowsTheLastApproval(t *testing.T) {
	t.Parallel()
	f, m, ann, _ := auditFixture(t)
	ctx := context.Background()
	c, _ := f.store.Campaign(ctx, m.CampaignID)
	if err := SetApprovals(ctx, f.store, f.prep, m, 2, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := BulkApprove(ctx, f.store, f.prep, f.manifest(m.ID), m.Params.Threshold, -1); err != nil {
		t.Fatal(err)
	}
	for _, r := range clustersOf(t, f.store, m) {
		cl, _ := f.store.Cluster(ctx, m.ID, r.ID)
		if _, err := DecideCluster(ctx, f.store, f.prep, f.manifest(m.ID), cl, review.Approved, Scope{Chained: ChainedUndecided(cl, f.manifest(m.ID).Params.Threshold)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := SetAuditGate(ctx, f.store, f.admin, "1"); err != nil {
		t.Fatal(err)
	}
	m = f.manifest(m.ID)
	if err := RequestSignOff(ctx, f.store, f.prep, m); err != nil {
		t.Fatal(err)
	}
	m = f.manifest(m.ID)
	approve := func(by db.User) (db.ReviewResult, error) {
		m = f.manifest(m.ID)
		return Review(ctx, f.store, by, m, review.Approve, "", m.ContentHash, "test")
	}
	// No audit: the first approval counts, the last is refused.
	if _, err := approve(f.appr1); err != nil {
		t.Fatalf("the first approval: %v", err)
	}
	if _, err := approve(f.appr2); !refusedWith(err, "this manifest has none: request an audit") {
		t.Fatalf("the last approval without an audit: %v", err)
	}
	if _, err := RequestAudit(ctx, f.store, f.appr2, f.manifest(m.ID), 300, 5); err != nil {
		t.Fatal(err)
	}
	_, err := approve(f.appr2)
	if !refusedWith(err, "it is 67% now (at most 2 of 3 removals by mistake, 0 of 2 drawn pairs labeled)") || !refusedWith(err, "at or under 1%") {
		t.Fatalf("the last approval before any label: %v", err)
	}
	if m = f.manifest(m.ID); m.State != review.InReview {
		t.Fatalf("refused, yet the manifest is %s", m.State)
	}
	pairs := auditPairs(t, f.store, m)
	f.label(c, pairs[0].PairID, ann, "minor")
	if _, err := approve(f.appr2); !refusedWith(err, "it is 33% now (at most 1 of 3") {
		t.Fatalf("the last approval with one label: %v", err)
	}
	f.label(c, pairs[1].PairID, ann, "minor")
	res, err := approve(f.appr2)
	if err != nil || !res.Signed {
		t.Fatalf("the last approval with every pair labeled: %+v, %v", res, err)
	}
	sos, err := f.store.SignOffs(ctx, m.ID)
	if err != nil || len(sos) == 0 {
		t.Fatal(err)
	}
	rec := sos[0].Record
	if rec.Audit == nil || rec.Audit.Drawn != 2 || rec.Audit.Labeled != 2 || rec.Audit.Mistakes != 0 || rec.Audit.Upper != 0 ||
		!slices.Equal(rec.Audit.Seeds, []uint64{5}) || rec.AuditGate == nil || rec.AuditGate.Target != 1 || rec.AuditGate.By != "root" {
		t.Errorf("the record's audit %+v and rule %+v", rec.Audit, rec.AuditGate)
	}
	events, _ := f.store.AuditOf(ctx, "manifest:"+itoa(m.ID), 100)
	refusals := 0
	for _, e := range events {
		if e.Action == "manifest.refused" && strings.Contains(e.Detail, "at or under 1%") {
			refusals++
		}
	}
	if refusals != 3 {
		t.Errorf("%d refusals of the last approval in the audit log; want 3", refusals)
	}
	team, _ := f.store.AuditOf(ctx, "team", 10)
	if len(team) != 1 || team[0].Action != "team.settings" || !strings.Contains(team[0].Detail, `"after":1`) {
		t.Errorf("the rule's change in the audit log: %+v", team)
	}
}

func clustersOf(t *testing.T, store *db.DB, m db.Manifest) []db.ClusterRow {
	t.Helper()
	rows, err := store.Clusters(context.Background(), m.ID, db.ClusterFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// An audit's labels are the campaign's: its pairs are labeled pairs of origin "audit"
// with their design, the sweep's label rule counts them, a new run's dataset estimates
// pool them with the studio's draws, and they do not make the manifest they audit stale.
func TestAuditLabelsFeedTheCampaign(t *testing.T) {
	t.Parallel()
	f, m, ann, _ := auditFixture(t)
	ctx := context.Background()
	c, _ := f.store.Campaign(ctx, m.CampaignID)
	// Components with the longest keeper removes pairs the labels never paired (and
	// maybe one they did: an audit takes a pair the campaign has as it is).
	m2 := f.run(f.params(cluster.Components, "longest"))
	out, err := RequestAudit(ctx, f.store, f.appr1, m2, 300, 3)
	if err != nil {
		t.Fatal(err)
	}
	drawn := map[int64]bool{}
	for _, p := range auditPairs(t, f.store, m2) {
		f.label(c, p.PairID, ann, "minor")
		drawn[p.PairID] = true
	}
	if st, err := f.store.Staleness(ctx, f.manifest(m2.ID)); err != nil || st.Stale() {
		t.Errorf("the audit's own labels made its manifest stale: %+v, %v", st, err)
	}
	sp, err := f.store.SweepPairs(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	var lps []sweep.LabeledPair
	for _, p := range sp {
		lp := sweep.LabeledPair{ID: p.ID, A: int(p.A), B: int(p.B), Design: p.Design, Stratum: p.Stratum, FrameSize: p.FrameSize, Origin: p.Origin}
		for _, l := range p.Labels {
			lp.Labels = append(lp.Labels, sweep.Label{Annotator: l.Annotator, Kind: string(l.Kind), Category: l.Category, Duplicate: l.Duplicate, Rule: !l.ByAccount})
		}
		lps = append(lps, lp)
	}
	ls, err := sweep.ResolveAll(lps, c.Categories, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	counted, audited := 0, 0
	for _, p := range ls.Pairs {
		if !drawn[p.ID] {
			continue
		}
		if p.Source == sweep.FromMajority && p.Duplicate {
			counted++
		}
		if p.Origin == db.AuditOrigin && p.Design == out.Audit.Design && p.Stratum == db.AuditStratum && p.FrameSize == out.Uncertain {
			audited++
		}
	}
	if out.Added == 0 || counted != out.Added || audited == 0 {
		t.Errorf("of the %d pairs drawn, %d count in the campaign with ann1's label (want all), %d are new with origin audit and the "+
			"audit's design (want at least one)", out.Added, counted, audited)
	}
	// A run now pools them (origin "audit") into its dataset estimates.
	m3 := f.run(f.params(cluster.Components, "earliest"))
	if m3.Estimates == nil || m3.Estimates.Design == "" || m3.Estimates.DesignPairs < audited {
		t.Errorf("a run after the audit's labels: estimates %+v; want a design over the audit's %d pairs", m3.Estimates, audited)
	}
}

// A pair whose labels that count tie (or an adjudication that does not count) is served
// again to someone whose label would settle it; a pair in the audits of two manifests is
// kept from the author of either.
func TestAuditQueueSettlesTiesAndHoldsSharedPairs(t *testing.T) {
	t.Parallel()
	f, m, ann, rev := auditFixture(t)
	ctx := context.Background()
	c, _ := f.store.Campaign(ctx, m.CampaignID)
	ann2, err := f.store.CreateUser(ctx, "test", "ann2", auth.Annotator, "x")
	if err != nil {
		t.Fatal(err)
	}
	// The same configuration prepared by rev2: its audit draws the same pairs.
	m2, err := Run(ctx, f.store, f.sigs, Request{DatasetID: f.ds.ID, Params: f.params(cluster.Components, "earliest"), By: rev, ApprovalsRequired: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RequestAudit(ctx, f.store, f.appr1, m, 300, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := RequestAudit(ctx, f.store, f.appr1, m2, 300, 2); err != nil {
		t.Fatal(err)
	}
	for _, author := range []db.User{f.prep, rev} {
		if got := f.next(c, author); got != 0 {
			t.Errorf("%s, author of one of the two audits, was served pair %d", author.Name, got)
		}
	}
	pairs := auditPairs(t, f.store, m)
	p := pairs[0].PairID
	f.label(c, p, ann, "minor")
	if got := f.next(c, ann2); got == p {
		t.Errorf("a pair settled by one label was served again")
	}
	f.label(c, pairs[1].PairID, ann, "minor")
	f.label(c, p, ann2, "different")
	a, _ := AuditOf(ctx, f.store, m)
	if a.Tied != 1 || a.Labeled != 1 {
		t.Fatalf("after a disagreement: %+v", a)
	}
	// The author adjudicates: it settles the campaign's disagreement but not the audit.
	if err := campaign.Record(ctx, f.store, c, p, f.prep, campaign.Decision{Kind: labels.KindAdjudication, Category: "different"}); err != nil {
		t.Fatal(err)
	}
	if a, _ = AuditOf(ctx, f.store, m); a.Tied != 1 {
		t.Errorf("the author's adjudication settled the audit's pair: %+v", a)
	}
	if got := f.next(c, f.admin); got != p {
		t.Errorf("a third person's next pair: %d; want the tied audit pair %d", got, p)
	}
	f.label(c, p, f.admin, "minor")
	if a, _ = AuditOf(ctx, f.store, m); a.Tied != 0 || a.Labeled != 2 || a.Mistakes != 0 {
		t.Errorf("after a third label: %+v", a)
	}
}
