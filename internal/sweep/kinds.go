package sweep

import "github.com/dedupstudio/dedupstudio/internal/errkind"

// The kinds of this package's errors (internal/errkind): what pages, the API and the
// command line make of them.

func (e *GridError) Kind() errkind.Kind     { return errkind.Invalid }
func (e *InputError) Kind() errkind.Kind    { return errkind.Invalid }
func (e *DeclinedError) Kind() errkind.Kind { return errkind.Invalid }
