package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Ten restores of one tombstone at once (ten tabs, a double-clicking team): one 303 and
// nine 404s "no such standing removal", as if the document had never been removed. The
// first restores it; the others are told it is back already (409 on the manifest's
// page), and the audit log holds one restore.
func TestParallelRestoresOfOneTombstone(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	m := f.signedOff(f.withRun(chainRun))
	appr := f.signIn("approver")
	if rec := f.do("POST", fmt.Sprintf("/manifests/%d/export", m.ID), appr, url.Values{"hash": {m.ContentHash}, "count": {strconv.Itoa(f.approvedCount(m))}}); rec.Code != http.StatusSeeOther {
		t.Fatalf("export: %d\n%s", rec.Code, rec.Body.String())
	}
	ctx := context.Background()
	stones, _ := f.store.Tombstones(ctx, m.ID)
	if len(stones) == 0 {
		t.Fatal("the export tombstoned nothing")
	}
	doc := stones[0]
	srv := httptest.NewServer(f.h)
	t.Cleanup(srv.Close)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	type answer struct {
		status int
		body   string
	}
	answers := make([]answer, 10)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/manifests/%d/tombstones/%d/restore", srv.URL, m.ID, doc.Doc), strings.NewReader(""))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			req.AddCookie(appr)
			res, err := client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			answers[i] = answer{res.StatusCode, string(b)}
		})
	}
	wg.Wait()
	count := map[int]int{}
	for _, a := range answers {
		count[a.status]++
		if a.status == http.StatusConflict && !strings.Contains(a.body, fmt.Sprintf("Document %s was already restored by approver on ", doc.ExtID)) {
			t.Errorf("a losing restore's page does not say the document is back already:\n%s", a.body)
		}
	}
	if count[http.StatusSeeOther] != 1 || count[http.StatusConflict] != 9 {
		t.Errorf("answers to 10 parallel restores: %v; want one 303 and nine 409", count)
	}
	events, err := f.store.AuditOf(ctx, fmt.Sprintf("manifest:%d", m.ID), 100)
	restores := 0
	for _, e := range events {
		if e.Action == "manifest.restore" {
			restores++
		}
	}
	if err != nil || restores != 1 {
		t.Errorf("%d restores in the audit log (%v); want 1", restores, err)
	}
	// A document the manifest never removed is still not found.
	if rec := f.do("POST", fmt.Sprintf("/manifests/%d/tombstones/%d/restore", m.ID, 999999), appr, url.Values{}); rec.Code != http.StatusNotFound {
		t.Errorf("restore of a document never removed: %d; want 404", rec.Code)
	}
}
