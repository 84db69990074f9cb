package server

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/jobs"
)

// lockedBuffer is a log destination safe for the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Issue 8: "listening on" (and Ready, which the binary's console message and the tests
// wait for) come only once the server answers: a request sent from inside Ready, before
// it returns, gets its answer.
func TestReadyOnlyWhenServing(t *testing.T) {
	t.Parallel()
	store := openStore(t, "ready.db")
	ctx, cancel := context.WithCancel(context.Background())
	reg := jobs.NewRegistry(ctx)
	var log lockedBuffer
	answered := make(chan error, 1)
	cfg := withApp(t, store, reg, testKDF, Config{Addr: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(&log, nil))})
	cfg.Ready = func(url, _ string) {
		said := strings.Contains(log.String(), "listening on "+url)
		client := &http.Client{Timeout: 3 * time.Second}
		res, err := client.Get(url + "/healthz")
		if err == nil {
			res.Body.Close()
			if !said {
				err = errors.New(`the log did not say "listening on ` + url + `" before Ready`)
			}
		}
		answered <- err
	}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()
	select {
	case err := <-answered:
		if err != nil {
			t.Errorf("a request made when the server said it was ready: %v; want an answer", err)
		}
	case err := <-done:
		t.Fatalf("Run: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("Ready was not called in 20s")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	stop, cancelStop := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelStop()
	if err := reg.Shutdown(stop); err != nil {
		t.Errorf("jobs: %v", err)
	}
}
