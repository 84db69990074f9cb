package web

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
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
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)
	p := tab{t, sweepBrowser(t, 1280, 1000)}
	p.login(srv.URL, "reviewer")
	p.do(chromedp.Navigate(srv.URL+"/manifests"), chromedp.WaitVisible(`[data-testid="results-form"]`),
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
	for _, w := range []string{"dump.jsonl (milvus)", "3 cluster(s), 4 removal(s)", "a stratified sample of 1 of 3 clusters"} {
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
