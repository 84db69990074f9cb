package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
	"github.com/dedupstudio/dedupstudio/internal/realtext"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// searchParams is the configuration the search API tests sign off: word 5-shingles,
// k=128, 16 bands x 4 rows, threshold 0.7.
func searchParams(v review.Verification) review.Params {
	rule, _ := cluster.ParseRule("earliest")
	return review.Params{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 16, Rows: 4}, Threshold: 0.7, Verification: v,
		Policy: cluster.Components, Rule: rule, CodeVersion: "test"}
}

// withManifest stores a manifest of p over the fixture's dataset (no removals),
// prepared by the reviewer; signed, it is signed off by the approver too.
func (f *fixture) withManifest(p review.Params, signed bool) db.Manifest {
	f.t.Helper()
	ctx := context.Background()
	if list, _ := f.store.Datasets(ctx); len(list) == 0 {
		f.withCampaignDocsOnly()
	}
	list, _ := f.store.Datasets(ctx)
	f.signIn("reviewer")
	f.signIn("approver")
	prep, _ := f.store.UserByName(ctx, "reviewer")
	appr, _ := f.store.UserByName(ctx, "approver")
	snap, err := f.store.DatasetSnapshot(ctx, list[0].ID, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	m, err := f.store.CreateManifest(ctx, prep, db.NewManifest{DatasetID: list[0].ID, Params: p, DatasetHash: snap, ApprovalsRequired: 1})
	if err != nil {
		f.t.Fatal(err)
	}
	if !signed {
		return m
	}
	if err := manifests.RequestSignOff(ctx, f.store, prep, m); err != nil {
		f.t.Fatal(err)
	}
	m, _ = f.store.Manifest(ctx, m.ID)
	if ok, err := manifests.Review(ctx, f.store, appr, m, review.Approve, "", m.ContentHash, "test"); err != nil || !ok.Signed {
		f.t.Fatalf("sign-off: %v, %v", ok, err)
	}
	m, _ = f.store.Manifest(ctx, m.ID)
	if m.State != review.SignedOff {
		f.t.Fatalf("manifest %d is %s; want signed off", m.ID, m.State)
	}
	return m
}

var apiTokenRE = regexp.MustCompile(`data-testid="new-api-token-value">(dsk_[A-Za-z0-9_-]+)<`)

// newAPIToken makes a token on the Team page as the admin and returns it as shown once.
func (f *fixture) newAPIToken(name string) string {
	f.t.Helper()
	_, page := f.follow(f.do("POST", "/admin/api-tokens", f.admin, url.Values{"token_name": {name}}), f.admin)
	m := apiTokenRE.FindStringSubmatch(page)
	if m == nil {
		f.t.Fatalf("the Team page does not show the new token:\n%s", page)
	}
	return m[1]
}

// newSearchIndex makes an index from manifest m on the Team page and returns its id.
func (f *fixture) newSearchIndex(m db.Manifest, name string) int64 {
	f.t.Helper()
	_, page := f.follow(f.do("POST", "/admin/search-indexes", f.admin, url.Values{"manifest": {itoa64(m.ID)}, "index_name": {name}}), f.admin)
	match := regexp.MustCompile(`Made search index (\d+)`).FindStringSubmatch(page)
	if match == nil {
		f.t.Fatalf("no index made:\n%s", page)
	}
	var id int64
	fmt.Sscan(match[1], &id)
	return id
}

// searchPath is the search API's address of index id.
func searchPath(id int64) string {
	return fmt.Sprintf("/api/v1/indexes/%d/search", id)
}

// streamIndex makes what most API tests start from: a pipeline's token, and an index
// named "stream" of a signed-off manifest verified by v; it returns the token and the
// index's search path.
func (f *fixture) streamIndex(v review.Verification) (token, path string) {
	f.t.Helper()
	token = f.newAPIToken("pipeline")
	return token, searchPath(f.newSearchIndex(f.withManifest(searchParams(v), true), "stream"))
}

// api sends a JSON request to h as a pipeline would: no cookie, a bearer token when
// one is given.
func api(t *testing.T, h http.Handler, method, path, token string, body any) (int, map[string]any, http.Header) {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := serve(h, req)
	var out map[string]any
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s %s: %d with Content-Type %q; want JSON\n%s", method, path, rec.Code, ct, rec.Body.String())
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: %d, not JSON: %v\n%s", method, path, rec.Code, err, rec.Body.String())
	}
	return rec.Code, out, rec.Header()
}

