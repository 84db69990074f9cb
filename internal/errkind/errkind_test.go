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
