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

	// A FIFO: refused at once while no process reads it; with a reader, the signatures
	// arrive through it and it is still a FIFO.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := sign(fifo); err == nil || !strings.Contains(err.Error(), "no process is reading this pipe") {
		t.Errorf("-out FIFO without a reader: %v; want it refused, naming the pipe", err)
	}
	rd, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if err := sign(fifo); err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(rd); !strings.HasPrefix(string(b), `{"id":"a","signature":[`) {
		t.Errorf("read from the FIFO %.60q; want the signature line", b)
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

	// A link to a file not there yet: the file is made where it leads, the link kept.
	dangling := filepath.Join(dir, "dangling.jsonl")
	if err := os.Symlink("made-later.jsonl", dangling); err != nil {
		t.Fatal(err)
	}
	if err := sign(dangling); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(dangling); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("after -out DANGLING-LINK: %v, %v; want it still a link", st.Mode(), err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "made-later.jsonl")); !strings.HasPrefix(string(b), `{"id":"a","signature":[`) {
		t.Errorf("the dangling link's target holds %.60q; want the signature line", b)
	}

	// The binary format writes OUT and OUT.ids: a device is refused for it.
	var stdout, stderr bytes.Buffer
	if err := run([]string{"signatures", "-q", "-format", "binary", "-in", in, "-out", fifo}, &stdout, &stderr); err == nil ||
		!strings.Contains(err.Error(), "name a file for -out") {
		t.Errorf("-format binary -out FIFO: %v; want it refused", err)
	}
	if _, err := os.Lstat(fifo + ".ids"); err == nil {
		t.Errorf("-format binary -out FIFO made %s.ids", fifo)
	}

	// A block device (as root): refused before anything is opened.
	disk := filepath.Join(dir, "disk")
	if err := syscall.Mknod(disk, syscall.S_IFBLK|0o600, 7<<8); err == nil {
		if err := sign(disk); err == nil || !strings.Contains(err.Error(), "block device") {
			t.Errorf("-out BLOCK-DEVICE: %v; want it refused", err)
		}
	}

	// Standard output by its names: written to the command's standard output, not
	// reopened (a redirected one would be written from its start) or followed.
	for _, name := range []string{"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"} {
		var stdout, stderr bytes.Buffer
		if err := run([]string{"signatures", "-q", "-in", in, "-out", name}, &stdout, &stderr); err != nil {
			t.Fatalf("-out %s: %v", name, err)
		}
		if !strings.HasPrefix(stdout.String(), `{"id":"a","signature":[`) {
			t.Errorf("-out %s wrote %.60q to standard output; want the signature line", name, stdout.String())
		}
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
