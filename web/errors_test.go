package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// syncBuffer is a log destination safe for the handlers' goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestProblemMapsErrors(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	s := &server{log: slog.New(slog.NewTextHandler(&log, nil))}
	r := httptest.NewRequest(http.MethodGet, "/x", nil)
	r = r.WithContext(context.WithValue(r.Context(), keyRequestID, "req42"))
	_, specErr := lsh.ParseSpec("level=sentence")
	secret := errors.New("open /tmp/dedupstudio-upload-123/x.csv: no space left on device")
	labelErr := &ingest.LabelError{Report: ingest.LabelReport{Rejected: 2, Errors: []*corpus.RecordError{
		{Place: corpus.Place{File: "l.csv", Line: 2}, Field: "a", Msg: "missing"},
		{Place: corpus.Place{File: "l.csv", Line: 3}, Field: "b", Msg: "missing"}}}}
	for _, tc := range []struct {
		name   string
		err    error
		status int
		msg    string // the message contains it
	}{
		{"a handler's not found", notFound("campaign"), 404, "No such campaign."},
		{"store not found", fmt.Errorf("campaign 3: %w", db.ErrNotFound), 404, "nothing here"},
		{"job not found", fmt.Errorf("job x: %w", jobs.ErrNotFound), 404, "nothing here"},
		{"form", &formError{"threshold", "want a number"}, 422, "threshold: want a number"},
		{"campaign setting, wrapped", fmt.Errorf("update: %w", &campaign.InvalidError{Err: errors.New("overlap: too many")}), 422, "overlap: too many"},
		{"representation", specErr, 422, "spec level"},
		{"label rows", labelErr, 422, "l.csv:3: field b: missing"},
		{"refused import", &ingest.Error{Report: ingest.Report{Rejected: 1}}, 422, "nothing was imported"},
		{"bad record", &corpus.RecordError{Place: corpus.Place{File: "d.jsonl", Line: 9}, Msg: "malformed JSON"}, 422, "d.jsonl:9"},
		{"bad file", &corpus.FormatError{File: "d.txt", Msg: "cannot tell the format"}, 422, "cannot tell the format"},
		{"empty file", ingest.ErrEmpty, 422, "no documents"},
		{"stale", fmt.Errorf("record: %w", db.ErrStale), 409, "changed since the page was loaded"},
		{"conflict", db.ErrConflict, 409, "exists already"},
		{"last admin", fmt.Errorf("set role: %w", db.ErrLastAdmin), 409, "last enabled admin"},
		{"shutting down", jobs.ErrClosed, 503, "shutting down"},
		{"a party adjudicating", fmt.Errorf("record: %w", &campaign.PartyError{PairID: 3, Others: []string{"ann", "bo", "cy"}}), 403, "another adjudicator settles it: ann, bo or cy can"},
		{"import failed inside", &ingest.Error{Err: secret}, 500, "request req42"},
		{"anything else", fmt.Errorf("save upload: %w", secret), 500, "request req42"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, msg := s.problem(r, tc.err)
			if status != tc.status || !strings.Contains(msg, tc.msg) {
				t.Errorf("problem(%v) = %d %q; want %d and %q", tc.err, status, msg, tc.status, tc.msg)
			}
			if strings.Contains(msg, "/tmp/") {
				t.Errorf("problem(%v) shows the internal error: %q", tc.err, msg)
			}
		})
	}
	if got := log.String(); strings.Count(got, "request_id=req42") != 2 || !strings.Contains(got, "no space left on device") {
		t.Errorf("log:\n%s\nwant the two internal errors with their request id", got)
	}
}

// An internal failure answers 500 with the request id on the page and the error in the
// log, never on the page.
func TestInternalErrorsStayInTheLog(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaign()
	var log syncBuffer
	d := testDeps(f.store, f.jobs)
	d.Log = slog.New(slog.NewTextHandler(&log, nil))
	f.h = New(d)
	ann := f.signIn("annotator")
	if err := f.store.Close(); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/campaigns/1", "/campaigns/1/pairs/1", "/"} {
		res, body := get(t, f.h, path, ann)
		id := res.Header.Get("X-Request-Id")
		if res.StatusCode != http.StatusInternalServerError || id == "" || !strings.Contains(body, "request "+id) {
			t.Errorf("GET %s on a closed store: %d, request id %q; want 500 naming the request", path, res.StatusCode, id)
		}
		if strings.Contains(body, "sql:") || strings.Contains(body, "closed") {
			t.Errorf("GET %s shows the internal error:\n%s", path, body)
		}
		if !strings.Contains(log.String(), "request_id="+id) {
			t.Errorf("the log has no entry for request %s", id)
		}
	}
	if !strings.Contains(log.String(), "database is closed") {
		t.Errorf("the log lacks the error:\n%s", log.String())
	}
}

// An import page is its owner's and the admins'; other kinds of job are not imports.
func TestImportPagesByOwner(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	ctx := context.Background()
	f.signIn("reviewer")
	rev, _ := f.store.UserByName(ctx, "reviewer")
	block := func(ctx context.Context, report jobs.Reporter) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	theirs, err := f.jobs.Start("import", "theirs.jsonl", rev.ID, block)
	if err != nil {
		t.Fatal(err)
	}
	sweep, _ := f.jobs.Start("sweep", "a sweep", rev.ID, block)
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/imports/" + theirs, http.StatusOK}, // an admin sees every import
		{"/imports/" + sweep, http.StatusNotFound},
		{"/imports/import-999", http.StatusNotFound},
	} {
		t.Run(tc.path, func(t *testing.T) {
			if res, _ := get(t, f.h, tc.path, f.admin); res.StatusCode != tc.status {
				t.Errorf("GET %s as admin: %d; want %d", tc.path, res.StatusCode, tc.status)
			}
		})
	}
	if rec := f.do("POST", "/imports/"+sweep+"/cancel", f.admin, nil); rec.Code != http.StatusNotFound {
		t.Errorf("cancelling a sweep through /imports: %d; want 404", rec.Code)
	}
	if rec := f.do("POST", "/imports/"+theirs+"/cancel", f.admin, nil); rec.Code != http.StatusSeeOther {
		t.Fatalf("cancel: %d", rec.Code)
	}
	if s, _ := f.jobs.Wait(ctx, theirs); s.State != jobs.Cancelled {
		t.Errorf("import after cancel: %s; want cancelled", s.State)
	}
}
