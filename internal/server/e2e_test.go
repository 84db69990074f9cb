package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserImport checks the first start and the import page as a person meets them:
// the demo sample on the start page, a refused upload that lists every bad record with
// its line and field, then a good CSV that lands as a new dataset.
func TestBrowserImport(t *testing.T) {
	base, setup := startServer(t)
	p := page{t, browser(t)}
	p.createAccount(setup, "ada", "a long enough password")
	p.do(chromedp.Navigate(base + "/"))
	p.waitFor(`!!document.querySelector('[data-testid="demo-note"]')`)
	if docs := p.text(`[data-testid="dataset-demo"] [data-testid="dataset-docs"]`); docs != "2,136" {
		t.Errorf("demo dataset shows %s documents; want 2136", docs)
	}
	cats := p.text(`[data-testid="dataset-demo"] [data-testid="counts-categories"]`)
	for _, c := range []string{"exact", "format", "minor", "boilerplate", "partial", "translation", "different"} {
		if !strings.Contains(cats, c) {
			t.Errorf("label counts lack category %s: %q", c, cats)
		}
	}
	p.screenshot("home-demo")

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"id":"a","text":"fine"}`+"\n"+`{"id":"b"}`+"\n"+`{"id":"c","text":"bad `+"\xff"+`"}`+"\n"), 0o644)
	p.do(chromedp.Navigate(base+"/datasets/new"), chromedp.SetUploadFiles(`[data-testid="upload-file"]`, []string{bad}),
		chromedp.Click(`[data-testid="upload-submit"]`))
	p.waitFor(`document.querySelector('[data-testid="import-status"]')?.dataset.state === "failed"`)
	rejects := p.text(`[data-testid="import-rejects"]`)
	for _, want := range []string{"bad.jsonl:2", "text", "missing", "bad.jsonl:3", "invalid UTF-8"} {
		if !strings.Contains(rejects, want) {
			t.Errorf("rejects table lacks %q:\n%s", want, rejects)
		}
	}
	if msg := p.text(`[data-testid="import-failed"]`); !strings.Contains(msg, "nothing was imported") {
		t.Errorf("failure message %q does not say nothing was imported", msg)
	}
	p.screenshot("import-refused")

	good := filepath.Join(dir, "mysample.csv")
	os.WriteFile(good, []byte("doc_id,body,lang\n1,hello world,en\n2,\"hallo, welt\",de\n"), 0o644)
	p.do(chromedp.Navigate(base+"/datasets/new"), chromedp.SetUploadFiles(`[data-testid="upload-file"]`, []string{good}),
		chromedp.SetValue(`input[name="id_field"]`, "doc_id"), chromedp.SetValue(`input[name="text_field"]`, "body"),
		chromedp.Click(`[data-testid="upload-submit"]`))
	p.waitFor(`document.querySelector('[data-testid="import-status"]')?.dataset.state === "done"`)
	p.do(chromedp.Navigate(base + "/"))
	p.waitFor(`!!document.querySelector('[data-testid="dataset-mysample"]')`)
	if docs := p.text(`[data-testid="dataset-mysample"] [data-testid="dataset-docs"]`); docs != "2" {
		t.Errorf("new dataset shows %s documents; want 2", docs)
	}
}

// TestBrowserShapeCalculator loads the start page in headless Chromium, uses the shape
// calculator by keyboard the way a person would, and checks the chart was served.
func TestBrowserShapeCalculator(t *testing.T) {
	base, setup := startServer(t)
	p := page{t, browser(t)}
	ctx := p.ctx
	p.createAccount(setup, "ada", "a long enough password")
	text, do, waitFor := p.text, p.do, p.waitFor
	do(
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`[data-testid="shape-result"]`),
		// "/" focuses the threshold field; type 0.9 and submit with Enter.
		chromedp.KeyEvent("/"),
		chromedp.KeyEvent("0.9"),
		chromedp.KeyEvent(kb.Enter),
	)
	waitFor(`document.location.search.includes("threshold=0.9") && document.readyState === "complete"`)
	do(chromedp.WaitVisible(`[data-testid="shape-bands"]`))
	bands, rows, approx := text(`[data-testid="shape-bands"]`), text(`[data-testid="shape-rows"]`), text(`[data-testid="shape-approx"]`)
	chartLoaded, err := chromedp.Run(ctx, chromedp.Poll[bool](
		`(() => { const i = document.querySelector('[data-testid="shape-chart"]'); return i.complete && i.naturalWidth > 0; })()`,
		chromedp.WithPollingTimeout(10*time.Second)))
	if err != nil {
		t.Fatalf("chart: %v", err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	// "?" opens the shortcut help.
	do(chromedp.Click(`h1`), chromedp.KeyEvent("?"))
	helpOpen, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("help").open`))
	if err != nil {
		t.Fatal(err)
	}
	// A bad threshold names the field.
	do(chromedp.Navigate(base + "/?threshold=2"))
	errText := text(`[data-testid="shape-error"]`)
	if bands != "5" || rows != "25" {
		t.Errorf("threshold 0.9, 128 hashes: page shows %s x %s; want 5 x 25", bands, rows)
	}
	if approx != "0.938" {
		t.Errorf("threshold approximation shown %q; want 0.938", approx)
	}
	if !chartLoaded {
		t.Error("S-curve chart did not load")
	}
	if !helpOpen {
		t.Error("? did not open the keyboard help")
	}
	if !strings.Contains(errText, "threshold") {
		t.Errorf("error for threshold=2 is %q; want it to name the threshold field", errText)
	}
	if dir := os.Getenv("DEDUP_SCREENSHOTS"); dir != "" {
		os.WriteFile(filepath.Join(dir, "home.png"), shot, 0o644)
	}
}

