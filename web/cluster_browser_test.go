package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/dedupstudio/dedupstudio/internal/browsertest"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/realtext"
)

// chain20Docs is a JSONL sample of real text shaped as a cluster of 20 removals that
// chains: K, then S1..S19, each S_i the ten lines of 20 words starting i lines after K's
// (each shares nine lines with its neighbours, so S1 passes K at 0.75 and S2..S19 reach it
// only through others), and M, K with its first two lines moved to the end (a moved
// passage, close to K), and a few unrelated documents.
func chain20Docs(t testing.TB) string {
	t.Helper()
	texts := realtext.Texts(t, 7, 260)
	words := strings.Fields(texts[0] + " " + texts[1] + " " + texts[2])
	line := func(i int) string { return strings.Join(words[20*i:20*i+20], " ") }
	lines := func(from, to int) []string {
		var out []string
		for i := from; i < to; i++ {
			out = append(out, line(i))
		}
		return out
	}
	var b strings.Builder
	add := func(id string, ls []string) {
		rec, _ := json.Marshal(map[string]string{"id": id, "text": strings.Join(ls, "\n") + "\n", "source": "manual"})
		b.Write(rec)
		b.WriteByte('\n')
	}
	add("K", lines(0, 10))
	for i := 1; i <= 19; i++ {
		add(fmt.Sprintf("S%02d", i), lines(i, i+10))
	}
	add("M", append(lines(2, 10), lines(0, 2)...))
	for i, tx := range texts[3:] {
		rec, _ := json.Marshal(map[string]string{"id": fmt.Sprintf("other%d", i), "text": tx, "source": "spdx"})
		b.Write(rec)
		b.WriteByte('\n')
	}
	return b.String()
}

// withChain20 imports chain20Docs and runs chainRun's configuration over it as the
// reviewer; it returns the manifest and the chained cluster's id.
func (f *fixture) withChain20() (db.Manifest, db.Cluster) {
	f.t.Helper()
	if _, body := f.waitJob(f.upload("/datasets", "chain20.jsonl", chain20Docs(f.t), nil).Header().Get("Location")); !strings.Contains(body, "import-done") {
		f.t.Fatalf("import failed:\n%s", body)
	}
	list, _ := f.store.Datasets(context.Background())
	m := f.runOn(list[0].ID, chainRun, "reviewer")
	c := f.clusterWith(m, "K")
	if len(c.Items) != 20 || c.ChainedMembers < 15 {
		f.t.Fatalf("the chained cluster has %d removals, %d chained; want 20, most chained", len(c.Items), c.ChainedMembers)
	}
	return m, c
}

// navigations counts the page loads (Sec-Fetch-Mode: navigate) of paths under prefix
// that pass through h; requests a page's script sends (fetch) are not page loads.
type navigations struct {
	h      http.Handler
	prefix string
	n      atomic.Int32
}

func (c *navigations) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Sec-Fetch-Mode") == "navigate" && strings.HasPrefix(r.URL.Path, c.prefix) {
		c.n.Add(1)
	}
	c.h.ServeHTTP(w, r)
}

// rowsOnScreenJS counts the member rows wholly inside the window.
const rowsOnScreenJS = `[...document.querySelectorAll('#members tbody tr[data-doc]')].filter(r => { const b = r.getBoundingClientRect(); return b.top >= 0 && b.bottom <= innerHeight; }).length`

// statusJS is what the review's status line says.
const statusJS = `(document.querySelector('[data-testid="review-status"]')?.innerText.trim() ?? "")`

