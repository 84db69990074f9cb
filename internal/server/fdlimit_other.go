//go:build !unix

package server

// fdLimit is unknown on this platform: the cap falls back to its default.
func fdLimit() (uint64, error) { return 0, errNoLimit }
