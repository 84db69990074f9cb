package ingest

import (
	"context"
	"errors"

	"github.com/dedupstudio/dedupstudio/internal/errkind"
)

// The kinds of this package's errors (internal/errkind): what pages, the API and the
// command line make of them.

func (e *IdenticalError) Kind() errkind.Kind { return errkind.Conflict }
func (e *LabelError) Kind() errkind.Kind     { return errkind.Invalid }

// Kind of a failed import: the person's to fix (Invalid) when its cause is theirs (bad
// records, a cap, an empty or damaged file, a file imported already) or a cancel; the
// cause's own kind otherwise (an I/O or database failure is Internal).
func (e *Error) Kind() errkind.Kind {
	if e.Err == nil || errors.Is(e.Err, context.Canceled) || errkind.Of(e.Err) != errkind.Internal {
		return errkind.Invalid
	}
	return errkind.Internal
}