// Issue 27, reviewing a cluster the way GitHub reviews a pull request: a reviewer reads
// every member of a 20-removal chained cluster against its keeper by keyboard and decides
// each, in one page load. d opens the text under the row (M's moved lines marked moved);
// each key says what it did in the status line, the decided row stays in view and the
// next one is focused with its text open; Ctrl+Z, Shift+E, Shift+Q (which asks on a
// chained cluster), k, j and ↑ answer too. Rows are compact: at least 15 on a 1280 x 900
// screen (4 were, at 131 px each).
func TestClusterReviewByKeyboardInBrowser(t *testing.T) {
	f := newFixture(t, 1<<20)
	m, cl := f.withChain20()
	path := fmt.Sprintf("/manifests/%d/clusters/%d", m.ID, cl.ID)
	navs := &navigations{h: f.h, prefix: path}
	srv := httptest.NewServer(navs)
	t.Cleanup(srv.Close)
	p := tab{t, sweepBrowser(t, 1280, 900)}
	p.do(chromedp.EmulateViewport(1280, 900))
	p.login(srv.URL, "reviewer")
	p.do(chromedp.Navigate(srv.URL + path))
	p.waitFor(`document.readyState === "complete" && !!document.querySelector('#members tr.focused')`)
	p.screenshot("cluster-review-start")

	heights := evalJS[[]float64](p, `[...document.querySelectorAll('#members tbody tr[data-doc]')].slice(1, 8).map(r => r.getBoundingClientRect().height)`)
	for _, h := range heights {
		if h > 36 {
			t.Errorf("member rows are %v px tall at 1280 px; want at most 36 (one line)", heights)
			break
		}
	}
	p.do(chromedp.Evaluate[chromedp.Void](`document.querySelector('#members').scrollIntoView({block: "start"})`))
	if n := evalJS[int](p, rowsOnScreenJS); n < 15 {
		t.Errorf("%d member rows on a 1280 x 900 screen; want at least 15", n)
	}
	t.Logf("rows on a 1280 x 900 screen: %d, %v px tall", evalJS[int](p, rowsOnScreenJS), heights)
	if got := evalJS[string](p, browsertest.OverflowJS); got != "" {
		t.Errorf("cluster page at 1280 px: %s", got)
	}

	// j and ↑ move the cursor; k opens the keeper's reason on the focused row; Esc closes.
	focused := func() string {
		return evalJS[string](p, `document.querySelector('#members tr.focused')?.dataset.ext ?? ""`)
	}
	first := focused()
	p.press("j")
	if second := focused(); second == first || second == "" {
		t.Errorf("j left the cursor on %q", second)
	}
	p.do(chromedp.KeyEvent(kb.ArrowUp))
	if back := focused(); back != first {
		t.Errorf("↑ moved the cursor to %q; want %q back", back, first)
	}
	p.press("k")
	p.waitFor(`document.activeElement?.name === "reason" && document.activeElement.closest('tr')?.dataset.ext === ` + jsString(first))
	p.do(chromedp.KeyEvent(kb.Escape))
	p.waitFor(`!document.querySelector('#members details[open]') && document.activeElement?.name !== "reason"`)

	// Shift+Q on a chained cluster asks first, saying how many removals are chained; Esc
	// leaves it with nothing approved.
	p.press("Q")
	p.waitFor(`document.querySelector('[data-testid="confirm-chained"]')?.open === true`)
	if got := evalJS[string](p, statusJS); !strings.Contains(got, "chained") {
		t.Errorf("Shift+Q on a chained cluster says %q; want it to ask about the chained removals", got)
	}
	ask := evalJS[string](p, `document.querySelector('[data-testid="confirm-chained"] .confirm-box').innerText`)
	if want := fmt.Sprintf("%d of its 20 undecided removals are under 0.75", cl.ChainedMembers); !strings.Contains(ask, want) {
		t.Errorf("the question says %q; want %q", ask, want)
	}
	if !evalJS[bool](p, `!!document.querySelector('[data-testid="approve-direct"]') && !!document.querySelector('[data-testid="approve-all-chained"]')`) {
		t.Error("the question offers no choice between the direct removals and all of them")
	}
	p.do(chromedp.KeyEvent(kb.Escape))
	p.waitFor(`document.querySelector('[data-testid="confirm-chained"]')?.open === false`)
	if n := evalJS[int](p, `document.querySelectorAll('#members tr[data-decision="approved"]').length`); n != 0 {
		t.Errorf("Shift+Q approved %d removals before the question was answered", n)
	}

	// d opens the focused member's text against the keeper's under its row.
	p.press("d")
	p.waitFor(`document.querySelector('[data-testid="member-diff"]')?.dataset.doc === document.querySelector('#members tr.focused')?.dataset.doc`)

	// Every member, by keyboard: read it (its text is open under it), then decide: C-like
	// members far from the keeper are excluded, the others approved.
	decided := 0
	for range 20 {
		ext := focused()
		p.waitFor(`document.querySelector('[data-testid="member-diff"]')?.dataset.doc === document.querySelector('#members tr.focused')?.dataset.doc`)
		if got := evalJS[string](p, `document.querySelector('[data-testid="member-diff"] .diff-head').innerText`); !strings.Contains(got, ext+" against the keeper K") ||
			!strings.Contains(got, "word 5-shingles") {
			t.Fatalf("the open text says %q; want %s against the keeper K, with its representation", got, ext)
		}
		if ext == "M" {
			moved := evalJS[string](p, `[...document.querySelectorAll('[data-testid="member-diff"] .moved-to')].map(s => s.textContent).join(" ")`)
			if !strings.Contains(moved, strings.Fields(chain20Line(t, 0))[3]) || !strings.Contains(moved, strings.Fields(chain20Line(t, 1))[5]) {
				t.Errorf("M's two moved lines are not marked moved; moved text %.200q", moved)
			}
			if got := evalJS[string](p, `document.querySelector('[data-testid="moved-count"]').innerText`); got != "moved: 1" {
				t.Errorf("the moved count says %q; want moved: 1", got)
			}
			p.screenshot("cluster-review-moved")
		}
		key, want := "q", "Approved the removal of "+ext+"."
		if strings.HasPrefix(ext, "S1") {
			key, want = "e", "Excluded "+ext+" from removal: it stays."
		}
		p.press(key)
		p.waitFor(`document.querySelector('#members tr[data-ext=` + jsString(ext) + `]')?.dataset.decision !== "proposed"`)
		decided++
		if got := evalJS[string](p, statusJS); !strings.HasPrefix(got, want) {
			t.Errorf("after %s on %s the status says %q; want %q", key, ext, got, want)
		}
		if off := evalJS[string](p, inViewportJS(`#members tr[data-ext=`+jsString(ext)+`]`)); off != "" {
			t.Errorf("after %s the decided row %s is off screen: %s", key, ext, off)
		}
		if decided < 20 {
			if off := evalJS[string](p, inViewportJS(`#members tr.focused`)); off != "" {
				t.Errorf("after deciding %s the next row is off screen: %s", ext, off)
			}
		}
	}
	if got := evalJS[string](p, statusJS); !strings.Contains(got, "Every removal of this cluster has a decision") {
		t.Errorf("after the last decision the status says %q", got)
	}
	p.screenshot("cluster-review-done")
	if n := navs.n.Load(); n > 1 {
		t.Errorf("reading and deciding 20 members took %d page loads; want 1", n)
	}
	t.Logf("page loads to read and decide 20 members: %d", navs.n.Load())

	// Ctrl+Z undoes the last decision and says which; Shift+E excludes the whole cluster,
	// and Ctrl+Z undoes that too.
	p.do(chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	p.waitFor(statusJS + `.startsWith("Undone: ")`)
	last := focused()
	if d := evalJS[string](p, `document.querySelector('#members tr.focused').dataset.decision`); d != "proposed" || !strings.Contains(evalJS[string](p, statusJS), last) {
		t.Errorf("after Ctrl+Z the focused row %s is %s and the status says %q; want the undone row, proposed, named", last, d, evalJS[string](p, statusJS))
	}
	p.press("E")
	p.waitFor(statusJS + `.startsWith("Excluded ")`)
	if n := evalJS[int](p, `document.querySelectorAll('#members tr[data-decision="excluded"]').length`); n != 20 {
		t.Errorf("after Shift+E %d members are excluded; want 20", n)
	}
	p.do(chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	p.waitFor(statusJS + `.startsWith("Undone: excluded")`)
	if n := evalJS[int](p, `document.querySelectorAll('#members tr[data-decision="proposed"]').length`); n != 1 {
		t.Errorf("after undoing Shift+E %d members are undecided; want 1 (the one undone before)", n)
	}
	if n := navs.n.Load(); n > 1 {
		t.Errorf("the keys took %d page loads; want 1", n)
	}
}

// chain20Line is line i of chain20Docs's keeper K.
func chain20Line(t *testing.T, i int) string {
	t.Helper()
	for _, l := range strings.Split(chain20Docs(t), "\n") {
		var d struct{ ID, Text string }
		if json.Unmarshal([]byte(l), &d) == nil && d.ID == "K" {
			return strings.Split(d.Text, "\n")[i]
		}
	}
	t.Fatal("no K")
	return ""
}

// jsString quotes s for JavaScript (a JSON string is one).
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// press types keys into the page.
func (p tab) press(keys ...string) {
	p.t.Helper()
	for _, k := range keys {
		p.do(chromedp.KeyEvent(k))
	}
}

// The cluster page's keeper line follows a keeper chosen by hand (it kept saying "by
// earliest"), and its similarity columns name their representation.
func TestClusterHeadingsFollowTheKeeper(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	m := f.withRun(chainRun)
	c := f.clusterWith(m, "A")
	path := fmt.Sprintf("/manifests/%d/clusters/%d", m.ID, c.ID)
	_, body := get(t, f.h, path, f.signIn("reviewer"))
	for _, want := range []string{`data-testid="keeper-by">by earliest</span>`, "Exact J<br><span class=\"muted\">word 5-shingles</span>", "MinHash, k=128"} {
		if !strings.Contains(body, want) {
			t.Errorf("the cluster page lacks %s", want)
		}
	}
	ids, _ := f.store.DocumentIDs(context.Background(), m.DatasetID, []string{"B"})
	rec := f.do("POST", path+"/keeper", f.signIn("reviewer"), url.Values{"doc": {fmt.Sprint(ids["B"])}, "reason": {"the canonical edition"}})
	_, body = f.follow(rec, f.signIn("reviewer"))
	if !strings.Contains(body, `data-testid="keeper">B</strong>`) || !strings.Contains(body, `data-testid="keeper-by">chosen by hand: the canonical edition</span>`) {
		t.Errorf("after choosing B by hand the keeper line is not B, chosen by hand, with the reason")
	}
	if strings.Contains(body, `data-testid="keeper-by">by earliest`) {
		t.Error("the keeper line still says by earliest")
	}
}

// At a phone's width (390 x 844) the cluster page's members are cards, each value under
// its column's name: the keeper's card showed "Reason:", "Estimate:" and "Exact J:" with
// nothing after them (the keeper has no reason or similarity to itself). A name shows only
// with its value; the values a card has show at 390 px.
func TestClusterCardsShowNoEmptyLabelsAt390(t *testing.T) {
	f := newFixture(t, 1<<20)
	m := f.withRun(chainRun)
	c := f.clusterWith(m, "A")
	p, base := f.browse(390, 844, "reviewer")
	p.do(chromedp.Navigate(fmt.Sprintf("%s/manifests/%d/clusters/%d", base, m.ID, c.ID)))
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
