package server

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/realtext"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// importChain imports real text shaped as a chain A~B~C (B near both, A and C far apart)
// and an exact pair D, D2, with a few unrelated documents.
func importChain(t *testing.T, store *db.DB) db.Dataset {
	t.Helper()
	texts := realtext.Texts(t, 6, 260)
	words := strings.Fields(texts[0])
	seg := func(from, to int) string { return strings.Join(words[20*from:20*to], " ") }
	var lines []string
	add := func(id, text string) {
		b, _ := json.Marshal(map[string]string{"id": id, "text": text})
		lines = append(lines, string(b))
	}
	add("A", seg(0, 10))
	add("B", seg(1, 11))
	add("C", seg(2, 12))
	add("D", texts[1])
	add("D2", strings.ToUpper(texts[1]))
	for i, tx := range texts[2:] {
		add(fmt.Sprintf("other%d", i), tx)
	}
	r, _ := corpus.NewReader(strings.NewReader(strings.Join(lines, "\n")), "chain.jsonl", corpus.JSONL, corpus.Options{})
	rep, err := ingest.Documents(context.Background(), store, r, "chain.jsonl", ingest.Options{Dataset: "chain"})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Dataset
}

// TestBrowserReviewChainedCluster is a review as people do it: a reviewer runs a
// configuration from the form, reviews the chained cluster by keyboard (excludes C, undoes
// and excludes it again, cuts the chain at the suggested link, approves B), approves the
// other cluster, requests sign-off; an approver signs off and exports; the downloaded
// removals.csv holds exactly the approved rows.
func TestBrowserReviewChainedCluster(t *testing.T) {
	store := openStore(t, "review.db")
	base, setup := serveStore(t, store, Config{})
	admin := page{t, browser(t)}
	admin.createAccount(setup, "ada", "a long enough password")
	ds := importChain(t, store)
	ctx := context.Background()
	for _, u := range []struct {
		name string
		role auth.Role
	}{{"rita", auth.Reviewer}, {"alice", auth.Approver}} {
		hash, _ := auth.HashPassword(u.name+" password!", testKDF)
		if _, err := store.CreateUser(ctx, "test", u.name, u.role, hash); err != nil {
			t.Fatal(err)
		}
	}

	rita := page{t, browser(t)}
	rita.login(base, "rita", "rita password!")
	// One approval (alice's), fewer than the default two: recorded as a lowering.
	q := url.Values{"spec": {"level=word size=5 k=128"}, "bands": {"32"}, "rows": {"4"}, "threshold": {"0.75"},
		"verification": {"exact"}, "policy": {"components"}, "keeper": {"earliest"}, "approvals": {"1"}}
	rita.do(chromedp.Navigate(fmt.Sprintf("%s/datasets/%d/runs/new?%s", base, ds.ID, q.Encode())),
		chromedp.WaitVisible(`[data-testid="run-form"]`), chromedp.Click(`[data-testid="run-submit"]`))
	rita.waitFor(`!!document.querySelector('[data-testid="run-manifest"]')`)
	rita.screenshot("run-done")
	rita.do(chromedp.Click(`[data-testid="run-manifest"]`))
	rita.waitFor(`!!document.querySelector('[data-testid="manifest"]') && document.readyState === "complete"`)
	manifestURL, _ := chromedp.Run(rita.ctx, chromedp.Evaluate[string](`document.location.pathname`))
	rita.waitFor(`document.querySelector('[data-testid="impact-chart"]')?.complete && document.querySelector('[data-testid="impact-chart"]').naturalWidth > 0`)
	rita.do(chromedp.Click(`[data-testid="review-clusters"]`))
	rita.waitFor(`!!document.querySelector('[data-testid="cluster-table"]')`)
	rita.screenshot("clusters")
	// The riskiest cluster comes first: the chained one.
	rita.do(chromedp.Click(`[data-testid="cluster-table"] tbody tr:first-child a`))
	onCluster := `!!document.querySelector('[data-testid="chained"]') && document.readyState === "complete"`
	rita.waitFor(onCluster)
	decision := func(ext, want string) string {
		return `document.querySelector('[data-testid="decision-` + ext + `"]')?.innerText.startsWith("` + want + `") && document.readyState === "complete"`
	}
	// The cursor starts on the riskiest removal, C (chained through B).
	rita.waitFor(`document.querySelector('tr.focused')?.dataset.testid === "member-C"`)
	// Charts load under the page's CSP, and C's text is shown against the keeper's.
	rita.waitFor(`[...document.querySelectorAll('[data-testid="matrix-chart"], [data-testid="chain-chart"]')].every(i => i.complete && i.naturalWidth > 0)`)
	rita.press("d")
	rita.waitFor(`document.querySelector('[data-testid="member-diff"] [data-testid="pane-unified"]')?.textContent.length > 500 && document.querySelectorAll('[data-testid="pane-unified"] .ins').length > 0`)
	rita.screenshot("cluster-chained")
	rita.press("e")
	rita.waitFor(decision("C", "excluded"))
	rita.do(chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	rita.waitFor(decision("C", "proposed"))
	rita.waitFor(`document.querySelector('tr.focused')?.dataset.testid === "member-C"`)
	rita.press("e")
	rita.waitFor(decision("C", "excluded"))
	// Cut the chain at the suggested link (B~C): C leaves the cluster.
	if cut := rita.text(`[data-testid="suggested-cut"]`); cut != "B ~ C" {
		t.Errorf("suggested cut %q; want B ~ C", cut)
	}
	rita.do(chromedp.Click(`[data-testid="cut-suggested"]`))
	rita.waitFor(`!!document.querySelector('[data-testid="cluster-message"]') && !document.querySelector('[data-testid="member-C"]') && document.readyState === "complete"`)
	// j moves to B, q approves it; then Enter goes on to the next cluster.
	rita.waitFor(`document.querySelector('tr.focused')?.dataset.testid === "member-B"`)
	rita.press("q")
	rita.waitFor(decision("B", "approved"))
	rita.waitFor(`!!document.querySelector('[data-testid="cluster-decided"]')`)
	rita.press(kb.Enter)
	rita.waitFor(`!!document.querySelector('[data-testid="member-D2"]') && document.readyState === "complete"`)
	rita.press("Q")
	rita.waitFor(decision("D2", "approved"))
	rita.do(chromedp.Navigate(base + manifestURL))
	rita.waitFor(`!!document.querySelector('[data-testid="request-signoff"]')`)
	if n := rita.text(`[data-testid="recent"]`); !strings.Contains(n, "cut cluster") || !strings.Contains(n, "excluded C") || !strings.Contains(n, "cut cluster 1 at B~C: 1 cluster, 1 document left alone") {
		t.Errorf("recent decisions: %q", n)
	}
	rita.clickReady(`[data-testid="request-signoff"]`)
	rita.waitFor(`document.querySelector('[data-testid="manifest"]')?.dataset.state === "in_review"`)
	if n, _ := chromedp.Run(rita.ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="approve"]').length`)); n != 0 {
		t.Error("the preparer is offered the approval")
	}

	alice := page{t, browser(t)}
	alice.login(base, "alice", "alice password!")
	alice.do(chromedp.Navigate(base + manifestURL))
	alice.waitFor(`!!document.querySelector('[data-testid="approve"]')`)
	alice.do(chromedp.SendKeys(`[data-testid="review-comment"]`, "C is a different section: right to keep it"),
		chromedp.Click(`[data-testid="approve"]`))
	alice.waitFor(`document.querySelector('[data-testid="manifest"]')?.dataset.state === "signed"`)
	alice.clickReady(`[data-testid="export-open"]`)
	alice.waitFor(`document.querySelector('[data-testid="export-count"]')?.innerText === "2 documents"`)
	alice.do(chromedp.Click(`[data-testid="export"]`))
	alice.waitFor(`document.querySelector('[data-testid="manifest"]')?.dataset.state === "applied"`)
	alice.screenshot("exported")
	body, err := chromedp.Run(alice.ctx, chromedp.Evaluate[string](
		`fetch(document.querySelector('[data-testid="download-csv"]').href).then(r => r.text())`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("removals.csv: %v\n%s", err, body)
	}
	rows := map[string]string{}
	for _, r := range recs[1:] {
		rows[r[3]] = r[4] + "/" + r[17]
	}
	if len(rows) != 2 || rows["B"] != "A/approved" || rows["D2"] != "D/approved" {
		t.Errorf("exported rows %v; want B (kept A) and D2 (kept D), approved, and not C", rows)
	}
	var m db.Manifest
	list, _ := store.Manifests(ctx, ds.ID)
	if len(list) == 1 {
		m = list[0].Manifest
	}
	sos, _ := store.SignOffs(ctx, m.ID)
	if m.State != review.Exported || len(sos) != 1 || sos[0].Record.Approvals[0].Name != "alice" || sos[0].Record.Preparer.Name != "rita" {
		t.Errorf("after the export: state %s, sign-offs %+v", m.State, sos)
	}
	if c, err := store.VerifyAudit(ctx, review.AuditHead{}); err != nil || !c.Intact() {
		t.Errorf("audit chain: %+v %v", c, err)
	}
}
