package web

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// A manifest's audit in headless Chromium, as two people use it: an approver requests
// the audit on the manifest's page, where the approval that would sign off is held back
// by the team's rule (1%) and says why; an annotator signs in, opens the labeling queue
// and labels the audit's pairs (served first) through the labeling page; the approver
// then sees the bound on the manifest's page, at 0% with every pair labeled, and the
// approval that now counts signs the manifest off.
func TestAuditInBrowser(t *testing.T) {
	f := newFixture(t, 1<<20)
	m := f.auditedManifest()
	f.signIn("approver")
	f.signIn("annotator")
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)
	p := tab{t, sweepBrowser(t, 1280, 1000)}
	manifest := fmt.Sprintf("%s/manifests/%d", srv.URL, m.ID)

	p.login(srv.URL, "approver")
	p.do(chromedp.Navigate(manifest))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="audit-request"]')`)
	if !evalJS[bool](p, `document.querySelector('[data-testid="approve"]').disabled`) ||
		!strings.Contains(evalJS[string](p, `document.querySelector('[data-testid="audit-gate"]')?.innerText ?? ""`), "has none: request an audit") {
		t.Error("without an audit, the approval that would sign off is offered, or the page does not say why not")
	}
	p.do(chromedp.Click(`[data-testid="audit-request"]`))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="audit-figure"]')`)
	p.screenshot("audit-requested")
	if got := evalJS[string](p, `document.querySelector('[data-testid="audit-figure"]').innerText`); !strings.HasPrefix(got, "0 of 2 labeled, 0 mistakes: at most 2 documents removed by mistake (95%), 67% of 3 removals") {
		t.Errorf("the audit's figure: %q", got)
	}
	if got := evalJS[string](p, `document.querySelector('[data-testid="audit-gate"]')?.innerText ?? ""`); !strings.Contains(got, "it is 67% now") ||
		!strings.Contains(got, "at or under 1%") || !evalJS[bool](p, `document.querySelector('[data-testid="approve"]').disabled`) {
		t.Errorf("the held-back approval says %q", got)
	}

	// The annotator labels the audit through the labeling page.
	p.do(chromedp.Click(`[data-testid="logout"]`))
	p.waitFor(`document.readyState === "complete" && !document.querySelector('[data-testid="whoami"]')`)
	p.login(srv.URL, "annotator")
	st, err := f.store.AuditState(t.Context(), m.ID)
	if err != nil {
		t.Fatal(err)
	}
	p.do(chromedp.Navigate(fmt.Sprintf("%s/campaigns/%d/next", srv.URL, st.CampaignID)))
	for i, pair := range st.Pairs {
		p.waitFor(fmt.Sprintf(`document.readyState === "complete" && document.querySelector('[data-testid="pair"]')?.dataset.pair === "%d"`, pair.PairID))
		p.do(chromedp.Click(`[data-testid="cat-minor"]`), chromedp.Click(`[data-testid="submit"]`))
		if i == 0 {
			p.screenshot("audit-labeling")
		}
	}
	last := st.Pairs[len(st.Pairs)-1].PairID
	p.waitFor(fmt.Sprintf(`document.readyState === "complete" && document.querySelector('[data-testid="pair"]')?.dataset.pair !== "%d"`, last))

	p.do(chromedp.Click(`[data-testid="logout"]`))
	p.waitFor(`document.readyState === "complete" && !document.querySelector('[data-testid="whoami"]')`)
	p.login(srv.URL, "approver")
	p.do(chromedp.Navigate(manifest))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="audit-figure"]')`)
	p.screenshot("audit-labeled")
	if got := evalJS[string](p, `document.querySelector('[data-testid="audit-figure"]').innerText`); !strings.HasPrefix(got, "2 of 2 labeled, 0 mistakes: at most 0 documents removed by mistake (95%), 0% of 3 removals; 1 removal is an identical text") {
		t.Errorf("the audit's figure after the labels: %q", got)
	}
	if evalJS[bool](p, `!!document.querySelector('[data-testid="audit-gate"]') || document.querySelector('[data-testid="approve"]').disabled`) {
		t.Fatal("with the bound under the target, the approval is still held back")
	}
	p.do(chromedp.Click(`[data-testid="approve"]`))
	p.waitFor(`document.readyState === "complete" && document.querySelector('[data-testid="manifest-state"]')?.innerText === "signed off"`)
	p.screenshot("audit-signed-off")
}
