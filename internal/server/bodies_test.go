package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/logtest"
)

// A request whose declared body is over the limit gets its 413 at once, whatever
// arrives of the body: it used to wait for the whole ReadTimeout (30 s in production),
// because the server, handed a wrapped body, read on to discard it before answering.
func TestOversizedBodyRefusedAtOnce(t *testing.T) {
	t.Parallel()
	store := openStore(t, "bodies.db")
	ctx := context.Background()
	admin, err := store.CreateUser(ctx, "test", "ada", auth.Admin, "x")
	if err != nil {
		t.Fatal(err)
	}
	token, th := auth.NewToken()
	if err := store.CreateSession(ctx, db.NewSession{UserID: admin.ID, TokenHash: th, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	session := "Cookie: dedup_session=" + token + "\r\nSec-Fetch-Site: same-origin\r\n"
	const readTimeout = 10 * time.Second
	base, _ := serveStore(t, store, Config{ReadTimeout: readTimeout})
	host := strings.TrimPrefix(base, "http://")
	for _, c := range []struct {
		path, headers string
		length        string
		want          string
	}{
		{"/login", "Content-Type: application/x-www-form-urlencoded\r\n", "9437184", "413"},
		{"/login", "Content-Type: application/x-www-form-urlencoded\r\n", "100000000000", "413"},
		{"/api/v1/indexes/1/search", "Content-Type: application/json\r\nAuthorization: Bearer dsk_nothing\r\n", "9437184", "413"},
		{"/api/v1/indexes/1/search", "Content-Type: application/json\r\n", "100000000000", "413"},
		{"/api/v1/indexes/1/search", "Content-Type: application/json\r\n", "300000", "401"}, // under the cap: the token first
		{"/datasets", "Content-Type: multipart/form-data; boundary=x\r\n", "100000000000", "401"},
		// An admin's uploads over the cap: back to the form, which says so (forms answer
		// with a redirect).
		{"/datasets", session + "Content-Type: multipart/form-data; boundary=x\r\n", "100000000000", "303"},
		{"/manifests/import", session + "Content-Type: multipart/form-data; boundary=x\r\n", "100000000000", "303"},
	} {
		t.Run(c.path+" "+c.length, func(t *testing.T) {
			conn, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			start := time.Now()
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\n%sContent-Length: %s\r\n\r\n{", c.path, host, c.headers, c.length)
			conn.SetReadDeadline(time.Now().Add(2 * readTimeout))
			line, err := bufio.NewReader(conn).ReadString('\n')
			took := time.Since(start)
			if err != nil || !strings.Contains(line, " "+c.want+" ") {
				t.Fatalf("answer %q, %v; want %s", line, err, c.want)
			}
			if took > readTimeout/2 {
				t.Errorf("answered after %v; want at once, not at the read deadline (%v)", took.Round(time.Millisecond), readTimeout)
			}
		})
	}
}

// A body that stops coming is cut off at the read deadline and not logged as an
// internal error: a flood of slow bodies wrote one "internal error ... context
// canceled" line each. A form's is answered 408 (web's readForms: the person reads that
// nothing was saved), logged at info.
func TestSlowBodyLoggedAsClientAbort(t *testing.T) {
	t.Parallel()
	store := openStore(t, "slowlog.db")
	var log logtest.Buffer
	base, _ := serveStore(t, store, Config{ReadTimeout: time.Second, Log: log.Logger()})
	host := strings.TrimPrefix(base, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /login HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nname=a", host)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	io.Copy(io.Discard, conn) // until the server closes it
	var out string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if out = log.String(); strings.Contains(out, "path=/login") {
			break
		}
	}
	if strings.Contains(out, "level=ERROR") || !strings.Contains(out, "level=INFO msg=request method=POST path=/login status=408") {
		t.Errorf("log of a body cut off at the read deadline:\n%s", out)
	}
}
