package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// newAccount creates an account that signs in with name+"-password".
func (f *fixture) newAccount(name string, role auth.Role) db.User {
	f.t.Helper()
	hash, _ := auth.HashPassword(name+"-password", cheapKDF)
	u, err := f.store.CreateUser(context.Background(), "test", name, role, hash)
	if err != nil {
		f.t.Fatal(err)
	}
	return u
}

// inReview is the chain sample's manifest needing two approvals, every removal decided
// by the reviewer and sent to review.
func (f *fixture) inReview() db.Manifest {
	f.t.Helper()
	run := chainRunWith("approvals", "2")
	m := f.withRun(run)
	f.decideAll(m)
	if rec := f.do("POST", fmt.Sprintf("/manifests/%d/submit", m.ID), f.signIn("reviewer"), url.Values{}); rec.Code != 303 {
		f.t.Fatalf("submit: %d", rec.Code)
	}
	m, _ = f.store.Manifest(context.Background(), m.ID)
	if m.State != review.InReview {
		f.t.Fatalf("manifest %d is %s; want in review", m.ID, m.State)
	}
	return m
}

const youJS = `(document.querySelector('[data-testid="approval-you"]')?.innerText ?? "")`

// Issue 27, per-person approval state (Terraform's plan/apply as a careful team uses it):
// bob sees his approval would be 1 of 2 and approves; his page then says he approved and
// that 1 more is needed, from whom, and offers no approval any more (it offered "Approve
// and sign off 2 of 2" again, and posting it changed nothing); carol sees bob's approval
// and that hers signs the manifest off.
func TestApprovalStandingInBrowser(t *testing.T) {
	f := newFixture(t, 1<<20)
	f.newAccount("bob", auth.Approver)
	f.newAccount("carol", auth.Approver)
	m := f.inReview()
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)
	page := fmt.Sprintf("%s/manifests/%d", srv.URL, m.ID)
	p := tab{t, sweepBrowser(t, 1280, 1000)}

	p.login(srv.URL, "bob")
	p.do(chromedp.Navigate(page))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="approval-standing"]')`)
	if got := evalJS[string](p, youJS); got != "Your approval counts: 1 more will be needed after it." {
		t.Errorf("bob, before approving, reads %q", got)
	}
	if got := evalJS[string](p, `document.querySelector('[data-testid="approve"]')?.innerText ?? ""`); got != "Approve: 1 of 2" {
		t.Errorf("bob's approve button says %q; want Approve: 1 of 2", got)
	}
	if got := evalJS[string](p, `document.querySelector('[data-testid="may-still"]')?.innerText ?? ""`); !strings.Contains(got, "bob") || !strings.Contains(got, "carol") {
		t.Errorf("who may still approve: %q; want bob and carol", got)
	}
	p.do(chromedp.Click(`[data-testid="approve"]`))
	p.waitFor(`document.readyState === "complete" && document.querySelector('[data-testid="approval-you"]')?.dataset.you === "approved"`)
	p.screenshot("approval-bob-approved")
	short := review.Short(m.ContentHash)
	if got := evalJS[string](p, youJS); !strings.HasPrefix(got, "You approved content hash "+short+"; 1 more approval needed: ") || !strings.Contains(got, "carol") ||
		strings.Contains(got, "bob may") {
		t.Errorf("bob, after approving, reads %q; want that he approved %s and 1 more is needed, from carol or another", got, short)
	}
	if evalJS[bool](p, `!!document.querySelector('[data-testid="approve"]')`) {
		t.Error("bob, who approved, is still offered the approval")
	}
	if got := evalJS[string](p, `document.querySelector('[data-testid="manifest-message"]')?.innerText ?? ""`); got != "Approved: 1 of 2 approvals; 1 more needed before it is signed off." {
		t.Errorf("the message after bob's approval: %q", got)
	}
	if got := evalJS[string](p, `[...document.querySelectorAll('[data-testid="approved-by"]')].map(e => e.innerText).join("|")`); !strings.HasPrefix(got, "approved bob (approver") {
		t.Errorf("approved by: %q; want bob", got)
	}
	if got := evalJS[string](p, `document.querySelector('[data-testid="may-still"]')?.innerText ?? ""`); strings.Contains(got, "bob") || !strings.Contains(got, "carol") {
		t.Errorf("who may still approve after bob: %q; want carol and not bob", got)
	}

	p.do(chromedp.Click(`[data-testid="logout"]`))
	p.waitFor(`!!document.querySelector('[data-testid="signin-form"]')`)
	p.login(srv.URL, "carol")
	p.do(chromedp.Navigate(page))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="approval-standing"]')`)
	if got := evalJS[string](p, youJS); got != "Your approval signs it off." {
		t.Errorf("carol reads %q; want that her approval signs it off", got)
	}
	if got := evalJS[string](p, `document.querySelector('[data-testid="approve"]')?.innerText ?? ""`); got != "Approve and sign off" {
		t.Errorf("carol's approve button says %q", got)
	}
	p.do(chromedp.Click(`[data-testid="approve"]`))
	p.waitFor(`document.querySelector('[data-testid="manifest"]')?.dataset.state === "signed"`)
	p.screenshot("approval-carol-signed")
}

