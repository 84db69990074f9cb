package browsertest

import (
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

const tmpOverflowJS = `(() => {
	const w = window.innerWidth, out = [];
	if (document.documentElement.scrollWidth > w) {
		out.push("document " + document.documentElement.scrollWidth + "px wide in a " + w + "px window");
		for (const el of document.body.querySelectorAll("*")) {
			const r = el.getBoundingClientRect();
			if (r.right > w + 1 && !el.closest("[data-scroll]") && getComputedStyle(el).position !== "fixed" && out.length < 8) {
				out.push(el.tagName.toLowerCase() + (el.className ? "." + el.className : "") + (el.dataset.testid ? "[" + el.dataset.testid + "]" : "") + " right=" + Math.round(r.right));
			}
		}
	}
	for (const el of document.body.querySelectorAll("*")) {
		const ox = getComputedStyle(el).overflowX;
		if ((ox === "auto" || ox === "scroll") && el.scrollWidth > el.clientWidth + 1 && !(el.hasAttribute("data-scroll") && el.getAttribute("aria-label"))) {
			out.push("unmarked sideways scroller " + el.tagName.toLowerCase() + "." + el.className);
		}
	}
	// overlapping siblings among buttons, inputs, links in forms/rows
	const els = [...document.querySelectorAll("button, input:not([type=hidden]), select, a, label, h1, h2")].filter(e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== "hidden"; });
	let n = 0;
	for (let i = 0; i < els.length; i++) for (let j = i + 1; j < els.length; j++) {
		const a = els[i], b = els[j];
		if (a.contains(b) || b.contains(a)) continue;
		const r = a.getBoundingClientRect(), s = b.getBoundingClientRect();
		const ix = Math.min(r.right, s.right) - Math.max(r.left, s.left), iy = Math.min(r.bottom, s.bottom) - Math.max(r.top, s.top);
		if (ix > 2 && iy > 2 && n++ < 5) out.push("overlap " + a.tagName + "(" + (a.innerText||a.name||"").slice(0,30) + ") / " + b.tagName + "(" + (b.innerText||b.name||"").slice(0,30) + ")");
	}
	return out.join("; ");
})()`

func TestTmpNarrow(t *testing.T) {
	base := "http://127.0.0.1:18421"
	for _, who := range strings.Split(os.Getenv("WHO"), ",") {
		parts := strings.SplitN(who, "=", 2)
		ctx := New(t, Options{Width: 390, Height: 844, Viewport: true, Timeout: 300e9})
		SignIn(t, ctx, base+"/login", parts[0], parts[1])
		for _, p := range strings.Fields(os.Getenv("PAGES_" + parts[0])) {
			if err := chromedp.Do(ctx, chromedp.Navigate(base+p)); err != nil {
				t.Errorf("%s %s: %v", parts[0], p, err)
				continue
			}
			got, err := chromedp.Run(ctx, chromedp.Evaluate[string](tmpOverflowJS))
			if err != nil {
				t.Errorf("%s %s: %v", parts[0], p, err)
				continue
			}
			var shot []byte
			if sel := os.Getenv("SEL"); sel != "" {
				chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector(`+"`"+sel+"`"+`).scrollIntoView({block:"center"}), true)`))
				shot, _ = chromedp.Run(ctx, chromedp.CaptureScreenshot())
			} else {
				shot, _ = chromedp.Run(ctx, chromedp.FullScreenshot(100))
			}
			os.WriteFile("/tmp/rv21/shots/"+parts[0]+strings.NewReplacer("/", "_", "?", "_", "&", "_", "=", "_").Replace(p)+".png", shot, 0o644)
			if got != "" {
				t.Errorf("%s %s: %s", parts[0], p, got)
			}
		}
	}
}
