package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/logtest"
)

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
	var logs logtest.Buffer
	serveStore(t, store, Config{Log: logs.Logger()})
	if _, err := os.Stat(filepath.Dir(left)); !os.IsNotExist(err) {
		t.Errorf("stale upload still there after the start (stat: %v)", err)
	}
	if got := logs.String(); !strings.Contains(got, `msg="removed a stale upload" path=`+filepath.Dir(left)+" files=1 bytes=29") {
		t.Errorf("log does not say what was removed:\n%s", got)
	}
}