// A team whose only approver prepared the manifest is told so, with the invite link,
// and offered no approval (it said "another approver signs it off").
func TestTeamOfOneIsToldThereIsNoOtherApprover(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	if _, body := f.waitJob(f.upload("/datasets", "chain.jsonl", chainDocs(t), nil).Header().Get("Location")); !strings.Contains(body, "import-done") {
		t.Fatal("import failed")
	}
	list, _ := f.store.Datasets(context.Background())
	m := f.runOn(list[0].ID, chainRun, "admin")
	for _, state := range []string{"draft", "in review"} {
		_, body := get(t, f.h, fmt.Sprintf("/manifests/%d", m.ID), f.admin)
		for _, want := range []string{
			`data-testid="no-approver">Nobody can sign this manifest off yet: it needs 1 approval from people other than you; 0 such accounts: invite one approver.`,
			`href="/admin/users?role=approver#invite" data-testid="invite-approver"`,
			`data-you="prepared">You prepared this manifest, so your approval does not count`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("%s, the manifest page lacks %s", state, want)
			}
		}
		if strings.Contains(body, `data-testid="approve"`) {
			t.Errorf("%s, the team of one is offered an approval that cannot count", state)
		}
		if state == "draft" {
			f.decideAll(m)
			if rec := f.do("POST", fmt.Sprintf("/manifests/%d/submit", m.ID), f.admin, url.Values{}); rec.Code != 303 {
				t.Fatalf("submit: %d", rec.Code)
			}
		}
	}
	// The invite link lands on the invite form.
	if _, body := get(t, f.h, "/admin/users?role=approver", f.admin); !strings.Contains(body, `id="invite"`) || !strings.Contains(body, `<option value="approver" selected>`) {
		t.Error("/admin/users?role=approver has no #invite to land on, or does not offer the approver role first")
	}
}

// Issue 27: an export tombstoned hundreds of documents on one click. It now asks once,
// with the count, the manifest's content hash and what will happen, and only the
// confirming button exports.
func TestExportConfirmationInBrowser(t *testing.T) {
	f := newFixture(t, 1<<20)
	m := f.signedOff(f.withRun(chainRun))
	p, base := f.browse(1280, 1000, "approver")
	p.do(chromedp.Navigate(fmt.Sprintf("%s/manifests/%d", base, m.ID)))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="export-open"]')`)
	if evalJS[bool](p, `document.querySelector('[data-testid="export"]').checkVisibility()`) {
		t.Error("the exporting button is on the page before the export was asked for")
	}
	n := f.approvedCount(m)
	p.do(chromedp.Click(`[data-testid="export-open"]`))
	p.waitFor(`document.querySelector('[data-testid="export"]')?.checkVisibility()`)
	p.screenshot("export-confirm")
	what := evalJS[string](p, `document.querySelector('[data-testid="export-confirm"] .confirm-box').innerText`)
	for _, want := range []string{templates.Plural(n, "document", "documents"), m.ContentHash, m.DatasetHash, "leave the dataset's live view", "can be restored", "approver"} {
		if !strings.Contains(what, want) {
			t.Errorf("the export's confirmation lacks %q:\n%s", want, what)
		}
	}
	if got := evalJS[string](p, `document.querySelector('[data-testid="export"]').innerText`); got != "Tombstone "+templates.Plural(n, "document", "documents") {
		t.Errorf("the confirming button says %q", got)
	}
	if st, _ := f.store.Manifest(context.Background(), m.ID); st.State != review.SignedOff {
		t.Fatalf("opening the confirmation exported: %s", st.State)
	}
	p.do(chromedp.Click(`[data-testid="export"]`))
	p.waitFor(`document.querySelector('[data-testid="manifest"]')?.dataset.state === "applied"`)
	if got := evalJS[string](p, `document.querySelector('[data-testid="manifest-message"]')?.innerText ?? ""`); got !=
		fmt.Sprintf("Exported content hash %s: %s now. Download the files below.", review.Short(m.ContentHash), templates.Plural(n, "document is a tombstone", "documents are tombstones")) {
		t.Errorf("after the export the page says %q", got)
	}
}
