package manifests

import "github.com/dedupstudio/dedupstudio/internal/errkind"

// The kinds of this package's errors (internal/errkind): what pages, the API and the
// command line make of them.

func (e *TooLargeError) Kind() errkind.Kind { return errkind.TooLarge }
