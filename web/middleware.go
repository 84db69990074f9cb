package web

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dedupstudio/dedupstudio/internal/auth"
)

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyNonce
)

func randomToken(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *server) requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := randomToken(8)
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyRequestID, id)))
	})
}

func requestIDOf(r *http.Request) string {
	id, _ := r.Context().Value(keyRequestID).(string)
	return id
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (sr *statusRecorder) WriteHeader(code int) {
	if sr.status == 0 {
		sr.status = code
	}
	sr.ResponseWriter.WriteHeader(code)
}

func (sr *statusRecorder) Write(b []byte) (int, error) {
	if sr.status == 0 {
		sr.status = http.StatusOK
	}
	n, err := sr.ResponseWriter.Write(b)
	sr.bytes += n
	return n, err
}

func (sr *statusRecorder) Unwrap() http.ResponseWriter { return sr.ResponseWriter }

func (s *server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		level := slog.LevelInfo
		if strings.HasPrefix(r.URL.Path, "/static/") && rec.status < 400 {
			level = slog.LevelDebug // the pages' assets would bury what the console says
		}
		s.log.Log(r.Context(), level, "request", "method", r.Method, "path", r.URL.Path, "status", rec.status,
			"bytes", rec.bytes, "duration", time.Since(start), "request_id", requestIDOf(r))
	})
}

func (s *server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic", "value", v, "path", r.URL.Path, "request_id", requestIDOf(r))
				s.renderError(w, r, http.StatusInternalServerError, internalMessage(requestIDOf(r)))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// securityHeaders sets a strict Content-Security-Policy with a per-request nonce for
// scripts, and the usual hardening headers, on every response.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 16)
		rand.Read(b)
		nonce := base64.StdEncoding.EncodeToString(b)
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'nonce-"+nonce+"'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		if !strings.HasPrefix(r.URL.Path, "/static/") {
			h.Set("Cache-Control", "no-store") // pages show team data: not for shared caches or after sign-out
		}
		next.ServeHTTP(&svgPolicy{ResponseWriter: w}, r.WithContext(context.WithValue(r.Context(), keyNonce, nonce)))
	})
}

// svgCSP is the policy of an SVG response: an image needs nothing from anywhere. Our
// charts paint with presentation attributes, which no policy blocks; a chart opened on
// its own (not in an <img>) then renders as it does on the page, and a script or style
// smuggled into an SVG would not run.
const svgCSP = "default-src 'none'; frame-ancestors 'none'"

// svgPolicy gives a response whose Content-Type is image/svg+xml the policy svgCSP,
// when its header is written: whichever handler serves an SVG (charts, static files),
// it is served under it.
type svgPolicy struct {
	http.ResponseWriter
	decided bool
}

func (w *svgPolicy) decide() {
	if w.decided {
		return
	}
	w.decided = true
	if strings.HasPrefix(w.Header().Get("Content-Type"), "image/svg+xml") {
		w.Header().Set("Content-Security-Policy", svgCSP)
	}
}

func (w *svgPolicy) WriteHeader(code int) {
	w.decide()
	w.ResponseWriter.WriteHeader(code)
}

func (w *svgPolicy) Write(b []byte) (int, error) {
	w.decide()
	return w.ResponseWriter.Write(b)
}

func (w *svgPolicy) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func nonceOf(r *http.Request) string {
	n, _ := r.Context().Value(keyNonce).(string)
	return n
}

// crossOriginProtection refuses cross-site state-changing requests (Go's
// http.CrossOriginProtection: Sec-Fetch-Site and Origin checks) with 403. The JSON API
// is exempt: it authenticates by a bearer token, which no browser attaches by itself.
func crossOriginProtection(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.AddInsecureBypassPattern(apiPrefix)
	return cop.Handler(next)
}

// limitBodies caps request bodies; upload routes and the JSON API set their own. A body
// declared over the cap is refused before anything else is done with the request, as
// an error page (JSON for the API) naming the limit.
func (s *server) limitBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isAPI(r) {
			if r.ContentLength > maxSearchBody {
				writeJSON(w, http.StatusRequestEntityTooLarge, &apiError{Status: http.StatusRequestEntityTooLarge,
					Message: fmt.Sprintf("the body has %d bytes; the limit is %d", r.ContentLength, maxSearchBody)})
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > maxBody && !isUpload(r) {
			// The page is the usual one, with its navigation and who is signed in: the
			// session is read (one lookup, the body left unread) for this answer alone.
			s.authenticate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s.fail(w, r, errFormTooLarge)
			})).ServeHTTP(w, r)
			return
		}
		if !isUpload(r) {
			r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		}
		next.ServeHTTP(w, r)
	})
}