type doc struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

type searchBody struct {
	Documents []doc `json:"documents"`
	Insert    bool  `json:"insert"`
}

// nearCopy changes one word in a hundred: word 5-shingle Jaccard about 0.9.
func nearCopy(text string, seed int) string {
	words := strings.Fields(text)
	for i := seed % 100; i < len(words); i += 100 {
		words[i] = fmt.Sprintf("changed%d", seed)
	}
	return strings.Join(words, " ")
}

func searchResults(t *testing.T, out map[string]any) []map[string]any {
	t.Helper()
	list, ok := out["results"].([]any)
	if !ok {
		t.Fatalf("no results in %v", out)
	}
	rs := make([]map[string]any, len(list))
	for i, x := range list {
		rs[i] = x.(map[string]any)
	}
	return rs
}

func dupIDs(r map[string]any) []string {
	var ids []string
	for _, d := range r["duplicates"].([]any) {
		ids = append(ids, d.(map[string]any)["id"].(string))
	}
	return ids
}

// Only a live API token opens the search API, and it opens nothing else; tokens and
// indexes are made on the Team page, shown once, revoked there, and audited.
func TestSearchAPIAuth(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	m := f.withManifest(searchParams(review.Estimate), true)
	token := f.newAPIToken("crawler")
	id := f.newSearchIndex(m, "crawl")
	path := searchPath(id)
	body := searchBody{Documents: []doc{{"x", "a few words of text to search for"}}}

	// The token is stored only as its hash.
	if res, page := get(t, f.h, "/admin/users", f.admin); res.StatusCode != 200 || strings.Contains(page, token) ||
		!strings.Contains(page, `data-testid="api-token-1"`) || !strings.Contains(page, `data-testid="search-index-1"`) {
		t.Errorf("Team page after the token: %d, shows the token again: %v", res.StatusCode, strings.Contains(page, token))
	}
	tokens, _ := f.store.APITokens(ctx)
	if len(tokens) != 1 || !bytes.Equal(mustHashOf(t, f.store, token), auth.HashToken(token)) {
		t.Fatalf("tokens: %+v", tokens)
	}

	refused := []struct {
		name, header string
		status       int
	}{
		{"no header", "", 401},
		{"not bearer", "Basic " + token, 401},
		{"empty bearer", "Bearer ", 401},
		{"unknown token", "Bearer dsk_" + strings.Repeat("A", 43), 401},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", path, strings.NewReader(`{"documents":[{"id":"x","text":"y"}]}`))
			if c.header != "" {
				req.Header.Set("Authorization", c.header)
			}
			rec := serve(f.h, req)
			var e map[string]any
			if rec.Code != c.status || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e["error"] == "" ||
				!strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%d %q (WWW-Authenticate %q); want %d with a JSON error", rec.Code, rec.Body.String(), rec.Header().Get("WWW-Authenticate"), c.status)
			}
		})
	}
	// A session cookie does not open the API, not even an admin's.
	req := httptest.NewRequest("POST", path, strings.NewReader(`{"documents":[{"id":"x","text":"y"}]}`))
	req.AddCookie(f.admin)
	rec := serve(f.h, req)
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("API with an admin's session cookie: %d; want 401", rec.Code)
	}
	// The token works, and is seen used.
	if status, out, _ := api(t, f.h, "POST", path, token, body); status != 200 {
		t.Fatalf("search with the token: %d %v", status, out)
	}
	if tokens, _ := f.store.APITokens(ctx); tokens[0].LastUsed.IsZero() {
		t.Error("the token's last use was not recorded")
	}
	// The token opens no page and no other request, and changes nothing there.
	before, _ := f.store.Fingerprint(ctx, "sessions", "api_tokens")
	for _, rt := range routeMatrix {
		req := httptest.NewRequest(rt.method, rt.path, strings.NewReader(""))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		rec := serve(f.h, req)
		wantLogin := rt.method == "GET" && rec.Code == http.StatusSeeOther && strings.HasPrefix(rec.Header().Get("Location"), "/login")
		if !wantLogin && !(rt.method == "POST" && rec.Code == http.StatusUnauthorized) {
			t.Errorf("%s %s with an API token: %d; want it refused as signed out", rt.method, rt.path, rec.Code)
		}
	}
	if after, _ := f.store.Fingerprint(ctx, "sessions", "api_tokens"); after != before {
		t.Error("requests with an API token to other routes changed the database")
	}
	// Revoked on the Team page: refused at once.
	f.follow(f.do("POST", fmt.Sprintf("/admin/api-tokens/%d/revoke", tokens[0].ID), f.admin, url.Values{}), f.admin)
	if status, out, _ := api(t, f.h, "POST", path, token, body); status != 401 || !strings.Contains(fmt.Sprint(out["error"]), "revoked") {
		t.Errorf("revoked token: %d %v; want 401 saying it was revoked", status, out)
	}
	if rec := f.do("POST", fmt.Sprintf("/admin/api-tokens/%d/revoke", tokens[0].ID), f.admin, url.Values{}); rec.Code != http.StatusNotFound {
		t.Errorf("revoking twice: %d; want 404", rec.Code)
	}
	// Both are in the audit log, by the admin.
	events, _ := f.store.AuditOf(ctx, fmt.Sprintf("api_token:%d", tokens[0].ID), 10)
	if len(events) != 2 || events[0].Action != "api_token.create" || events[1].Action != "api_token.revoke" || events[1].Actor != "admin" {
		t.Errorf("audit of the token: %+v", events)
	}
	hash, _ := auth.HashPassword("admin2-password", cheapKDF)
	admin2, err := f.store.CreateUser(ctx, "test", "admin2", auth.Admin, hash)
	if err != nil {
		t.Fatal(err)
	}
	token2, hash2 := auth.NewAPIToken()
	if _, err := f.store.CreateAPIToken(ctx, admin2, "second", hash2); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := api(t, f.h, "POST", path, token2, body); status != 200 {
		t.Errorf("second admin's token: %d; want 200", status)
	}
	// Disabling an admin revokes their tokens, and enabling them again does not bring
	// the tokens back; so does demoting an admin, and promoting them again.
	f.follow(f.do("POST", fmt.Sprintf("/admin/users/%d/disable", admin2.ID), f.admin, url.Values{}), f.admin)
	if status, out, _ := api(t, f.h, "POST", path, token2, body); status != 401 || !strings.Contains(fmt.Sprint(out["error"]), "revoked") {
		t.Errorf("token of a disabled admin: %d %v; want 401, revoked", status, out)
	}
	f.follow(f.do("POST", fmt.Sprintf("/admin/users/%d/enable", admin2.ID), f.admin, url.Values{}), f.admin)
	if status, out, _ := api(t, f.h, "POST", path, token2, body); status != 401 {
		t.Errorf("token of a disabled admin enabled again: %d %v; want 401", status, out)
	}
	token3, hash3 := auth.NewAPIToken()
	if _, err := f.store.CreateAPIToken(ctx, admin2, "third", hash3); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := api(t, f.h, "POST", path, token3, body); status != 200 {
		t.Errorf("re-enabled admin's new token: %d; want 200", status)
	}
	for _, role := range []string{"reviewer", "admin"} {
		f.follow(f.do("POST", fmt.Sprintf("/admin/users/%d/role", admin2.ID), f.admin, url.Values{"role": {role}}), f.admin)
		if u, _ := f.store.UserByID(ctx, admin2.ID); string(u.Role) != role {
			t.Fatalf("admin2 is %s; want %s", u.Role, role)
		}
		if status, out, _ := api(t, f.h, "POST", path, token3, body); status != 401 || !strings.Contains(fmt.Sprint(out["error"]), "revoked") {
			t.Errorf("token of an admin demoted (now %s): %d %v; want 401, revoked", role, status, out)
		}
	}
	revokes := 0
	log, _ := f.store.AuditLog(ctx, 1000)
	for _, e := range log {
		if e.Action == "api_token.revoke" && strings.Contains(e.Detail, "creator") {
			revokes++
		}
	}
	if revokes != 2 {
		t.Errorf("%d audited revocations by disabling or demoting; want 2", revokes)
	}
	// An index needs a signed-off manifest; the Team page says so and makes none.
	draft := f.withManifest(searchParams(review.Estimate), false)
	_, page := f.follow(f.do("POST", "/admin/search-indexes", f.admin, url.Values{"manifest": {itoa64(draft.ID)}, "index_name": {"early"}}), f.admin)
	if !strings.Contains(page, "only a signed-off configuration") {
		t.Errorf("an index of a draft: the page does not say why it was refused")
	}
	if xs, _ := f.store.SearchIndexes(ctx); len(xs) != 1 {
		t.Errorf("%d indexes; want 1 (none from the draft)", len(xs))
	}
}

func mustHashOf(t *testing.T, store *db.DB, token string) []byte {
	t.Helper()
	if _, err := store.APITokenByHash(context.Background(), auth.HashToken(token)); err != nil {
		t.Fatalf("the token's hash is not stored: %v", err)
	}
	return auth.HashToken(token)
}

// Search-before-insert: near-duplicates above the threshold with their similarities,
// inserts only documents that have none (idempotent on the id), within a batch too;
// and a restart over the same database file keeps what was inserted.
func TestSearchAPISemanticsAndRestart(t *testing.T) {
	t.Parallel()
	for _, v := range []review.Verification{review.Estimate, review.Exact} {
		t.Run(string(v), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, 1<<20)
			ctx := context.Background()
			token, path := f.streamIndex(v)
			texts := realtext.Texts(t, 3, 250)

			status, out, _ := api(t, f.h, "POST", path, token, searchBody{Insert: true, Documents: []doc{
				{"a", texts[0]}, {"a-copy", nearCopy(texts[0], 3)}, {"b", texts[1]}}})
			if status != 200 || out["inserted"].(float64) != 2 || out["verification"] != string(v) || out["threshold"].(float64) != 0.7 {
				t.Fatalf("first batch: %d %v", status, out)
			}
			rs := searchResults(t, out)
			if rs[0]["inserted"] != true || len(dupIDs(rs[0])) != 0 || rs[1]["inserted"] != false ||
				fmt.Sprint(dupIDs(rs[1])) != "[a]" || rs[2]["inserted"] != true {
				t.Fatalf("first batch results: %v", rs)
			}
			d := rs[1]["duplicates"].([]any)[0].(map[string]any)
			if est := d["estimate"].(float64); est < 0.7 || est > 1 {
				t.Errorf("estimate %v; want in [0.7, 1]", est)
			}
			if jac, ok := d["jaccard"].(float64); (v == review.Exact) != ok || (ok && (jac < 0.7 || jac >= 1)) {
				t.Errorf("jaccard %v (present %v) under %s verification", d["jaccard"], ok, v)
			}
			// Search only: finds, inserts nothing.
			status, out, _ = api(t, f.h, "POST", path, token, searchBody{Documents: []doc{{"q", nearCopy(texts[1], 9)}, {"c", texts[2]}}})
			rs = searchResults(t, out)
			if status != 200 || fmt.Sprint(dupIDs(rs[0])) != "[b]" || len(dupIDs(rs[1])) != 0 || rs[0]["inserted"] != false || rs[1]["inserted"] != false {
				t.Errorf("search only: %d %v", status, out)
			}
			// The same id again: idempotent, not its own duplicate, nothing stored.
			status, out, _ = api(t, f.h, "POST", path, token, searchBody{Insert: true, Documents: []doc{{"a", texts[0]}}})
			rs = searchResults(t, out)
			if status != 200 || rs[0]["already_indexed"] != true || rs[0]["inserted"] != false || len(dupIDs(rs[0])) != 0 {
				t.Errorf("again: %d %v", status, out)
			}
			if xs, _ := f.store.SearchIndexes(ctx); xs[0].Docs != 2 {
				t.Errorf("the store holds %d documents; want 2", xs[0].Docs)
			}

			// Restart: a new process over the same file rebuilds the index.
			path2 := f.store.Path()
			store2 := dbtest.OpenFile(t, path2)
			reg := newJobs(t)
			h2 := New(testDeps(store2, reg))
			status, out, _ = api(t, h2, "POST", path, token, searchBody{Insert: true, Documents: []doc{
				{"a-late", nearCopy(texts[0], 42)}, {"b", texts[1]}, {"c", texts[2]}}})
			rs = searchResults(t, out)
			if status != 200 || fmt.Sprint(dupIDs(rs[0])) != "[a]" || rs[1]["already_indexed"] != true || rs[2]["inserted"] != true {
				t.Errorf("after a restart: %d %v", status, out)
			}
		})
	}
}

