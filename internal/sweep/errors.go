package sweep

import (
	"fmt"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/percent"
	"github.com/dedupstudio/dedupstudio/internal/words"
)

// GridError is a grid that cannot be swept, naming the axis and, where it applies, the
// 0-based index of the value at fault.
type GridError struct {
	Axis  string // specs, shapes, thresholds, verifications, policies, or grid for the whole
	Index int    // -1 for the axis as a whole
	Msg   string
}

func (e *GridError) Error() string {
	if e.Index >= 0 {
		return fmt.Sprintf("grid %s[%d]: %s", e.Axis, e.Index, e.Msg)
	}
	return fmt.Sprintf("grid %s: %s", e.Axis, e.Msg)
}

// InputError is an input a sweep cannot use, naming the field and, for lists, the
// 0-based index of the element at fault.
type InputError struct {
	Field string
	Index int // -1 when the field is not a list
	Msg   string
}

func (e *InputError) Error() string {
	if e.Index >= 0 {
		return fmt.Sprintf("sweep input %s[%d]: %s", e.Field, e.Index, e.Msg)
	}
	return fmt.Sprintf("sweep input %s: %s", e.Field, e.Msg)
}

// DeclinedError is a configuration whose shape proposes more candidate pairs than a
// sweep scores (Options.CandidateShare): what a sweep declines (Report.Declined) and
// what Prepare refuses. It wraps lsh.ErrTooManyPairs.
type DeclinedError struct {
	Shape lsh.Shape
	Docs  int
	Limit int
}

func (e *DeclinedError) Error() string {
	return fmt.Sprintf("%d bands × %d rows proposes more than %s candidate pairs among %s (%s of all pairs): %s; choose one with more rows",
		e.Shape.Bands, e.Shape.Rows, words.Thousands(e.Limit), words.Count(e.Docs, "document", "documents"), percent.Short(e.share()), DeclineRule())
}

func (e *DeclinedError) Unwrap() error { return lsh.ErrTooManyPairs }

// share is the limit's share of all pairs of the documents.
func (e *DeclinedError) share() float64 { return float64(e.Limit) / allPairs(e.Docs) }

// DeclineRule says which shapes a sweep declines and why, for the pages and the command
// line that report them.
func DeclineRule() string {
	return "a sweep does not score a shape that makes more than one pair in a thousand a candidate (" + words.Thousands(MinCandidateLimit) +
		" pairs are always allowed): at 1M documents it would compare each document with a thousand others or more, which no engine runs at scale"
}
