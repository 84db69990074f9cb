package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Issue 27, labeling as Prodigy's users expect it: the guidelines open by a button a
// mouse or a phone can press and by ?, at their top (they opened scrolled to the bottom,
// their Close button focused); the footer's ? is a button too; and undo brings the
// answer it withdrew back into the form.
func TestGuidelinesAndUndoInBrowser(t *testing.T) {
	f := newFixture(t, 1<<20)
	f.withDemo()
	f.signIn("annotator")
	p, base := f.browse(1280, 700, "annotator")
	p.do(chromedp.Navigate(base + "/campaigns/1/next"))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="label-form"]')`)
	pair := evalJS[string](p, `document.querySelector('[data-testid="pair"]').dataset.pair`)

	atTop := func(how string) {
		t.Helper()
		p.waitFor(`document.getElementById("guidelines").open`)
		if got := evalJS[float64](p, `document.getElementById("guidelines").scrollTop`); got != 0 {
			t.Errorf("guidelines opened %s: scrolled %v px down; want the top", how, got)
		}
		if got := evalJS[string](p, inViewportJS(`#guidelines-title`)); got != "" {
			t.Errorf("guidelines opened %s: the title is off screen: %s", how, got)
		}
		p.do(chromedp.Click(`[data-testid="guidelines-close"]`))
		p.waitFor(`!document.getElementById("guidelines").open`)
	}
	p.do(chromedp.Click(`[data-testid="open-guidelines"]`))
	atTop("by its button")
	p.press("?")
	atTop("by ?")
	p.do(chromedp.Click(`[data-testid="open-help"]`))
	p.waitFor(`document.getElementById("help").open`)
	p.do(chromedp.Evaluate[chromedp.Void](`document.getElementById("help").close()`))

	// Label it (category 3, not a duplicate, a note), then undo: the form comes back
	// filled in with that answer.
	p.press("3")
	p.do(chromedp.Click(`[data-testid="dup-no"]`), chromedp.SendKeys(`[data-testid="note"]`, "a changed year"))
	cat := evalJS[string](p, `document.querySelector('input[name="category"]:checked').value`)
	p.do(chromedp.Click(`[data-testid="submit"]`))
	p.waitFor(`document.readyState === "complete" && document.querySelector('[data-testid="pair"]')?.dataset.pair !== ` + jsString(pair))
	p.do(chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	p.waitFor(`document.readyState === "complete" && document.querySelector('[data-testid="pair"]')?.dataset.pair === ` + jsString(pair))
	got := evalJS[[]string](p, `[document.querySelector('input[name="category"]:checked')?.value ?? "", document.querySelector('input[name="duplicate"]:checked')?.value ?? "", document.querySelector('[data-testid="note"]').value, document.querySelector('[data-testid="notice"]')?.innerText ?? ""]`)
	if got[0] != cat || got[1] != "no" || got[2] != "a changed year" {
		t.Errorf("after undo the form holds category %q, duplicate %q, note %q; want %q, no, the note", got[0], got[1], got[2], cat)
	}
	if !strings.Contains(got[3], fmt.Sprintf("Undid: pair %s", pair)) || !strings.Contains(got[3], "filled in below") {
		t.Errorf("after undo the notice says %q", got[3])
	}
}
