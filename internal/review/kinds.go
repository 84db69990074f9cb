package review

import "github.com/dedupstudio/dedupstudio/internal/errkind"

// The kinds of this package's errors (internal/errkind): what pages, the API and the
// command line make of them.

func (e *InputError) Kind() errkind.Kind      { return errkind.Invalid }
func (e *RefusedError) Kind() errkind.Kind    { return errkind.Conflict }
func (e *StaleError) Kind() errkind.Kind      { return errkind.Conflict }
func (e *OutdatedError) Kind() errkind.Kind   { return errkind.Conflict }
func (e *ConflictError) Kind() errkind.Kind   { return errkind.Conflict }
func (e *SeparationError) Kind() errkind.Kind { return errkind.Conflict }
func (e *RestoredError) Kind() errkind.Kind   { return errkind.Conflict }
