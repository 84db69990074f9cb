package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// limitedServer serves h through a connLimiter of max connections (grace 100 ms) on a
// loopback port until the test ends.
func limitedServer(t *testing.T, max int, h http.Handler) (*connLimiter, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newConnLimiter(ln, max)
	l.grace = 100 * time.Millisecond
	srv := &http.Server{Handler: l.track(h), ConnState: l.connState, ConnContext: l.connContext, ReadHeaderTimeout: time.Minute}
	go srv.Serve(l)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return l, ln.Addr().String()
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
	l, addr := limitedServer(t, 3, testMux(nil))
	silent := make([]net.Conn, 3)
	for i := range silent {
		silent[i] = dial(t, addr)
		time.Sleep(30 * time.Millisecond)
	}
	time.Sleep(150 * time.Millisecond) // past the grace
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
	_, addr := limitedServer(t, 3, testMux(release))
	busy := dial(t, addr)
	fmt.Fprintf(busy, "GET /block HTTP/1.1\r\nHost: x\r\n\r\n")
	fast, slow := dial(t, addr), dial(t, addr)
	for _, c := range []net.Conn{fast, slow} {
		fmt.Fprintf(c, "POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n")
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // 200 KB/s
		chunk := strings.Repeat("f", 4096)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				if _, err := io.WriteString(fast, chunk); err != nil {
					return
				}
			}
		}
	}()
	go func() { // 10 bytes/s
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				if _, err := io.WriteString(slow, "s"); err != nil {
					return
				}
			}
		}
	}()
	time.Sleep(400 * time.Millisecond)
	if err := healthz(addr, 2*time.Second); err != nil {
		t.Fatalf("/healthz: %v", err)
	}
	if !closedWithin(slow, time.Second) {
		t.Error("the trickling body was not closed to make room")
	}
	if closedWithin(fast, 100*time.Millisecond) {
		t.Error("the brisk body was closed")
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
	_, addr := limitedServer(t, 1, testMux(release))
	busy := dial(t, addr)
	fmt.Fprintf(busy, "GET /block HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	time.Sleep(150 * time.Millisecond)
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
