package web

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/dedupstudio/dedupstudio/internal/browsertest"
)

// The sweep dashboard in headless Chromium, the way a person uses it: a small sweep
// started from the form, a point of the recall chart clicked, the threshold slider moved
// with the keyboard, and that configuration's misses listed without a page reload.

// sweepBrowser returns a Chromium tab of the given window size (internal/browsertest).
func sweepBrowser(t *testing.T, width, height int) context.Context {
	t.Helper()
	return browsertest.New(t, browsertest.Options{Width: width, Height: height})
}

// browse serves f's router and returns a Chromium tab of width x height (its viewport
// too) signed in as role, and the server's URL.
func (f *fixture) browse(width, height int, role string) (tab, string) {
	f.t.Helper()
	srv := httptest.NewServer(f.h)
	f.t.Cleanup(srv.Close)
	p := tab{f.t, sweepBrowser(f.t, width, height)}
	p.do(chromedp.EmulateViewport(int64(width), int64(height)))
	p.login(srv.URL, role)
	return p, srv.URL
}

type tab struct {
	t   *testing.T
	ctx context.Context
}

func (p tab) do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	browsertest.Do(p.t, p.ctx, steps...)
}

func evalJS[T any](p tab, js string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		p.t.Fatalf("%s: %v", js, err)
	}
	return v
}

// waitFor polls a JavaScript condition for up to 30 s (browsertest.WaitFor).
func (p tab) waitFor(cond string) {
	p.t.Helper()
	browsertest.WaitFor(p.t, p.ctx, cond, 30*time.Second)
}

func (p tab) screenshot(name string) { browsertest.Screenshot(p.ctx, name) }

// login signs in as the fixture's account of that role.
func (p tab) login(base, role string) {
	p.t.Helper()
	browsertest.SignIn(p.t, p.ctx, base+"/login", role, role+"-password")
}

