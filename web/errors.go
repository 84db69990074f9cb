package web

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/ingest"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/results"
	"github.com/dedupstudio/dedupstudio/internal/review"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// Handlers do not choose statuses for failures: they return the error to fail (an error
// page) or failOn (the page the person came from, for what they can fix there), and
// problem maps it, in this one place:
//
//   - *pageError: its own status and message (what a handler knows best: "No such
//     campaign.", an upload over the size limit)
//   - db.ErrNotFound, jobs.ErrNotFound: 404
//   - input a person can fix (see userMessage): 422, with the error's own text
//   - db.ErrStale, db.ErrConflict, db.ErrLastAdmin, a manifest's *review.RefusedError,
//     *review.StaleError, *review.OutdatedError (changed under it since its run),
//     *review.ConflictError (another export's tombstones) and *review.SeparationError: 409
//   - *campaign.PartyError (adjudicating one's own disagreement while others could),
//     review.ErrSelfApproval: 403
//   - jobs.ErrClosed: 503
//   - a sweep's state refusing an action (sweeprun.ErrRunning, ErrNotResumable,
//     ErrNotRunning): 409; a campaign without labels to sweep, a *sweep.GridError: 422
//   - the request's own context ending (the client left, or its body stopped coming
//     before the read deadline): 499, logged as a client abort, not a server error
//   - anything else: 500 "internal error", the error logged with the request id, which
//     the page shows too. The text of an internal error never reaches the browser.

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
	var (
		pe       *pageError
		refused  *review.RefusedError
		stale    *review.StaleError
		outdated *review.OutdatedError
		conflict *review.ConflictError
		apart    *review.SeparationError
	)
	switch {
	case errors.As(err, &pe):
		return pe.status, pe.msg
	case errors.Is(err, review.ErrSelfApproval):
		return http.StatusForbidden, "You prepared this manifest: another approver signs it off."
	case errors.As(err, &refused):
		return http.StatusConflict, refused.Msg + "."
	case errors.As(err, &stale):
		return http.StatusConflict, stale.Error() + "."
	case errors.As(err, &outdated):
		return http.StatusConflict, sentence(outdated.Error())
	case errors.As(err, &conflict):
		return http.StatusConflict, sentence(conflict.Error())
	case errors.As(err, &apart):
		return http.StatusConflict, sentence(apart.Error())
	case errors.Is(err, db.ErrNotFound), errors.Is(err, jobs.ErrNotFound):
		return http.StatusNotFound, "There is nothing here."
	case errors.Is(err, db.ErrStale):
		return http.StatusConflict, msgStale
	case errors.Is(err, db.ErrLastAdmin):
		return http.StatusConflict, msgLastAdmin
	case errors.Is(err, db.ErrConflict):
		return http.StatusConflict, msgConflict
	case errors.Is(err, jobs.ErrClosed):
		return http.StatusServiceUnavailable, msgClosed
	case errors.Is(err, sweeprun.ErrRunning):
		return http.StatusConflict, "The sweep is running: cancel it first, or wait."
	case errors.Is(err, sweeprun.ErrNotResumable):
		return http.StatusConflict, "The sweep finished: there is nothing to resume. Re-run it to score it on the current labels."
	case errors.Is(err, sweeprun.ErrNotRunning):
		return http.StatusConflict, "The sweep is not running (it finished, or the server restarted since)."
	case errors.Is(err, sweeprun.ErrNoLabels):
		return http.StatusUnprocessableEntity, "This campaign has no counted label yet: label some pairs (or import labels) first, then sweep."
	}
	if pe, ok := errors.AsType[*campaign.PartyError](err); ok {
		return http.StatusForbidden, "You labeled this pair yourself, so another adjudicator settles it: " + orList(pe.Others) + " can."
	}
	if msg, ok := userMessage(err); ok {
		return http.StatusUnprocessableEntity, msg
	}
	id := requestIDOf(r)
	s.log.Error("internal error", "err", err, "method", r.Method, "path", r.URL.Path, "request_id", id)
	return http.StatusInternalServerError, internalMessage(id)
}

// sentence starts a message with a capital letter and ends it with a full stop.
func sentence(msg string) string {
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:] + "."
}

func internalMessage(requestID string) string {
	return "Internal error (request " + requestID + "). It has been logged."
}

// userMessage returns the text of an error about input a person can fix (a form value,
// a campaign setting, a representation, an uploaded file), and false for every other
// error.
func userMessage(err error) (string, bool) {
	var (
		fe  *formError
		ce  *campaign.InvalidError
		se  *lsh.SpecError
		le  *ingest.LabelError
		ie  *ingest.Error
		re  *corpus.RecordError
		cfe *corpus.FormatError
		lme *corpus.LimitError
		rie *review.InputError
		cie *cluster.InputError
		gre *sweep.GridError
		xbe *results.BadInputError
		xue *results.UnknownIDsError
		xie *results.InputError
		xre *results.RowsError
	)
	switch {
	case errors.As(err, &fe):
		return fe.Error(), true
	case errors.As(err, &ce):
		return ce.Error(), true
	case errors.As(err, &se):
		return se.Error(), true
	case errors.As(err, &le):
		return labelErrorMessage(le), true
	case errors.As(err, &ie):
		// A failed import is the person's to fix when its cause is: a bad or truncated
		// file, a cap, a file already imported.
		_, same := errors.AsType[*ingest.IdenticalError](ie.Err)
		_, theirs := userMessage(ie.Err)
		return ie.Error(), ie.Err == nil || same || theirs || errors.Is(ie.Err, context.Canceled)
	case errors.As(err, &re):
		return re.Error(), true
	case errors.As(err, &cfe):
		return cfe.Error(), true
	case errors.As(err, &lme):
		return lme.Error(), true
	case errors.As(err, &rie):
		return rie.Error(), true
	case errors.As(err, &cie):
		return strings.TrimPrefix(cie.Error(), "cluster: "), true
	case errors.As(err, &gre):
		return gre.Error(), true
	case errors.Is(err, ingest.ErrEmpty):
		return err.Error(), true
	case errors.As(err, &xbe):
		return xbe.Error(), true
	case errors.As(err, &xue):
		return xue.Error(), true
	case errors.As(err, &xie):
		return xie.Error(), true
	case errors.As(err, &xre):
		return xre.Error(), true
	case errors.Is(err, db.ErrSampleUndecided):
		return "Decide every removal of the review sample first: " + err.Error() + ".", true
	}
	return "", false
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
	if _, ok := userMessage(err); ok || errors.Is(err, context.Canceled) {
		return err
	}
	ref := randomToken(8)
	s.log.Error(kind+" failed", "title", title, "err", err, "ref", ref)
	return errors.New("the " + kind + " failed on an internal error (reference " + ref + "), which has been logged; " + consequence)
}
