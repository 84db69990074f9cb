//go:build !unix

package main

import "os"

// openDirect opens a device for writing as it is (see the Unix file).
func openDirect(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
}
