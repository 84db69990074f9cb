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
)

// Issue 8 item 6: Post/Redirect/Get. Every form (but the sign-in ones, which answer on
// their own page) answers 303 See Other, whether it worked or not; the page it sends to
// says what happened, once.
func TestEveryFormRedirects(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaign()
	ctx := context.Background()
	hash, _ := auth.HashPassword("x", cheapKDF)
	bo, _ := f.store.CreateUser(ctx, "test", "bo", auth.Annotator, hash)
	job := f.upload("/datasets", "more.jsonl", `{"id":"m","text":"more text"}`+"\n", nil).Header().Get("Location")
	f.waitJob(job)
	_, pair := get(t, f.h, "/campaigns/1/pairs/1", f.admin)
	prev := previousOf(pair)
	for _, tc := range []struct {
		name, path string
		form       url.Values
		wantTo     string // the redirect's path starts so
		wantText   string // the page there says
	}{
		{"label", "/campaigns/1/pairs/1/label", url.Values{"category": {"minor"}, "previous": {prev}}, "/campaigns/1/", "Saved"},
		{"label refused", "/campaigns/1/pairs/2/label", url.Values{"category": {"99"}}, "/campaigns/1/pairs/2?notice=", "choose a category"},
		{"label stale", "/campaigns/1/pairs/1/label", url.Values{"category": {"exact"}, "previous": {"0"}}, "/campaigns/1/pairs/1?notice=", "changed since"},
		{"flag", "/campaigns/1/pairs/2/label", url.Values{"action": {"flag"}}, "/campaigns/1/pairs/2?notice=", "Flagged pair 2"},
		{"unflag", "/campaigns/1/pairs/2/label", url.Values{"action": {"unflag"}}, "/campaigns/1/pairs/2?notice=", "Unflagged pair 2"},
		{"skip", "/campaigns/1/pairs/2/label", url.Values{"action": {"skip"}}, "/campaigns/1/", "it comes back after the others"},
		{"undo", "/campaigns/1/undo", url.Values{}, "/campaigns/1/pairs/1?notice=", "Undid:"},
		{"settings", "/campaigns/1/settings", url.Values{"spec": {"level=word size=5"}, "threshold": {"0.7"}, "overlap": {"1"}, "double_share": {"0.2"}}, "/campaigns/1?notice=", "Settings saved."},
		{"settings refused", "/campaigns/1/settings", url.Values{"spec": {"level=word size=5"}, "threshold": {"7"}, "overlap": {"1"}, "double_share": {"0.2"}}, "/campaigns/1?notice=", "threshold: want a number"},
		{"sample", "/campaigns/1/sample", url.Values{"per_bin": {"1"}, "bin": {"-1"}, "boundary": {"0"}, "random": {"1"}}, "/campaigns/1?notice=", "drawn"},
		{"start campaign", "/datasets/1/campaigns", url.Values{}, "/campaigns/1?notice=", "started"},
		{"invite refused", "/admin/invites", url.Values{"role": {"king"}}, "/admin/users?notice=", "unknown role"},
		{"role", fmt.Sprintf("/admin/users/%d/role", bo.ID), url.Values{"role": {"reviewer"}}, "/admin/users?notice=", "bo is now a reviewer."},
		{"disable", fmt.Sprintf("/admin/users/%d/disable", bo.ID), url.Values{}, "/admin/users?notice=", "Disabled bo"},
		{"enable", fmt.Sprintf("/admin/users/%d/enable", bo.ID), url.Values{}, "/admin/users?notice=", "Enabled bo"},
		{"cancel import", job + "/cancel", url.Values{}, job + "?notice=", "had ended already"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := f.do("POST", tc.path, f.admin, tc.form)
			loc, body := f.follow(rec, f.admin)
			if !strings.HasPrefix(loc, tc.wantTo) || !strings.Contains(body, tc.wantText) {
				t.Errorf("POST %s went to %s; want %s..., saying %q", tc.path, loc, tc.wantTo, tc.wantText)
			}
			// Reloading the page shows the notice no more (and posts nothing).
			if _, again := get(t, f.h, loc, f.admin); strings.Contains(again, `data-testid="notice`) {
				t.Errorf("reloading %s shows the notice again", loc)
			}
		})
	}
	// Uploads, refused or not, too.
	for _, tc := range []struct{ path, file, body, wantTo, wantText string }{
		{"/datasets", "x.txt", "hello", "/datasets/new?notice=", "cannot tell the format"},
		{"/labels", "l.csv", "a,b,category\na,zz,minor\n", "/labels/new?notice=", "unknown document id"},
	} {
		rec := f.upload(tc.path, tc.file, tc.body, map[string]string{"dataset": "d"})
		if loc, body := f.follow(rec, f.admin); !strings.HasPrefix(loc, tc.wantTo) || !strings.Contains(body, tc.wantText) {
			t.Errorf("upload to %s went to %s; want %s..., saying %q", tc.path, loc, tc.wantTo, tc.wantText)
		}
	}
	// A notice is its person's only.
	rec := f.do("POST", "/campaigns/1/pairs/2/label", f.admin, url.Values{"action": {"flag"}})
	if _, body := get(t, f.h, rec.Header().Get("Location"), f.signIn("reviewer")); strings.Contains(body, `data-testid="notice`) {
		t.Error("another person's notice shows")
	}
}

