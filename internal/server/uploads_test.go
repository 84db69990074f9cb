package server

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a log destination that the server writes while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// An upload that a killed process was receiving or importing stays in the upload
// directory next to the database; the next start removes it, and logs what it removed,
// before it serves.
func TestStaleUploadsRemovedAtStart(t *testing.T) {
	t.Parallel()
	store := openStore(t, "studio.db")
	dir := UploadDir(store.Path())
	if filepath.Dir(dir) != filepath.Dir(store.Path()) {
		t.Fatalf("upload directory %s is not next to the database %s", dir, store.Path())
	}
	left := filepath.Join(dir, "upload-4242", "crawl.jsonl")
	os.MkdirAll(filepath.Dir(left), 0o700)
	os.WriteFile(left, []byte(`{"id":"1","text":"half an upl`), 0o600)
	var logs syncBuffer
	serveStore(t, store, Config{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if _, err := os.Stat(filepath.Dir(left)); !os.IsNotExist(err) {
		t.Errorf("stale upload still there after the start (stat: %v)", err)
	}
	if got := logs.String(); !strings.Contains(got, `msg="removed a stale upload" path=`+filepath.Dir(left)+" files=1 bytes=29") {
		t.Errorf("log does not say what was removed:\n%s", got)
	}
}
