package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// The approvals a manifest asks are counted among the people other than its preparer,
// and the default is never lowered for want of them. These tests go through the pages
// as people do: the run form's own value is what they post.

// chainDataset imports the chain sample as admin and returns its id.
func (f *fixture) chainDataset() int64 {
	f.t.Helper()
	if _, body := f.waitJob(f.upload("/datasets", "chain.jsonl", chainDocs(f.t), nil).Header().Get("Location")); !strings.Contains(body, "import-done") {
		f.t.Fatal("import failed")
	}
	list, _ := f.store.Datasets(context.Background())
	return list[0].ID
}

// formApprovals is the approvals the run form offers to whoever signed in as ck, and
// the form's page.
func (f *fixture) formApprovals(ds int64, ck *http.Cookie) (string, string) {
	f.t.Helper()
	res, body := get(f.t, f.h, fmt.Sprintf("/datasets/%d/runs/new", ds), ck)
	m := regexp.MustCompile(`name="approvals" value="([^"]*)"`).FindStringSubmatch(body)
	if res.StatusCode != http.StatusOK || m == nil {
		f.t.Fatalf("run form: %d, no approvals field\n%s", res.StatusCode, body)
	}
	return m[1], body
}

// runAsForm posts the chain run with the approvals the form offered.
func (f *fixture) runAsForm(ds int64, approvals, who string) db.Manifest {
	f.t.Helper()
	run := chainRunWith("approvals", approvals)
	return f.runOn(ds, run, who)
}

// approveAs posts an approval of m's content hash as the account ck signs in.
func (f *fixture) approveAs(m db.Manifest, ck *http.Cookie) {
	f.t.Helper()
	if rec := f.do("POST", fmt.Sprintf("/manifests/%d/reviews", m.ID), ck, url.Values{"verdict": {"approve"}, "hash": {m.ContentHash}}); rec.Code != http.StatusSeeOther {
		f.t.Fatalf("approve: %d\n%s", rec.Code, rec.Body.String())
	}
}

// submit decides every removal of m and sends it to review, returning it as stored.
func (f *fixture) submit(m db.Manifest) db.Manifest {
	f.t.Helper()
	f.decideAll(m)
	if rec := f.do("POST", fmt.Sprintf("/manifests/%d/submit", m.ID), f.admin, url.Values{}); rec.Code != http.StatusSeeOther {
		f.t.Fatalf("submit: %d", rec.Code)
	}
	m, _ = f.store.Manifest(context.Background(), m.ID)
	if m.State != review.InReview {
		f.t.Fatalf("manifest %d is %s; want in review", m.ID, m.State)
	}
	return m
}

// The admin alone: the form offered 1 approval ("lowered from 2 to 1 ... 1 enabled
// account may approve", the admin, who may not approve what they prepare), and the
// first approver invited later signed the manifest off alone. The form offers the
// default, says nobody can approve yet and where to invite; the manifest asks 2 with no
// lowering, and one approver invited later does not sign it off.
func TestAdminAloneIsOfferedTheDefault(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ds := f.chainDataset()
	n, form := f.formApprovals(ds, f.admin)
	if n != "2" {
		t.Errorf("the admin alone is offered %s approval(s); want the default 2", n)
	}
	for _, want := range []string{
		`data-testid="approvals-short">A manifest of yours needs 2 approvals from people other than you; 0 such accounts: invite 2 approvers.`,
		`href="/admin/users?role=approver#invite" data-testid="invite-approver"`,
	} {
		if !strings.Contains(form, want) {
			t.Errorf("the run form lacks %s", want)
		}
	}
	m := f.runAsForm(ds, n, "admin")
	if m.ApprovalsRequired != 2 || m.ApprovalsLowered != nil {
		t.Fatalf("manifest asks %d approval(s), lowering %+v; want 2 and none", m.ApprovalsRequired, m.ApprovalsLowered)
	}
	page := fmt.Sprintf("/manifests/%d", m.ID)
	if _, body := get(t, f.h, page, f.admin); !strings.Contains(body,
		`data-testid="no-approver">Nobody can sign this manifest off yet: it needs 2 approvals from people other than you; 0 such accounts: invite 2 approvers.`) {
		t.Errorf("the draft's page does not say who is missing:\n%s", body)
	}

	bob := f.newAccount("bob", auth.Approver)
	bobCk := sessionFor(t, f.store, bob.ID)
	m = f.submit(m)
	f.approveAs(m, bobCk)
	if m, _ = f.store.Manifest(context.Background(), m.ID); m.State != review.InReview {
		t.Fatalf("after the one approver's approval the manifest is %s; want still in review", m.State)
	}
	if _, body := get(t, f.h, page, f.admin); !strings.Contains(body,
		`Nobody can sign this manifest off yet: it needs 1 more approval from people other than you; 0 such accounts left: invite one more approver.`) {
		t.Errorf("after bob's approval the page does not say one more approver is needed:\n%s", body)
	}
}