// Bad input is refused with a JSON error naming the document and field, and stores
// nothing.
func TestSearchAPIBadInput(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	token, path := f.streamIndex(review.Estimate)
	many := make([]doc, maxSearchDocs+1)
	for i := range many {
		many[i] = doc{fmt.Sprint(i), "text"}
	}
	big := `{"insert":true,"documents":[{"id":"x","text":"` + strings.Repeat("word ", maxSearchBody/5) + `"}]}`
	cases := []struct {
		name   string
		body   any
		status int
		doc    int // -1: none
		field  string
	}{
		{"empty body", "", 400, -1, ""},
		{"not JSON", "{documents: 1", 400, -1, ""},
		{"unknown field", `{"docs":[]}`, 400, -1, ""},
		{"two values", `{"documents":[{"id":"a","text":"b"}]} {}`, 400, -1, ""},
		{"documents not an array", `{"documents":{"id":"a"}}`, 400, -1, ""},
		{"no documents", `{"documents":[],"insert":true}`, 422, -1, "documents"},
		{"too many documents", searchBody{Insert: true, Documents: many}, 422, -1, "documents"},
		{"missing id", `{"insert":true,"documents":[{"id":"a","text":"t"},{"text":"t"}]}`, 422, 1, "id"},
		{"id a number", `{"insert":true,"documents":[{"id":7,"text":"t"}]}`, 422, 0, "id"},
		{"text missing", `{"insert":true,"documents":[{"id":"a","text":"t"},{"id":"b","text":"u"},{"id":"c"}]}`, 422, 2, "text"},
		{"text blank", `{"insert":true,"documents":[{"id":"a","text":"  \n"}]}`, 422, 0, "text"},
		{"text not a string", `{"insert":true,"documents":[{"id":"a","text":["t"]}]}`, 422, 0, "text"},
		{"document not an object", `{"documents":[{"id":"a","text":"t"},"just text"]}`, 422, 1, ""},
		{"document null", `{"documents":[null]}`, 422, 0, ""},
		{"document a number", `{"documents":[{"id":"a","text":"t"},7]}`, 422, 1, ""},
		{"insert null", `{"insert":null,"documents":[{"id":"a","text":"t"}]}`, 400, -1, "insert"},
		{"insert a string", `{"insert":"true","documents":[{"id":"a","text":"t"}]}`, 400, -1, "insert"},
		{"insert a number", `{"documents":[{"id":"a","text":"t"}],"insert":1}`, 400, -1, "insert"},
		{"unknown document field", `{"insert":true,"documents":[{"id":"a","text":"t","txt":"u"}]}`, 422, 0, ""},
		{"same id twice", `{"insert":true,"documents":[{"id":"a","text":"t"},{"id":"a","text":"u"}]}`, 422, 1, "id"},
		{"id too long", searchBody{Insert: true, Documents: []doc{{strings.Repeat("i", maxDocID+1), "t"}}}, 422, 0, "id"},
		{"body too large", big, 413, -1, ""},
		// encoding/json would turn these into U+FFFD, so that u\xff1 and u\xfe1 became one id.
		{"id not UTF-8", "{\"insert\":true,\"documents\":[{\"id\":\"a\",\"text\":\"t\"},{\"id\":\"u\xff1\",\"text\":\"t\"}]}", 422, 1, "id"},
		{"text not UTF-8", "{\"insert\":true,\"documents\":[{\"id\":\"a\",\"text\":\"caf\xe9 au lait\"}]}", 422, 0, "text"},
		{"id a lone surrogate", `{"insert":true,"documents":[{"id":"u\ud800","text":"t"}]}`, 422, 0, "id"},
		{"text a lone low surrogate", `{"insert":true,"documents":[{"id":"a","text":"t \udc00"}]}`, 422, 0, "text"},
		{"id with NUL", `{"insert":true,"documents":[{"id":"a\u0000b","text":"t"}]}`, 422, 0, "id"},
		{"id with a tab", `{"insert":true,"documents":[{"id":"a\tb","text":"t"}]}`, 422, 0, "id"},
		{"key not UTF-8", "{\"insert\":true,\"documents\":[{\"id\":\"a\",\"text\":\"t\",\"\xff\":1}]}", 400, -1, ""},
		// Keys are exact, and given once.
		{"request key in capitals", `{"Documents":[{"id":"a","text":"t"}]}`, 400, -1, ""},
		{"document key in capitals", `{"documents":[{"ID":"a","text":"t"}]}`, 422, 0, ""},
		{"request key twice", `{"documents":[{"id":"a","text":"t"}],"documents":[{"id":"b","text":"t"}]}`, 400, -1, "documents"},
		{"insert twice", `{"insert":false,"documents":[{"id":"a","text":"t"}],"insert":true}`, 400, -1, "insert"},
		{"document key twice", `{"documents":[{"id":"a","text":"t"},{"id":"b","text":"t","id":"c"}]}`, 422, 1, "id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, out, _ := api(t, f.h, "POST", path, token, c.body)
			msg, _ := out["error"].(string)
			t.Logf("%d %s", status, msg)
			if status != c.status || msg == "" {
				t.Fatalf("%d %v; want %d with an error message", status, out, c.status)
			}
			gotDoc, hasDoc := out["document"].(float64)
			if (c.doc >= 0) != hasDoc || (hasDoc && int(gotDoc) != c.doc) {
				t.Errorf("document %v; want %d (%s)", out["document"], c.doc, msg)
			}
			if field, _ := out["field"].(string); field != c.field {
				t.Errorf("field %q; want %q (%s)", field, c.field, msg)
			}
		})
	}
	// A body of unknown length (chunked) is cut off at the limit all the same.
	req := httptest.NewRequest("POST", path, io.MultiReader(strings.NewReader(big)))
	req.Header.Set("Authorization", "Bearer "+token)
	rec := serve(f.h, req)
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), `"error"`) {
		t.Errorf("chunked body over the limit: %d %s; want 413 with a JSON error", rec.Code, rec.Body.String())
	}
	if xs, _ := f.store.SearchIndexes(ctx); xs[0].Docs != 0 {
		t.Errorf("bad requests stored %d documents", xs[0].Docs)
	}
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"POST", "/api/v1/indexes/999/search", 404},
		{"POST", "/api/v1/indexes/abc/search", 404},
		{"GET", path, 405},
		{"POST", "/api/v1/nothing", 404},
	} {
		if status, out, _ := api(t, f.h, c.method, c.path, token, `{"documents":[{"id":"a","text":"t"}]}`); status != c.status {
			t.Errorf("%s %s: %d %v; want %d", c.method, c.path, status, out, c.status)
		}
	}
}

