package web

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// At a phone's width (390 x 844) the cluster page's members are cards, each value under
// its column's name: the keeper's card showed "Reason:", "Estimate:" and "Exact J:" with
// nothing after them (the keeper has no reason or similarity to itself). A name shows only
// with its value; the values a card has show at 390 px.
func TestClusterCardsShowNoEmptyLabelsAt390(t *testing.T) {
	f := newFixture(t, 1<<20)
	m := f.withRun(chainRun)
	c := f.clusterWith(m, "A")
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)
	p := tab{t, sweepBrowser(t, 390, 844)}
	p.login(srv.URL, "reviewer")
	p.do(chromedp.EmulateViewport(390, 844), chromedp.Navigate(fmt.Sprintf("%s/manifests/%d/clusters/%d", srv.URL, m.ID, c.ID)))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('tr.keeper')`)
	// Every cell on screen with a column's name has a value; the keeper's card still names
	// its document, source, bytes and decision.
	cells := evalJS[[]string](p, `[...document.querySelectorAll('table.stack-narrow tr')].flatMap(tr =>
		[...tr.querySelectorAll('td[data-label]')].filter(td => td.getClientRects().length > 0).map(td =>
			(tr.classList.contains('keeper') ? "keeper " : tr.dataset.testid + " ") + td.dataset.label + "=" + td.innerText.trim()))`)
	var keeper []string
	for _, cell := range cells {
		if strings.HasSuffix(cell, "=") {
			t.Errorf("at 390 px a card shows %q without a value", strings.TrimSuffix(cell, "="))
		}
		if strings.HasPrefix(cell, "keeper ") {
			keeper = append(keeper, cell)
		}
	}
	if len(keeper) < 3 || !strings.Contains(strings.Join(keeper, "; "), "Decision=kept") {
		t.Errorf("the keeper's card at 390 px: %q; want its source, bytes and decision", keeper)
	}
	// A removal's card keeps its reason and similarities.
	if n := strings.Count(strings.Join(cells, "\n"), "Estimate="); n < 1 {
		t.Errorf("no removal's card shows its estimate at 390 px: %q", cells)
	}
	if w := evalJS[int](p, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the cluster page is %d px wide at 390 px", w)
	}
	p.screenshot("cluster-390")
}
