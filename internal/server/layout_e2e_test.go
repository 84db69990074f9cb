package server

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/dedupstudio/dedupstudio/internal/browsertest"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
)

// TestBrowserNarrowAndWide is issue 8 item 4. At 390 px (a phone) every page fits the
// window: nothing scrolls sideways but a table inside a container that says it scrolls;
// the header's name and Sign out stay in the window. At 1,366 px the pair page's two
// documents use the width.
func TestBrowserNarrowAndWide(t *testing.T) {
	base, setup, store := startServerStore(t)
	anon := page{t, browser(t)}
	admin := page{t, browser(t)}
	for _, p := range []page{anon, admin} {
		p.do(chromedp.EmulateViewport(390, 844))
	}
	fits := func(p page, path, ready string) {
		t.Helper()
		p.do(chromedp.Navigate(base + path))
		p.waitFor(`document.readyState === "complete" && !!document.querySelector(` + fmt.Sprintf("%q", ready) + `)`)
		got, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](browsertest.OverflowJS))
		if err != nil {
			t.Fatal(err)
		}
		if got != "" {
			t.Errorf("%s at 390 px: %s", path, got)
		}
		p.screenshot("narrow" + strings.NewReplacer("/", "-", "?", "-", "=", "-").Replace(path))
	}
	setupPath := strings.TrimPrefix(setup, base)
	fits(anon, setupPath, `[data-testid="signin-form"]`)
	admin.createAccount(setup, "ada lovelace-byron", "a long enough password")

	// The rest of what the pages need: a campaign with an empty queue, an invite, an
	// import of the browser's own.
	ctx := context.Background()
	r, _ := corpus.NewReader(strings.NewReader(`{"id":"x","text":"one two three"}`+"\n"), "tiny.jsonl", corpus.JSONL, corpus.Options{})
	rep, err := ingest.Documents(ctx, store, r, "tiny.jsonl", ingest.Options{Dataset: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	empty, err := store.EnsureCampaign(ctx, rep.Dataset.ID, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "phone.jsonl")
	os.WriteFile(file, []byte(`{"id":"p1","text":"typed on a phone"}`+"\n"+`{"id":"p2"}`+"\n"), 0o644)
	admin.do(chromedp.Navigate(base+"/datasets/new"), chromedp.SetUploadFiles(`[data-testid="upload-file"]`, []string{file}),
		chromedp.Click(`input[name="skip_bad"]`), chromedp.Click(`[data-testid="upload-submit"]`))
	admin.waitFor(`document.querySelector('[data-testid="import-status"]')?.dataset.state === "done"`)
	importPath, _ := chromedp.Run(admin.ctx, chromedp.Evaluate[string](`location.pathname`))
	admin.do(chromedp.Navigate(base+"/admin/users"), chromedp.WaitVisible(`[data-testid="invite-form"]`),
		chromedp.Click(`[data-testid="invite-submit"]`))
	admin.waitFor(`!!document.querySelector('[data-testid="notice-secret"]')`)
	invite := admin.text(`[data-testid="notice-secret"]`)

	fits(admin, "/", `[data-testid="data-overview"]`)
	fits(admin, "/campaigns/1", `[data-testid="coverage"]`)
	admin.do(chromedp.Navigate(base + "/campaigns/1/next"))
	pair := admin.pairID()
	fits(admin, "/campaigns/1/pairs/"+pair, `[data-testid="pair"]`)
	fits(admin, fmt.Sprintf("/campaigns/%d/next", empty.ID), `[data-testid="queue-empty"]`)
	fits(admin, "/datasets/new", `[data-testid="upload-form"]`)
	fits(admin, importPath, `[data-testid="import-status"]`)
	fits(admin, "/labels/new", `[data-testid="labels-form"]`)
	fits(admin, "/admin/users", `[data-testid="users-table"]`)
	fits(admin, "/admin/users/1/disable", `[data-testid="confirm-disable"]`)
	fits(admin, "/audit", `[data-testid="audit-table"]`)
	fits(anon, strings.TrimPrefix(invite, base), `[data-testid="signin-form"]`)
	fits(anon, "/login", `[data-testid="signin-form"]`)

	// The header's name and Sign out are inside the window.
	admin.do(chromedp.Navigate(base + "/"))
	admin.waitFor(`document.readyState === "complete"`)
	out, _ := chromedp.Run(admin.ctx, chromedp.Evaluate[string](`["whoami", "logout"].map(id => {
		const r = document.querySelector('[data-testid="' + id + '"]').getBoundingClientRect();
		return r.left >= 0 && r.right <= window.innerWidth ? "" : id + " at " + Math.round(r.left) + "-" + Math.round(r.right);
	}).join("")`))
	if out != "" {
		t.Errorf("header at 390 px: %s outside the window", out)
	}

	// At 1,366 px the two documents share the window's width.
	admin.do(chromedp.EmulateViewport(1366, 900), chromedp.Navigate(base+"/campaigns/1/pairs/"+pair))
	admin.onPair(pair)
	widths, err := chromedp.Run(admin.ctx, chromedp.Evaluate[[]float64](`["pane-left", "pane-right"].map(id => document.getElementById(id).getBoundingClientRect().width)`))
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range widths {
		if w < 450 {
			t.Errorf("at 1,366 px document column %d is %.0f px wide; want at least 450 (the window's width used)", i+1, w)
		}
	}
	admin.screenshot("wide-pair")
}

// TestBrowserChartOnItsOwn is issue 8 item 8: the S-curve opened directly (not in an
// <img>) rendered as a black box, its inline styles blocked by the page's policy. Served
// now under default-src 'none' with nothing to block, it paints a chart on white.
func TestBrowserChartOnItsOwn(t *testing.T) {
	base, setup := startServer(t)
	p := page{t, browser(t)}
	p.createAccount(setup, "ada", "a long enough password")
	p.do(chromedp.EmulateViewport(700, 500), chromedp.Navigate(base+"/shape.svg?bands=9&rows=13&threshold=0.8"))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector("svg path")`)
	fill, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`(() => {
		const paths = [...document.querySelectorAll("svg path, svg rect")];
		return paths.map(e => getComputedStyle(e).fill + "/" + getComputedStyle(e).stroke).join(" ");
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fill, "rgb(255, 255, 255)/") || !strings.Contains(fill, "/rgb(0, 114, 178)") {
		t.Errorf("the chart's background is not painted white, or its curve not blue: fill/stroke %.300s", fill)
	}
	raw, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("DEDUP_SCREENSHOTS"); dir != "" {
		os.WriteFile(filepath.Join(dir, "shape-svg.png"), raw, 0o644)
	}
	if d := browsertest.DarkShare(img, 0x8000); d > 0.1 {
		t.Errorf("/shape.svg opened on its own: %.0f%% of the pixels are dark; want a chart on white (under 10%%)", 100*d)
	}
}
