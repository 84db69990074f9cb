// Package errkind sorts errors by what the one who asked can do about them, so that
// each error is mapped to an answer once, by its kind, instead of by its type in every
// place that shows it (benbjohnson/wtf's Error{Code, Message} and ErrorCode(err)).
//
// A package keeps its own error types and says their kind with a method:
//
//	func (e *InputError) Kind() errkind.Kind { return errkind.Invalid }
//
// and a sentinel is made with New, which keeps errors.Is working:
//
//	var ErrStale = errkind.New(errkind.Conflict, "changed since it was shown")
//
// Of finds the kind of any error, wrapped or joined; an error of no kind is Internal.
// web maps kinds to HTTP statuses in one place (its pages and its JSON API alike), and
// the text of an error of any kind but Internal is meant to be read by the person who
// caused it: it names what to fix, never a path, a query or a stack.
package errkind

import "errors"

// Kind is what an error asks of the one who sees it.
type Kind string

// The kinds. Internal is the zero Kind: an error nobody declared a kind for is a fault
// of the program (or the machine), logged and answered without its text.
const (
	Internal    Kind = ""
	Invalid     Kind = "invalid"     // input a person can fix: a form value, a file, a setting
	NotFound    Kind = "not-found"   // what was asked for is not there
	Conflict    Kind = "conflict"    // the state refuses the action now (running, finished, changed meanwhile)
	Forbidden   Kind = "forbidden"   // this person may not, though another may
	Unavailable Kind = "unavailable" // try again later (shutting down)
	TooLarge    Kind = "too-large"   // over a size cap
	TooMany     Kind = "too-many"    // too many attempts: wait, then try again
)

// Kinds lists every Kind but Internal.
var Kinds = []Kind{Invalid, NotFound, Conflict, Forbidden, Unavailable, TooLarge, TooMany}

// String names the kind; Internal is "internal".
func (k Kind) String() string {
	if k == Internal {
		return "internal"
	}
	return string(k)
}

// Error is an error of a kind with a message for people: a sentinel (New) or a one-off
// (Errorf-style callers build it directly).
type Error struct {
	Code    Kind
	Message string
}

func (e *Error) Error() string { return e.Message }

// Kind returns e.Code.
func (e *Error) Kind() Kind { return e.Code }

// New returns an error of kind k with message msg; each call returns a distinct error,
// so a package-level one is a sentinel for errors.Is.
func New(k Kind, msg string) error { return &Error{Code: k, Message: msg} }

// Kinded is what an error of a kind implements.
type Kinded interface {
	error
	Kind() Kind
}

// Of returns the kind of err: that of the first error in its tree (errors.As order:
// err itself, then what it wraps, depth first) that has a Kind method, or Internal
// when none has, or err is nil.
func Of(err error) Kind {
	if k, ok := errors.AsType[Kinded](err); ok {
		return k.Kind()
	}
	return Internal
}

// Message returns what a person reads of err when it is of a kind (Of is not Internal):
// the text of the first error of a kind in its tree, which says what to fix (what wraps
// a typed error names the operation, not the fix), or, for a sentinel made by New, err's
// whole text (what wraps a sentinel names the thing: `document "x": the batch names this
// id twice`). ok is false for an internal error, whose text is not for people.
func Message(err error) (msg string, ok bool) {
	e, found := errors.AsType[Kinded](err)
	if !found || e.Kind() == Internal {
		return "", false
	}
	if _, sentinel := e.(*Error); sentinel {
		return err.Error(), true
	}
	return e.Error(), true
}
