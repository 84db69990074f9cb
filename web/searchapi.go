package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/incremental"
	"github.com/dedupstudio/dedupstudio/internal/searchindex"
)

// The search-before-insert API: POST /api/v1/indexes/{index}/search, JSON in and out,
// authenticated by an API token (Authorization: Bearer dsk_…) and nothing else. A
// session cookie does not open it, and a token opens nothing but it. Its requests skip
// the pages' cross-origin check (a browser never sends a bearer token by itself, so
// there is no cross-site request to forge) and the pages' 1 MB body cap (it has its own,
// answered in JSON).

const (
	apiPrefix = "/api/"
	// maxSearchBody caps a search request's body.
	maxSearchBody = 8 << 20
	// maxSearchDocs caps the documents of one search request.
	maxSearchDocs = 1000
	// maxDocID caps a document id, in bytes.
	maxDocID = 512
)

// isAPI reports whether r is a request to the JSON API.
func isAPI(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, apiPrefix) }

// apiError is a failure of an API request: its status and a JSON body that says what
// was wrong and, for a document of the batch, which one (its index in "documents") and
// which field.
type apiError struct {
	Status   int    `json:"-"`
	Message  string `json:"error"`
	Document *int   `json:"document,omitempty"`
	Field    string `json:"field,omitempty"`
}

func (e *apiError) Error() string { return e.Message }

func docError(status, i int, field, format string, args ...any) *apiError {
	return &apiError{Status: status, Message: fmt.Sprintf("documents[%d].%s: ", i, field) + fmt.Sprintf(format, args...), Document: &i, Field: field}
}

