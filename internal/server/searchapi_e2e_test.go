package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// signOffDemo stores a manifest over the demo dataset (no removals) and has it signed
// off, so the Team page can make a search index from it.
func signOffDemo(t *testing.T, store *db.DB) db.Manifest {
	t.Helper()
	ctx := context.Background()
	list, err := store.Datasets(ctx)
	if err != nil || len(list) == 0 {
		t.Fatalf("datasets: %v %d", err, len(list))
	}
	hash, _ := auth.HashPassword("a long enough password", testKDF)
	prep, _ := store.CreateUser(ctx, "test", "prep", auth.Reviewer, hash)
	appr, _ := store.CreateUser(ctx, "test", "appr", auth.Approver, hash)
	rule, _ := cluster.ParseRule("earliest")
	p := review.Params{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 16, Rows: 8}, Threshold: 0.8, Verification: review.Exact,
		Policy: cluster.Components, Rule: rule, CodeVersion: "test"}
	snap, err := store.DatasetSnapshot(ctx, list[0].ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := store.CreateManifest(ctx, prep, db.NewManifest{DatasetID: list[0].ID, Params: p, DatasetHash: snap, ApprovalsRequired: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := manifests.RequestSignOff(ctx, store, prep, m); err != nil {
		t.Fatal(err)
	}
	m, _ = store.Manifest(ctx, m.ID)
	if ok, err := manifests.Review(ctx, store, appr, m, review.Approve, "", m.ContentHash, "test"); err != nil || !ok.Signed {
		t.Fatalf("sign-off: %v %v", ok, err)
	}
	return m
}

// An admin makes a search index and an API token on the Team page in Chromium; a
// pipeline uses the token over the real server's TCP socket; the admin revokes it and
// the pipeline is refused.
func TestBrowserSearchAPI(t *testing.T) {
	base, setup, store := startServerStore(t)
	admin := page{t, browser(t)}
	admin.createAccount(setup, "ada", "a long enough password")
	signOffDemo(t, store)

	admin.do(chromedp.Navigate(base+"/admin/users#search-api"),
		chromedp.WaitVisible(`[data-testid="search-index-form"]`),
		chromedp.SendKeys(`[data-testid="search-index-form"] input[name="index_name"]`, "crawl stream"),
		chromedp.Click(`[data-testid="search-index-submit"]`))
	admin.waitFor(`!!document.querySelector('[data-testid="search-index-1"]')`)
	admin.do(chromedp.SendKeys(`[data-testid="api-token-form"] input[name="token_name"]`, "crawler"),
		chromedp.Click(`[data-testid="api-token-submit"]`))
	admin.waitFor(`!!document.querySelector('[data-testid="new-api-token-value"]')`)
	token := admin.text(`[data-testid="new-api-token-value"]`)
	if !strings.HasPrefix(token, auth.APITokenPrefix) {
		t.Fatalf("token %q", token)
	}
	admin.screenshot("team-search-api")

	var text string
	list, _ := store.Datasets(context.Background())
	store.EachDocument(context.Background(), list[0].ID, func(d db.Document) error {
		if text == "" && len(strings.Fields(d.Text)) > 200 {
			text = d.Text
		}
		return nil
	})
	search := func(id, body string, insert bool) (int, map[string]any) {
		b, _ := json.Marshal(map[string]any{"insert": insert, "documents": []map[string]string{{"id": id, "text": body}}})
		req, _ := http.NewRequest("POST", base+"/api/v1/indexes/1/search", bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
			t.Fatalf("answer %d is not JSON: %v", res.StatusCode, err)
		}
		return res.StatusCode, out
	}
	if status, out := search("first", text, true); status != 200 || out["inserted"].(float64) != 1 {
		t.Fatalf("insert: %d %v", status, out)
	}
	status, out := search("again", text+" one more word", false)
	if status != 200 || !strings.Contains(fmt.Sprint(out["results"]), "id:first") {
		t.Fatalf("search: %d %v", status, out)
	}

	admin.do(chromedp.Navigate(base+"/admin/users#search-api"),
		chromedp.WaitVisible(`[data-testid="api-tokens"]`))
	if used := admin.text(`[data-testid="api-token-1"]`); strings.Contains(used, "never") {
		t.Errorf("the Team page does not show the token used: %q", used)
	}
	if docs := admin.text(`[data-testid="search-index-1"]`); !strings.Contains(docs, "1") {
		t.Errorf("index row %q", docs)
	}
	admin.do(chromedp.Click(`[data-testid="revoke-api-token-1"]`))
	admin.waitFor(`document.querySelector('[data-testid="api-token-1"]')?.innerText.includes("revoked")`)
	if status, out := search("late", text, false); status != http.StatusUnauthorized {
		t.Errorf("after revoking: %d %v; want 401", status, out)
	}
}
