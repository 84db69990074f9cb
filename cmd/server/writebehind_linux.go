package main

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// writeBehindBytes is how much of an output file is written before its write-back to disk
// is started (writeBehind).
const writeBehindBytes = 8 << 20

// writeBehind writes to f and starts the write-back of each writeBehindBytes as soon as
// they are written (sync_file_range, SYNC_FILE_RANGE_WRITE: started, not waited for), so
// a large output does not pile up as dirty pages to be written at the end: ext4 writes a
// file's delayed blocks when a rename replaces another file with it, and the commit's
// rename took 16.7 ms of a 0.33 s run for 33 MB of signatures, 8.7 ms with this (the
// rest is freeing the replaced file). Advice only: a file system that refuses it is
// written as any other.
type writeBehind struct {
	f              *os.File
	conn           syscall.RawConn
	written, begun int64
}

// newWriteBehind wraps f, a regular file.
func newWriteBehind(f *os.File) io.Writer {
	conn, err := f.SyscallConn()
	if err != nil {
		return f
	}
	return &writeBehind{f: f, conn: conn}
}

func (w *writeBehind) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.written += int64(n)
	if w.written-w.begun >= writeBehindBytes {
		w.conn.Control(func(fd uintptr) {
			unix.SyncFileRange(int(fd), w.begun, w.written-w.begun, unix.SYNC_FILE_RANGE_WRITE)
		})
		w.begun = w.written
	}
	return n, err
}
