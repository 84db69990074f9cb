package web

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
)

// routeMatrix is every protected route and the permission it needs. The test below
// walks the router and fails when a route is missing here, so new routes get checked.
var routeMatrix = []struct {
	method, path string
	perm         auth.Permission
}{
	{"GET", "/", auth.View},
	{"GET", "/shape.svg?bands=2&rows=2", auth.View},
	{"GET", "/shape.csv?bands=2&rows=2", auth.View},
	{"GET", "/audit", auth.ManageUsers},
	{"GET", "/datasets/new", auth.ImportData},
	{"POST", "/datasets", auth.ImportData},
	{"GET", "/imports/import-1", auth.ImportData},
	{"POST", "/imports/import-1/cancel", auth.ImportData},
	{"POST", "/imports/import-1/new-version", auth.ImportData},
	{"GET", "/labels/new", auth.ImportLabels},
	{"POST", "/labels", auth.ImportLabels},
	{"GET", "/label-imports/import-1", auth.ImportLabels},
	{"POST", "/label-imports/import-1/cancel", auth.ImportLabels},
	{"GET", "/admin/users", auth.ManageUsers},
	{"POST", "/admin/invites", auth.ManageUsers},
	{"POST", "/admin/invites/00ff/revoke", auth.ManageUsers},
	{"POST", "/admin/users/1/role", auth.ManageUsers},
	{"GET", "/admin/users/1/disable", auth.ManageUsers},
	{"POST", "/admin/users/1/disable", auth.ManageUsers},
	{"POST", "/admin/users/1/enable", auth.ManageUsers},
	{"POST", "/admin/users/1/unlock", auth.ManageUsers},
	{"POST", "/admin/api-tokens", auth.ManageUsers},
	{"POST", "/admin/api-tokens/1/revoke", auth.ManageUsers},
	{"POST", "/admin/search-indexes", auth.ManageUsers},
	{"POST", "/admin/settings/audit-gate", auth.ManageUsers},
	{"GET", "/campaigns/1", auth.View},
	{"GET", "/campaigns/1/labels.csv", auth.ReadLabels},
	{"GET", "/campaigns/1/labels.jsonl", auth.ReadLabels},
	{"GET", "/campaigns/1/disagreements/next", auth.Adjudicate},
	{"GET", "/campaigns/1/pairs/1", auth.View},
	{"GET", "/campaigns/1/sweeps", auth.View},
	{"POST", "/campaigns/1/sweeps", auth.RunSweeps},
	{"GET", "/sweeps/1", auth.View},
	{"GET", "/sweeps/1/progress", auth.View},
	{"GET", "/sweeps/1/live", auth.View},
	{"GET", "/sweeps/1/results.csv", auth.View},
	{"GET", "/sweeps/1/settings.json", auth.View},
	{"GET", "/sweeps/1/charts/tradeoff.svg", auth.View},
	{"POST", "/sweeps/1/cancel", auth.RunSweeps},
	{"POST", "/sweeps/1/resume", auth.RunSweeps},
	{"POST", "/sweeps/1/rerun", auth.RunSweeps},
	{"POST", "/sweeps/1/notes", auth.RunSweeps},
	{"GET", "/documents/1/raw", auth.View},
	{"GET", "/campaigns/1/next", auth.Label},
	{"POST", "/campaigns/1/undo", auth.Label},
	{"POST", "/campaigns/1/pairs/1/label", auth.Label},
	{"POST", "/campaigns/1/sample", auth.ManageCampaigns},
	{"POST", "/campaigns/1/settings", auth.ManageCampaigns},
	{"POST", "/datasets/1/campaigns", auth.ManageCampaigns},
	{"GET", "/manifests", auth.View},
	{"GET", "/manifests/diff?a=1&b=1", auth.View},
	{"GET", "/manifests/1", auth.View},
	{"GET", "/manifests/1/impact.svg", auth.View},
	{"GET", "/manifests/1/clusters", auth.View},
	{"GET", "/manifests/1/clusters/1", auth.View},
	{"GET", "/manifests/1/clusters/1/matrix.svg", auth.View},
	{"GET", "/manifests/1/clusters/1/chain.svg", auth.View},
	{"GET", "/manifests/1/signoff", auth.View},
	{"GET", "/manifests/1/signoff.json", auth.View},
	{"GET", "/manifests/1/removals.csv", auth.View},
	{"GET", "/manifests/1/removals.jsonl", auth.View},
	{"GET", "/manifests/1/split.jsonl", auth.View},
	{"GET", "/manifests/1/engines.zip", auth.View},
	{"GET", "/manifests/1/settings.json", auth.View},
	{"GET", "/datasets/1/runs/new", auth.PrepareManifests},
	{"POST", "/datasets/1/runs", auth.PrepareManifests},
	{"GET", "/runs/import-1", auth.PrepareManifests},
	{"POST", "/runs/import-1/cancel", auth.PrepareManifests},
	{"POST", "/manifests/1/items/1", auth.PrepareManifests},
	{"POST", "/manifests/1/clusters/1/decide", auth.PrepareManifests},
	{"POST", "/manifests/1/clusters/1/keeper", auth.PrepareManifests},
	{"POST", "/manifests/1/clusters/1/cut", auth.PrepareManifests},
	{"POST", "/manifests/1/clusters/1/comment", auth.PrepareManifests},
	{"POST", "/manifests/1/bulk", auth.PrepareManifests},
	{"POST", "/manifests/1/approve-outside-sample", auth.PrepareManifests},
	{"POST", "/manifests/import", auth.PrepareManifests},
	{"GET", "/dedup-jobs", auth.PrepareManifests},
	{"GET", "/dedup-jobs/from-sweep?sweep=1", auth.PrepareManifests},
	{"GET", "/dedup-jobs/1", auth.PrepareManifests},
	{"GET", "/dedup-jobs/1/files/summary.json", auth.PrepareManifests},
	{"POST", "/dedup-jobs/1/cancel", auth.PrepareManifests},
	{"POST", "/dedup-jobs/1/resume", auth.PrepareManifests},
	{"POST", "/dedup-jobs/1/import", auth.PrepareManifests},
	{"GET", "/manifests/1/dedup-jobs/new", auth.PrepareManifests},
	{"POST", "/manifests/1/dedup-jobs", auth.PrepareManifests},
	{"GET", "/sweeps/1/dedup-jobs/new", auth.PrepareManifests},
	{"POST", "/sweeps/1/dedup-jobs", auth.PrepareManifests},
	{"POST", "/manifests/1/undo", auth.PrepareManifests},
	{"POST", "/manifests/1/submit", auth.PrepareManifests},
	{"POST", "/manifests/1/settings", auth.PrepareManifests},
	{"POST", "/manifests/1/prepare-again", auth.PrepareManifests},
	{"POST", "/manifests/1/audit", auth.RequestAudit},
	{"POST", "/manifests/1/reviews", auth.Approve},
	{"POST", "/manifests/1/export", auth.Approve},
	{"POST", "/manifests/1/revoke", auth.Approve},
	{"POST", "/manifests/1/tombstones/1/restore", auth.Approve},
}

