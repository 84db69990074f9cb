package web

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/corpusrun"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
	"github.com/dedupstudio/dedupstudio/internal/words"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// Handlers do not choose statuses for failures: they return the error to fail (an error
// page), failOn (the page the person came from, for what they can fix there) or failAPI
// (JSON), and problem maps it, in this one place, by its kind (internal/errkind):
//
//   - *pageError: its own status and message (what a handler knows best: "No such
//     campaign.", an upload over the size limit)
//   - an error of a kind: the status of its kind (statusOf), and the message written for
//     it in userMessage or else its own text (errkind.Message), written for people
//   - the request's own context ending (the client left, or its body stopped coming
//     before the read deadline): 499, logged as a client abort, not a server error (a
//     posted form's body is read before the handlers, and one cut off is answered 408
//     there: readForms)
//   - anything else, errkind.Internal: 500 "internal error", the error logged with the
//     request id, which the page shows too. The text of an internal error never reaches
//     the browser.
//
// A new error type of a domain package needs nothing here: a Kind method (TestErrorKinds
// fails for an exported error type without one).

// statusOf is the one mapping of an error's kind to the status pages and the JSON API
// answer with.
var statusOf = map[errkind.Kind]int{
	errkind.Invalid:     http.StatusUnprocessableEntity,
	errkind.NotFound:    http.StatusNotFound,
	errkind.Conflict:    http.StatusConflict,
	errkind.Forbidden:   http.StatusForbidden,
	errkind.Unavailable: http.StatusServiceUnavailable,
	errkind.TooLarge:    http.StatusRequestEntityTooLarge,
	errkind.TooMany:     http.StatusTooManyRequests,
	errkind.Internal:    http.StatusInternalServerError,
}

// pageError is a failure whose status and message a handler states itself.
type pageError struct {
	status int
	msg    string
}

func (e *pageError) Error() string { return e.msg }

// notFound is a 404 naming what is not there: notFound("campaign") reads "No such
// campaign."
func notFound(what string) error {
	return &pageError{http.StatusNotFound, "No such " + what + "."}
}

// formError is input a person can fix, named by its form field when there is one.
type formError struct{ field, msg string }

func (e *formError) Error() string {
	if e.field == "" {
		return e.msg
	}
	return e.field + ": " + e.msg
}

func (e *formError) Kind() errkind.Kind { return errkind.Invalid }

// badInput turns a parser's error about what a person typed into a formError.
func badInput(err error) error { return &formError{msg: err.Error()} }

// Messages of the conflicts.
const (
	msgStale     = "This changed since the page was loaded (another tab?). Here is the current state; decide again."
	msgConflict  = "That exists already."
	msgLastAdmin = "The last enabled admin cannot lose the admin role or be disabled."
	msgClosed    = "The server is shutting down; try again in a minute."
)

// statusClientClosed answers a request whose client went away, or whose body stopped
// coming before the read deadline (which ends the request's context too): nginx's 499.
// Nobody reads it; the log says what happened, at info level, not as a server error.
const statusClientClosed = 499

