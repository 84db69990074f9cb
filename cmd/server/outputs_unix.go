//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// openDirect opens a device or pipe for writing as it is, appending (a file reached
// through /proc, such as a redirected standard error, keeps what it holds). A FIFO that
// no process reads is refused at once rather than waited on, where an interrupt the
// commands catch could not reach the wait: a probe opens it without blocking first, and
// stays open until the real one is, so the reader never sees the writers gone.
func openDirect(name string) (*os.File, error) {
	probe, err := os.OpenFile(name, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENXIO) {
		return nil, fmt.Errorf("%s: no process is reading this pipe; start its reader first", name)
	}
	if err != nil {
		return nil, err
	}
	defer probe.Close()
	return os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
}
