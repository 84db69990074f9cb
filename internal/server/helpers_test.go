package server

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/browsertest"
	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/corpusrun"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/searchindex"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
	"github.com/dedupstudio/dedupstudio/web"
)

// The fixtures the tests of this package share: the real server over a fresh database
// file, and a headless Chromium tab with the few actions the browser tests need.

var testKDF = auth.Params{Memory: 8 * 1024, Time: 1, Threads: 1}

// startServer runs the real server (the same Run as the binary) on a free loopback port,
// over a fresh database file that, like a first start, gets the demo sample.
func startServer(t *testing.T) (base, setupLink string) {
	t.Helper()
	base, setupLink, _ = startServerStore(t)
	return base, setupLink
}

// startServerStore is startServer that also returns the store.
func startServerStore(t *testing.T) (base, setupLink string, store *db.DB) {
	t.Helper()
	store = openStore(t, "e2e.db")
	if err := LoadDemoIfEmpty(context.Background(), store, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	base, setupLink = serveStore(t, store, Config{})
	if setupLink == "" {
		t.Fatal("a server without users printed no setup link")
	}
	return base, setupLink, store
}

// openStore opens a fresh database file, closed when the test ends.
func openStore(t *testing.T, name string) *db.DB {
	t.Helper()
	store, err := db.Open(context.Background(), filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// serveStore runs Run over store with cfg's other settings on a free loopback port until
// the test ends. Then, as the binary does, it waits for Run, stops the background jobs
// and only after that lets the store close (its cleanup was registered first).
func serveStore(t *testing.T, store *db.DB, cfg Config) (base, setupLink string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	reg := jobs.NewRegistry(ctx)
	cfg = withApp(t, store, reg, testKDF, cfg)
	cfg.Addr = "127.0.0.1:0"
	ready := make(chan [2]string, 1)
	cfg.Ready = func(u, setup string) { ready <- [2]string{u, setup} }
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		stop, cancelStop := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancelStop()
		if err := reg.Shutdown(stop); err != nil {
			t.Errorf("jobs: %v", err)
		}
	})
	select {
	case u := <-ready:
		return u[0], u[1]
	case err := <-done:
		t.Fatalf("server did not start: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("server did not start in 10s")
	}
	return "", ""
}

// withApp returns cfg with the application over store as its handler, wired as
// cmd/server's serveUntil wires it (Run's callers build the handler: this package does
// not import web): every service over store and reg, uploads next to the database
// file, a setup link when the database has no users, and kdf's password hashing.
func withApp(t *testing.T, store *db.DB, reg *jobs.Registry, kdf auth.Params, cfg Config) Config {
	t.Helper()
	sigs := sigcache.New(store)
	d := web.Deps{Log: cfg.Log, Version: "test", Store: store, Jobs: reg, KDF: kdf, UploadDir: UploadDir(store.Path()),
		Signatures: sigs, Sweeps: sweeprun.New(store, sigs, reg), Tally: campaign.NewTally(store),
		SearchIndexes: searchindex.New(store, cfg.Log), CorpusRuns: corpusrun.New(store, reg, corpusrun.Config{Log: cfg.Log})}
	n, err := store.CountUsers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		d.SetupToken, _ = auth.NewToken()
		cfg.SetupPath = "/setup?token=" + d.SetupToken
	}
	cfg.Handler, cfg.UploadDir = web.New(d), d.UploadDir
	return cfg
}

// createAccount fills the setup or invite form the way a person does and waits until
// the new user is signed in.
func (p page) createAccount(link, name, password string) {
	p.t.Helper()
	browsertest.SignIn(p.t, p.ctx, link, name, password)
}

// browser returns a Chromium tab (internal/browsertest).
func browser(t *testing.T) context.Context {
	t.Helper()
	return browsertest.New(t, browsertest.Options{Width: 1280, Height: 1000, Timeout: 60 * time.Second})
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
	browsertest.Do(p.t, p.ctx, steps...)
}

// waitFor polls a JavaScript condition for up to 20 s (browsertest.WaitFor).
func (p page) waitFor(cond string) {
	p.t.Helper()
	browsertest.WaitFor(p.t, p.ctx, cond, 20*time.Second)
}

// clickReady clicks the element sel once it stands in a page that has finished loading,
// finding and clicking it in one step: chromedp.Click finds the node, then clicks it, and
// a page that re-renders in between (a redirect's target still settling) leaves it a node
// that no longer exists ("Could not find node with given id", seen under load).
func (p page) clickReady(sel string) {
	p.t.Helper()
	p.waitFor(`(() => { const e = document.readyState === "complete" && document.querySelector(` + strconv.Quote(sel) + `); if (!e) return false; e.click(); return true })()`)
}

func (p page) screenshot(name string) { browsertest.Screenshot(p.ctx, name) }

func (p page) login(base, name, password string) {
	p.t.Helper()
	browsertest.SignIn(p.t, p.ctx, base+"/login", name, password)
}

// onPair waits until the page shows pair id and has run its scripts.
func (p page) onPair(id string) {
	p.t.Helper()
	p.waitFor(`document.querySelector('[data-testid="pair"]')?.dataset.pair === "` + id + `" && document.readyState === "complete"`)
}

func (p page) pairID() string {
	p.t.Helper()
	p.waitFor(`!!document.querySelector('[data-testid="pair"]') && document.readyState === "complete"`)
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="pair"]').dataset.pair`))
	if err != nil {
		p.t.Fatal(err)
	}
	return v
}

// press sends keys to the page body (not a form field), as a person at the keyboard.
func (p page) press(keys ...string) {
	p.t.Helper()
	for _, k := range keys {
		p.do(chromedp.KeyEvent(k))
	}
}

func (p page) noXSS() {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`String(window.__xss) + "|" +
		document.querySelectorAll('.pane img, .pane script, .pane iframe, .pane svg, .pane a[href^="javascript"]').length`))
	if err != nil {
		p.t.Fatal(err)
	}
	if v != "undefined|0" {
		p.t.Errorf("hostile document text became live markup: %s", v)
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
