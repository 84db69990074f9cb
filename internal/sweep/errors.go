package sweep

import (
	"fmt"
	"strconv"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
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
	pairs := float64(e.Docs) * float64(e.Docs-1) / 2
	return fmt.Sprintf("%d bands × %d rows proposes more than %s candidate pairs among %s (%s of all pairs): a sweep does not score a shape that makes more than one pair in a thousand candidates (at least %s), which no engine could run at scale; choose one with more rows",
		e.Shape.Bands, e.Shape.Rows, words.Thousands(e.Limit), words.Count(e.Docs, "document", "documents"), ShareText(float64(e.Limit)/pairs), words.Thousands(MinCandidateLimit))
}

func (e *DeclinedError) Unwrap() error { return lsh.ErrTooManyPairs }

// ShareText writes a share of all pairs for people: 11%, 0.1%, 0.0042%.
func ShareText(s float64) string {
	if s >= 0.1 {
		return fmt.Sprintf("%.0f%%", 100*s)
	}
	return strconv.FormatFloat(100*s, 'g', 2, 64) + "%"
}
