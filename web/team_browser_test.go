package web

import (
	"fmt"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/browsertest"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// inViewportJS reports where the element sel lies when it is not wholly inside the
// window, "" when it is.
func inViewportJS(sel string) string {
	return `(() => { const el = document.querySelector(` + strconv.Quote(sel) + `); if (!el) return "missing";
		const r = el.getBoundingClientRect();
		return (r.top >= 0 && r.bottom <= window.innerHeight + 1 && r.left >= 0 && r.right <= window.innerWidth + 1 && r.width > 0) ? "" :
			"top=" + Math.round(r.top) + " bottom=" + Math.round(r.bottom) + " left=" + Math.round(r.left) + " right=" + Math.round(r.right) +
			" in a " + window.innerWidth + "x" + window.innerHeight + " window"; })()`
}

// A new API token, shown once, is on screen where the Team page lands after making it,
// at a phone's width and a desktop's; and at a phone's width every button of the Team
// page's tables (set role, disable, revoke an invite or a token) is on screen without
// scrolling sideways.
func TestTeamPageInBrowser(t *testing.T) {
	for _, size := range [][2]int{{390, 844}, {1280, 800}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			f := newFixture(t, 1<<20)
			f.signIn("reviewer")
			f.newSearchIndex(f.withManifest(searchParams(review.Estimate), true), "crawl stream with a long name")
			f.newAPIToken("an older pipeline")
			f.follow(f.do("POST", "/admin/invites", f.admin, url.Values{"role": {"annotator"}, "note": {"for the new labeler"}}), f.admin)
			for i := range 50 { // the reviewer's sign-ins from failing addresses are slowed: an Unlock button
				f.tryLogin("reviewer", "guess", fmt.Sprintf("198.18.0.%d", i/auth.DefaultLoginLimits.Pair.N))
			}
			srv := httptest.NewServer(f.h)
			t.Cleanup(srv.Close)
			p := tab{t, sweepBrowser(t, size[0], size[1])}
			p.do(chromedp.EmulateViewport(int64(size[0]), int64(size[1])))
			p.login(srv.URL, "admin")
			p.do(chromedp.Navigate(srv.URL + "/admin/users"))
			p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="api-token-form"]')`)
			p.do(chromedp.SendKeys(`[data-testid="api-token-form"] input[name="token_name"]`, "nightly crawl"),
				chromedp.Click(`[data-testid="api-token-submit"]`))
			p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="new-api-token-value"]')`)
			p.screenshot(fmt.Sprintf("team-new-token-%d", size[0]))
			if got := evalJS[string](p, inViewportJS(`[data-testid="new-api-token-value"]`)); got != "" {
				t.Errorf("the new token is off screen after making it: %s", got)
			}
			if got := evalJS[string](p, `document.querySelector('[data-testid="new-api-token"]').innerText`); !strings.Contains(got, "shown once") || !strings.Contains(got, "dsk_") {
				t.Errorf("the new token's box says %q; want the token and that it is shown once", got)
			}
			if !evalJS[bool](p, `!document.querySelector('[data-testid="copy-api-token"]').hidden`) {
				t.Errorf("no Copy button next to the new token")
			}
			if size[0] > 700 {
				return
			}
			if got := evalJS[string](p, browsertest.OverflowJS); got != "" {
				t.Errorf("Team page at 390 px: %s", got)
			}
			var off []string
			for _, sel := range []string{`[data-testid="user-reviewer"] button`, `[data-testid="disable-reviewer"]`, `[data-testid="revoke-invite"]`,
				`[data-testid="api-tokens"] [data-testid^="revoke-api-token-"]`, `[data-testid="search-indexes"] td[data-label="Endpoint"]`,
				`[data-testid="search-indexes"] td[data-label="Documents"]`} {
				js := `(() => { const el = document.querySelector(` + strconv.Quote(sel) + `); if (!el) return "missing";
					const r = el.getBoundingClientRect(); return (r.left >= 0 && r.right <= window.innerWidth + 1 && r.width > 0) ? "" : "left=" + Math.round(r.left) + " right=" + Math.round(r.right); })()`
				if got := evalJS[string](p, js); got != "" {
					off = append(off, sel+" "+got)
				}
			}
			if len(off) > 0 {
				t.Errorf("Team page at 390 px: off screen sideways: %s", strings.Join(off, "; "))
			}
			p.screenshot("team-unlock-390")
			// The Unlock button's word stays on one line (it broke as "Unlo / ck").
			if got := evalJS[string](p, `(() => { const b = document.querySelector('[data-testid="unlock-reviewer"]'); if (!b) return "missing";
				const r = document.createRange(); r.selectNodeContents(b); const lines = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
				return lines.size === 1 ? "" : lines.size + " lines, " + Math.round(b.getBoundingClientRect().width) + " px wide"; })()`); got != "" {
				t.Errorf("Team page at 390 px: the Unlock button's text wraps: %s", got)
			}
			// The buttons work there: revoking the older token from its card.
			p.do(chromedp.Click(`[data-testid="api-tokens"] tr:last-child [data-testid^="revoke-api-token-"]`))
			p.waitFor(`document.readyState === "complete" && /Revoked API token "an older pipeline"/.test(document.body.innerText)`)
		})
	}
}
