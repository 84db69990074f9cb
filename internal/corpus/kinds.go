package corpus

import "github.com/dedupstudio/dedupstudio/internal/errkind"

// The kinds of this package's errors (internal/errkind): what pages, the API and the
// command line make of them.

func (e *RecordError) Kind() errkind.Kind { return errkind.Invalid }
func (e *FormatError) Kind() errkind.Kind { return errkind.Invalid }
func (e *LimitError) Kind() errkind.Kind  { return errkind.TooLarge }
