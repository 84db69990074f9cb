package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/audit"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// auditedManifest runs the chain (B and C removed in favour of A: their texts differ;
// =D2 in favour of D: identical after normalization), decides every removal and sends
// it to review as the reviewer, and sets the team's rule to 1% as the admin through the
// Team page. It returns the manifest.
func (f *fixture) auditedManifest() db.Manifest {
	f.t.Helper()
	m := f.withRun(chainRun)
	f.decideAll(m)
	if rec := f.do("POST", fmt.Sprintf("/manifests/%d/submit", m.ID), f.signIn("reviewer"), url.Values{}); rec.Code != http.StatusSeeOther {
		f.t.Fatalf("submit: %d", rec.Code)
	}
	_, team := f.follow(f.do("POST", "/admin/settings/audit-gate", f.admin, url.Values{"target": {"1"}}), f.admin)
	if !strings.Contains(team, `data-testid="audit-gate-now">Now: the last approval counts only when the manifest&#39;s audit bounds its mistakes at or under 1% of its removals (set by admin`) {
		f.t.Fatalf("the Team page does not show the rule:\n%.3000s", team)
	}
	m, _ = f.store.Manifest(context.Background(), m.ID)
	return m
}

var auditAttrs = regexp.MustCompile(`data-testid="audit-card" data-labeled="(\d+)" data-drawn="(\d+)" data-upper="(\d+)" data-removals="(\d+)"`)

// auditOnPage reads the audit card's figures off the manifest page.
func auditOnPage(t *testing.T, page string) (labeled, drawn, upper, removals int) {
	t.Helper()
	m := auditAttrs.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the manifest page has no audit card:\n%.3000s", page)
	}
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	return n(m[1]), n(m[2]), n(m[3]), n(m[4])
}