// routeParams fills a route's parameters for a request.
var routeParams = strings.NewReplacer("{job}", "import-1", "{id}", "1", "{invite}", "00ff", "{campaign}", "1", "{pair}", "1", "{doc}", "1", "{dataset}", "1",
	"{manifest}", "1", "{cluster}", "1", "{item}", "1", "{format}", "svg",
	"{sweep}", "1", "{chart}", "tradeoff", "{apiToken}", "1", "{dedupJob}", "1", "{file}", "summary.json")

var publicRoutes = map[string]bool{
	"GET /static/*": true, "GET /healthz": true, "GET /login": true, "POST /login": true, "POST /logout": true,
	"GET /setup": true, "POST /setup": true, "GET /invite/{token}": true, "POST /invite/{token}": true,
	// An API token opens it, never a session (searchapi_test.go).
	"POST /api/v1/indexes/{index}/search": true,
}

func TestRoleRouteMatrix(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaign()
	cookies := map[auth.Role]*http.Cookie{}
	for _, r := range auth.Roles {
		cookies[r] = f.signIn(string(r))
	}
	for _, rt := range routeMatrix {
		for _, role := range auth.Roles {
			rec := f.do(rt.method, rt.path, cookies[role], url.Values{})
			allowed := role.Can(rt.perm)
			if allowed && (rec.Code == http.StatusForbidden || rec.Code == http.StatusUnauthorized) {
				t.Errorf("%s %s as %s: %d; want it allowed", rt.method, rt.path, role, rec.Code)
			}
			if !allowed && rec.Code != http.StatusForbidden {
				t.Errorf("%s %s as %s: %d; want 403", rt.method, rt.path, role, rec.Code)
			}
		}
		// Signed out: pages send you to sign in, other requests are refused.
		rec := f.do(rt.method, rt.path, nil, url.Values{})
		if rt.method == "GET" && (rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/login?next=")) {
			t.Errorf("GET %s signed out: %d %s; want a redirect to /login", rt.path, rec.Code, rec.Header().Get("Location"))
		}
		if rt.method == "POST" && rec.Code != http.StatusUnauthorized {
			t.Errorf("POST %s signed out: %d; want 401", rt.path, rec.Code)
		}
	}
	// Every route of the router is in the matrix or public.
	inMatrix := map[string]bool{}
	for _, rt := range routeMatrix {
		p, _, _ := strings.Cut(rt.path, "?")
		inMatrix[rt.method+" "+p] = true
	}
	chi.Walk(f.h.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		key := method + " " + route
		if publicRoutes[key] {
			return nil
		}
		pattern := routeParams.Replace(route)
		if !inMatrix[method+" "+pattern] {
			t.Errorf("route %s is neither public nor in the role matrix", key)
		}
		return nil
	})
}