var secretRE = regexp.MustCompile(`data-testid="notice-secret">([^<]+)<`)

// An invite link is shown once on the Team page (a GET), pending invites are listed and
// can be revoked (audited), and disabling asks first on a page of its own.
func TestInvitesAndDisabling(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	rec := f.do("POST", "/admin/invites", f.admin, url.Values{"role": {"annotator"}, "note": {"for Kim"}})
	loc, body := f.follow(rec, f.admin)
	m := secretRE.FindStringSubmatch(body)
	if !strings.HasPrefix(loc, "/admin/users?notice=") || m == nil || !strings.Contains(m[1], "/invite/") {
		t.Fatalf("after creating an invite: %s; want the Team page with the link", loc)
	}
	link := m[1][strings.Index(m[1], "/invite/"):]
	if _, again := get(t, f.h, loc, f.admin); strings.Contains(again, link) {
		t.Error("the invite link shows again on reload")
	}
	_, team := get(t, f.h, "/admin/users", f.admin)
	if !strings.Contains(team, `data-testid="invites"`) || !strings.Contains(team, "for Kim") {
		t.Fatal("the pending invite is not listed")
	}
	if res, _ := get(t, f.h, link); res.StatusCode != http.StatusOK {
		t.Fatalf("the invite link: %d", res.StatusCode)
	}
	revoke := regexp.MustCompile(`action="(/admin/invites/[0-9a-f]+/revoke)"`).FindStringSubmatch(team)
	if revoke == nil {
		t.Fatal("no revoke form")
	}
	rec = f.do("POST", revoke[1], f.admin, url.Values{})
	if _, body := f.follow(rec, f.admin); !strings.Contains(body, "Revoked the invite for a new annotator (for Kim)") || !strings.Contains(body, `data-testid="invites-empty"`) {
		t.Error("the Team page does not say the invite was revoked, or still lists it")
	}
	if res, _ := get(t, f.h, link); res.StatusCode != http.StatusNotFound {
		t.Errorf("a revoked invite link: %d; want 404", res.StatusCode)
	}
	if rec := f.do("POST", revoke[1], f.admin, url.Values{}); rec.Code != http.StatusNotFound {
		t.Errorf("revoking twice: %d; want 404", rec.Code)
	}
	events, _ := f.store.AuditLog(ctx, 5)
	if events[0].Action != "invite.revoke" || events[0].Actor != "admin" {
		t.Errorf("latest audit event %+v; want invite.revoke by admin", events[0])
	}
	// Disabling: the Team page links a confirmation page (no JavaScript needed); only its
	// form disables.
	c := f.signIn("annotator")
	u, _ := f.store.UserByName(ctx, "annotator")
	confirm := fmt.Sprintf("/admin/users/%d/disable", u.ID)
	if _, team := get(t, f.h, "/admin/users", f.admin); !strings.Contains(team, `href="`+confirm+`"`) {
		t.Error("the Team page does not link the confirmation page")
	}
	_, page := get(t, f.h, confirm, f.admin)
	if !strings.Contains(page, `data-testid="confirm-disable"`) || !strings.Contains(page, `action="`+confirm+`"`) {
		t.Fatal("no confirmation page")
	}
	if u, _ := f.store.UserByID(ctx, u.ID); u.Disabled {
		t.Fatal("showing the confirmation disabled the account")
	}
	f.follow(f.do("POST", confirm, f.admin, url.Values{}), f.admin)
	if res, _ := get(t, f.h, "/", c); res.StatusCode != http.StatusSeeOther {
		t.Error("the disabled account is still signed in")
	}
}