// TestBrowserTeam: the first admin invites an annotator, who joins through the link in a
// browser of their own, sees only what annotators may, and is signed out at once when
// the admin disables the account. Then the admin signs out and back in with a password.
func TestBrowserTeam(t *testing.T) {
	base, setup := startServer(t)
	admin := page{t, browser(t)}
	admin.createAccount(setup, "ada", "a long enough password")
	admin.do(chromedp.Navigate(base+"/admin/users"),
		chromedp.WaitVisible(`[data-testid="invite-form"]`),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="invite-role"]').value = "annotator"`),
		chromedp.Click(`[data-testid="invite-submit"]`))
	// The link shows once, on the Team page the form redirects to (a GET).
	admin.waitFor(`!!document.querySelector('[data-testid="notice-secret"]')`)
	link := admin.text(`[data-testid="notice-secret"]`)
	if !strings.HasPrefix(link, base+"/invite/") {
		t.Fatalf("invite link %q", link)
	}
	admin.screenshot("team-invite")

	ann := page{t, browser(t)}
	ann.createAccount(link, "bo", "another long password")
	if role := ann.text(`header .who .muted`); role != "(annotator)" {
		t.Errorf("new user's role shows %q", role)
	}
	if n, _ := chromedp.Run(ann.ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="nav-team"]').length`)); n != 0 {
		t.Error("an annotator sees the Team link")
	}
	ann.do(chromedp.Navigate(base + "/admin/users"))
	if status := ann.text(`[data-testid="error-status"]`); status != "403" {
		t.Errorf("annotator on /admin/users: %s; want 403", status)
	}
	// The invite link works once.
	ann.do(chromedp.Navigate(link))
	if status := ann.text(`[data-testid="error-status"]`); status != "404" {
		t.Errorf("used invite link: %s; want 404", status)
	}

	// Disabling asks first, on a page of its own.
	admin.do(chromedp.Navigate(base+"/admin/users"), chromedp.Click(`[data-testid="disable-bo"]`))
	admin.waitFor(`!!document.querySelector('[data-testid="confirm-disable-submit"]')`)
	admin.do(chromedp.Click(`[data-testid="confirm-disable-submit"]`))
	admin.waitFor(`document.querySelector('[data-testid="user-bo"]')?.innerText.includes("disabled")`)
	ann.do(chromedp.Navigate(base + "/"))
	ann.waitFor(`document.location.pathname === "/login"`)

	admin.do(chromedp.Click(`[data-testid="logout"]`))
	admin.waitFor(`document.location.pathname === "/login"`)
	admin.do(chromedp.SendKeys(`[data-testid="signin-name"]`, "ada"),
		chromedp.SendKeys(`[data-testid="signin-password"]`, "wrong password!"),
		chromedp.Click(`[data-testid="signin-submit"]`))
	admin.waitFor(`!!document.querySelector('[data-testid="signin-error"]')`)
	// The page keeps the name and clears the password.
	admin.do(chromedp.SendKeys(`[data-testid="signin-password"]`, "a long enough password"),
		chromedp.Click(`[data-testid="signin-submit"]`))
	admin.waitFor(`document.querySelector('[data-testid="whoami"]')?.innerText === "ada"`)
}
