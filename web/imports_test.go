package web

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
)

type fixture struct {
	t       *testing.T
	h       http.Handler
	store   *db.DB
	jobs    *jobs.Registry
	cookies map[string]*http.Cookie
	admin   *http.Cookie // the cookie requests carry unless told otherwise
}

func newFixture(t *testing.T, maxUpload int64) *fixture {
	t.Helper()
	store, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "web.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	reg := jobs.NewRegistry()
	f := &fixture{t: t, h: New(Deps{Store: store, Jobs: reg, MaxUpload: maxUpload, KDF: cheapKDF}), store: store, jobs: reg,
		cookies: map[string]*http.Cookie{}}
	f.admin = f.signIn("admin")
	return f
}

var cheapKDF = auth.Params{Memory: 1024, Time: 1, Threads: 1}

// signIn creates a user named after role (once) and returns a live session cookie.
func (f *fixture) signIn(role string) *http.Cookie {
	f.t.Helper()
	if c, ok := f.cookies[role]; ok {
		return c
	}
	ctx := context.Background()
	hash, _ := auth.HashPassword(role+"-password", cheapKDF)
	u, err := f.store.CreateUser(ctx, "test", role, role, hash)
	if err != nil {
		f.t.Fatal(err)
	}
	token, th := auth.NewToken()
	if err := f.store.CreateSession(ctx, u.ID, th, time.Hour); err != nil {
		f.t.Fatal(err)
	}
	c := &http.Cookie{Name: cookieName, Value: token}
	f.cookies[role] = c
	return c
}

func (f *fixture) upload(path, fileName, body string, fields map[string]string) *httptest.ResponseRecorder {
	f.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", fileName)
	io.WriteString(fw, body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	mw.Close()
	req := httptest.NewRequest(http.MethodPost, path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(f.admin)
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return rec
}

func (f *fixture) waitJob(location string) (int, string) {
	f.t.Helper()
	id := strings.TrimPrefix(location, "/imports/")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := f.jobs.Wait(ctx, id); err != nil {
		f.t.Fatal(err)
	}
	res, body := get(f.t, f.h, location, f.admin)
	return res.StatusCode, body
}

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
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, "crawl.jsonl:2") || !strings.Contains(body, "1 bad record(s) of 2") {
		t.Errorf("refused import page %d:\n%s", status, body)
	}
	if n, _ := f.store.CountDocuments(context.Background()); n != 2 {
		t.Errorf("%d documents after a refused import; want 2", n)
	}
	// Unknown formats are refused before any job starts.
	rec = f.upload("/datasets", "notes.txt", "hello", nil)
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "cannot tell the format") {
		t.Errorf("txt upload: %d", rec.Code)
	}
	if res, _ := get(t, f.h, "/imports/import-999", f.admin); res.StatusCode != 404 {
		t.Errorf("unknown import: %d", res.StatusCode)
	}
}

func TestUploadLimitsAndCrossOrigin(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<10)
	rec := f.upload("/datasets", "big.jsonl", strings.Repeat("x", 4<<10), nil)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized upload: %d; want 413", rec.Code)
	}
	// Other POST bodies are capped at 1 MB.
	req := httptest.NewRequest(http.MethodPost, "/imports/x/cancel", strings.NewReader(strings.Repeat("x", 2<<20)))
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(f.admin)
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, req)
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("2 MB form post: %d; want 413", w.Code)
	}
	// A cross-site POST is refused before any handler runs.
	req = httptest.NewRequest(http.MethodPost, "/datasets", strings.NewReader(""))
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	w = httptest.NewRecorder()
	f.h.ServeHTTP(w, req)
	if w.Code != http.StatusForbidden {
		t.Errorf("cross-site POST: %d; want 403", w.Code)
	}
}

func TestUploadLabels(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	rec := f.upload("/datasets", "docs.jsonl", `{"id":"a","text":"x y z"}`+"\n"+`{"id":"b","text":"x y w"}`+"\n", nil)
	f.waitJob(rec.Header().Get("Location"))
	list, _ := f.store.Datasets(context.Background())
	id := list[0].ID
	f.admin = f.signIn("reviewer") // labels are a reviewer's (and admin's) to import
	rec = f.upload("/labels", "l.csv", "a,b,category\na,b,minor\na,zz,different\n", map[string]string{"dataset_id": itoa64(id)})
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), `l.csv:3: field b: unknown document id &#34;zz&#34;`) {
		t.Errorf("bad labels: %d\n%s", rec.Code, rec.Body.String())
	}
	rec = f.upload("/labels", "l.csv", "a,b,category\na,b,minor\n", map[string]string{"dataset_id": itoa64(id)})
	if rec.Code != http.StatusSeeOther {
		t.Errorf("good labels: %d", rec.Code)
	}
	rec = f.upload("/labels", "l.csv", "a,b,category\na,b,minor\n", map[string]string{"dataset_id": "9999"})
	if rec.Code != http.StatusNotFound {
		t.Errorf("labels for an unknown dataset: %d; want 404", rec.Code)
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

const fixtureDocs = `{"id":"a","text":"the quick brown fox jumps over the lazy dog by the river"}
{"id":"b","text":"the quick brown fox jumps over the lazy cat by the river"}
{"id":"c","text":"<script>window.__xss=1</script> an entirely different text about licenses"}
{"id":"d","text":"Der schnelle braune Fuchs springt über den faulen Hund am Fluss"}
`

// withCampaign imports four documents and labels on two pairs, making dataset 1,
// campaign 1 and pairs 1-2 (documents 1-4).
func (f *fixture) withCampaign() {
	f.t.Helper()
	f.withCampaignDocsOnly()
	list, _ := f.store.Datasets(context.Background())
	_, err := ingest.Labels(context.Background(), f.store, strings.NewReader("a,b,category,annotator\na,b,minor,seed\na,d,translation,seed\n"),
		"l.csv", ingest.LabelOptions{DatasetID: list[0].ID})
	if err != nil {
		f.t.Fatal(err)
	}
}
