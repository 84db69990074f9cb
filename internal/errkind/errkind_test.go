package errkind

import (
	"errors"
	"fmt"
	"testing"
)

type typed struct{}

func (typed) Error() string { return "typed" }
func (typed) Kind() Kind    { return Forbidden }

// wrapper is an error of a kind around another.
type wrapper struct{ err error }

func (w wrapper) Error() string { return "gone: " + w.err.Error() }
func (w wrapper) Unwrap() error { return w.err }
func (wrapper) Kind() Kind      { return NotFound }

func TestOf(t *testing.T) {
	t.Parallel()
	stale := New(Conflict, "changed since it was shown")
	for _, tc := range []struct {
		name string
		err  error
		want Kind
	}{
		{"nil", nil, Internal},
		{"plain", errors.New("disk full"), Internal},
		{"sentinel", stale, Conflict},
		{"wrapped sentinel", fmt.Errorf("save: %w", stale), Conflict},
		{"typed, wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", typed{})), Forbidden},
		{"the first of a join", errors.Join(errors.New("x"), typed{}, stale), Forbidden},
		{"the outer of two", fmt.Errorf("a: %w", wrapper{stale}), NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Of(tc.err); got != tc.want {
				t.Errorf("Of(%v) = %v; want %v", tc.err, got, tc.want)
			}
		})
	}
	if !errors.Is(fmt.Errorf("save: %w", stale), stale) {
		t.Error("a sentinel made by New is not found by errors.Is through a wrap")
	}
	if New(Conflict, "x") == New(Conflict, "x") {
		t.Error("New returned the same error twice: sentinels would be equal")
	}
}

// Message is the text of the first error of a kind: a typed error's own, without what
// wraps it; a sentinel's with what wraps it; nothing of an internal error.
func TestMessage(t *testing.T) {
	t.Parallel()
	dup := New(Invalid, "the batch names this id twice")
	for _, tc := range []struct {
		name string
		err  error
		msg  string
		ok   bool
	}{
		{"typed, wrapped", fmt.Errorf("import results: %w", typed{}), "typed", true},
		{"sentinel, wrapped", fmt.Errorf(`document "x": %w`, dup), `document "x": the batch names this id twice`, true},
		{"internal", fmt.Errorf("save: %w", errors.New("open /srv/x: disk full")), "", false},
		{"nil", nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if msg, ok := Message(tc.err); msg != tc.msg || ok != tc.ok {
				t.Errorf("Message(%v) = %q, %v; want %q, %v", tc.err, msg, ok, tc.msg, tc.ok)
			}
		})
	}
}
