package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dedupstudio/dedupstudio/internal/browsertest"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
)

// TestDashboardSaysWhichShapesWereDeclined sweeps the demo's character 3-shingles with
// a shape that makes a fifth of its pairs candidates and a steep one: the dashboard,
// its progress line and the sweep list say the flat shape's configurations were
// declined, and why, instead of counting them scored or missing.
func TestDashboardSaysWhichShapesWereDeclined(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withDemo()
	sw := f.flatAndSteepSweep()
	page := fmt.Sprintf("/sweeps/%d", sw.ID)
	res, body := get(t, f.h, page, f.admin)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", page, res.StatusCode)
	}
	for _, want := range []string{`data-testid="sweep-declined"`, "Not scored: 2 configurations, of the shape below.",
		"more than 250,000 candidate pairs, 11% of all pairs:", "char 3-shingles, k=128, 37 bands × 3 rows: 2 configurations",
		"2 of 4 configurations scored, 2 declined", "All configurations <span class=\"muted\">(2 of 4)"} {
		if !strings.Contains(body, want) {
			t.Errorf("dashboard lacks %q", want)
		}
	}
	_, list := get(t, f.h, "/campaigns/1/sweeps", f.admin)
	if !strings.Contains(list, "4 / 4") || !strings.Contains(list, `data-testid="sweep-item-declined">2 declined`) {
		t.Error("the sweep list does not show the sweep whole with 2 configurations declined")
	}
}

// flatAndSteepSweep sweeps the demo's character 3-shingles with a shape that makes a
// fifth of its pairs candidates (declined) and a steep one, and returns it finished.
func (f *fixture) flatAndSteepSweep() sweeprun.Sweep {
	t := f.t
	t.Helper()
	spec, err := lsh.ParseSpec("level=char size=3 k=128")
	if err != nil {
		t.Fatal(err)
	}
	g := sweep.Grid{Specs: []lsh.Spec{spec}, Shapes: []lsh.Shape{{Bands: 37, Rows: 3}, {Bands: 8, Rows: 16}},
		Thresholds: []float64{0.5, 0.8}, Verifications: []sweep.Verification{sweep.MinHashEstimate}, Policies: []cluster.Policy{cluster.Components}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sw, err := f.sweeps.Start(ctx, sweeprun.StartRequest{CampaignID: 1, Name: "flat and steep", Grid: g})
	if err != nil {
		t.Fatal(err)
	}
	if sw, err = f.sweeps.Wait(ctx, sw.ID); err != nil || sw.State != sweeprun.Done {
		t.Fatalf("sweep: %v, %v", sw.State, err)
	}
	return sw
}

// TestDeclinedNoteAt390: at 390 px the note and its list fit the window, and the list
// opens.
func TestDeclinedNoteAt390(t *testing.T) {
	f := newFixture(t, 1<<20)
	f.withDemo()
	sw := f.flatAndSteepSweep()
	p, base := f.browse(390, 844, "admin")
	p.do(chromedp.Navigate(fmt.Sprintf("%s/sweeps/%d#table", base, sw.ID)))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="sweep-declined"] summary')`)
	p.do(chromedp.Click(`[data-testid="sweep-declined"] summary`))
	p.waitFor(`document.querySelector('[data-testid="sweep-declined"] details').open`)
	p.screenshot("declined-390")
	if got := evalJS[string](p, browsertest.OverflowJS); got != "" {
		t.Errorf("dashboard at 390 px: %s", got)
	}
	if got := evalJS[string](p, `(() => { const r = document.querySelector('[data-testid="sweep-declined"] li').getBoundingClientRect();
		return r.width > 0 && r.left >= 0 && r.right <= window.innerWidth + 1 ? "" : "left=" + r.left + " right=" + r.right; })()`); got != "" {
		t.Errorf("the declined shape's line at 390 px: %s", got)
	}
}
