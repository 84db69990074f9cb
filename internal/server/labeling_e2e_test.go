package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
)

// hostile documents: markup, event handlers and javascript: links that must stay text.
const hostileDocs = `{"id":"s1","text":"<script>window.__xss='script'</script> The quick brown fox jumps over the lazy dog near the river bank."}
{"id":"s2","text":"<img src=x onerror=\"window.__xss='img'\"> The quick brown fox jumps over the lazy cat near the river bank."}
{"id":"s3","text":"<a href=\"javascript:window.__xss='link'\">click me</a> <svg onload=\"window.__xss='svg'\"></svg> Permission is hereby granted, free of charge."}
{"id":"s4","text":"<iframe src=\"javascript:parent.__xss='frame'\"></iframe> Permission is hereby granted, free of charge, to any person."}
`

// setupLabeling imports the hostile documents, a campaign with three pairs (the first
// wanting two labels), and two annotators who then sign in through the login form.
func setupLabeling(t *testing.T, store *db.DB) (campaignID int64, pairs []int64) {
	t.Helper()
	ctx := context.Background()
	// Two 200 KB documents that differ in scattered words: the page must stay usable.
	var big1, big2 strings.Builder
	for i := range 33_000 {
		w := fmt.Sprintf("word%d ", i%1009)
		big1.WriteString(w)
		if i%400 == 0 {
			w = "CHANGED "
		}
		big2.WriteString(w)
	}
	docs := hostileDocs + fmt.Sprintf(`{"id":"big1","text":%q}`+"\n"+`{"id":"big2","text":%q}`+"\n", big1.String(), big2.String())
	r, _ := corpus.NewReader(strings.NewReader(docs), "hostile.jsonl", corpus.JSONL, corpus.Options{})
	rep, err := ingest.Documents(ctx, store, r, "hostile.jsonl", ingest.Options{Dataset: "hostile"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := store.EnsureCampaign(ctx, rep.Dataset.ID, "keyboard", nil)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := store.DocumentIDs(ctx, rep.Dataset.ID, []string{"s1", "s2", "s3", "s4", "big1", "big2"})
	_, err = store.AddPairs(ctx, c.ID, []db.NewPair{
		{DocA: ids["s1"], DocB: ids["s2"], Origin: "test", Wanted: 2},
		{DocA: ids["s3"], DocB: ids["s4"], Origin: "test", Wanted: 1},
		{DocA: ids["s1"], DocB: ids["s3"], Origin: "test", Wanted: 1},
		{DocA: ids["big1"], DocB: ids["big2"], Origin: "test", Wanted: 1},
	}, "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := campaign.ScorePairs(ctx, store, c.ID); err != nil {
		t.Fatal(err)
	}
	refs, _ := store.PairDocs(ctx, c.ID)
	for _, p := range refs {
		pairs = append(pairs, p.ID)
	}
	// The queue in the order they were added (scoring ranked it across the bins).
	if err := store.SetQueueRanks(ctx, c.ID, pairs); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ann1", "ann2"} {
		hash, _ := auth.HashPassword(name+" password!", testKDF)
		if _, err := store.CreateUser(ctx, "test", name, "annotator", hash); err != nil {
			t.Fatal(err)
		}
	}
	return c.ID, pairs
}

// TestBrowserLabelingByKeyboard labels pairs with the keyboard only, undoes a decision
// with Ctrl+Z, checks the store and the queue, and checks that a second annotator gets
// the double-labeled pair without seeing the first label. Document text containing
// script tags, event handlers and javascript: links runs none of them.
func TestBrowserLabelingByKeyboard(t *testing.T) {
	base, setup, store := startServerStore(t)
	admin := page{t, browser(t)}
	admin.createAccount(setup, "ada", "a long enough password")
	campaignID, pairs := setupLabeling(t, store)
	ctx := context.Background()

	ann1 := page{t, browser(t)}
	ann1.login(base, "ann1", "ann1 password!")
	ann1.do(chromedp.Navigate(fmt.Sprintf("%s/campaigns/%d/next", base, campaignID)))
	first := ann1.pairID()
	if first != fmt.Sprint(pairs[0]) {
		t.Errorf("first pair offered is %s; want %d", first, pairs[0])
	}
	ann1.noXSS()
	ann1.screenshot("pair-diff")
	ann1.press("3") // minor edits
	ann1.waitFor(`document.querySelector('[data-testid="cat-minor"]').checked`)
	ann1.press(kb.Enter) // submit and next
	ann1.waitFor(`document.querySelector('[data-testid="pair"]')?.dataset.pair !== "` + first + `" && document.readyState === "complete"`)
	second := ann1.pairID()
	ann1.noXSS()
	ev, err := store.LatestEvent(ctx, pairs[0], "ann1")
	if err != nil || ev.Category != "minor" || !ev.Duplicate || ev.Kind != "label" {
		t.Fatalf("stored label for the first pair: %+v %v", ev, err)
	}
	if second == first {
		t.Fatal("the queue did not advance")
	}
	// Keys are off while typing a note: digits and y/n go into the text.
	ann1.do(chromedp.Click(`[data-testid="note"]`), chromedp.KeyEvent("3 y"))
	ann1.waitFor(`document.querySelector('[data-testid="note"]').value === "3 y"`)
	if checked, _ := chromedp.Run(ann1.ctx, chromedp.Evaluate[bool](`!!document.querySelector('input[name="category"]:checked, [data-testid="dup-yes"]:checked')`)); checked {
		t.Error("typing in the note chose a category or a duplicate decision")
	}
	ann1.do(chromedp.Evaluate[chromedp.Void](`document.activeElement.blur(); document.querySelector('[data-testid="note"]').value = ""`))
	// ← goes back to the previous decision, → on to the queue.
	ann1.press(kb.ArrowLeft)
	ann1.onPair(first)
	ann1.press(kb.ArrowRight)
	ann1.onPair(second)
	// Label the second pair 'different', then undo it with Ctrl+Z and relabel it.
	ann1.press("7")
	ann1.waitFor(`document.querySelector('[data-testid="cat-different"]').checked`)
	ann1.press(kb.Enter)
	ann1.waitFor(`document.querySelector('[data-testid="pair"]')?.dataset.pair !== "` + second + `" && document.readyState === "complete"`)
	ann1.do(chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	ann1.onPair(second)
	if ev, _ := store.LatestEvent(ctx, mustInt(t, second), "ann1"); ev.Kind != "retract" {
		t.Errorf("after Ctrl+Z the latest event is %q; want retract", ev.Kind)
	}
	ann1.press("4", "n") // boilerplate-heavy needs y/n: not a duplicate
	ann1.waitFor(`document.querySelector('[data-testid="cat-boilerplate"]').checked && document.querySelector('[data-testid="dup-no"]').checked`)
	ann1.press(kb.Enter)
	ann1.waitFor(`document.querySelector('[data-testid="pair"]')?.dataset.pair !== "` + second + `"` +
		` || !!document.querySelector('[data-testid="queue-empty"]')`)
	if ev, _ := store.LatestEvent(ctx, mustInt(t, second), "ann1"); ev.Category != "boilerplate" || ev.Duplicate || ev.Kind != "label" {
		t.Errorf("relabeled second pair: %+v", ev)
	}
	// The recent-decisions panel lists both, newest first.
	ann1.do(chromedp.Navigate(fmt.Sprintf("%s/campaigns/%d/pairs/%s", base, campaignID, first)))
	if recent := ann1.text(`[data-testid="recent"]`); !strings.Contains(recent, "boilerplate") || !strings.Contains(recent, "minor") {
		t.Errorf("recent decisions: %q", recent)
	}

	// A second annotator gets the double-labeled pair, blind to ann1's label.
	ann2 := page{t, browser(t)}
	ann2.login(base, "ann2", "ann2 password!")
	ann2.do(chromedp.Navigate(fmt.Sprintf("%s/campaigns/%d/next", base, campaignID)))
	if got := ann2.pairID(); got != first {
		t.Errorf("second annotator got pair %s; want the double-labeled %s", got, first)
	}
	n, _ := chromedp.Run(ann2.ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="others"], [data-testid="history"]').length`))
	body, _ := chromedp.Run(ann2.ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if n != 0 || strings.Contains(body, "ann1") {
		t.Error("the second annotator sees the first annotator's label before deciding")
	}
	ann2.screenshot("pair-blind")
	ann2.press("2")
	ann2.waitFor(`document.querySelector('[data-testid="cat-format"]').checked`)
	ann2.press(kb.Enter)
	ann2.waitFor(`document.querySelector('[data-testid="pair"]')?.dataset.pair !== "` + first + `" || !!document.querySelector('[data-testid="queue-empty"]')`)
	if ev, _ := store.LatestEvent(ctx, pairs[0], "ann2"); ev.Category != "format" {
		t.Errorf("ann2's label: %+v", ev)
	}
	// With both labels in, the campaign page shows agreement and the disagreement.
	admin.do(chromedp.Navigate(fmt.Sprintf("%s/campaigns/%d", base, campaignID)))
	if q := admin.text(`[data-testid="adjudication"]`); !strings.Contains(q, "ann1: minor/yes") || !strings.Contains(q, "ann2: format/yes") {
		t.Errorf("adjudication queue: %q", q)
	}
	admin.screenshot("campaign")

	// The 200 KB pair renders in full, and the two panes scroll together.
	admin.do(chromedp.Navigate(fmt.Sprintf("%s/campaigns/%d/pairs/%d", base, campaignID, pairs[3])))
	admin.waitFor(`document.querySelectorAll('#pane-right .ins').length >= 80 && document.readyState === "complete"`)
	admin.do(chromedp.Evaluate[chromedp.Void](`(() => { const l = document.getElementById("pane-left"); l.scrollTop = (l.scrollHeight - l.clientHeight) / 2; l.dispatchEvent(new Event("scroll")); })()`))
	admin.waitFor(`(() => { const r = document.getElementById("pane-right"); const f = r.scrollTop / (r.scrollHeight - r.clientHeight); return f > 0.45 && f < 0.55; })()`)
	admin.screenshot("pair-long")
}
