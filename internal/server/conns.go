package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// connLimiter caps the connections the server holds open, below the process's file
// descriptor limit, so a flood of connections cannot take the descriptors the store,
// uploads and the listener itself need (past the limit accept fails and nothing,
// /healthz included, is answered).
//
// At the cap it does not simply stop accepting: that would let whoever holds the
// connections (a slow-body or slow-header flood) keep everyone else out. It makes room
// for the newcomer by closing the connection that has waited longest without being
// served: one idle between requests, one still sending its request headers, or one
// sending a body slower than minRate, once it has waited grace (time enough for an
// honest client to send its request). A connection whose handler is at work is never
// closed; when no connection may be closed, Accept waits.
type connLimiter struct {
	net.Listener
	max     int
	minRate float64 // bytes a second a body must arrive at to be safe from eviction
	grace   time.Duration
	now     func() time.Time

	mu      sync.Mutex
	conns   map[*trackedConn]struct{}
	evicted int
	changed chan struct{} // a connection closed or stopped working: room may be made
	closed  chan struct{}
	once    sync.Once
}

// Defaults of the connection limiter.
const (
	minBodyRate = 8 << 10                // bytes/s: an upload slower than this may be closed at the cap
	waitGrace   = 500 * time.Millisecond // a connection waiting less than this is left alone
)

func newConnLimiter(ln net.Listener, max int) *connLimiter {
	return &connLimiter{Listener: ln, max: max, minRate: minBodyRate, grace: waitGrace, now: time.Now,
		conns: map[*trackedConn]struct{}{}, changed: make(chan struct{}, 1), closed: make(chan struct{})}
}

// trackedConn is a connection the limiter counts. Its fields after Conn are guarded by
// the limiter's mutex.
type trackedConn struct {
	net.Conn
	l    *connLimiter
	once sync.Once

	state    http.ConnState
	since    time.Time // when the connection began waiting (accepted, idle, a body begun)
	handlers int       // requests whose handler runs (HTTP/2 runs several)
	bodies   int       // of those, the ones still reading their body
	read     int64     // bytes of bodies read since since
}

// Accept waits for a connection and, at the cap, makes room for it (see connLimiter).
func (l *connLimiter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, l: l, state: http.StateNew, since: l.now()}
	for {
		l.mu.Lock()
		if len(l.conns) < l.max {
			l.conns[tc] = struct{}{}
			l.mu.Unlock()
			return tc, nil
		}
		victim := l.victim()
		if victim != nil {
			l.evicted++
		}
		l.mu.Unlock()
		if victim != nil {
			victim.Close()
			continue
		}
		select { // every connection is at work: wait for one to end or rest
		case <-l.changed:
		case <-time.After(50 * time.Millisecond):
		case <-l.closed:
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

// victim is the connection that has waited longest without being served, or nil; the
// caller holds l.mu.
func (l *connLimiter) victim() *trackedConn {
	now := l.now()
	var v *trackedConn
	for c := range l.conns {
		if !l.stalled(c, now) {
			continue
		}
		if v == nil || c.since.Before(v.since) {
			v = c
		}
	}
	return v
}

// stalled reports whether c may be closed to make room: it has waited grace, and no
// handler is at work on it, or every handler waits for a body that arrives slower than
// minRate.
func (l *connLimiter) stalled(c *trackedConn, now time.Time) bool {
	age := now.Sub(c.since)
	switch {
	case c.state == http.StateHijacked, age < l.grace:
		return false
	case c.handlers == 0:
		return true
	case c.bodies < c.handlers:
		return false
	}
	return float64(c.read) < l.minRate*age.Seconds()
}

// Close stops accepting; the connections already accepted stay.
func (l *connLimiter) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// Evicted returns how many connections were closed to make room.
func (l *connLimiter) Evicted() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.evicted
}

// Open returns how many connections are open.
func (l *connLimiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

func (l *connLimiter) signal() {
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

// Close closes the connection once and gives its place back.
func (c *trackedConn) Close() error {
	err := net.ErrClosed
	c.once.Do(func() {
		err = c.Conn.Close()
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
		c.l.signal()
	})
	return err
}

// tracked finds the limiter's connection under what the HTTP server holds (a TLS
// connection wraps it).
func tracked(c net.Conn) *trackedConn {
	for {
		switch x := c.(type) {
		case *trackedConn:
			return x
		case interface{ NetConn() net.Conn }:
			c = x.NetConn()
		default:
			return nil
		}
	}
}

// connState is the server's ConnState hook: a connection that turns idle begins to wait.
func (l *connLimiter) connState(c net.Conn, state http.ConnState) {
	tc := tracked(c)
	if tc == nil {
		return
	}
	l.mu.Lock()
	tc.state = state
	if state == http.StateIdle {
		tc.since = l.now()
	}
	l.mu.Unlock()
	if state == http.StateIdle {
		l.signal()
	}
}

type connKey struct{}

// connContext is the server's ConnContext hook: requests carry their connection.
func (l *connLimiter) connContext(ctx context.Context, c net.Conn) context.Context {
	if tc := tracked(c); tc != nil {
		return context.WithValue(ctx, connKey{}, tc)
	}
	return ctx
}

// track wraps the application's handler: it marks its connection at work while it runs,
// and as waiting while it reads a body, and counts the body's bytes.
func (l *connLimiter) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tc, _ := r.Context().Value(connKey{}).(*trackedConn)
		if tc == nil {
			next.ServeHTTP(w, r)
			return
		}
		var body *trackedBody
		l.mu.Lock()
		tc.handlers++
		if r.Body != nil && r.Body != http.NoBody {
			tc.bodies++
			tc.since, tc.read = l.now(), 0
			body = &trackedBody{ReadCloser: r.Body, c: tc}
			// On a copy of the request: the server keeps its own, and reads what is left of
			// a body it sees unread before it answers (up to 256 KiB; past that it answers
			// and closes). Given the wrapped body it could not tell, and read on: a 413 for
			// a declared 9 MB body waited for the whole ReadTimeout.
			r = r.WithContext(r.Context())
			r.Body = body
		}
		l.mu.Unlock()
		defer func() {
			l.mu.Lock()
			tc.handlers--
			if body != nil && !body.done {
				body.done = true
				tc.bodies--
			}
			l.mu.Unlock()
		}()
		next.ServeHTTP(w, r)
	})
}

// trackedBody counts a request body's bytes for its connection and notes its end.
type trackedBody struct {
	io.ReadCloser
	c    *trackedConn
	done bool // guarded by the limiter's mutex
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	l := b.c.l
	l.mu.Lock()
	b.c.read += int64(n)
	if err != nil && !b.done {
		b.done = true
		b.c.bodies--
	}
	l.mu.Unlock()
	return n, err
}

// maxConnsFor is the connection cap for a descriptor limit: at most 4096, and a quarter
// of the limit (at least 64) left for the store, uploads, logs and the listener; half of
// a limit too small for that.
func maxConnsFor(fdLimit uint64) int {
	reserve := max(64, fdLimit/4)
	if fdLimit <= reserve+16 {
		return max(1, int(fdLimit/2))
	}
	return int(min(4096, fdLimit-reserve))
}