// The audit end to end through the handlers: an approver requests it on the manifest
// page; the team's rule keeps the approval that would sign off from being offered, and
// refuses it when posted anyway, naming the bound and the target; an annotator is served
// the audit's pairs first (the author never); the page's bound is audit.Estimate of the
// stored counts as labels come in; then the approval signs off, and the record, its JSON
// and the manifest list carry the audit.
func TestAuditThroughHandlers(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	m := f.auditedManifest()
	appr, ann, rev := f.signIn("approver"), f.signIn("annotator"), f.signIn("reviewer")
	base := fmt.Sprintf("/manifests/%d", m.ID)

	_, page := get(t, f.h, base, appr)
	for _, want := range []string{`data-testid="audit-none"`, `data-testid="audit-request"`, `data-testid="audit-gate"`,
		`value="approve" disabled data-testid="approve"`, "this manifest has none: request an audit"} {
		if !strings.Contains(page, want) {
			t.Errorf("before the audit, the approver's page lacks %q", want)
		}
	}
	if _, body := get(t, f.h, base, ann); strings.Contains(body, `data-testid="audit-request"`) {
		t.Error("an annotator is offered the audit request")
	}

	_, page = f.follow(f.do("POST", base+"/audit", appr, url.Values{"pairs": {"300"}}), appr)
	if !strings.Contains(page, "Drew 2 of the 2 removals whose texts differ from their keepers&#39; for the audit") {
		t.Errorf("the request's message:\n%.2000s", page)
	}
	stored, err := f.store.OpenAudit(ctx, m.ID)
	if err != nil || stored.Removals != 3 || stored.Certain != 1 || stored.Size != 2 || stored.RequestedBy != mustUser(t, f, "approver") {
		t.Fatalf("stored audit %+v, %v", stored, err)
	}
	checkBound := func(page string, labeled, mistakes int) {
		t.Helper()
		want, err := audit.Estimate(stored.Removals, stored.Certain, labeled, mistakes)
		if err != nil {
			t.Fatal(err)
		}
		gotLabeled, drawn, upper, removals := auditOnPage(t, page)
		if gotLabeled != labeled || drawn != stored.Size || float64(upper) != want.Upper || removals != stored.Removals {
			t.Errorf("the page's audit: %d of %d labeled, upper %d of %d; want %d of %d, audit.Estimate's %v of %d",
				gotLabeled, drawn, upper, removals, labeled, stored.Size, want.Upper, stored.Removals)
		}
		figure := fmt.Sprintf("%d of %d labeled, %s: at most %s removed by mistake (95%%), %s of %d removals; 1 removal is an identical text",
			labeled, stored.Size, templates.Plural(mistakes, "mistake", "mistakes"), templates.Plural(int(want.Upper), "document", "documents"), review.Percent(want.UpperRate), stored.Removals)
		if !strings.Contains(page, figure) {
			t.Errorf("the page does not say %q", figure)
		}
	}
	checkBound(page, 0, 0)

	// Posted anyway, the approval that would sign off is refused, naming bound and target.
	_, page = f.follow(f.do("POST", base+"/reviews", appr, url.Values{"verdict": {"approve"}, "hash": {m.ContentHash}}), appr)
	if !strings.Contains(page, "it is 67% now (at most 2 of 3 removals by mistake, 0 of 2 drawn pairs labeled)") || !strings.Contains(page, "at or under 1%") {
		t.Errorf("the refused approval says:\n%.3000s", page)
	}
	if got, _ := f.store.Manifest(ctx, m.ID); got.State != review.InReview {
		t.Fatalf("refused, yet the manifest is %s", got.State)
	}

	// The author is never served the audit's pairs; an annotator is, first.
	st, _ := f.store.AuditState(ctx, m.ID)
	for _, p := range st.Pairs {
		if got := f.nextPair(rev); strings.HasSuffix(got, fmt.Sprintf("/pairs/%d", p.PairID)) {
			t.Errorf("the author was served audit pair %d", p.PairID)
		}
	}
	for i, p := range st.Pairs {
		loc := f.nextPair(ann)
		if want := fmt.Sprintf("/campaigns/%d/pairs/%d", stored.CampaignID, p.PairID); loc != want {
			t.Fatalf("annotator's pair %d: %s; want the audit's %s", i, loc, want)
		}
		_, pairPage := get(t, f.h, loc, ann)
		if strings.Contains(pairPage, "(audit)") {
			t.Error("the pair page tells the labeler it is an audit pair (a proposed removal)")
		}
		if rec := f.do("POST", loc+"/label", ann, url.Values{"category": {"minor"}, "previous": {previousOf(pairPage)}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("label: %d %s", rec.Code, rec.Body.String())
		}
		_, page = get(t, f.h, base, appr)
		checkBound(page, i+1, 0)
	}
	if strings.Contains(page, `data-testid="audit-gate"`) || !strings.Contains(page, `value="approve" data-testid="approve"`) {
		t.Errorf("with the bound at 0%%, the approval is still held back:\n%.3000s", page)
	}
	if _, list := get(t, f.h, "/manifests", appr); !strings.Contains(list, fmt.Sprintf(`data-testid="manifest-audit-%d">audit 2/2, ≤ 0%%`, m.ID)) {
		t.Errorf("the manifest list does not show the audit in short")
	}
	f.do("POST", base+"/reviews", appr, url.Values{"verdict": {"approve"}, "hash": {m.ContentHash}})
	if got, _ := f.store.Manifest(ctx, m.ID); got.State != review.SignedOff {
		t.Fatalf("after the audit's labels the approval left the manifest %s", got.State)
	}
	_, record := get(t, f.h, base+"/signoff", appr)
	for _, want := range []string{"The manifest&#39;s own audit", "2 labeled, 0 mistakes, 0 tied", "0 documents, 0% of 3 removals",
		strconv.FormatUint(stored.Draws[0].Seed, 10), "at or under 1% of its removals (set by admin"} {
		if !strings.Contains(record, want) {
			t.Errorf("the sign-off record lacks %q", want)
		}
	}
	rec := f.do("GET", base+"/signoff.json", appr, nil)
	var so struct {
		Record struct {
			Audit     *review.Audit     `json:"audit"`
			AuditGate *review.AuditGate `json:"audit_gate"`
		} `json:"record"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &so); err != nil {
		t.Fatal(err)
	}
	if a := so.Record.Audit; a == nil || a.Drawn != 2 || a.Labeled != 2 || a.Mistakes != 0 || a.Upper != 0 || len(a.Seeds) != 1 ||
		so.Record.AuditGate == nil || so.Record.AuditGate.Target != 1 {
		t.Errorf("signoff.json: audit %+v, rule %+v\n%.2000s", so.Record.Audit, so.Record.AuditGate, rec.Body.String())
	}
}

// The Team page's rule is the admins': a bad target is named, "No rule" lifts it, and
// every change is in the audit log.
func TestAuditGateOnTheTeamPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	_, page := f.follow(f.do("POST", "/admin/settings/audit-gate", f.admin, url.Values{"target": {"two"}}), f.admin)
	if !strings.Contains(page, "target: &#34;two&#34; is not a percentage from 0 (no rule) to 50") {
		t.Errorf("a bad target:\n%.3000s", page)
	}
	if g, _ := f.store.AuditGate(ctx); g.On() {
		t.Fatalf("a bad target set the rule: %+v", g)
	}
	f.follow(f.do("POST", "/admin/settings/audit-gate", f.admin, url.Values{"target": {"0.5"}}), f.admin)
	_, page = f.follow(f.do("POST", "/admin/settings/audit-gate", f.admin, url.Values{"target": {"0"}}), f.admin)
	if !strings.Contains(page, "Now: no audit is required before sign-off") {
		t.Errorf("after No rule:\n%.3000s", page)
	}
	events, _ := f.store.AuditOf(ctx, "team", 10)
	if len(events) != 2 || !strings.Contains(events[0].Detail, `"after":0.5`) || !strings.Contains(events[1].Detail, `"before":0.5`) {
		t.Errorf("the rule's changes in the audit log: %+v", events)
	}
	if rec := f.do("POST", "/admin/settings/audit-gate", f.signIn("approver"), url.Values{"target": {"1"}}); rec.Code != http.StatusForbidden {
		t.Errorf("an approver sets the rule: %d", rec.Code)
	}
}

// Labels on an audit are blind to the audit too: the pair page does not tell someone
// who has not decided the pair that it is a proposed removal (origin "audit"); a
// reviewer who has labeled it sees where it came from, as with any pair.
func TestAuditPairPageIsBlind(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	longest := chainRunWith("keeper", "longest")
	m := f.withRun(longest)
	appr, rev2 := f.signIn("approver"), f.signInAs("rev2", "reviewer")
	if rec := f.do("POST", fmt.Sprintf("/manifests/%d/audit", m.ID), appr, url.Values{}); rec.Code != http.StatusSeeOther {
		t.Fatalf("request: %d %s", rec.Code, rec.Body.String())
	}
	st, err := f.store.AuditState(context.Background(), m.ID)
	if err != nil {
		t.Fatal(err)
	}
	fresh := 0
	for _, p := range st.Pairs {
		loc := fmt.Sprintf("/campaigns/%d/pairs/%d", st.CampaignID, p.PairID)
		pair, err := f.store.Pair(context.Background(), st.CampaignID, p.PairID)
		if err != nil {
			t.Fatal(err)
		}
		if pair.Origin != db.AuditOrigin {
			continue
		}
		fresh++
		_, before := get(t, f.h, loc, rev2)
		if strings.Contains(before, "(audit)") || !strings.Contains(before, "(drawn)") {
			t.Errorf("before labeling, the pair page names pair %d's origin", p.PairID)
		}
		f.do("POST", loc+"/label", rev2, url.Values{"category": {"minor"}, "previous": {"0"}})
		if _, after := get(t, f.h, loc, rev2); !strings.Contains(after, "(audit)") {
			t.Errorf("after labeling, the reviewer does not see pair %d's origin", p.PairID)
		}
	}
	if fresh == 0 {
		t.Fatal("no audit pair new to the campaign: the test checks nothing")
	}
}
