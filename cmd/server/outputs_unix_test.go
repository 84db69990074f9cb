//go:build unix

package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// -out naming a device or a pipe writes to it as it is, where a temporary file renamed
// over it replaced it (run as root, `-out /dev/null` made /dev/null a regular file); a
// symbolic link stays a link to the file written whole; a directory is refused before
// any work.
func TestSignaturesOutToDevicePipeAndLink(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "docs.jsonl")
	os.WriteFile(in, []byte(`{"id":"a","text":"a small document of words"}`+"\n"), 0o644)
	sign := func(out string) error {
		var stdout, stderr bytes.Buffer
		return run([]string{"signatures", "-q", "-in", in, "-out", out}, &stdout, &stderr)
	}

	// A FIFO: the signatures arrive through it and it is still a FIFO.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	if err := sign(fifo); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if !strings.HasPrefix(s, `{"id":"a","signature":[`) {
			t.Errorf("read from the FIFO %.60q; want the signature line", s)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("nothing came through the FIFO in 10 s: the signatures went elsewhere")
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("after -out FIFO: %v, %v; want it still a named pipe", st.Mode(), err)
	}

	// A character device (/dev/null's numbers), where this test may make one.
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		if err := sign(null); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Lstat(null); err != nil || st.Mode()&os.ModeCharDevice == 0 {
			t.Errorf("after -out DEVICE: %v, %v; want it still a character device", st.Mode(), err)
		}
	} else {
		t.Logf("no device made here (%v): the FIFO stands for it", err)
	}

	// A symbolic link: the file it leads to is written, the link kept.
	target := filepath.Join(dir, "real.jsonl")
	os.WriteFile(target, []byte("old\n"), 0o644)
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := sign(link); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("after -out LINK: %v, %v; want it still a link", st.Mode(), err)
	}
	if b, _ := os.ReadFile(target); !strings.HasPrefix(string(b), `{"id":"a","signature":[`) {
		t.Errorf("the link's target holds %.60q; want the signature line", b)
	}

	// A directory: refused, and nothing left in it.
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	if err := sign(sub); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("-out DIR: %v; want it refused as a directory", err)
	}
	if entries, _ := os.ReadDir(sub); len(entries) != 0 {
		t.Errorf("-out DIR left %d files in it", len(entries))
	}
	if entries, _ := filepath.Glob(filepath.Join(dir, ".*partial")); len(entries) != 0 {
		t.Errorf("temporary files left: %v", entries)
	}
}
