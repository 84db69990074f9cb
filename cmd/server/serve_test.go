package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/server"
)

// A SIGTERM in the middle of an import: the server stops, the import is cancelled and
// discards its staged version through the store, and only then the store closes. Were
// the store closed first, the staged version would stay behind in the file.
func TestServeStopsJobsBeforeTheStore(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short mode: imports a 20 MB sample")
	}
	dbPath := filepath.Join(t.TempDir(), "serve.db")
	ctx, sigterm := context.WithCancel(context.Background())
	defer sigterm()
	ready := make(chan [2]string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serveUntil(ctx, dbPath, false, serveConfig{Config: server.Config{Addr: "127.0.0.1:0",
			Ready: func(u, setup string) { ready <- [2]string{u, setup} }}, Version: "test", KDF: auth.Params{Memory: 1024, Time: 1, Threads: 1}})
	}()
	var base, setup string
	select {
	case u := <-ready:
		base, setup = u[0], u[1]
	case err := <-done:
		t.Fatalf("server did not start: %v", err)
	}
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: time.Minute}
	post := func(u, contentType string, body io.Reader) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, u, body)
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := post(setup, "application/x-www-form-urlencoded", strings.NewReader(url.Values{"name": {"ada"}, "password": {"a long enough password"}}.Encode()))
	res.Body.Close()
	// A sample big enough to be still importing when the signal comes.
	var file bytes.Buffer
	mw := multipart.NewWriter(&file)
	fw, _ := mw.CreateFormFile("file", "big.jsonl")
	for i := range 100_000 {
		fmt.Fprintf(fw, `{"id":"%d","text":"document %d of a sample that takes a while to import, with some words to fill it up"}`+"\n", i, i)
	}
	mw.Close()
	res = post(base+"/datasets", mw.FormDataContentType(), &file)
	res.Body.Close()
	if !strings.Contains(res.Request.URL.Path, "/imports/") {
		t.Fatalf("upload landed on %s (%d); want the import's page", res.Request.URL, res.StatusCode)
	}
	status := res.Request.URL.String()
	docs := regexp.MustCompile(`Importing: <strong>(\d+)</strong>`)
	for deadline := time.Now().Add(30 * time.Second); ; {
		res, err := client.Get(status)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if m := docs.FindSubmatch(b); m != nil && string(m[1]) != "0" {
			break // under way
		}
		if !bytes.Contains(b, []byte(`data-state="running"`)) || time.Now().After(deadline) {
			t.Fatalf("the import is not running with documents in:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	sigterm()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	// The file holds no dataset at all: not the import (cancelled), not its staged version.
	conn, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var datasets, documents int
	if err := conn.QueryRow(`SELECT (SELECT count(*) FROM datasets), (SELECT count(*) FROM documents)`).Scan(&datasets, &documents); err != nil {
		t.Fatal(err)
	}
	if datasets != 0 || documents != 0 {
		t.Errorf("after SIGTERM during an import: %d dataset(s), %d document(s) left; want none", datasets, documents)
	}
}

// A large import left behind by a killed process does not keep the server from
// listening: it is cleaned up beside the server, in batches, and logged. Before the fix
// db.Open removed it in one transaction first, and a large one kept the server silent
// for minutes.
func TestServeBeforeStaleImportCleanup(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short mode: leaves a 60,000-document import behind")
	}
	dbPath := filepath.Join(t.TempDir(), "stale.db")
	ctx := context.Background()
	store, err := db.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := store.BeginDataset(ctx, "killed", "killed.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	store.Close()
	conn, err := sql.Open("sqlite", "file:"+dbPath+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Its documents are in the store itself, as a copy into the store killed halfway
	// leaves them (or a version that did not stage imports): removed in batches.
	text := strings.Repeat("an import whose process was killed ", 8)
	if _, err := conn.Exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 59999)
		INSERT INTO documents (dataset_id, ext_id, text, content_hash, bytes) SELECT ?, i, ?, '', ? FROM n`, ds.ID, text, len(text)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(`UPDATE datasets SET heartbeat_at = '2000-01-01T00:00:00Z' WHERE id = ?`, ds.ID); err != nil {
		t.Fatal(err) // its process died long ago
	}
	remaining := func() int {
		var n int
		if err := conn.QueryRow(`SELECT count(*) FROM documents WHERE dataset_id = ?`, ds.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	var logs syncBuffer
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serveUntil(serveCtx, dbPath, false, serveConfig{Config: server.Config{Addr: "127.0.0.1:0", Log: newLogger(&logs),
			Ready: func(u, _ string) { ready <- u }}, Version: "test", KDF: auth.Params{Memory: 1024, Time: 1, Threads: 1}})
	}()
	var base string
	select {
	case base = <-ready:
	case err := <-done:
		t.Fatalf("server did not start: %v", err)
	}
	left := remaining()
	res, err := http.Get(base + "/healthz")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("/healthz while cleaning up: %v %v", res, err)
	}
	res.Body.Close()
	if left == 0 {
		t.Errorf("the stale import was gone before the server listened; want it cleaned up beside the server")
	}
	for deadline := time.Now().Add(2 * time.Minute); remaining() > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the stale import still has %d documents after 2 minutes", remaining())
		}
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "removed stale imports"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no log of the cleanup:\n%s", logs.String())
		}
	}
	t.Logf("listening with %d of 60,000 documents of the stale import still to remove", left)
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
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

// The caps on an uploaded sample reach the server: the defaults, a value, and 0 for no
// cap (negative in server.Config, where 0 is the default).
func TestServeImportCapFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args  []string
		bytes int64
		docs  int
	}{
		{nil, 4 << 30, 2_000_000},
		{[]string{"-max-input-mb", "10", "-max-docs", "500"}, 10 << 20, 500},
		{[]string{"-max-input-mb", "0", "-max-docs", "0"}, -1, -1},
	} {
		_, _, cfg, err := serveFlags(c.args, io.Discard)
		if err != nil || cfg.MaxImportBytes != c.bytes || cfg.MaxImportDocs != c.docs {
			t.Errorf("serve %q: caps %d bytes, %d docs (%v); want %d, %d", c.args, cfg.MaxImportBytes, cfg.MaxImportDocs, err, c.bytes, c.docs)
		}
	}
}

// The first line of the server's log names the permutation kernel, why it is the one and
// what the kernels measured; a DEDUP_KERNEL the CPU cannot run stops the start, as it
// stops the commands.
func TestServeLogsKernelFirst(t *testing.T) {
	t.Setenv(lsh.KernelEnv, "") // the calibration's choice, whatever the environment says
	dbPath := filepath.Join(t.TempDir(), "kernel.db")
	var logs syncBuffer
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serveUntil(ctx, dbPath, false, serveConfig{Config: server.Config{Addr: "127.0.0.1:0", Log: newLogger(&logs),
			Ready: func(u, _ string) { ready <- u }}, Version: "test", KDF: auth.Params{Memory: 1024, Time: 1, Threads: 1}})
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("server did not start: %v", err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	first, _, _ := strings.Cut(logs.String(), "\n")
	for _, want := range []string{`msg="permutation kernel ` + lsh.Kernel() + `"`, `why="fastest measured at start"`, " generic ", "ns per shingle and permutation"} {
		if !strings.Contains(first, want) {
			t.Errorf("first log line lacks %q:\n%s", want, logs.String())
		}
	}

	t.Setenv(lsh.KernelEnv, "neon9")
	err := serveUntil(context.Background(), dbPath, false, serveConfig{Config: server.Config{Addr: "127.0.0.1:0"}})
	if err == nil || !strings.Contains(err.Error(), `DEDUP_KERNEL: unknown kernel "neon9"`) {
		t.Errorf("serve with %s=neon9: %v; want an unknown-kernel error", lsh.KernelEnv, err)
	}
}
