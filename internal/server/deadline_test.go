package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
)

// A request body that trickles is cut off after the server's ReadTimeout (1 s here) on
// an ordinary route, while an admin's upload may take longer as long as it keeps coming.
// Before the fix every route had the uploads' 5 minutes.
func TestReadDeadlinesSpareUploads(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short mode: trickles bodies for seconds")
	}
	t.Parallel()
	store := openStore(t, "deadlines.db")
	ctx := context.Background()
	hash, _ := auth.HashPassword("a long enough password", testKDF)
	admin, err := store.CreateUser(ctx, "test", "ada", auth.Admin, hash)
	if err != nil {
		t.Fatal(err)
	}
	token, th := auth.NewToken()
	if err := store.CreateSession(ctx, db.NewSession{UserID: admin.ID, TokenHash: th, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	base, _ := serveStore(t, store, Config{ReadTimeout: time.Second})
	host := strings.TrimPrefix(base, "http://")

	t.Run("a trickled form is cut off", func(t *testing.T) {
		conn, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		fmt.Fprintf(conn, "POST /login HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n", host)
		for time.Since(start) < 10*time.Second {
			if _, err := conn.Write([]byte("a")); err != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("a body trickled for %v without being cut off; want about 1 s", d.Round(time.Millisecond))
		}
	})

	// The form cut off is answered, not dropped nor handed to the handler empty (the
	// labeling page said "choose a category"): 408, saying nothing was saved.
	t.Run("a form cut off is told so", func(t *testing.T) {
		conn, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /campaigns/1/pairs/1/label HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\n"+
			"Sec-Fetch-Site: same-origin\r\nCookie: dedup_session=%s\r\nContent-Length: 1000\r\n\r\ncategory=exa", host, token)
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("no answer to a form cut off: %v", err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "took too long to arrive, so it was cut off: nothing was saved") {
			t.Errorf("form cut off: %d\n%s", res.StatusCode, body)
		}
	})

	t.Run("a slow upload goes through", func(t *testing.T) {
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		go func() {
			fw, _ := mw.CreateFormFile("file", "slow.jsonl")
			for i := range 12 { // 12 documents, one every 250 ms: 3 s, thrice the ReadTimeout
				fmt.Fprintf(fw, `{"id":"%d","text":"document %d arrives slowly over a slow link"}`+"\n", i, i)
				time.Sleep(250 * time.Millisecond)
			}
			pw.CloseWithError(mw.Close())
		}()
		req, _ := http.NewRequest(http.MethodPost, base+"/datasets", pr)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.AddCookie(&http.Cookie{Name: "dedup_session", Value: token})
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("slow upload: %v", err)
		}
		res.Body.Close()
		if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/imports/") {
			t.Errorf("slow upload: %d %s; want 303 to its import", res.StatusCode, loc)
		}
	})
}
