package web

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
)

// timedOut is a form body that stops coming at the server's read deadline: what a
// connection's read returns then.
type timedOut struct{ io.Reader }

func (b timedOut) Read(p []byte) (int, error) {
	if n, err := b.Reader.Read(p); err != io.EOF {
		return n, err
	}
	return 0, &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
}

// postBody posts body as a form as the account ck signs in, with the length declared
// (or not, when length < 0).
func (f *fixture) postBody(path string, ck *http.Cookie, body io.Reader, length int64) *httptest.ResponseRecorder {
	f.t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, body)
	req.ContentLength = length
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(ck)
	return serve(f.h, req)
}

// A label form whose body was cut off at the read deadline reached the handler empty,
// and the pair page said "choose a category"; one over the 1 MiB limit got a bare-text
// 413. Both are error pages now that say what happened and that nothing was saved.
func TestFormBodiesNotWhole(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1<<20)
	f.withCampaign()
	ann := f.signIn("annotator")
	ctx := context.Background()
	before, _ := f.store.PairHistory(ctx, 1)
	_, page := get(t, f.h, "/campaigns/1/pairs/1", ann)
	form := url.Values{"category": {"exact"}, "previous": {previousOf(page)}, "note": {strings.Repeat("n", 100)}}.Encode()
	big := url.Values{"category": {"exact"}, "note": {strings.Repeat("n", 2<<20)}}.Encode()

	for _, tc := range []struct {
		name   string
		body   io.Reader
		length int64
		status int
		want   string
	}{
		{"cut off at the read deadline", timedOut{strings.NewReader(form[:len(form)/2])}, int64(len(form)), http.StatusRequestTimeout,
			"The request took too long to arrive, so it was cut off: nothing was saved."},
		{"declared over the limit", strings.NewReader(big), int64(len(big)), http.StatusRequestEntityTooLarge,
			"The form is larger than the limit of 1024 KiB: nothing was saved."},
		{"chunked over the limit", strings.NewReader(big), -1, http.StatusRequestEntityTooLarge,
			"The form is larger than the limit of 1024 KiB: nothing was saved."},
		{"broken off", io.MultiReader(strings.NewReader(form[:10]), iotestErr{}), -1, http.StatusBadRequest,
			"The form could not be read (was it cut short?): nothing was saved."},
		// Invalid UTF-8 was stored as sent (a sweep's name, a note) and served back as
		// broken text in pages that declare UTF-8.
		{"invalid UTF-8 in a value", strings.NewReader("category=exact&note=ok%FF%FE"), -1, http.StatusBadRequest,
			"The form field “note” holds bytes that are not UTF-8 text: nothing was saved."},
		{"invalid UTF-8 in a name", strings.NewReader("category=exact&n%C3=1"), -1, http.StatusBadRequest,
			"The name of a form field holds bytes that are not UTF-8 text: nothing was saved."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := f.postBody("/campaigns/1/pairs/1/label", ann, tc.body, tc.length)
			body := rec.Body.String()
			if rec.Code != tc.status || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") || !strings.Contains(body, tc.want) ||
				strings.Contains(body, "category") && strings.Contains(body, "choose") {
				t.Errorf("%d %s; want %d, an HTML page saying %q\n%s", rec.Code, rec.Header().Get("Content-Type"), tc.status, tc.want, body)
			}
		})
	}
	if after, _ := f.store.PairHistory(ctx, 1); len(after) != len(before) {
		t.Errorf("%d labels of pair 1 after forms that did not arrive; want %d", len(after), len(before))
	}
	// A whole form still labels.
	if rec := f.postBody("/campaigns/1/pairs/1/label", ann, strings.NewReader(form), int64(len(form))); rec.Code != http.StatusSeeOther {
		t.Errorf("a whole form: %d; want 303\n%s", rec.Code, rec.Body.String())
	}
}

// iotestErr is a connection that broke.
type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }
