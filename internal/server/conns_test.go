package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is the limiter's clock in these tests: how long a connection has waited is
// what the test says, not what the machine's load makes of a sleep.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// limitedServer serves h through a connLimiter of max connections (grace 500 ms, its
// default) on a loopback port until the test ends; the limiter reads the returned clock.
func limitedServer(t *testing.T, max int, h http.Handler) (*connLimiter, *fakeClock, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newConnLimiter(ln, max)
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l.now = clock.now
	srv := &http.Server{Handler: l.track(h), ConnState: l.connState, ConnContext: l.connContext, ReadHeaderTimeout: time.Minute}
	go srv.Serve(l)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return l, clock, ln.Addr().String()
}

// waitFor polls cond (read under the limiter's lock) until it holds: the server's side
// of a connection (accepting it, running its handler, reading its body) happens on the
// server's goroutines after the client's call returns.
func waitFor(t *testing.T, l *connLimiter, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		l.mu.Lock()
		ok := cond()
		l.mu.Unlock()
		if ok {
			return
		}
	}
	t.Fatalf("%s: not within 10 s", what)
}

// conns returns the limiter's connections (l.mu held) that satisfy keep.
func conns(l *connLimiter, keep func(*trackedConn) bool) []*trackedConn {
	var out []*trackedConn
	for c := range l.conns {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// testMux answers /healthz, holds /block until release closes, and reads /read's body.
func testMux(release <-chan struct{}) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("/block", func(w http.ResponseWriter, r *http.Request) { <-release; io.WriteString(w, "done\n") })
	mux.HandleFunc("/read", func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%d\n", n)
	})
	return mux
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedWithin reports whether the server closes c within d.
func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return true
}

func healthz(addr string, timeout time.Duration) error {
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := client.Get("http://" + addr + "/healthz")
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", res.StatusCode)
	}
	return nil
}

// At the cap, a new connection makes room by closing the one that has waited longest
// without sending its request.
func TestConnLimiterMakesRoom(t *testing.T) {
	t.Parallel()
	l, clock, addr := limitedServer(t, 3, testMux(nil))
	silent := make([]net.Conn, 3)
	for i := range silent {
		silent[i] = dial(t, addr)
		waitFor(t, l, fmt.Sprintf("connection %d accepted", i), func() bool { return len(l.conns) == i+1 })
		clock.advance(30 * time.Millisecond)
	}
	// The newest has waited just the grace, the oldest 60 ms more; none was served.
	clock.advance(l.grace - 30*time.Millisecond)
	if err := healthz(addr, 2*time.Second); err != nil {
		t.Fatalf("/healthz with 3 silent connections at a cap of 3: %v", err)
	}
	if !closedWithin(silent[0], time.Second) {
		t.Error("the oldest silent connection is still open")
	}
	if closedWithin(silent[2], 200*time.Millisecond) {
		t.Error("the newest silent connection was closed too")
	}
	if n := l.Evicted(); n != 1 {
		t.Errorf("Evicted() = %d; want 1", n)
	}
}

// A connection whose handler is at work, or whose body arrives briskly, is not closed to
// make room; one trickling its body is.
func TestConnLimiterSparesWork(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	l, clock, addr := limitedServer(t, 3, testMux(release))
	busy := dial(t, addr)
	fmt.Fprintf(busy, "GET /block HTTP/1.1\r\nHost: x\r\n\r\n")
	// The brisk body begins first, so it has waited longest: it is spared for its rate,
	// not its age.
	fast, slow := dial(t, addr), dial(t, addr)
	for i, c := range []net.Conn{fast, slow} {
		fmt.Fprintf(c, "POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n")
		waitFor(t, l, fmt.Sprintf("body %d begun", i), func() bool {
			return len(conns(l, func(c *trackedConn) bool { return c.bodies == 1 })) == i+1
		})
		clock.advance(10 * time.Millisecond)
	}
	waitFor(t, l, "three handlers running", func() bool {
		return len(conns(l, func(c *trackedConn) bool { return c.handlers == 1 })) == 3
	})
	// In the next second, by the limiter's clock, one body brings 16 KB (over minRate, 8
	// KB/s), the other 10 bytes.
	fastBytes := 16 << 10
	io.WriteString(fast, strings.Repeat("f", fastBytes))
	io.WriteString(slow, strings.Repeat("s", 10))
	waitFor(t, l, "the bodies read", func() bool {
		return len(conns(l, func(c *trackedConn) bool { return c.read == int64(fastBytes) })) == 1 &&
			len(conns(l, func(c *trackedConn) bool { return c.read == 10 })) == 1
	})
	clock.advance(time.Second)
	if err := healthz(addr, 2*time.Second); err != nil {
		t.Fatalf("/healthz: %v", err)
	}
	if !closedWithin(slow, time.Second) {
		t.Error("the trickling body was not closed to make room")
	}
	if closedWithin(fast, 100*time.Millisecond) {
		t.Error("the brisk body was closed")
	}
	if n := l.Evicted(); n != 1 {
		t.Errorf("Evicted() = %d; want 1 (the trickling body)", n)
	}
	close(release)
	res, err := http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("the busy request: %v %v; want it answered", res, err)
	}
}

// When every connection is at work, a new one waits for a place rather than taking
// one.
func TestConnLimiterWaitsForWork(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	l, clock, addr := limitedServer(t, 1, testMux(release))
	busy := dial(t, addr)
	fmt.Fprintf(busy, "GET /block HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	waitFor(t, l, "the busy handler running", func() bool {
		return len(conns(l, func(c *trackedConn) bool { return c.handlers == 1 })) == 1
	})
	clock.advance(time.Hour) // however long it has been at work
	done := make(chan error, 1)
	go func() { done <- healthz(addr, 5*time.Second) }()
	select {
	case err := <-done:
		t.Fatalf("/healthz answered (%v) while the only place was at work", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Errorf("/healthz after the busy request ended: %v", err)
	}
	// The busy request's work was not cut: its whole response arrived. (Once written,
	// its connection is idle, and either the server closes it, Connection: close, or the
	// limiter does to make room for /healthz: which one comes first is a race, so
	// Evicted() may be 0 or 1 here.)
	busy.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := io.ReadAll(busy)
	if err != nil || !strings.HasPrefix(string(resp), "HTTP/1.1 200") || !strings.HasSuffix(string(resp), "done\n") {
		t.Errorf("the busy request's response: %q, %v; want a whole 200 ending in done", resp, err)
	}
}

func TestMaxConnsFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		limit uint64
		want  int
	}{{20000, 4096}, {1024, 768}, {256, 192}, {100, 36}, {64, 32}, {10, 5}, {1 << 20, 4096}} {
		if got := maxConnsFor(tc.limit); got != tc.want {
			t.Errorf("maxConnsFor(%d) = %d; want %d", tc.limit, got, tc.want)
		}
	}
}
