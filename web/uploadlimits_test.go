package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/db"
)

// newFixtureWith is newFixture with Deps as edit leaves them.
func newFixtureWith(t *testing.T, edit func(*Deps)) *fixture {
	t.Helper()
	store, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "web.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	d := testDeps(store, newJobs(t))
	d.MaxUpload = 1 << 20
	edit(&d)
	f := &fixture{t: t, h: New(d), store: store, jobs: d.Jobs, sweeps: d.Sweeps, cookies: map[string]*http.Cookie{}}
	f.admin = f.signIn("admin")
	return f
}

func gzipped(t *testing.T, s string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	io.WriteString(zw, s)
	zw.Close()
	return buf.String()
}

// jsonlDocs is n small JSONL documents.
func jsonlDocs(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id":"d%d","text":"document number %d %s"}`+"\n", i, i, strings.Repeat("word ", 20))
	}
	return b.String()
}

// An upload over the server's caps (records, bytes once decompressed) fails on its
// import page, saying which cap and that nothing was imported; nothing lands.
func TestUploadOverTheImportCaps(t *testing.T) {
	t.Parallel()
	f := newFixtureWith(t, func(d *Deps) { d.MaxImportDocs = 50; d.MaxImportBytes = 64 << 10 })
	// The form says so before anyone uploads.
	if _, body := get(t, f.h, "/datasets/new", f.admin); !strings.Contains(body, `<span data-testid="import-caps">and at most 64 KiB and 50 records once decompressed</span>`) {
		t.Errorf("the upload form does not state the caps:\n%s", body)
	}
	for _, c := range []struct {
		name, body, want string
	}{
		{"many.jsonl", jsonlDocs(60), "many.jsonl: more than 50 records, the cap on one import"},
		{"bomb.jsonl.gz", gzipped(t, strings.Repeat(`{"id":"x","text":"`+strings.Repeat("a", 2000)+`"}`+"\n", 40)), "bomb.jsonl.gz: more than 64 KiB of data once decompressed, the cap on one import"},
	} {
		rec := f.upload("/datasets", c.name, c.body, nil)
		status, body := f.waitJob(rec.Header().Get("Location"))
		if status != http.StatusUnprocessableEntity || !strings.Contains(body, `data-testid="import-failed"`) || !strings.Contains(body, c.want) ||
			!strings.Contains(body, "nothing was imported") {
			t.Errorf("%s: import page %d; want 422 saying %q:\n%s", c.name, status, c.want, body)
		}
	}
	if n, _ := f.store.CountDocuments(context.Background()); n != 0 {
		t.Errorf("%d documents after refused imports; want 0", n)
	}
	// Within the caps, the same server imports.
	rec := f.upload("/datasets", "few.jsonl", jsonlDocs(50), nil)
	if status, body := f.waitJob(rec.Header().Get("Location")); status != http.StatusOK || !strings.Contains(body, `data-testid="import-done"`) {
		t.Errorf("within the caps: %d\n%s", status, body)
	}
}

// A cut gzip stream, a damaged Parquet file and an upload named ".." are the person's
// to fix: each says what is wrong with the file, under the name it was uploaded as,
// never "internal error" and never the server's own paths.
func TestUploadBrokenFilesSayWhy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := newFixtureWith(t, func(d *Deps) { d.UploadDir = filepath.Join(dir, "uploads") })
	gz := gzipped(t, jsonlDocs(200))
	rec := f.upload("/datasets", "cut.jsonl.gz", gz[:len(gz)/2], nil)
	status, body := f.waitJob(rec.Header().Get("Location"))
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, "cut.jsonl.gz: truncated gzip stream after ") || strings.Contains(body, "internal error") {
		t.Errorf("truncated gzip: import page %d; want 422 naming the truncated stream:\n%s", status, body)
	}

	bad := damagedParquet(t)
	rec = f.upload("/datasets", "docs.parquet", string(bad), nil)
	status, body = f.waitJob(rec.Header().Get("Location"))
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, "docs.parquet: row group ") || strings.Contains(body, "internal error") || strings.Contains(body, dir) {
		t.Errorf("damaged parquet: import page %d; want 422 naming docs.parquet and its row group, no server path:\n%s", status, body)
	}

	rec = f.upload("/datasets", "..", "x", nil)
	if loc, body := f.follow(rec, f.admin); !strings.HasPrefix(loc, "/datasets/new?") || !strings.Contains(body, `The file name &#34;..&#34; cannot be used`) {
		t.Errorf(`upload named "..": went to %s; want the form saying the name cannot be used:\n%s`, loc, body)
	}
	// Every upload was removed from the upload directory once its import ended.
	if left, _ := os.ReadDir(filepath.Join(dir, "uploads")); len(left) != 0 {
		t.Errorf("%d entries left in the upload directory; want none", len(left))
	}
}

// damagedParquet is a small Parquet file with one byte changed so that its header and
// footer read but a row group does not.
func damagedParquet(t *testing.T) []byte {
	t.Helper()
	type row struct {
		ID   string `parquet:"id"`
		Text string `parquet:"text"`
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf)
	w.Write([]row{{"a", "one two three"}, {"b", "four five six"}})
	w.Close()
	good := buf.Bytes()
	for i := 4; i < len(good)-8; i++ {
		data := bytes.Clone(good)
		data[i] ^= 0xff
		path := filepath.Join(t.TempDir(), "docs.parquet")
		os.WriteFile(path, data, 0o644)
		r, err := corpus.OpenFile(path, "", corpus.Options{})
		for err == nil {
			_, err = r.Next()
		}
		var fe *corpus.FormatError
		if errors.As(err, &fe) && strings.Contains(err.Error(), "docs.parquet: row group ") {
			return data
		}
	}
	t.Fatal("no damaged byte fails a row group")
	return nil
}
