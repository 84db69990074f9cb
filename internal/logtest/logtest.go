// Package logtest gives tests a log they can read while the code under test writes it
// from its own goroutines (handlers, a server's listener, background jobs). It is
// imported by test files only.
package logtest

import (
	"bytes"
	"log/slog"
	"sync"
)

// Buffer is a log destination that many goroutines write while a test reads it. The
// zero value is ready to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Logger returns a text logger that writes to b, at the default level.
func (b *Buffer) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, nil))
}
