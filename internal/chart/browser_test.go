package chart

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/dedupstudio/dedupstudio/internal/browsertest"
)

// browser returns a Chromium tab whose viewport is exactly w x h, scrollbars hidden, for
// pixel checks (internal/browsertest).
func browser(t *testing.T, w, h int) context.Context {
	t.Helper()
	return browsertest.New(t, browsertest.Options{Width: w, Height: h, HideScrollbars: true, Viewport: true})
}

// The policies the test serves charts under. pageCSP is the one web sends with every
// response today (web/middleware.go, securityHeaders); svgCSP is the strictest there is.
const (
	pageCSP = "default-src 'self'; script-src 'self' 'nonce-test'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
	svgCSP  = "default-src 'none'"
)

// TestBrowserChartsRenderUnderCSP is issue 8 item 8: gonum's SVG paints with style
// attributes, which a policy without 'unsafe-inline' in style-src blocks, so a chart
// opened on its own rendered as black shapes. It serves the same drawing through
// gonum's SVG canvas and through this package's, under the page's policy and under
// default-src 'none', and looks at the pixels Chromium paints: gonum's must come out
// mostly black (the check can fail), ours must not, must raise no CSP violation, and
// must match the PNG this package draws of the same figure. Then it inlines the SVG in
// an HTML page under the page's policy, checks the computed fill of a point, and
// hovers nothing but finds each point by its data-config hook, as the dashboard's
// script will.
func TestBrowserChartsRenderUnderCSP(t *testing.T) {
	const w, h = 480, 360
	ctx := browser(t, w, h)

	in := sampleTradeoff(30)
	fig, err := in.Figure()
	if err != nil {
		t.Fatal(err)
	}
	sz := Size{Width: w, Height: h, Scale: 1}
	ours, err := fig.SVG(sz)
	if err != nil {
		t.Fatal(err)
	}
	gc := vgsvg.New(vg.Length(w), vg.Length(h))
	if err := fig.render(gc, sz); err != nil {
		t.Fatal(err)
	}
	var gonum bytes.Buffer
	if _, err := gc.WriteTo(&gonum); err != nil {
		t.Fatal(err)
	}
	ourPNG, err := fig.PNG(sz)
	if err != nil {
		t.Fatal(err)
	}

	mux := http.NewServeMux()
	serve := func(path, ctype, csp string, body []byte) {
		mux.HandleFunc(path, func(rw http.ResponseWriter, _ *http.Request) {
			rw.Header().Set("Content-Type", ctype)
			rw.Header().Set("Content-Security-Policy", csp)
			rw.Header().Set("X-Content-Type-Options", "nosniff")
			rw.Write(body)
		})
	}
	serve("/ours-page-csp.svg", "image/svg+xml", pageCSP, ours)
	serve("/ours-none.svg", "image/svg+xml", svgCSP, ours)
	serve("/gonum-page-csp.svg", "image/svg+xml", pageCSP, gonum.Bytes())
	page := `<!doctype html><html><head><meta charset="utf-8"><title>chart</title></head><body>` +
		string(ours) + `</body></html>`
	serve("/page.html", "text/html; charset=utf-8", pageCSP, []byte(page))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	// watch starts listening to the browser's log; the function it returns waits
	// a moment for late entries and returns the CSP violations reported so far.
	watch := func() func() []string {
		msgs, stop := context.WithCancel(ctx)
		console := chromedp.Console(msgs)
		return func() []string {
			time.AfterFunc(500*time.Millisecond, stop)
			var out []string
			for m, err := range console {
				if err != nil {
					break
				}
				if strings.Contains(m.Text, "Content Security Policy") {
					out = append(out, m.Text)
				}
			}
			return out
		}
	}
	shot := func(path string) (image.Image, int) {
		t.Helper()
		violations := watch()
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+path)); err != nil {
			t.Fatalf("navigate %s: %v", path, err)
		}
		raw, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot %s: %v", path, err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("screenshot %s: %v", path, err)
		}
		if dir := os.Getenv("DEDUP_SCREENSHOTS"); dir != "" {
			os.WriteFile(dir+"/chart"+strings.ReplaceAll(path, "/", "-")+".png", raw, 0o644)
		}
		return img, len(violations())
	}

	gonumImg, gonumViolations := shot("/gonum-page-csp.svg")
	if d := browsertest.DarkShare(gonumImg, 0x3000); d < 0.3 || gonumViolations == 0 {
		t.Errorf("gonum's own SVG under the page policy: %.0f%% dark pixels, %d CSP violations; want it broken (>= 30%% dark, violations), or this test proves nothing",
			100*d, gonumViolations)
	}
	want, err := png.Decode(bytes.NewReader(ourPNG))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/ours-page-csp.svg", "/ours-none.svg"} {
		img, violations := shot(path)
		if violations != 0 {
			t.Errorf("%s: %d CSP violations; want 0", path, violations)
		}
		if d := browsertest.DarkShare(img, 0x3000); d > 0.05 {
			t.Errorf("%s: %.0f%% of the pixels are dark; want under 5%% (a chart on white)", path, 100*d)
		}
		// The browser's rendering of the SVG and vgimg's PNG of the same figure
		// differ only in anti-aliasing and glyph hinting. Tolerance: a mean
		// absolute difference of 4 levels out of 255 per channel (a wrong arc, a
		// flipped text or a missing fill each cost far more).
		diff := meanAbsDiff(img, want)
		if diff > 4 {
			t.Errorf("%s: differs from the PNG of the same figure by %.2f levels per channel on average; want <= 4", path, diff)
		}
		t.Logf("%s: %.1f%% dark pixels, %.2f levels per channel from the PNG", path, 100*browsertest.DarkShare(img, 0x3000), diff)
	}

	// Inline in a page under the page's policy, as the dashboard will show it.
	violations := watch()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/page.html")); err != nil {
		t.Fatal(err)
	}
	fill, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const mark = document.querySelector('[data-config="1"] path:nth-of-type(2)');
		return mark ? getComputedStyle(mark).fill : "no mark for configuration 1";
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if fill != "rgb(0, 114, 178)" && !strings.HasPrefix(fill, "rgba(0, 114, 178") {
		t.Errorf("computed fill of point 1's mark inline under the page policy = %q; want Okabe-Ito blue rgb(0, 114, 178)", fill)
	}
	ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('svg [data-config]')].map(g => g.dataset.config + "|" + g.querySelector('title').textContent.split("\n")[0])`))
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(in.Points) {
		t.Errorf("inline SVG has %d elements with data-config; want %d (one per configuration)", len(ids), len(in.Points))
	}
	for _, id := range ids {
		cfg, title, _ := strings.Cut(id, "|")
		var n int
		fmt.Sscan(cfg, &n)
		if n < 1 || n > len(in.Points) || !strings.HasPrefix(title, in.Points[n-1].Label) {
			t.Errorf("point %q has title %q; want it to start with %q", cfg, title, in.Points[max(0, min(n-1, len(in.Points)-1))].Label)
		}
	}
	// A click lands on the invisible target around a point, inside its hook.
	hit, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const g = document.querySelector('[data-config="3"]');
		const r = g.getBoundingClientRect();
		const el = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
		const hook = el && el.closest('[data-config]');
		return hook ? hook.dataset.config : "nothing";
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if hit != "3" {
		t.Errorf("element at the centre of configuration 3's mark belongs to %q; want 3", hit)
	}
	for _, v := range violations() {
		t.Errorf("inline chart under the page policy: %s", v)
	}
}

// meanAbsDiff is the mean absolute difference per colour channel, in levels of 255,
// over the area both images cover.
func meanAbsDiff(a, b image.Image) float64 {
	w := min(a.Bounds().Dx(), b.Bounds().Dx())
	h := min(a.Bounds().Dy(), b.Bounds().Dy())
	var sum float64
	for y := range h {
		for x := range w {
			r1, g1, b1, _ := a.At(a.Bounds().Min.X+x, a.Bounds().Min.Y+y).RGBA()
			r2, g2, b2, _ := b.At(b.Bounds().Min.X+x, b.Bounds().Min.Y+y).RGBA()
			sum += math.Abs(float64(r1)-float64(r2)) + math.Abs(float64(g1)-float64(g2)) + math.Abs(float64(b1)-float64(b2))
		}
	}
	return sum / float64(3*w*h) / 257
}
