package server

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
)

// startServer runs the real server (the same Run as the binary) on a free loopback port,
// over a fresh database file that, like a first start, gets the demo sample.
func startServer(t *testing.T) (base, setupLink string) {
	t.Helper()
	base, setupLink, _ = startServerStore(t)
	return base, setupLink
}

func startServerStore(t *testing.T) (base, setupLink string, store *db.DB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var err error
	store, err = db.Open(ctx, filepath.Join(t.TempDir(), "e2e.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := LoadDemoIfEmpty(ctx, store, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	ready := make(chan [2]string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Addr: "127.0.0.1:0", Version: "test", Store: store, KDF: testKDF,
			Ready: func(u, setup string) { ready <- [2]string{u, setup} }})
	}()
	t.Cleanup(func() {
		defer store.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case u := <-ready:
		if u[1] == "" {
			t.Fatal("a server without users printed no setup link")
		}
		return u[0], u[1], store
	case err := <-done:
		t.Fatalf("server did not start: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("server did not start in 10s")
	}
	return "", "", nil
}

var testKDF = auth.Params{Memory: 8 * 1024, Time: 1, Threads: 1}

// createAccount fills the setup or invite form the way a person does and waits until
// the new user is signed in.
func (p page) createAccount(link, name, password string) {
	p.t.Helper()
	p.do(chromedp.Navigate(link),
		chromedp.WaitVisible(`[data-testid="signin-form"]`),
		chromedp.SendKeys(`[data-testid="signin-name"]`, name),
		chromedp.SendKeys(`[data-testid="signin-password"]`, password),
		chromedp.Click(`[data-testid="signin-submit"]`))
	p.waitFor(`document.querySelector('[data-testid="whoami"]')?.innerText === ` + strconv.Quote(name))
}

// browser returns a chromedp context on Debian's headless Chromium. Without Chromium the
// test skips, unless DEDUP_REQUIRE_BROWSER=1 (set by .ci/run) makes that a failure.
func browser(t *testing.T) context.Context {
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
		chromedp.WindowSize(1280, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return ctx
}

// page wraps a browser tab with the few actions the tests need.
type page struct {
	t   *testing.T
	ctx context.Context
}

func (p page) text(sel string) string {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Text(sel))
	if err != nil {
		p.t.Fatalf("text of %s: %v", sel, err)
	}
	return v
}

func (p page) do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, steps...); err != nil {
		p.t.Fatal(err)
	}
}

// waitFor polls a JavaScript condition from Go, riding out page navigations.
func (p page) waitFor(cond string) {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if ok, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](cond)); err == nil && ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	loc, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.location.href + " | " + document.body.innerText.slice(0, 300)`))
	p.t.Fatalf("timed out waiting for %s (page: %s)", cond, loc)
}

func (p page) screenshot(name string) {
	if dir := os.Getenv("DEDUP_SCREENSHOTS"); dir != "" {
		shot, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
		if err == nil {
			os.WriteFile(filepath.Join(dir, name+".png"), shot, 0o644)
		}
	}
}

// TestBrowserImport checks the first start and the import page as a person meets them:
// the demo sample on the start page, a refused upload that lists every bad record with
// its line and field, then a good CSV that lands as a new dataset.
func TestBrowserImport(t *testing.T) {
	base, setup := startServer(t)
	p := page{t, browser(t)}
	p.createAccount(setup, "ada", "a long enough password")
	p.do(chromedp.Navigate(base + "/"))
	p.waitFor(`!!document.querySelector('[data-testid="demo-note"]')`)
	if docs := p.text(`[data-testid="dataset-demo"] [data-testid="dataset-docs"]`); docs != "2136" {
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
	ctx := browser(t)
	page{t, ctx}.createAccount(setup, "ada", "a long enough password")
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return v
	}
	do := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatal(err)
		}
	}
	// waitFor polls a JavaScript condition from Go, riding out page navigations.
	waitFor := func(cond string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond)); err == nil && ok {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		loc, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.location.href + " | " + (document.activeElement && document.activeElement.outerHTML.slice(0, 200))`))
		t.Fatalf("timed out waiting for %s (page: %s)", cond, loc)
	}
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
	admin.waitFor(`!!document.querySelector('[data-testid="invite-link"]')`)
	link := admin.text(`[data-testid="invite-link"]`)
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

	admin.do(chromedp.Navigate(base+"/admin/users"), chromedp.Click(`[data-testid="disable-bo"]`))
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
