package web

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/corpusrun"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/logtest"
	"github.com/dedupstudio/dedupstudio/internal/searchindex"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
)

// The fixtures every test of this package shares: a real store in t.TempDir(), the real
// router, users signed in by role, uploads and a small labeled campaign.

type fixture struct {
	t       *testing.T
	h       http.Handler
	store   *db.DB
	jobs    *jobs.Registry
	sweeps  *sweeprun.Service
	cookies map[string]*http.Cookie
	admin   *http.Cookie // the cookie requests carry unless told otherwise
}

func newFixture(t *testing.T, maxUpload int64) *fixture {
	t.Helper()
	store := dbtest.Open(t)
	d := testDeps(store, newJobs(t))
	d.MaxUpload = maxUpload
	f := &fixture{t: t, h: New(d), store: store, jobs: d.Jobs, sweeps: d.Sweeps, cookies: map[string]*http.Cookie{}}
	f.admin = f.signIn("admin")
	return f
}

// logged builds the fixture's handler again over the same store and jobs, logging to a
// buffer the test reads, and returns the buffer.
func (f *fixture) logged() *logtest.Buffer {
	f.t.Helper()
	var log logtest.Buffer
	d := testDeps(f.store, f.jobs)
	d.Log = log.Logger()
	f.h = New(d)
	return &log
}

// testDeps is what the handlers need over store and reg, every service built as
// cmd/server builds them (uploads, and whole-corpus runs under CorpusDir and DedupDir,
// next to the store's file), with the tests' cheap password hashing.
func testDeps(store *db.DB, reg *jobs.Registry) Deps {
	sigs := sigcache.New(store)
	return Deps{Store: store, Jobs: reg, KDF: cheapKDF, UploadDir: store.Path() + "-uploads", Signatures: sigs, Sweeps: sweeprun.New(store, sigs, reg),
		Tally: campaign.NewTally(store), SearchIndexes: searchindex.New(store, nil), CorpusRuns: corpusrun.New(store, reg, corpusrun.Config{})}
}

// newJobs is a job registry shut down at the end of the test, before the store it
// uses closes (cleanups run last registered first).
func newJobs(t *testing.T) *jobs.Registry {
	t.Helper()
	reg := jobs.NewRegistry(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := reg.Shutdown(ctx); err != nil {
			t.Errorf("jobs: %v", err)
		}
	})
	return reg
}

var cheapKDF = auth.Params{Memory: 1024, Time: 1, Threads: 1}

// account creates the account name of role with password (a cheap hash).
func (f *fixture) account(name string, role auth.Role, password string) db.User {
	f.t.Helper()
	hash, _ := auth.HashPassword(password, cheapKDF)
	u, err := f.store.CreateUser(context.Background(), "test", name, role, hash)
	if err != nil {
		f.t.Fatal(err)
	}
	return u
}

// signIn creates a user named after role (once) and returns a live session cookie.
func (f *fixture) signIn(role string) *http.Cookie {
	f.t.Helper()
	if c, ok := f.cookies[role]; ok {
		return c
	}
	c := sessionFor(f.t, f.store, f.account(role, auth.Role(role), role+"-password").ID)
	f.cookies[role] = c
	return c
}

// sessionFor opens an hour's session for the user, as signing in does, and returns its
// cookie.
func sessionFor(tb testing.TB, store *db.DB, userID int64) *http.Cookie {
	tb.Helper()
	token, th := auth.NewToken()
	if err := store.CreateSession(context.Background(), db.NewSession{UserID: userID, TokenHash: th, TTL: time.Hour}); err != nil {
		tb.Fatal(err)
	}
	return &http.Cookie{Name: cookieName, Value: token}
}

// benchSession signs a new account of role in (CreateUser, sessionFor) for a benchmark.
func benchSession(tb testing.TB, store *db.DB, name string, role auth.Role) *http.Cookie {
	tb.Helper()
	u, err := store.CreateUser(context.Background(), "bench", name, role, "not a hash")
	if err != nil {
		tb.Fatal(err)
	}
	return sessionFor(tb, store, u.ID)
}

// benchCampaign builds the generated campaign c (internal/db/dbtest) in a store named
// name in the benchmark's temporary folder, with a job registry shut down at its end, and
// logs how long the build took.
func benchCampaign(b *testing.B, name string, c dbtest.Campaign) (*db.DB, *jobs.Registry, dbtest.Built) {
	b.Helper()
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), name+".db")
	store := dbtest.OpenFile(b, path)
	reg := jobs.NewRegistry(ctx)
	b.Cleanup(func() { reg.Shutdown(ctx) })
	start := time.Now()
	built, err := dbtest.Build(ctx, path, name, c)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("built %d events over %d pairs in %v", c.Events, c.Pairs, time.Since(start).Round(time.Millisecond))
	return store, reg, built
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
	return serve(f.h, req)
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

// serve answers req with h and returns the recorded answer.
func serve(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func get(t *testing.T, h http.Handler, path string, cookies ...*http.Cookie) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	res := serve(h, req).Result()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// do sends a request with optional cookie and form, same-origin like a browser form.
func (f *fixture) do(method, path string, c *http.Cookie, form url.Values) *httptest.ResponseRecorder {
	f.t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req := httptest.NewRequest(method, path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.RemoteAddr = "192.0.2.10:5555"
	if c != nil {
		req.AddCookie(c)
	}
	return serve(f.h, req)
}

// follow checks that rec answers a form with 303 See Other (Post/Redirect/Get), GETs the
// page it sends to as the person with cookie c, and returns that page.
func (f *fixture) follow(rec *httptest.ResponseRecorder, c *http.Cookie) (location, body string) {
	f.t.Helper()
	if rec.Code != http.StatusSeeOther {
		f.t.Fatalf("answer to a form: %d; want 303 See Other\n%s", rec.Code, rec.Body.String())
	}
	location = rec.Header().Get("Location")
	if id, ok := strings.CutPrefix(location, "/label-imports/"); ok && !strings.Contains(id, "?") {
		// A label import runs as a job whose page, once it has finished, sends the
		// person on (to the campaign, or back to the form).
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := f.jobs.Wait(ctx, id); err != nil {
			f.t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodGet, location, nil)
		req.AddCookie(c)
		return f.follow(serve(f.h, req), c)
	}
	path, _, _ := strings.Cut(location, "#") // a browser keeps the fragment to itself
	res, body := get(f.t, f.h, path, c)
	if res.StatusCode != http.StatusOK {
		f.t.Fatalf("GET %s after the form: %d", location, res.StatusCode)
	}
	return location, body
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
		"l.csv", ingest.LabelOptions{DatasetID: list[0].ID, Create: true})
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) withCampaignDocsOnly() {
	f.t.Helper()
	if _, body := f.waitJob(f.upload("/datasets", "d.jsonl", fixtureDocs, nil).Header().Get("Location")); !strings.Contains(body, "import-done") {
		f.t.Fatalf("import failed:\n%s", body)
	}
}