func TestSweepDashboardInBrowser(t *testing.T) {
	f := newFixture(t, 1<<20)
	f.signIn("reviewer")
	cid := f.withSweepCorpus(newSweepCorpus(4))
	p, base := f.browse(1280, 1000, "reviewer")

	// The form, filled for a small grid.
	p.do(chromedp.Navigate(fmt.Sprintf("%s/campaigns/%d", base, cid)), chromedp.Click(`[data-testid="sweeps-link"]`))
	p.waitFor(`!!document.querySelector('[data-testid="sweep-form"]') && document.readyState === "complete"`)
	for _, field := range [][2]string{{"name", "browser sweep"}, {"word", "3"}, {"char", ""}, {"k", "64"}, {"from", "0.3"}, {"to", "0.9"}, {"step", "0.2"}} {
		sel := `[data-testid="sweep-` + field[0] + `"]`
		p.do(chromedp.Evaluate[chromedp.Void](`document.querySelector(` + strconv.Quote(sel) + `).value = ` + strconv.Quote(field[1])))
	}
	p.do(chromedp.Click(`[data-testid="sweep-submit"]`))
	// Its page, until it is done (the page reloads itself when the sweep finishes).
	p.waitFor(`/\/sweeps\/\d+/.test(location.pathname) && document.querySelector('[data-testid="sweep"]')?.dataset.state === "done"`)
	p.screenshot("sweep-dashboard")

	// The recall chart, inlined: pick the configuration with the highest threshold among
	// the points on top at their own centre, and click it.
	p.waitFor(`!!document.querySelector('[data-testid="tradeoff-chart"] svg g.point')`)
	target := evalJS[[]float64](p, `(() => {
		let best = null;
		for (const g of document.querySelectorAll('[data-testid="tradeoff-chart"] svg g.point')) {
			g.scrollIntoView({block: "center"});
			const r = g.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
			const hit = document.elementFromPoint(x, y);
			if (!hit || hit.closest('g.point') !== g) continue;
			const m = /threshold (\d\.\d+)/.exec(g.querySelector('title').textContent);
			const t = m ? Number(m[1]) : 0;
			if (!best || t > best[0]) best = [t, Number(g.dataset.config), x, y];
		}
		if (best) document.querySelector('[data-config="' + best[1] + '"]').scrollIntoView({block: "center"});
		return best;
	})()`)
	if len(target) != 4 {
		t.Fatal("no clickable point on the recall chart")
	}
	config := strconv.Itoa(int(target[1]))
	// Scrolling moved it: click where it is now.
	xy := evalJS[[]float64](p, `(() => { const r = document.querySelector('[data-testid="tradeoff-chart"] svg g.point[data-config="`+config+`"]').getBoundingClientRect();
		return [r.left + r.width / 2, r.top + r.height / 2]; })()`)
	p.do(chromedp.MouseClickXY(xy[0], xy[1]))
	p.waitFor(`document.querySelector('[data-testid="sweep-selected"]')?.dataset.config === "` + config + `" && document.readyState === "complete"`)
	if !strings.Contains(evalJS[string](p, `location.search`), "config="+config) {
		t.Errorf("clicking point %s did not select it", config)
	}

	// The slider, moved with the keyboard to 0.95: the figures and the misses change in
	// place, without a reload.
	p.do(chromedp.Evaluate[chromedp.Void](`window.__sameDocument = true`))
	start := evalJS[string](p, `document.getElementById("threshold").value`)
	steps := int((0.95-mustFloat(t, start))*100 + 0.5)
	p.do(chromedp.Focus(`#threshold`))
	for range steps {
		p.do(chromedp.KeyEvent(kb.ArrowRight))
	}
	p.waitFor(`document.querySelector('[data-testid="live-threshold"]')?.innerText === "0.95"`)
	p.waitFor(`document.querySelectorAll('[data-testid="misses"] [data-testid="outcome"] a[href*="/pairs/"]').length > 0`)
	if !evalJS[bool](p, `window.__sameDocument === true`) {
		t.Error("moving the slider reloaded the page")
	}
	// The heading names the configuration at the slider's threshold (it kept the old one).
	if got := evalJS[string](p, `document.querySelector('[data-testid="sel-label"]').innerText`); !strings.Contains(got, "≥0.95") {
		t.Errorf("after the slider moved to 0.95 the heading says %q", got)
	}
	if got := evalJS[string](p, `document.querySelector('[data-testid="sel-words"]').innerText`); !strings.Contains(got, "threshold 0.95") {
		t.Errorf("after the slider moved to 0.95 the words under the heading say %q", got)
	}
	if got := evalJS[string](p, `new URL(location.href).searchParams.get("t")`); got != "0.95" {
		t.Errorf("URL t=%q after moving the slider; want 0.95 (so a reload keeps it)", got)
	}
	p.screenshot("sweep-slider")

	// A miss links to its pair page.
	href := evalJS[string](p, `document.querySelector('[data-testid="misses"] a').getAttribute("href")`)
	if !strings.HasPrefix(href, fmt.Sprintf("/campaigns/%d/pairs/", cid)) {
		t.Errorf("miss links %q; want a pair page of campaign %d", href, cid)
	}
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// At a phone's width nothing runs off the side: the page does not scroll sideways, and
// what scrolls sideways inside it says so.
func TestSweepDashboardAt390(t *testing.T) {
	f := newFixture(t, 1<<20)
	cid, id := f.sweptCorpus(3, "phone")
	p, base := f.browse(390, 844, "admin")
	for path, ready := range map[string]string{
		fmt.Sprintf("/campaigns/%d/sweeps", cid): `[data-testid="sweep-form"]`,
		fmt.Sprintf("/sweeps/%d", id):            `[data-testid="tradeoff-chart"] svg`,
	} {
		p.do(chromedp.Navigate(base + path))
		p.waitFor(`document.readyState === "complete" && !!document.querySelector('` + ready + `')`)
		p.screenshot("sweep-390" + strings.ReplaceAll(path, "/", "-"))
		if got := evalJS[string](p, browsertest.OverflowJS); got != "" {
			t.Errorf("%s at 390 px: %s", path, got)
		}
	}
}

// TestClusterPagesAt390: at a phone's width a manifest's cluster list and a cluster's
// review page show their decision columns and buttons on screen: the rows stack as
// cards, so nothing needs a sideways scroll to be reached.
func TestClusterPagesAt390(t *testing.T) {
	f := newFixture(t, 1<<20)
	man := f.withRun(chainRun)
	p, base := f.browse(390, 844, "reviewer")
	list := fmt.Sprintf("/manifests/%d/clusters", man.ID)
	p.do(chromedp.Navigate(base + list))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="cluster-table"]')`)
	p.screenshot("clusters-390")
	// onScreen reports the selectors whose element lies (partly) past either side of the
	// window, or is missing.
	onScreen := func(sels ...string) string {
		var off []string
		for _, sel := range sels {
			js := `(() => { const el = document.querySelector(` + strconv.Quote(sel) + `); if (!el) return "missing";
				const r = el.getBoundingClientRect(); return (r.left >= 0 && r.right <= window.innerWidth + 1 && r.width > 0) ? "" : "left=" + Math.round(r.left) + " right=" + Math.round(r.right); })()`
			if got := evalJS[string](p, js); got != "" {
				off = append(off, sel+" "+got)
			}
		}
		return strings.Join(off, "; ")
	}
	if got := evalJS[string](p, browsertest.OverflowJS); got != "" {
		t.Errorf("%s at 390 px: %s", list, got)
	}
	// The filter's checkboxes sit before their words on one line, not centred above them.
	if got := evalJS[string](p, `[...document.querySelectorAll('[data-testid="cluster-filters"] label.check')].map(l => {
		const b = l.querySelector('input').getBoundingClientRect(), r = document.createRange();
		r.selectNodeContents(l); const rs = [...r.getClientRects()].filter(x => x.width > 0 && x.left >= b.right - 1);
		return rs.length && Math.abs((b.top + b.bottom) / 2 - (rs[0].top + rs[0].bottom) / 2) < 4 ? "" : l.textContent.trim();
	}).filter(Boolean).join(", ")`); got != "" {
		t.Errorf("%s at 390 px: a checkbox is not on the line of its words: %s", list, got)
	}
	if got := onScreen(`[data-testid="cluster-table"] td[data-label="Undecided"]`, `[data-testid="cluster-table"] td[data-label="Approved"]`,
		`[data-testid="cluster-table"] td[data-label="Excluded"]`); got != "" {
		t.Errorf("%s at 390 px: decision columns off screen: %s", list, got)
	}
	href := evalJS[string](p, `document.querySelector('[data-testid="cluster-table"] td[data-label="Cluster"] a').getAttribute("href")`)
	p.do(chromedp.Navigate(base + href))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="members"] [data-testid^="approve-"]')`)
	p.screenshot("cluster-390")
	if got := evalJS[string](p, browsertest.OverflowJS); got != "" {
		t.Errorf("%s at 390 px: %s", href, got)
	}
	if got := onScreen(`[data-testid="members"] td[data-label="Decision"]`, `[data-testid="members"] [data-testid^="approve-"]`,
		`[data-testid="members"] [data-testid^="exclude-"]`, `[data-testid="members"] [data-testid^="make-keeper-"]`); got != "" {
		t.Errorf("%s at 390 px: decision column or its buttons off screen: %s", href, got)
	}
	// The buttons work there: approving the first removal records it.
	p.do(chromedp.Click(`[data-testid="members"] [data-testid^="approve-"]`))
	p.waitFor(`!!document.querySelector('[data-testid="members"] tr[data-decision="approved"]')`)
}