// writeJSON answers with v as JSON, status first.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":"internal error"}` + "\n")
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// failAPI answers err as JSON: an *apiError as it says, any other error as the pages
// answer it (problem: the status of its kind and the message a person reads), an
// internal error as 500 with the request id (the error itself logged, never sent).
func (s *server) failAPI(w http.ResponseWriter, r *http.Request, err error) {
	ae, ok := errors.AsType[*apiError](err)
	if !ok {
		status, msg := s.problem(r, err)
		if status == http.StatusInternalServerError {
			msg = "internal error (request " + requestIDOf(r) + "); it has been logged"
		}
		ae = &apiError{Status: status, Message: msg}
	}
	if ae.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="dedupstudio", error="invalid_token"`)
	}
	writeJSON(w, ae.Status, ae)
}

// tokenTTL is how long a token read from the store is trusted without reading it
// again. Revoking a token, or changing an account, on the Team page forgets every
// cached token at once; a change made past this process (none is, today) would reach
// a token within this time.
const tokenTTL = time.Second

// apiTokens keeps the tokens read lately, by hash, so a busy pipeline does not cost a
// query per request.
type apiTokens struct {
	mu sync.Mutex
	m  map[string]cachedToken
}

type cachedToken struct {
	t    db.APIToken
	read time.Time
}

func (c *apiTokens) get(hash []byte, now time.Time) (db.APIToken, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ct, ok := c.m[string(hash)]
	if !ok || now.Sub(ct.read) >= tokenTTL || now.Before(ct.read) {
		return db.APIToken{}, false
	}
	return ct.t, true
}

func (c *apiTokens) put(hash []byte, t db.APIToken, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > 10_000 { // bounded: a flood of unknown tokens is forgotten
		c.m = map[string]cachedToken{}
	}
	c.m[string(hash)] = cachedToken{t, now}
}

// forget drops every cached token (one was revoked).
func (c *apiTokens) forget() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}

// apiToken checks the request's bearer token: 401 without a live one, 403 when its
// creator can no longer grant it. A token in use is touched at most once a minute.
func (s *server) apiToken(r *http.Request) (db.APIToken, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return db.APIToken{}, &apiError{Status: http.StatusUnauthorized, Message: "missing Authorization header: send Authorization: Bearer <API token> (admins make tokens on the Team page)"}
	}
	scheme, token, _ := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return db.APIToken{}, &apiError{Status: http.StatusUnauthorized, Message: "the Authorization header is not Bearer <API token>"}
	}
	hash, now := auth.HashToken(token), s.now()
	t, ok := s.tokens.get(hash, now)
	if !ok {
		var err error
		t, err = s.store.APITokenByHash(r.Context(), hash)
		switch {
		case errors.Is(err, db.ErrNotFound):
			return t, &apiError{Status: http.StatusUnauthorized, Message: "unknown API token"}
		case err != nil:
			return t, err
		}
		s.tokens.put(hash, t, now)
	}
	switch {
	case t.Revoked:
		return t, &apiError{Status: http.StatusUnauthorized, Message: fmt.Sprintf("API token %q was revoked at %s", t.Name, t.RevokedAt.UTC().Format(time.RFC3339))}
	case t.Scope != db.ScopeSearch:
		return t, &apiError{Status: http.StatusForbidden, Message: fmt.Sprintf("API token %q does not open the search API", t.Name)}
	case t.CreatorDisabled || !t.CreatorRole.Can(auth.ManageUsers):
		return t, &apiError{Status: http.StatusForbidden, Message: fmt.Sprintf("API token %q was made by %s, who is no longer an enabled admin: ask an admin for a new token", t.Name, t.CreatedBy)}
	}
	if now.Sub(t.LastUsed) > time.Minute {
		if ok, err := s.store.TryTouchAPIToken(r.Context(), t.ID); err != nil {
			s.log.Error("touch api token", "err", err, "token", t.ID, "request_id", requestIDOf(r))
		} else if ok {
			t.LastUsed = now
			s.tokens.put(hash, t, now)
		}
	}
	return t, nil
}

type searchResponse struct {
	Index        int64          `json:"index"`
	Threshold    float64        `json:"threshold"`
	Verification string         `json:"verification"`
	Inserted     int            `json:"inserted"`
	Results      []searchResult `json:"results"`
}

type searchResult struct {
	ID             string      `json:"id"`
	Duplicates     []duplicate `json:"duplicates"`
	Inserted       bool        `json:"inserted"`
	AlreadyIndexed bool        `json:"already_indexed"`
}

type duplicate struct {
	ID       string   `json:"id"`
	Estimate float64  `json:"estimate"`
	Jaccard  *float64 `json:"jaccard,omitempty"`
}

// readSearch reads and checks a search request's body: 413 over the size cap, 408 when
// it does not arrive before the server's read deadline, 400 for what is not JSON of the
// right shape, 422 for a document that is not one (naming it and its field;
// decodeSearch, checkDocs).
func readSearch(w http.ResponseWriter, r *http.Request) ([]incremental.Doc, bool, error) {
	if r.ContentLength > maxSearchBody {
		return nil, false, &apiError{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("the body has %d bytes; the limit is %d", r.ContentLength, maxSearchBody)}
	}
	buf := bytes.NewBuffer(make([]byte, 0, max(512, min(r.ContentLength+1, maxSearchBody+1))))
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxSearchBody))
	body := buf.Bytes()
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return nil, false, &apiError{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("the body is over the limit of %d bytes", maxSearchBody)}
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil, false, &apiError{Status: http.StatusRequestTimeout, Message: fmt.Sprintf("the body did not arrive in time: %d bytes came before the server's read deadline", len(body))}
	}
	if err != nil {
		return nil, false, &apiError{Status: http.StatusBadRequest, Message: "reading the body: " + err.Error()}
	}
	list, insert, err := decodeSearch(body)
	if err != nil {
		return nil, false, err
	}
	docs, err := checkDocs(list)
	return docs, insert, err
}

// checkDocs checks the documents of a search request: ids present, distinct and not
// too long, texts present and not blank.
func checkDocs(list []searchDoc) ([]incremental.Doc, error) {
	docs := make([]incremental.Doc, len(list))
	first := make(map[string]int, len(docs))
	for i, d := range list {
		switch {
		case d.ID == nil || *d.ID == "":
			return nil, docError(http.StatusUnprocessableEntity, i, "id", "missing or empty")
		case len(*d.ID) > maxDocID:
			return nil, docError(http.StatusUnprocessableEntity, i, "id", "%d bytes; at most %d", len(*d.ID), maxDocID)
		case !utf8.ValidString(*d.ID):
			return nil, docError(http.StatusUnprocessableEntity, i, "id", "not valid UTF-8")
		case controlAt(*d.ID) >= 0:
			at := controlAt(*d.ID)
			return nil, docError(http.StatusUnprocessableEntity, i, "id", "control character %U at byte %d; an id is printable text", []rune((*d.ID)[at:])[0], at)
		case d.Text == nil:
			return nil, docError(http.StatusUnprocessableEntity, i, "text", "missing")
		case !utf8.ValidString(*d.Text):
			return nil, docError(http.StatusUnprocessableEntity, i, "text", "not valid UTF-8")
		case strings.TrimSpace(*d.Text) == "":
			return nil, docError(http.StatusUnprocessableEntity, i, "text", "empty: there is nothing to compare")
		}
		if j, dup := first[*d.ID]; dup {
			return nil, docError(http.StatusUnprocessableEntity, i, "id", "%q is also documents[%d].id; ids in a request must differ", *d.ID, j)
		}
		first[*d.ID] = i
		docs[i] = incremental.Doc{ID: *d.ID, Text: *d.Text}
	}
	return docs, nil
}

// controlAt is the byte offset of the first control character in s (C0, DEL or C1),
// or -1.
func controlAt(s string) int {
	for i, r := range s {
		if unicode.IsControl(r) {
			return i
		}
	}
	return -1
}

// searchIndex answers POST /api/v1/indexes/{index}/search.
func (s *server) searchIndex(w http.ResponseWriter, r *http.Request) {
	if _, err := s.apiToken(r); err != nil {
		s.failAPI(w, r, err)
		return
	}
	id, ok := idParam(r, "index")
	if !ok {
		s.failAPI(w, r, &apiError{Status: http.StatusNotFound, Message: "no search index " + strconv.Quote(chi.URLParam(r, "index"))})
		return
	}
	ix, err := s.indexes.Open(r.Context(), id)
	switch {
	case errors.Is(err, db.ErrNotFound):
		err = &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("no search index %d (admins make them on the Team page)", id)}
	case errors.Is(err, searchindex.ErrRevoked):
		err = &apiError{Status: http.StatusConflict, Message: fmt.Sprintf("search index %d answers under the configuration of a manifest whose sign-off was revoked: make a new index from a signed-off manifest", id)}
	}
	if err != nil {
		s.failAPI(w, r, err)
		return
	}
	docs, insert, err := readSearch(w, r)
	if err != nil {
		s.failAPI(w, r, err)
		return
	}
	var results []incremental.Result
	if insert {
		results, err = ix.SearchInsert(r.Context(), docs)
	} else {
		results = ix.Search(docs)
	}
	if err != nil {
		s.failAPI(w, r, err)
		return
	}
	p := ix.Meta.Params
	resp := searchResponse{Index: id, Threshold: p.Threshold, Verification: string(p.Verification), Results: make([]searchResult, len(results))}
	for i, res := range results {
		out := searchResult{ID: res.ID, Inserted: res.Inserted, AlreadyIndexed: res.AlreadyIndexed, Duplicates: make([]duplicate, len(res.Duplicates))}
		for j, m := range res.Duplicates {
			out.Duplicates[j] = duplicate{ID: m.ID, Estimate: m.Estimate}
			if !math.IsNaN(m.Jaccard) {
				jac := m.Jaccard
				out.Duplicates[j].Jaccard = &jac
			}
		}
		if res.Inserted {
			resp.Inserted++
		}
		resp.Results[i] = out
	}
	writeJSON(w, http.StatusOK, resp)
}