// An admin and one approver: the default 2 was accepted without a word though only the
// approver can ever approve what the admin prepares. The form and the page say one
// more approver is needed, and the approver's approval does not sign off.
func TestOneApproverBesidesThePreparer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ds := f.chainDataset()
	bob := f.newAccount("bob", auth.Approver)
	n, form := f.formApprovals(ds, f.admin)
	if n != "2" || !strings.Contains(form, `A manifest of yours needs 2 approvals from people other than you; 1 such account: invite one more approver.`) {
		t.Errorf("the form offers %s and does not say one more approver is needed:\n%s", n, form)
	}
	// A reviewer, who cannot approve, has two people besides them: enough, nothing said.
	if n, form := f.formApprovals(ds, f.signIn("reviewer")); n != "2" || strings.Contains(form, `data-testid="approvals-short"`) {
		t.Errorf("the reviewer's form offers %s or says the team is short, with the admin and bob to approve", n)
	}
	m := f.runAsForm(ds, n, "admin")
	page := fmt.Sprintf("/manifests/%d", m.ID)
	if _, body := get(t, f.h, page, f.admin); !strings.Contains(body,
		`Nobody can sign this manifest off yet: it needs 2 approvals from people other than you; 1 such account: invite one more approver.`) {
		t.Errorf("the draft's page does not say one more approver is needed:\n%s", body)
	}
	if _, body := get(t, f.h, page, f.signIn("reviewer")); !strings.Contains(body,
		`it needs 2 approvals from people other than admin (who prepared it); 1 such account: invite one more approver.`) ||
		!strings.Contains(body, "Ask an admin to invite one.") {
		t.Errorf("the page a reviewer sees does not name the preparer and who invites")
	}
	// The preparer's own line named bob as giving both approvals ("2 more approval(s)
	// needed: bob may give them"); he gives one.
	if _, body := get(t, f.h, page, f.admin); !strings.Contains(body, "2 more approvals needed; only bob may give one.") {
		t.Errorf("the preparer's line does not say bob gives only one of the 2:\n%s", body)
	}
	m = f.submit(m)
	f.approveAs(m, sessionFor(t, f.store, bob.ID))
	if m, _ = f.store.Manifest(context.Background(), m.ID); m.State != review.InReview {
		t.Fatalf("after bob's approval the manifest is %s; want still in review", m.State)
	}
}

// Lowering stays possible, as a choice typed into the form, recorded with who and why,
// on the manifest, its page and in the audit log; never under 1; the manifest's
// settings take the same rule, and raising past the team is allowed and said.
func TestLoweringIsRecorded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ds := f.chainDataset()
	bob := f.newAccount("bob", auth.Approver)
	for _, bad := range []string{"0", "21"} {
		run := chainRunWith("approvals", bad)
		if _, body := f.follow(f.do("POST", fmt.Sprintf("/datasets/%d/runs", ds), f.admin, run), f.admin); !strings.Contains(body,
			"approvals: want a whole number from 1 to 20 (approvals from people other than the preparer)") {
			t.Errorf("approvals=%s: the form does not name the range", bad)
		}
	}
	m := f.runAsForm(ds, "1", "admin")
	l := m.ApprovalsLowered
	if m.ApprovalsRequired != 1 || l == nil || l.By != "admin" || l.To != 1 || l.Why != "1 enabled account other than the preparer may approve" {
		t.Fatalf("manifest asks %d, lowering %+v; want 1, lowered by admin, 1 other account", m.ApprovalsRequired, l)
	}
	page := fmt.Sprintf("/manifests/%d", m.ID)
	if _, body := get(t, f.h, page, f.admin); !strings.Contains(body, "lowered from 2 to 1 approval by admin") || strings.Contains(body, `data-testid="no-approver"`) {
		t.Errorf("the page does not show the lowering, or says nobody can sign off")
	}
	if ev, err := f.store.AuditOf(context.Background(), fmt.Sprintf("manifest:%d", m.ID), 10); err != nil || len(ev) == 0 ||
		ev[0].Action != "manifest.prepare" || !strings.Contains(ev[0].Detail, `"approvals_lowered":{"from":2,"to":1,"by":"admin"`) {
		t.Errorf("the audit log does not record the lowering: %+v, %v", ev, err)
	}

	settings := page + "/settings"
	if _, body := f.follow(f.do("POST", settings, f.admin, url.Values{"approvals": {"0"}}), f.admin); !strings.Contains(body,
		`data-testid="manifest-error">approvals required: want a whole number from 1 to 20`) {
		t.Errorf("settings approvals=0 not refused by name:\n%s", body)
	}
	if _, body := f.follow(f.do("POST", settings, f.admin, url.Values{"approvals": {"3"}}), f.admin); !strings.Contains(body,
		"3 approvals now sign this manifest off. It needs 3 approvals from people other than you; 1 such account: invite 2 more approvers.") {
		t.Errorf("settings approvals=3 does not say the team is short:\n%s", body)
	}
	if m, _ = f.store.Manifest(context.Background(), m.ID); m.ApprovalsRequired != 3 || m.ApprovalsLowered != nil {
		t.Errorf("after raising: %d, lowering %+v; want 3, none", m.ApprovalsRequired, m.ApprovalsLowered)
	}
	if rec := f.do("POST", settings, f.admin, url.Values{"approvals": {"1"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("settings approvals=1: %d", rec.Code)
	}
	m = f.submit(m)
	f.approveAs(m, sessionFor(t, f.store, bob.ID))
	if m, _ = f.store.Manifest(context.Background(), m.ID); m.State != review.SignedOff {
		t.Errorf("lowered to 1, bob's approval leaves it %s; want signed off", m.State)
	}
}
