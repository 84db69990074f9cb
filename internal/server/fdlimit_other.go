//go:build !unix

package server

import "errors"

// errNoLimit is the descriptor limit that cannot be read on this platform.
var errNoLimit = errors.New("descriptor limit unknown")

// fdLimit is unknown on this platform: the cap falls back to its default.
func fdLimit() (uint64, error) { return 0, errNoLimit }