// No GET changes anything: every GET route of the router, signed in as each role and
// signed out, leaves the database as it was (session bookkeeping aside).
func TestNoGETChangesState(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	// Some data to look at, an invite to view, a job to view.
	f.withCampaign()
	token, hash := auth.NewToken()
	admin, _ := f.store.UserByName(ctx, "admin")
	f.store.CreateInvite(ctx, admin, hash, "annotator", "", inviteTTL)
	var gets []string
	chi.Walk(f.h.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if method == "GET" {
			gets = append(gets, strings.NewReplacer("{token}", token, "/*", "/app.css").Replace(routeParams.Replace(route)))
		}
		return nil
	})
	gets = append(gets, "/setup?token=nope", "/shape.svg?bands=2&rows=2", "/shape.csv?bands=2&rows=2")
	for _, role := range append([]string{""}, "annotator", "reviewer", "approver", "admin") {
		var c *http.Cookie
		if role != "" {
			c = f.signIn(role)
		}
		for _, path := range gets {
			before, err := f.store.Fingerprint(ctx, "sessions")
			if err != nil {
				t.Fatal(err)
			}
			f.do("GET", path, c, nil)
			after, _ := f.store.Fingerprint(ctx, "sessions")
			if before != after {
				t.Errorf("GET %s as %q changed the database", path, role)
			}
		}
	}
	if len(gets) < 10 {
		t.Errorf("walked only %d GET routes", len(gets))
	}
}

func TestLoginSessionsAndLimits(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	u := f.account("carol", "reviewer", "the right password")

	rec := f.do("POST", "/login", nil, url.Values{"name": {"carol"}, "password": {"the right password"}, "next": {"/audit"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/audit" {
		t.Fatalf("login: %d %s", rec.Code, rec.Header().Get("Location"))
	}
	c := rec.Result().Cookies()[0]
	if c.Name != cookieName || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure || len(c.Value) != 22 {
		t.Errorf("session cookie %+v", c)
	}
	if strings.Contains(rec.Body.String()+fmt.Sprint(rec.Header()), "the right password") {
		t.Error("password echoed")
	}
	// Rotated at login: logging in again gives a new token and kills the old one.
	req := httptest.NewRequest("POST", "/login", strings.NewReader(url.Values{"name": {"carol"}, "password": {"the right password"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(c)
	w := serve(f.h, req)
	c2 := w.Result().Cookies()[0]
	if c2.Value == c.Value {
		t.Error("session token not rotated at login")
	}
	if res, _ := get(t, f.h, "/", c); res.StatusCode != http.StatusSeeOther {
		t.Errorf("old session still works after a new login: %d", res.StatusCode)
	}
	if res, _ := get(t, f.h, "/", c2); res.StatusCode != http.StatusOK {
		t.Errorf("new session: %d", res.StatusCode)
	}
	// Logout revokes server-side.
	f.do("POST", "/logout", c2, url.Values{})
	if res, _ := get(t, f.h, "/", c2); res.StatusCode != http.StatusSeeOther {
		t.Errorf("session alive after logout: %d", res.StatusCode)
	}
	// Disabling ends sessions at once.
	rec = f.do("POST", "/login", nil, url.Values{"name": {"carol"}, "password": {"the right password"}})
	c3 := rec.Result().Cookies()[0]
	if rec := f.do("POST", fmt.Sprintf("/admin/users/%d/disable", u.ID), f.admin, url.Values{}); rec.Code != http.StatusSeeOther {
		t.Fatalf("disable: %d", rec.Code)
	}
	if res, _ := get(t, f.h, "/", c3); res.StatusCode != http.StatusSeeOther {
		t.Errorf("disabled user's session still works: %d", res.StatusCode)
	}
	if rec := f.do("POST", "/login", nil, url.Values{"name": {"carol"}, "password": {"the right password"}}); rec.Code != http.StatusUnauthorized {
		t.Errorf("disabled user logged in: %d", rec.Code)
	}
	// Role change and its audit trail.
	f.do("POST", fmt.Sprintf("/admin/users/%d/enable", u.ID), f.admin, url.Values{})
	f.do("POST", fmt.Sprintf("/admin/users/%d/role", u.ID), f.admin, url.Values{"role": {"approver"}})
	if got, _ := f.store.UserByID(ctx, u.ID); got.Role != "approver" {
		t.Errorf("role after change: %s", got.Role)
	}
	events, _ := f.store.AuditLog(ctx, 100)
	seen := map[string]bool{}
	for _, e := range events {
		seen[e.Action] = true
		if strings.Contains(e.Detail, "right password") {
			t.Error("a password reached the audit log")
		}
	}
	for _, a := range []string{"login", "logout", "user.disable", "user.enable", "user.role"} {
		if !seen[a] {
			t.Errorf("no %s audit event", a)
		}
	}
	// The last admin cannot be demoted.
	admin, _ := f.store.UserByName(ctx, "admin")
	rec = f.do("POST", fmt.Sprintf("/admin/users/%d/role", admin.ID), f.admin, url.Values{"role": {"annotator"}})
	if _, body := f.follow(rec, f.admin); !strings.Contains(body, "last enabled admin") {
		t.Errorf("demoting the last admin: the Team page does not say why it was refused:\n%s", body)
	}
	// Open redirects are refused.
	if rec := f.do("POST", "/login", nil, url.Values{"name": {"carol"}, "password": {"the right password"}, "next": {"//evil.example/"}}); rec.Header().Get("Location") != "/" {
		t.Errorf("next=//evil.example/ redirected to %q", rec.Header().Get("Location"))
	}
}

func TestLoginRateLimits(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	f.account("dave", "annotator", "the right password")
	try := func(name, pw, addr string, fwd string) int {
		req := httptest.NewRequest("POST", "/login", strings.NewReader(url.Values{"name": {name}, "password": {pw}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.RemoteAddr = addr + ":1234"
		if fwd != "" {
			req.Header.Set("X-Forwarded-For", fwd)
		}
		w := serve(f.h, req)
		return w.Code
	}
	// Per account and address: 5 failures, then even the right password waits there,
	// and only there.
	for i := range 5 {
		if code := try("dave", "wrong", "198.51.100.1", ""); code != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i, code)
		}
	}
	if code := try("dave", "the right password", "198.51.100.1", ""); code != http.StatusTooManyRequests {
		t.Errorf("6th attempt from the locked-out address: %d; want 429", code)
	}
	if code := try("dave", "the right password", "198.51.100.77", ""); code != http.StatusSeeOther {
		t.Errorf("the owner from another address: %d; want 303 (signed in)", code)
	}
	// Per address: 30 failures across accounts; a spoofed X-Forwarded-For does not help.
	for i := range 30 {
		try(fmt.Sprintf("nobody%d", i), "wrong", "203.0.113.9", fmt.Sprintf("10.0.0.%d", i))
	}
	if code := try("someone", "x", "203.0.113.9", "10.9.9.9"); code != http.StatusTooManyRequests {
		t.Errorf("after 30 failures from one address: %d; want 429", code)
	}
	events, _ := f.store.AuditLog(ctx, 100)
	failed := 0
	for _, e := range events {
		if e.Action == "login.failed" {
			failed++
		}
	}
	if failed < 35 {
		t.Errorf("%d failed logins audited; want 35", failed)
	}
}

func TestSecureCookieBehindTLS(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.account("erin", "annotator", "the right password")
	req := httptest.NewRequest("POST", "/login", strings.NewReader(url.Values{"name": {"erin"}, "password": {"the right password"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.TLS = &tls.ConnectionState{}
	w := serve(f.h, req)
	c := w.Result().Cookies()[0]
	if c.Name != "__Host-dedup_session" || !c.Secure || c.Path != "/" || c.Domain != "" {
		t.Errorf("cookie over TLS: %+v", c)
	}
}

func TestSetupLinkCreatesFirstAdminOnce(t *testing.T) {
	t.Parallel()
	store := dbtest.OpenFile(t, t.TempDir()+"/s.db")
	d := testDeps(store, newJobs(t))
	d.SetupToken = "tok123"
	f := &fixture{t: t, store: store, h: New(d)}
	if rec := f.do("GET", "/setup?token=wrong", nil, nil); rec.Code != http.StatusNotFound {
		t.Errorf("wrong setup token: %d", rec.Code)
	}
	if rec := f.do("GET", "/setup?token=tok123", nil, nil); rec.Code != http.StatusOK {
		t.Errorf("setup page: %d", rec.Code)
	}
	if rec := f.do("POST", "/setup?token=tok123", nil, url.Values{"name": {"root"}, "password": {"short"}}); rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("short password: %d", rec.Code)
	}
	rec := f.do("POST", "/setup?token=tok123", nil, url.Values{"name": {"root"}, "password": {"long enough pw"}})
	if rec.Code != http.StatusSeeOther || len(rec.Result().Cookies()) == 0 {
		t.Fatalf("setup: %d", rec.Code)
	}
	if u, _ := store.UserByName(context.Background(), "root"); u.Role != "admin" {
		t.Errorf("first user role %q", u.Role)
	}
	if rec := f.do("POST", "/setup?token=tok123", nil, url.Values{"name": {"root2"}, "password": {"long enough pw"}}); rec.Code != http.StatusNotFound {
		t.Errorf("second use of the setup link: %d; want 404", rec.Code)
	}
}

// On a fresh database the sign-in page, where / leads, says how the first account is
// made; the console is not buried under a line per static file.
func TestFirstStartSignInPointsToSetupLink(t *testing.T) {
	t.Parallel()
	store := dbtest.OpenFile(t, t.TempDir()+"/s.db")
	var console bytes.Buffer
	log := slog.New(slog.NewTextHandler(&console, &slog.HandlerOptions{Level: slog.LevelInfo}))
	d := testDeps(store, newJobs(t))
	d.SetupToken, d.Log = "tok123", log
	f := &fixture{t: t, store: store, h: New(d)}
	const hint = "No accounts yet: open the one-time setup link printed on the server's console"
	rec := f.do("GET", "/", nil, nil)
	loc := rec.Header().Get("Location")
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(loc, "/login") {
		t.Fatalf("GET / signed out: %d to %q; want a redirect to /login", rec.Code, loc)
	}
	if rec = f.do("GET", loc, nil, nil); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), hint) {
		t.Errorf("sign-in page with no account: %d, hint shown %v", rec.Code, strings.Contains(rec.Body.String(), hint))
	}
	if rec = f.do("POST", "/login", nil, url.Values{"name": {"ada"}, "password": {"whatever it is"}}); !strings.Contains(rec.Body.String(), hint) {
		t.Errorf("a refused sign-in with no account: %d, no hint", rec.Code)
	}
	if rec = f.do("GET", "/static/app.css", nil, nil); rec.Code != http.StatusOK {
		t.Fatalf("app.css: %d", rec.Code)
	}
	if out := console.String(); strings.Contains(out, "path=/static/") || !strings.Contains(out, "path=/login") {
		t.Errorf("console at info level logs static files, or not the pages:\n%s", out)
	}
	if rec = f.do("POST", "/setup?token=tok123", nil, url.Values{"name": {"root"}, "password": {"long enough pw"}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("setup: %d", rec.Code)
	}
	if rec = f.do("GET", "/login", nil, nil); strings.Contains(rec.Body.String(), "No accounts yet") {
		t.Errorf("the sign-in page still says there is no account after setup")
	}
}
