package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/jobs"
)

func TestUploadImport(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	rec := f.upload("/datasets", "crawl.jsonl", `{"id":"1","text":"one two three"}`+"\n"+`{"id":"2","text":"four five"}`+"\n", map[string]string{"skip_bad": ""})
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/imports/") {
		t.Fatalf("upload: %d %s", rec.Code, rec.Header().Get("Location"))
	}
	status, body := f.waitJob(rec.Header().Get("Location"))
	if status != 200 || !strings.Contains(body, `data-testid="import-done"`) || !strings.Contains(body, "crawl") {
		t.Errorf("status page %d:\n%s", status, body)
	}
	if n, _ := f.store.CountDocuments(context.Background()); n != 2 {
		t.Errorf("%d documents stored; want 2", n)
	}
	// A refused import names the line and field, and stores nothing.
	rec = f.upload("/datasets", "crawl.jsonl", `{"id":"3","text":"ok"}`+"\n"+`{"id":"4","txt":"typo"}`+"\n", nil)
	status, body = f.waitJob(rec.Header().Get("Location"))
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, "crawl.jsonl:2") || !strings.Contains(body, "1 bad record of 2") {
		t.Errorf("refused import page %d:\n%s", status, body)
	}
	if n, _ := f.store.CountDocuments(context.Background()); n != 2 {
		t.Errorf("%d documents after a refused import; want 2", n)
	}
	// Unknown formats are refused before any job starts.
	rec = f.upload("/datasets", "notes.txt", "hello", map[string]string{"dataset": "my notes", "id_field": "doc"})
	if loc, body := f.follow(rec, f.admin); !strings.HasPrefix(loc, "/datasets/new?notice=") || !strings.Contains(body, `data-testid="notice-error"`) ||
		!strings.Contains(body, "cannot tell the format") || !strings.Contains(body, `value="my notes"`) || !strings.Contains(body, `value="doc"`) {
		t.Errorf("txt upload went to %s; want the form again, with the error and the fields as sent:\n%s", loc, body)
	}
	if res, _ := get(t, f.h, "/imports/import-999", f.admin); res.StatusCode != 404 {
		t.Errorf("unknown import: %d", res.StatusCode)
	}
}

func TestUploadLimitsAndCrossOrigin(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<10)
	rec := f.upload("/datasets", "big.jsonl", strings.Repeat("x", 4<<10), nil)
	if _, body := f.follow(rec, f.admin); !strings.Contains(body, "larger than") {
		t.Errorf("oversized upload: the form does not say it was too large:\n%s", body)
	}
	// Other POST bodies are capped at 1 MB.
	req := httptest.NewRequest(http.MethodPost, "/imports/x/cancel", strings.NewReader(strings.Repeat("x", 2<<20)))
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(f.admin)
	w := serve(f.h, req)
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("2 MB form post: %d; want 413", w.Code)
	}
	// A cross-site POST is refused before any handler runs.
	req = httptest.NewRequest(http.MethodPost, "/datasets", strings.NewReader(""))
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	w = serve(f.h, req)
	if w.Code != http.StatusForbidden {
		t.Errorf("cross-site POST: %d; want 403", w.Code)
	}
}

func TestUploadLabels(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	rec := f.upload("/datasets", "docs.jsonl", `{"id":"a","text":"x y z"}`+"\n"+`{"id":"b","text":"x y w"}`+"\n", nil)
	f.waitJob(rec.Header().Get("Location"))
	f.admin = f.signIn("reviewer") // labels are a reviewer's (and admin's) to import
	rec = f.upload("/labels", "l.csv", "a,b,category\na,b,minor\na,zz,different\n", map[string]string{"dataset": "docs", "create": "1"})
	if loc, body := f.follow(rec, f.admin); !strings.HasPrefix(loc, "/labels/new?") || !strings.Contains(body, `l.csv:3: field b: unknown document id &#34;zz&#34;`) {
		t.Errorf("bad labels went to %s:\n%s", loc, body)
	}
	rec = f.upload("/labels", "l.csv", "a,b,category\na,b,minor\n", map[string]string{"dataset": "docs", "create": "1"})
	if loc, body := f.follow(rec, f.admin); !strings.HasPrefix(loc, "/campaigns/1?") || !strings.Contains(body, "Campaign “default” (created) of docs version 1: 1 new, 0 unchanged, 0 rejected of 1 row.") {
		t.Errorf("good labels went to %s; want the campaign page saying 1 label was imported:\n%s", loc, body)
	}
	rec = f.upload("/labels", "l.csv", "a,b,category\na,b,minor\n", map[string]string{"dataset": "nosuch"})
	if loc, body := f.follow(rec, f.admin); !strings.HasPrefix(loc, "/labels/new?") || !strings.Contains(body, `no dataset named &#34;nosuch&#34;`) {
		t.Errorf("labels for an unknown dataset went to %s:\n%s", loc, body)
	}
}

// TestImportPageWhileCancelling: an import that was asked to stop but is still
// discarding what it staged (which takes a while for a large one) says so, and offers no
// second Cancel, instead of reading as an import still going on.
func TestImportPageWhileCancelling(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	admin, _ := f.store.UserByName(context.Background(), "admin")
	release := make(chan struct{})
	id, err := f.jobs.Start("import", "big.jsonl", admin.ID, func(ctx context.Context, report jobs.Reporter) (any, error) {
		<-ctx.Done()
		<-release // the staged rows being deleted
		return nil, ctx.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		close(release)
		f.jobs.Wait(context.Background(), id)
	}()
	if _, body := get(t, f.h, "/imports/"+id, f.admin); !strings.Contains(body, "Cancel import") {
		t.Fatalf("a running import offers no Cancel\n%s", body)
	}
	rec := f.do("POST", "/imports/"+id+"/cancel", f.admin, nil)
	f.follow(rec, f.admin)
	_, body := get(t, f.h, "/imports/"+id, f.admin) // the page as it refreshes itself
	if !strings.Contains(body, `data-testid="import-cancelling"`) || strings.Contains(body, "Cancel import") {
		t.Errorf("the page of an import being cancelled does not say so, or offers Cancel again\n%s", body)
	}
}