// The labeling plan's, recall guard's and the bins' tables align their numbers on the
// right, headers included (the last column's cells were right-aligned under a header
// on the left, the other numbers on the left), and their bin names on the left.
func TestSweepAdviceTablesAlignNumbers(t *testing.T) {
	f := newFixture(t, 1<<20)
	_, id := f.sweepWithPlan()
	p, base := f.browse(1280, 900, "admin")
	p.do(chromedp.Navigate(fmt.Sprintf("%s/sweeps/%d", base, id)))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('[data-testid="guard-bins"]')`)
	p.screenshot("sweep-advice-tables")
	got := evalJS[[]string](p, `(() => {
		const out = [];
		for (const sel of ['[data-testid="plan-bins"]', '[data-testid="guard-bins"]', '[data-testid="model-bins"] table']) {
			const t = document.querySelector(sel);
			if (!t) { out.push(sel + ": missing"); continue; }
			[...t.querySelectorAll('thead th')].forEach((th, i) => {
				const want = i === 0 ? "left" : "right";
				const cells = [th, ...[...t.querySelectorAll('tbody tr')].map(tr => tr.children[i])];
				const wrong = cells.filter(c => getComputedStyle(c).textAlign !== want);
				if (wrong.length) out.push(sel + ' "' + th.textContent + '": ' + wrong.length + " of " + cells.length + " cells (header first) not " + want +
					" (" + wrong.map(c => (c === th ? "header " : "") + getComputedStyle(c).textAlign).join(", ") + ")");
			});
		}
		return out;
	})()`)
	for _, g := range got {
		t.Error(g)
	}
}

// TestSelectsOneHeightAt390: at a phone's width the dashboard's keeper-rule select is as
// tall as the product's other selects (it was 16 px, unstyled, beside 30 px ones on the
// review pages) and as the text input beside it in the target form (28 px beside 33),
// and tall enough to tap: 24 px at least (WCAG 2.2's target minimum).
func TestSelectsOneHeightAt390(t *testing.T) {
	f := newFixture(t, 1<<20)
	cid, id := f.sweepWithPlan()
	c, err := f.store.Campaign(context.Background(), cid)
	if err != nil {
		t.Fatal(err)
	}
	p, base := f.browse(390, 844, "admin")
	height := func(path, sel string) float64 {
		p.do(chromedp.Navigate(base + path))
		p.waitFor(`document.readyState === "complete" && !!document.querySelector('` + sel + `')`)
		return evalJS[float64](p, `document.querySelector('`+sel+`').getBoundingClientRect().height`)
	}
	keeper := height(fmt.Sprintf("/sweeps/%d", id), `[data-testid="keeper-select"]`)
	heat := height(fmt.Sprintf("/sweeps/%d", id), `select[name="hv"]`)
	run := height(fmt.Sprintf("/datasets/%d/runs/new", c.DatasetID), `[data-testid="run-verification"]`)
	target := height(fmt.Sprintf("/sweeps/%d", id), `[data-testid="target"]`)
	// The plan's hint does not touch its draw button: beside it with a gap, or below it.
	if got := evalJS[string](p, `(() => { const f = document.querySelector('[data-testid="plan-draw"]'); if (!f) return "no plan form";
		const b = f.querySelector('button').getBoundingClientRect(), h = f.querySelector('.hint'); if (!h) return "no hint";
		const r = h.getBoundingClientRect(); return (r.left >= b.right + 4 || r.top >= b.bottom + 4) ? "" :
			"button ends at x=" + Math.round(b.right) + " y=" + Math.round(b.bottom) + ", hint starts at x=" + Math.round(r.left) + " y=" + Math.round(r.top); })()`); got != "" {
		t.Errorf("the plan's draw form at 390 px: %s", got)
	}
	bin := height(fmt.Sprintf("/campaigns/%d", cid), `select[name="bin"]`)
	if keeper < 24 {
		t.Errorf("the keeper-rule select is %.0f px high at 390 px; want at least 24", keeper)
	}
	for name, h := range map[string]float64{"heatmap's select": heat, "run form's select": run, "campaign's bin select": bin,
		"false-removal ceiling's input beside it": target} {
		if math.Abs(h-keeper) > 0.5 {
			t.Errorf("the keeper-rule select is %.1f px high, the %s %.1f px", keeper, name, h)
		}
	}
}
