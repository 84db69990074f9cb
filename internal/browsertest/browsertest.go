// Package browsertest starts Debian's headless Chromium for the tests that check pages
// and charts the way a person sees them (chart, server, web). It is imported by test
// files only.
//
// Chromium is found at $CHROMIUM or as chromium, chromium-browser or google-chrome on the
// PATH. Without it a test skips, unless DEDUP_REQUIRE_BROWSER=1 (set by .ci/run) makes
// that a failure. The flags are the ones these machines need (see NOTES.md): as root
// Chromium wants --no-sandbox, and without the network flags it keeps trying to reach
// hosts this network refuses.
package browsertest

import (
	"context"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Options shape one browser.
type Options struct {
	Width, Height int           // the window; 1280 x 1000 when zero
	Timeout       time.Duration // for everything the test does in it; 90 s when zero
	// HideScrollbars keeps scrollbars out of screenshots; Viewport sets the page's
	// viewport to the window size too (for pixel checks at an exact size).
	HideScrollbars, Viewport bool
}

// New returns a chromedp context on a fresh headless Chromium with its own profile in
// t.TempDir(), closed when the test ends.
func New(t testing.TB, o Options) context.Context {
	t.Helper()
	path := os.Getenv("CHROMIUM")
	if path == "" {
		for _, p := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if found, err := exec.LookPath(p); err == nil {
				path = found
				break
			}
		}
	}
	if path == "" {
		if os.Getenv("DEDUP_REQUIRE_BROWSER") == "1" {
			t.Fatal("Chromium not found and DEDUP_REQUIRE_BROWSER=1: install Debian's chromium package")
		}
		t.Skip("SKIPPED: browser test needs Chromium (apt-get install chromium); .ci/run installs it and makes this test mandatory")
	}
	if o.Width == 0 || o.Height == 0 {
		o.Width, o.Height = 1280, 1000
	}
	if o.Timeout == 0 {
		o.Timeout = 90 * time.Second
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(o.Width, o.Height),
	}
	if o.HideScrollbars {
		opts = append(opts, chromedp.Flag("hide-scrollbars", true))
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, o.Timeout)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	if o.Viewport {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(o.Width), int64(o.Height))); err != nil {
			t.Fatal(err)
		}
	}
	return ctx
}

// Do runs steps in ctx's tab; an error fails the test.
func Do(t testing.TB, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// WaitFor polls the JavaScript condition cond from Go until it holds, riding out page
// navigations (a wait inside the page would end with it); after within it fails the
// test, saying where the tab is and the start of what it shows.
func WaitFor(t testing.TB, ctx context.Context, cond string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond)); err == nil && ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	loc, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.location.href + " | " + document.body.innerText.slice(0, 400)`))
	t.Fatalf("timed out waiting for %s (page: %s)", cond, loc)
}

// Screenshot saves the whole page as name.png in $DEDUP_SCREENSHOTS, when that is set,
// for a person to look at; it never fails the test.
func Screenshot(ctx context.Context, name string) {
	if dir := os.Getenv("DEDUP_SCREENSHOTS"); dir != "" {
		if shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
			os.WriteFile(filepath.Join(dir, name+".png"), shot, 0o644)
		}
	}
}

// SignIn fills the name-and-password form at url (the sign-in page, or a setup or invite
// link, which create the account) the way a person does, and waits until the page names
// the account signed in.
func SignIn(t testing.TB, ctx context.Context, url, name, password string) {
	t.Helper()
	Do(t, ctx, chromedp.Navigate(url),
		chromedp.WaitVisible(`[data-testid="signin-form"]`),
		chromedp.SendKeys(`[data-testid="signin-name"]`, name),
		chromedp.SendKeys(`[data-testid="signin-password"]`, password),
		chromedp.Click(`[data-testid="signin-submit"]`))
	WaitFor(t, ctx, `document.querySelector('[data-testid="whoami"]')?.innerText === `+strconv.Quote(name), 30*time.Second)
}

// OverflowJS is JavaScript that reports what makes the page wider than the window, ""
// when nothing does: the document may not scroll sideways, and an element that scrolls
// sideways itself must be a marked scroll container (data-scroll, with an aria-label
// that says it scrolls). Evaluate it at a phone's width.
const OverflowJS = `(() => {
	const w = window.innerWidth, out = [];
	if (document.documentElement.scrollWidth > w) {
		out.push("document " + document.documentElement.scrollWidth + "px wide in a " + w + "px window");
		for (const el of document.body.querySelectorAll("*")) {
			const r = el.getBoundingClientRect();
			if (r.right > w + 1 && !el.closest("[data-scroll]") && getComputedStyle(el).position !== "fixed" && out.length < 8) {
				out.push(el.tagName.toLowerCase() + (el.className ? "." + el.className : "") + " right=" + Math.round(r.right));
			}
		}
	}
	for (const el of document.body.querySelectorAll("*")) {
		const ox = getComputedStyle(el).overflowX;
		if ((ox === "auto" || ox === "scroll") && el.scrollWidth > el.clientWidth + 1 && !(el.hasAttribute("data-scroll") && el.getAttribute("aria-label"))) {
			out.push("unmarked sideways scroller " + el.tagName.toLowerCase() + "." + el.className);
		}
	}
	return out.join("; ");
})()`

// DarkShare is the share of img's pixels whose mean channel is below level (of 0xffff):
// a chart on white has few, one whose fills all fell back to black has many.
func DarkShare(img image.Image, level uint32) float64 {
	b := img.Bounds()
	dark := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if (r+g+bl)/3 < level {
				dark++
			}
		}
	}
	return float64(dark) / float64(b.Dx()*b.Dy())
}
