package web

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/dedupstudio/dedupstudio/internal/browsertest"
)

// The results upload in headless Chromium, the way a person uses it: on the manifests
// page, choose the dataset, the format and the configuration, attach a Milvus dump, set
// a small sample, submit; the progress page ends in the manifest, whose page says where
// it came from and links the sample, and the sample's clusters open from there.
func TestUploadResultsInBrowser(t *testing.T) {
	f := newFixture(t, 1<<20)
	run := f.withRun(chainRun)
	dump := filepath.Join(t.TempDir(), "dump.jsonl")
	if err := os.WriteFile(dump, []byte(`{"id": "B", "hits": [{"id": "A", "distance": 0.8125}]}
{"id": "C", "hits": [{"id": "A", "distance": 0.65625}]}
{"id": "=D2", "hits": [{"id": "D", "distance": 1.0}]}
{"id": "other1", "hits": [{"id": "other0", "distance": 0.3}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, base := f.browse(1280, 1000, "reviewer")
	p.do(chromedp.Navigate(base+"/manifests"), chromedp.WaitVisible(`[data-testid="results-form"]`),
		chromedp.SetValue(`[data-testid="results-dataset"]`, fmt.Sprint(run.DatasetID)),
		chromedp.SetValue(`[data-testid="results-format"]`, "milvus"),
		chromedp.SetValue(`[data-testid="results-config"]`, fmt.Sprint(run.ID)),
		chromedp.SetUploadFiles(`[data-testid="results-file"]`, []string{dump}),
		chromedp.SetValue(`[data-testid="results-sample"]`, "1"))
	p.screenshot("results-upload")
	p.do(chromedp.Click(`[data-testid="results-submit"]`))
	// The progress page reloads itself until the import is done.
	p.waitFor(`!!document.querySelector('[data-testid="run-manifest"]')`)
	p.do(chromedp.Click(`[data-testid="run-manifest"]`))
	p.waitFor(`!!document.querySelector('[data-testid="sample-summary"]')`)
	summary := evalJS[string](p, `document.querySelector('[data-testid="imported-from"]').innerText`)
	for _, w := range []string{"dump.jsonl (milvus)", "3 clusters, 4 removals", "a stratified sample of 1 of 3 clusters"} {
		if !strings.Contains(summary, w) {
			t.Errorf("imported-from section %q lacks %q", summary, w)
		}
	}
	p.screenshot("results-manifest")
	p.do(chromedp.Click(`[data-testid="review-sample"]`))
	p.waitFor(`document.querySelectorAll('[data-testid="in-sample"]').length === 1 && document.querySelector('[data-testid="filter-sample"]').checked`)
	p.do(chromedp.Click(`[data-testid="cluster-table"] a[data-testid^="cluster-"]`))
	p.waitFor(`/\/manifests\/\d+\/clusters\/\d+$/.test(location.pathname) && !!document.querySelector('[data-testid="cluster-stratum"]')`)
	if w := evalJS[string](p, `document.querySelector('[data-testid="engine-weakest"]').innerText`); !strings.HasPrefix(w, "the engine's weakest link ") {
		t.Errorf("cluster page shows %q; want the engine's weakest link", w)
	}
	p.screenshot("results-cluster")
}

// TestResultsCardAt390: at a phone's width the "Bring production results back" card on
// the manifests page holds its content (the long option labels of its selects, the file
// inputs and their hints ran past its right edge), and its configuration select follows
// the format and dataset: the file's own for a manifest file, else the dataset's newest
// signed-off manifest.
func TestResultsCardAt390(t *testing.T) {
	f := newFixture(t, 1<<20)
	run := f.withRun(chainRun)
	signed := f.withManifest(run.Params, true)
	f.withManifest(run.Params, false) // a newer draft: not the default
	p, base := f.browse(390, 844, "admin")
	p.do(chromedp.Navigate(base + "/manifests"))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="results-form"]')`)
	p.do(chromedp.ScrollIntoView(`[data-testid="import-results"]`))
	p.screenshot("results-card-390")
	// Every element of the card within it, and the card no wider than it shows.
	fits := `(() => {
		const card = document.querySelector('[data-testid="import-results"]'), out = [];
		if (card.scrollWidth > card.clientWidth) out.push("card scrollWidth " + card.scrollWidth + " > clientWidth " + card.clientWidth);
		const edge = card.getBoundingClientRect().right;
		for (const el of card.querySelectorAll("*")) {
			const r = el.getBoundingClientRect();
			if (r.width > 0 && r.right > edge + 1 && out.length < 8) out.push(el.tagName.toLowerCase() + "[" + (el.getAttribute("name") || el.dataset.testid || "") + "] right=" + Math.round(r.right) + " > " + Math.round(edge));
		}
		return out.join("; ");
	})()`
	if got := evalJS[string](p, fits); got != "" {
		t.Errorf("results card at 390 px: %s", got)
	}
	if got := evalJS[string](p, browsertest.OverflowJS); got != "" {
		t.Errorf("/manifests at 390 px: %s", got)
	}
	config := `document.querySelector('[data-testid="results-config"]').value`
	if got := evalJS[string](p, config); got != fmt.Sprint(signed.ID) {
		t.Errorf("configuration preselected %q; want the signed-off manifest %d", got, signed.ID)
	}
	pick := func(v string) {
		p.do(chromedp.SetValue(`[data-testid="results-format"]`, v))
		evalJS[bool](p, `document.querySelector('[data-testid="results-format"]').dispatchEvent(new Event("change"))`)
	}
	pick("manifest")
	if got := evalJS[string](p, config); got != "0" {
		t.Errorf("configuration for a manifest file %q; want the file's own (0)", got)
	}
	pick("pairs")
	if got := evalJS[string](p, config); got != fmt.Sprint(signed.ID) {
		t.Errorf("configuration back on pairs %q; want %d", got, signed.ID)
	}
}
