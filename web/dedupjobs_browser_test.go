package web

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/dedupstudio/dedupstudio/internal/browsertest"
)

// A whole-corpus run in headless Chromium, the way a person starts one: from the
// manifest's page to the form, the corpus chosen in the select, the run's page reloading
// itself until the run is done, then the manifest its removals became.
func TestDedupJobInBrowser(t *testing.T) {
	f := newFixture(t, 8<<20)
	run := f.withRun(chainRun)
	f.corpusFile("chain.jsonl", chainDocs(t))
	p, base := f.browse(1280, 1000, "reviewer")
	p.do(chromedp.Navigate(base+"/manifests/"+itoa64(run.ID)), chromedp.WaitVisible(`[data-testid="dedup-run"]`))
	p.do(chromedp.Click(`[data-testid="dedup-run"]`))
	p.waitFor(`!!document.querySelector('[data-testid="dedup-corpus"]')`)
	if got := evalJS[string](p, `document.querySelector('[data-testid="dedup-corpus"]').value`); got != "chain.jsonl" {
		t.Errorf("corpus select holds %q; want chain.jsonl", got)
	}
	p.screenshot("dedup-form")
	p.do(chromedp.Click(`[data-testid="dedup-start"]`))
	// The run's page reloads itself until the run and its import are done.
	p.waitFor(`!!document.querySelector('[data-testid="dedup-manifest"]')`)
	done := evalJS[string](p, `document.querySelector('[data-testid="dedup-done"]').innerText`)
	if !strings.Contains(done, "documents proposed for removal") {
		t.Errorf("run page says %q", done)
	}
	if n := evalJS[int](p, `document.querySelectorAll('[data-testid="dedup-files"] a').length`); n < 4 {
		t.Errorf("run page offers %d files; want summary.json, removals.csv and the rest", n)
	}
	p.screenshot("dedup-done")
	p.do(chromedp.Click(`[data-testid="dedup-manifest"]`))
	p.waitFor(`/^\/manifests\/\d+$/.test(location.pathname) && !!document.querySelector('[data-testid="imported-from"]')`)
}

// At a phone's width the whole-corpus run pages (the form, a finished run's page and
// the list of runs) do not run off the side.
func TestDedupJobPagesAt390(t *testing.T) {
	f := newFixture(t, 8<<20)
	run := f.withRun(chainRun)
	f.corpusFile("chain.jsonl", chainDocs(t))
	p, base := f.browse(390, 844, "reviewer")
	p.do(chromedp.Navigate(base + "/manifests/" + itoa64(run.ID) + "/dedup-jobs/new"))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="dedup-corpus"]')`)
	if got := evalJS[string](p, browsertest.OverflowJS); got != "" {
		t.Errorf("the run form at 390 px: %s", got)
	}
	p.do(chromedp.Click(`[data-testid="dedup-start"]`))
	p.waitFor(`!!document.querySelector('[data-testid="dedup-manifest"]')`)
	p.screenshot("dedup-done-390")
	if got := evalJS[string](p, browsertest.OverflowJS); got != "" {
		t.Errorf("a finished run's page at 390 px: %s", got)
	}
	p.do(chromedp.Navigate(base + "/dedup-jobs"))
	p.waitFor(`document.readyState === "complete"`)
	if got := evalJS[string](p, browsertest.OverflowJS); got != "" {
		t.Errorf("the list of runs at 390 px: %s", got)
	}
}

// At a phone's width the list of whole-corpus runs with a sweep result to run from (its
// form: sweep, configuration, threshold, button) does not run off the side.
func TestDedupJobsFromSweepFormAt390(t *testing.T) {
	f := newFixture(t, 8<<20)
	f.signIn("reviewer")
	cid := f.withSweepCorpus(newSweepCorpus(3))
	f.startSweep(cid, smallGridForm("phone"))
	p, base := f.browse(390, 844, "reviewer")
	p.do(chromedp.Navigate(base + "/dedup-jobs"))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="dedup-from-sweep"]')`)
	p.screenshot("dedup-jobs-from-sweep-390")
	if got := evalJS[string](p, browsertest.OverflowJS); got != "" {
		t.Errorf("the list of runs with its sweep form at 390 px: %s", got)
	}
}