// Near-copies of one document sent at once by many clients, each asking to insert:
// exactly one is inserted, in memory and in the store, and every other names a
// near-duplicate. Searches run alongside.
func TestSearchAPIConcurrentInserts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	token, path := f.streamIndex(review.Estimate)
	text := realtext.Texts(t, 1, 250)[0]
	var wg sync.WaitGroup
	var mu sync.Mutex
	inserted := 0
	for i := range 16 {
		wg.Go(func() {
			status, out, _ := api(t, f.h, "POST", path, token, searchBody{Insert: true, Documents: []doc{{fmt.Sprint("copy-", i), nearCopy(text, i)}}})
			if status != 200 {
				t.Errorf("copy %d: %d %v", i, status, out)
				return
			}
			r := searchResults(t, out)[0]
			mu.Lock()
			defer mu.Unlock()
			if r["inserted"] == true {
				inserted++
			} else if len(dupIDs(r)) == 0 {
				t.Errorf("copy %d: neither inserted nor a duplicate: %v", i, r)
			}
		})
		wg.Go(func() {
			if status, out, _ := api(t, f.h, "POST", path, token, searchBody{Documents: []doc{{"probe", text}}}); status != 200 {
				t.Errorf("search: %d %v", status, out)
			}
		})
	}
	wg.Wait()
	if xs, _ := f.store.SearchIndexes(ctx); inserted != 1 || xs[0].Docs != 1 {
		t.Errorf("inserted %d, stored %d; want 1 and 1", inserted, xs[0].Docs)
	}
}