// errFormTooLarge answers a form over maxBody.
var errFormTooLarge = &pageError{http.StatusRequestEntityTooLarge,
	fmt.Sprintf("The form is larger than the limit of %d KiB: nothing was saved. Shorten what you typed (a note, a comment) and send it again.", maxBody>>10)}

// readForms reads a posted form before any handler does: a body that did not arrive
// whole (cut off by the server's read deadline, over maxBody, or broken off) is answered
// here, saying that nothing was saved. Handlers read forms with PostFormValue, which
// drops the error: a form cut off at the deadline reached them empty, and the labeling
// page answered "choose a category". Uploads and the JSON API read their own bodies.
func (s *server) readForms(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && !isAPI(r) && !isUpload(r) {
			if err := r.ParseForm(); err != nil {
				s.fail(w, r, formReadError(err))
				return
			}
			if err := formNotText(r.PostForm); err != nil {
				s.fail(w, r, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// formNotText refuses a posted form whose names or values are not UTF-8 text: browsers
// send forms of these pages (all UTF-8) as UTF-8, and bytes that are not text would be
// stored as sent (a sweep's name, a note) and come back as broken text on every page
// that shows them.
func formNotText(form url.Values) error {
	for name, values := range form {
		if !utf8.ValidString(name) {
			return &pageError{http.StatusBadRequest, "The name of a form field holds bytes that are not UTF-8 text: nothing was saved. Send the form again from its page."}
		}
		for _, v := range values {
			if !utf8.ValidString(v) {
				return &pageError{http.StatusBadRequest, fmt.Sprintf("The form field “%s” holds bytes that are not UTF-8 text: nothing was saved. "+
					"Retype it (or paste it as text) and send the form again.", name)}
			}
		}
	}
	return nil
}

// formReadError is what a person reads when a form's body could not be read.
func formReadError(err error) error {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return errFormTooLarge
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded) {
		return &pageError{http.StatusRequestTimeout, "The request took too long to arrive, so it was cut off: nothing was saved. Send the form again."}
	}
	return &pageError{http.StatusBadRequest, "The form could not be read (was it cut short?): nothing was saved. Send it again."}
}

// uploadIdle is how long an upload's body may pause: its read deadline moves this far
// ahead at every read, where every other request has the server's short ReadTimeout.
// uploadWrite bounds writing the answer once the body is in.
const (
	uploadIdle  = time.Minute
	uploadWrite = time.Minute
)

// uploadDeadlines lifts the server's short read deadline (the whole request within
// server.ReadTimeout) for the upload routes, and only for a signed-in user allowed to
// upload there: a large sample takes as long as it takes, as long as it keeps coming.
// Every other request keeps the server's deadlines.
func (s *server) uploadDeadlines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u := userOf(r); u != nil && isUpload(r) && u.Role.Can(uploadPermission(r)) {
			rc := http.NewResponseController(w)
			// Under httptest (no connection) these are not supported: nothing to extend.
			rc.SetReadDeadline(time.Now().Add(uploadIdle))
			rc.SetWriteDeadline(time.Time{})
			r.Body = &movingDeadline{ReadCloser: r.Body, rc: rc}
		}
		next.ServeHTTP(w, r)
	})
}

// movingDeadline is an upload's body: each read may wait uploadIdle for data, and once
// the body is in, the answer has uploadWrite to be written.
type movingDeadline struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *movingDeadline) Read(p []byte) (int, error) {
	b.rc.SetReadDeadline(time.Now().Add(uploadIdle))
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		b.rc.SetWriteDeadline(time.Now().Add(uploadWrite))
	}
	return n, err
}

// uploadPermission is what an upload route needs.
func uploadPermission(r *http.Request) auth.Permission {
	switch r.URL.Path {
	case "/labels":
		return auth.ImportLabels
	case resultsUploadPath:
		return auth.PrepareManifests
	}
	return auth.ImportData
}

func isUpload(r *http.Request) bool {
	return r.Method == http.MethodPost && (r.URL.Path == "/datasets" || r.URL.Path == "/labels" || r.URL.Path == resultsUploadPath)
}
