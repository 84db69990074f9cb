package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// The redirects a sign-in may follow, as the browser reads the Location: those that stay
// on this site are kept, every other one is "/".
func TestSafeNext(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ next, want string }{
		{"/campaigns/1?msg=hi#top", "/campaigns/1?msg=hi#top"},
		{"/audit", "/audit"},
		{"/%2F%2Fevil.example", "/%2F%2Fevil.example"}, // an escaped slash is a path character
		{"", "/"},
		{"audit", "/"},
		{"//evil.example/", "/"},
		{"/\\evil.example", "/"},
		{"/\t/evil.example", "/"}, // /login?next=/%09/evil: browsers drop the tab
		{"/\n/evil.example", "/"},
		{"/\r\n/evil.example", "/"},
		{"\t//evil.example", "/"},
		{"/\x00", "/"},
		{"/\x7f", "/"},
		{"https://evil.example/", "/"},
		{"javascript:alert(1)", "/"},
		{"/%zz", "/"},
		{"/" + strings.Repeat("a", maxNext), "/"},
	} {
		t.Run(fmt.Sprintf("%.40q", tc.next), func(t *testing.T) {
			if got := safeNext(tc.next); got != tc.want {
				t.Errorf("safeNext(%q) = %q; want %q", tc.next, got, tc.want)
			}
		})
	}
}

// The reported attack, end to end: a signed-in user following /login?next=/%09/evil
// and a sign-in posting it are sent to this site's start page.
func TestLoginRedirectStaysOnSite(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	for _, next := range []string{"/%09/evil.example", "/%5Cevil.example", "%2F%2Fevil.example", "/%0A/evil.example"} {
		t.Run(next, func(t *testing.T) {
			res, _ := get(t, f.h, "/login?next="+next, f.admin)
			if loc := res.Header.Get("Location"); loc != "/" {
				t.Errorf("GET /login?next=%s signed in: Location %q; want /", next, loc)
			}
			dec, _ := url.QueryUnescape(next)
			rec := f.do("POST", "/login", nil, url.Values{"name": {"admin"}, "password": {"admin-password"}, "next": {dec}})
			if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || loc != "/" {
				t.Errorf("POST /login next=%q: %d Location %q; want 303 to /", dec, rec.Code, loc)
			}
		})
	}
}

// browserResolve resolves a Location header the way a browser's URL parser does for
// the characters that matter here: tabs and line breaks are removed, a backslash is a
// slash.
func browserResolve(base *url.URL, loc string) (*url.URL, error) {
	loc = strings.NewReplacer("\t", "", "\n", "", "\r", "", "\\", "/").Replace(strings.Trim(loc, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "))
	ref, err := url.Parse(loc)
	if err != nil {
		return nil, err
	}
	return base.ResolveReference(ref), nil
}

// Whatever next is, the redirect that http.Redirect writes for it lands on this site.
func FuzzSafeNext(f *testing.F) {
	for _, s := range []string{"/", "/campaigns/1", "//evil.example", "/\t/evil.example", "/\\evil.example", "https://evil.example",
		"/%2F%2Fevil", "/..//evil.example", "/./\\/evil", " //evil.example", "/\u3000/evil", "/?next=//evil", "/#//evil", "\x00//evil"} {
		f.Add(s)
	}
	base, _ := url.Parse("https://dedup.example/login")
	f.Fuzz(func(t *testing.T, next string) {
		got := safeNext(next)
		if got != "/" && got != next {
			t.Fatalf("safeNext(%q) = %q: neither the input nor /", next, got)
		}
		req := httptest.NewRequest(http.MethodPost, "/login", nil)
		rec := httptest.NewRecorder()
		http.Redirect(rec, req, got, http.StatusSeeOther)
		loc := rec.Header().Get("Location")
		u, err := browserResolve(base, loc)
		if err != nil {
			t.Fatalf("safeNext(%q) = %q: Location %q does not parse: %v", next, got, loc, err)
		}
		if u.Scheme != "https" || u.Host != "dedup.example" || u.User != nil {
			t.Fatalf("safeNext(%q) = %q: Location %q leads to %s", next, got, loc, u)
		}
	})
}