// Revoking the manifest withdraws its configuration: its index refuses searches, and the
// Team page says so.
func TestSearchAPIRevokedManifest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	token := f.newAPIToken("pipeline")
	m := f.withManifest(searchParams(review.Estimate), true)
	id := f.newSearchIndex(m, "stream")
	path := searchPath(id)
	body := searchBody{Documents: []doc{{"x", "some words to look for here"}}}
	if status, out, _ := api(t, f.h, "POST", path, token, body); status != 200 {
		t.Fatalf("before the revocation: %d %v", status, out)
	}
	f.follow(f.do("POST", fmt.Sprintf("/manifests/%d/revoke", m.ID), f.signIn("approver"), url.Values{"reason": {"wrong threshold"}}), f.signIn("approver"))
	if status, out, _ := api(t, f.h, "POST", path, token, body); status != http.StatusConflict || !strings.Contains(fmt.Sprint(out["error"]), "revoked") {
		t.Errorf("after the revocation: %d %v; want 409 saying the sign-off was revoked", status, out)
	}
	if _, page := get(t, f.h, "/admin/users", f.admin); !strings.Contains(page, `data-testid="search-index-revoked"`) {
		t.Error("the Team page does not show the index as refused")
	}
}

// The body parser never panics, and answers either documents with distinct, non-empty
// ids and texts, or a 4xx JSON error: go test ./web -fuzz FuzzReadSearch.
func FuzzReadSearch(f *testing.F) {
	for _, seed := range []string{
		`{"documents":[{"id":"a","text":"t"}],"insert":true}`,
		`{"documents":[{"id":"a","text":"t"},{"id":"a","text":"u"}]}`,
		`{"documents":[{"id":7}]}`, `{"documents":["x"]}`, `{"documents":{}}`, `[]`, `{`, ``,
		`{"documents":[{"id":"a","text":"t","x":1}]}`, `{"documents":[null,{"id":"\ud800","text":" "}]}`,
		"{\"documents\":[{\"id\":\"u\xff1\",\"text\":\"t\"}]}", `{"documents":[{"id":"\ud83d\ude00","text":"\ud800t"}]}`,
		`{"Documents":[{"ID":"a","text":"t","text":"u"}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest("POST", "/api/v1/indexes/1/search", bytes.NewReader(body))
		docs, _, err := readSearch(httptest.NewRecorder(), req)
		if err != nil {
			ae, ok := err.(*apiError)
			if !ok || ae.Status < 400 || ae.Status > 499 || ae.Message == "" {
				t.Fatalf("readSearch(%q) = %v; want a 4xx *apiError", body, err)
			}
			return
		}
		if !utf8.Valid(body) {
			t.Fatalf("readSearch(%q) accepted a body that is not UTF-8", body)
		}
		seen := map[string]bool{}
		for i, d := range docs {
			if d.ID == "" || seen[d.ID] || strings.TrimSpace(d.Text) == "" || controlAt(d.ID) >= 0 ||
				strings.ContainsRune(d.ID+d.Text, utf8.RuneError) && !bytes.ContainsRune(body, utf8.RuneError) && !bytes.Contains(bytes.ToLower(body), []byte(`\ufffd`)) {
				t.Fatalf("readSearch(%q): document %d = %+v accepted", body, i, d)
			}
			seen[d.ID] = true
		}
	})
}

// The curl example of docs/search-api.md is what the server answers: its body is sent,
// as the page writes it, to an index of the configuration the page names, and the
// answer must be the JSON the page shows.
func TestSearchAPIDocsExample(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../docs/search-api.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	at := strings.Index(text, "curl -sS -X POST http://127.0.0.1:8080/api/v1/indexes/1/search")
	if at < 0 {
		t.Fatal("docs/search-api.md: no curl example of the search API")
	}
	_, rest, _ := strings.Cut(text[at:], "-d '")
	body, rest, ok := strings.Cut(rest, "'\n```")
	_, rest, ok2 := strings.Cut(rest, "```json\n")
	shown, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/search-api.md: the curl example's body or its answer is not where expected")
	}
	f := newFixture(t, 1<<20)
	token := f.newAPIToken("readme")
	if id := f.newSearchIndex(f.withManifest(searchParams(review.Exact), true), "readme"); id != 1 {
		t.Fatalf("index %d; want 1 as in docs/search-api.md", id)
	}
	status, got, _ := api(t, f.h, "POST", "/api/v1/indexes/1/search", token, body)
	raw, _ := json.Marshal(got)
	var want map[string]any
	if err := json.Unmarshal([]byte(shown), &want); err != nil {
		t.Fatalf("docs/search-api.md: the answer shown is not JSON: %v\n%s\nthe server answers %d\n%s", err, shown, status, raw)
	}
	if status != 200 || !reflect.DeepEqual(got, want) {
		t.Errorf("the example of docs/search-api.md answers %d\n%s\nnot what the page shows:\n%s", status, raw, shown)
	}
}

// A pipeline whose body trickles past the server's read deadline is told so with 408
// (it was 400, "reading the body: i/o timeout", as if the JSON were wrong).
func TestSearchAPISlowBody(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	token := f.newAPIToken("pipeline")
	id := f.newSearchIndex(f.withManifest(searchParams(review.Estimate), true), "stream")
	srv := httptest.NewUnstartedServer(f.h)
	srv.Config.ReadTimeout = 300 * time.Millisecond
	srv.Start()
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"documents":[{"id":"a","text":"a document that takes its time"}]}`
	fmt.Fprintf(conn, "POST /api/v1/indexes/%d/search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", id, token, len(body), body[:10])
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var answer map[string]any
	json.NewDecoder(res.Body).Decode(&answer)
	if res.StatusCode != http.StatusRequestTimeout || !strings.Contains(fmt.Sprint(answer["error"]), "did not arrive in time: 10 bytes") {
		t.Errorf("a trickled body: %d %v; want 408 saying 10 bytes came in time", res.StatusCode, answer)
	}
}
