package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/dedupstudio/dedupstudio/internal/browsertest"
)

// A stale manifest in headless Chromium, the way an approver meets it: the manifest's
// page is open, fresh, with its approve button, when another manifest is exported; the
// approval is refused, and the page it lands on says why (which manifest was exported,
// when, which of this manifest's documents it took) in the error and in the stale card,
// and no longer offers the approval; the list marks it stale too.
func TestStaleManifestInBrowser(t *testing.T) {
	f := newFixture(t, 1<<20)
	m1 := f.withRun(chainRun)
	longest := chainRunWith("keeper", "longest")
	m2 := f.runOn(m1.DatasetID, longest, "reviewer")
	f.decideAll(m2)
	if rec := f.do("POST", fmt.Sprintf("/manifests/%d/submit", m2.ID), f.signIn("reviewer"), url.Values{}); rec.Code != http.StatusSeeOther {
		t.Fatalf("submit: %d", rec.Code)
	}
	f.signIn("approver")
	p, base := f.browse(1280, 1000, "approver")
	p.do(chromedp.Navigate(fmt.Sprintf("%s/manifests/%d", base, m2.ID)))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="approve"]')`)
	if evalJS[bool](p, `!!document.querySelector('[data-testid="manifest-stale"]')`) {
		t.Fatal("a fresh manifest shows the stale card")
	}
	// Meanwhile manifest 1 is signed off and exported (its chain excluded: =D2 goes).
	m1 = f.signedOff(m1, "A")
	if rec := f.do("POST", fmt.Sprintf("/manifests/%d/export", m1.ID), f.signIn("approver"), url.Values{"hash": {m1.ContentHash}, "count": {strconv.Itoa(f.approvedCount(m1))}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("export: %d", rec.Code)
	}
	p.do(chromedp.Click(`[data-testid="approve"]`))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="manifest-error"]')`)
	p.screenshot("stale-manifest-refused")
	exported := fmt.Sprintf("manifest %d was exported (1 document tombstoned)", m1.ID)
	if got := evalJS[string](p, `document.querySelector('[data-testid="manifest-error"]').innerText`); !strings.HasPrefix(got, "Approval refused: the dataset changed since the run: "+exported) ||
		!strings.Contains(got, "(=D2)") || !strings.Contains(got, "prepare a new run") {
		t.Errorf("the refusal says %q; want the export that changed the dataset, the document and the way forward", got)
	}
	if got := evalJS[string](p, `document.querySelector('[data-testid="manifest-stale"]')?.innerText ?? ""`); !strings.Contains(got, exported) ||
		!strings.Contains(got, "approvals are refused") {
		t.Errorf("the stale card says %q", got)
	}
	if got := evalJS[string](p, inViewportJS(`[data-testid="manifest-error"]`)); got != "" {
		t.Errorf("the refusal is off screen where the approval lands: %s", got)
	}
	if evalJS[bool](p, `!!document.querySelector('[data-testid="approve"]')`) || !evalJS[bool](p, `!!document.querySelector('[data-testid="approval-stale"]')`) {
		t.Error("the approval form of the stale manifest still offers the approval, or does not say why not")
	}
	if m, _ := f.store.Manifest(t.Context(), m2.ID); m.State != "in_review" {
		t.Errorf("the refused approval moved the manifest to %s", m.State)
	}
	p.do(chromedp.Navigate(base + "/manifests"))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="manifest-table"]')`)
	if got := evalJS[string](p, fmt.Sprintf(`document.querySelector('[data-testid="manifest-stale-%d"]')?.innerText ?? ""`, m2.ID)); got != fmt.Sprintf("stale: manifest %d exported", m1.ID) {
		t.Errorf("the list marks manifest %d %q; want stale, naming the export", m2.ID, got)
	}
	p.screenshot("stale-manifest-list")
}

// The stale card at a phone's width: its one button, "Prepare a new run, carrying
// decisions over", is wider than 390 px on one line; it wraps inside the card rather
// than pushing the page sideways (it did: a button in a form.row never wrapped).
func TestStaleManifestAtPhoneWidth(t *testing.T) {
	f := newFixture(t, 1<<20)
	m1 := f.withRun(chainRun)
	m2 := f.runOn(m1.DatasetID, chainRunWith("keeper", "longest"), "reviewer")
	m1 = f.signedOff(m1, "A")
	if rec := f.do("POST", fmt.Sprintf("/manifests/%d/export", m1.ID), f.signIn("approver"), url.Values{"hash": {m1.ContentHash}, "count": {strconv.Itoa(f.approvedCount(m1))}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("export: %d", rec.Code)
	}
	p, base := f.browse(390, 844, "reviewer")
	p.do(chromedp.Navigate(fmt.Sprintf("%s/manifests/%d", base, m2.ID)))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="prepare-again"]')`)
	p.screenshot("stale-manifest-390")
	if got := evalJS[string](p, browsertest.OverflowJS); got != "" {
		t.Errorf("the stale manifest at 390 px: %s", got)
	}
}