// clientGone reports whether err is the request's own context ending: the client left
// or its request was cut off, which is no failure of the server's.
func clientGone(r *http.Request, err error) bool {
	return r.Context().Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

// problem maps err to the status a response answers with and the message a person
// reads; see the list above. An internal error is logged here, once.
func (s *server) problem(r *http.Request, err error) (int, string) {
	if clientGone(r, err) {
		s.log.Info("client went away", "err", err, "method", r.Method, "path", r.URL.Path, "request_id", requestIDOf(r))
		return statusClientClosed, "The request was cut off before it was answered."
	}
	// Messages quote what people typed: ClipQuoted keeps a 900 kB value from coming back whole.
	if pe, ok := errors.AsType[*pageError](err); ok {
		return pe.status, words.ClipQuoted(pe.msg)
	}
	if msg, ok := userMessage(err); ok {
		return statusOf[errkind.Of(err)], words.ClipQuoted(msg)
	}
	id := requestIDOf(r)
	s.log.Error("internal error", "err", err, "method", r.Method, "path", r.URL.Path, "request_id", id)
	return http.StatusInternalServerError, internalMessage(id)
}

func internalMessage(requestID string) string {
	return "Internal error (request " + requestID + "). It has been logged."
}

// sentences are what a person reads of the sentinels that web words itself, the first
// that err is wins.
var sentences = []struct {
	err error
	msg string
}{
	{review.ErrSelfApproval, "You prepared this manifest: another approver signs it off."},
	{db.ErrNotFound, "There is nothing here."},
	{jobs.ErrNotFound, "There is nothing here."},
	{db.ErrStale, msgStale},
	{db.ErrLastAdmin, msgLastAdmin},
	{db.ErrConflict, msgConflict},
	{jobs.ErrClosed, msgClosed},
	{sweeprun.ErrRunning, "The sweep is running: cancel it first, or wait."},
	{sweeprun.ErrNotResumable, "The sweep finished: there is nothing to resume. Re-run it to score it on the current labels."},
	{sweeprun.ErrNotRunning, "The sweep is not running (it finished, or the server restarted since)."},
	{sweeprun.ErrNoLabels, "This campaign has no counted label yet: label some pairs (or import labels) first, then sweep."},
	{corpusrun.ErrRunning, "This run is running already."},
	{corpusrun.ErrNotRunning, "This run is not running (it finished, or the server restarted since)."},
	{corpusrun.ErrNotResumable, "This run finished: there is nothing to resume. Start a new one to run it again."},
	{corpusrun.ErrNotImportable, "Only a finished run without a manifest imports its removals."},
}

// userMessage returns what a person reads of err, an error of a kind (errkind.Of is not
// Internal), and false for an internal error: the sentence written for it (sentences, and
// below), else errkind.Message.
func userMessage(err error) (string, bool) {
	e, ok := errors.AsType[errkind.Kinded](err)
	if !ok || e.Kind() == errkind.Internal {
		return "", false
	}
	for _, sn := range sentences {
		if errors.Is(e, sn.err) {
			return sn.msg, true
		}
	}
	if errors.Is(e, db.ErrSampleUndecided) {
		return "Decide every removal of the review sample first: " + err.Error() + ".", true
	}
	switch e := e.(type) {
	case *review.RefusedError:
		return e.Msg + ".", true
	case *review.StaleError:
		return e.Error() + ".", true
	case *review.OutdatedError, *review.ConflictError, *review.SeparationError, *review.RestoredError:
		return sentence(e.Error()), true
	case *campaign.PartyError:
		return "You labeled this pair yourself, so another adjudicator settles it: " + orList(e.Others) + " can.", true
	case *ingest.LabelError:
		return labelErrorMessage(e), true
	case *cluster.InputError:
		return strings.TrimPrefix(e.Error(), "cluster: "), true
	}
	return errkind.Message(err)
}

// sentence starts a message with a capital letter and ends it with a full stop.
func sentence(msg string) string {
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:] + "."
}

// labelErrorMessage lists every refused row of a label import (up to the listed ones).
func labelErrorMessage(le *ingest.LabelError) string {
	if le.Err != nil || len(le.Report.Errors) == 0 {
		return le.Error()
	}
	rows := make([]string, len(le.Report.Errors))
	for i, e := range le.Report.Errors {
		rows[i] = e.Error()
	}
	return le.Error() + ". All: " + strings.Join(rows, "; ")
}

// fail answers with the error page for err.
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := s.problem(r, err)
	s.renderError(w, r, status, msg)
}

// failOn shows err on the page the person came from when it is theirs to fix there
// (bad input, a conflict, a refused upload: form renders that page with the message and
// status), and as an error page otherwise (not found, internal errors).
func (s *server) failOn(w http.ResponseWriter, r *http.Request, err error, form func(status int, msg string)) {
	status, msg := s.problem(r, err)
	switch status {
	case http.StatusBadRequest, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		form(status, msg)
	default:
		s.renderError(w, r, status, msg)
	}
}

// failBack answers err as failOn does, a refusal the person can correct going back to
// the page back with the message (refused).
func (s *server) failBack(w http.ResponseWriter, r *http.Request, err error, back string) {
	s.failOn(w, r, err, func(_ int, msg string) { s.redirect(w, r, back, refused(r, msg)) })
}

// renderError writes the error page.
func (s *server) renderError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.render(w, r, status, templates.Error(templates.ErrorPage{Page: s.page(r, http.StatusText(status)), Status: status, Message: msg}))
}

// jobError is what a background job shows of its failure: the error itself when the
// person can fix it (or cancelled the job), else a message with a reference to the log,
// where the error is written, followed by consequence ("nothing was imported").
func (s *server) jobError(kind, title string, err error, consequence string) error {
	if err == nil {
		return nil
	}
	if errkind.Of(err) != errkind.Internal || errors.Is(err, context.Canceled) {
		return err
	}
	ref := randomToken(8)
	s.log.Error(kind+" failed", "title", title, "err", err, "ref", ref)
	return errors.New("the " + kind + " failed on an internal error (reference " + ref + "), which has been logged; " + consequence)
}
