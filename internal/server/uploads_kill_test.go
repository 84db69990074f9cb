//go:build linux

package server

import (
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A server killed with SIGKILL while it receives an upload leaves the file in its upload
// directory next to the database; the next start on that database removes it.
func TestKilledUploadRemovedAtNextStart(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short mode: starts two child servers")
	}
	dbPath := filepath.Join(t.TempDir(), "studio.db")
	spec := childSpec{DB: dbPath, Role: "admin"}
	c := startChild(t, spec)
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	req, _ := http.NewRequest(http.MethodPost, c.base+"/login", strings.NewReader(url.Values{"name": {"dave"}, "password": {"the right password"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	base, _ := url.Parse(c.base)
	var cookies []string
	for _, k := range jar.Cookies(base) {
		cookies = append(cookies, k.Name+"="+k.Value)
	}
	if len(cookies) == 0 {
		t.Fatalf("no session after signing in (%d)", res.StatusCode)
	}

	// Half an upload: the headers and the start of the file, then nothing more.
	conn, err := net.Dial("tcp", base.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const boundary = "xyzzy"
	head := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"crawl.jsonl\"\r\nContent-Type: application/octet-stream\r\n\r\n"
	part := strings.Repeat(`{"id":"1","text":"one two three"}`+"\n", 2000)
	fmt.Fprintf(conn, "POST /datasets HTTP/1.1\r\nHost: %s\r\nCookie: %s\r\nSec-Fetch-Site: same-origin\r\nContent-Type: multipart/form-data; boundary=%s\r\nContent-Length: %d\r\n\r\n%s%s",
		base.Host, strings.Join(cookies, "; "), boundary, 10<<20, head, part)
	uploads := UploadDir(dbPath)
	var saved string
	for deadline := time.Now().Add(20 * time.Second); saved == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		matches, _ := filepath.Glob(filepath.Join(uploads, "*", "crawl.jsonl"))
		if len(matches) == 1 {
			if st, err := os.Stat(matches[0]); err == nil && st.Size() > 0 {
				saved = matches[0]
			}
		}
	}
	if saved == "" {
		t.Fatalf("the upload did not appear in %s", uploads)
	}
	if err := syscall.Kill(c.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := http.Get(c.base + "/healthz"); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed server still answers")
		}
	}
	if _, err := os.Stat(saved); err != nil {
		t.Fatalf("the killed upload is not left behind (stat: %v); the test shows nothing", err)
	}

	startChild(t, spec) // returns once the server answers
	if left, _ := os.ReadDir(uploads); len(left) != 0 {
		t.Errorf("%d entries left in %s after the restart; want none", len(left), uploads)
	}
}
