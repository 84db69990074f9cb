//go:build linux

package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
)

// Some failures show only in a whole process: memory that a flood of sign-ins holds,
// descriptors that a flood of connections takes. Those tests run the real server in a
// child process (this test binary again, running TestChildServer) with the settings of
// childSpec, and measure the child from outside: its peak RSS (VmHWM in
// /proc/PID/status), its answers.

// childSpec is what the child server runs with.
type childSpec struct {
	FDLimit    uint64 // RLIMIT_NOFILE for the child; 0 leaves it
	DefaultKDF bool   // hash passwords at the production cost (46 MiB), not the tests' cheap one
	DB         string // the database file; "" is a fresh one
	Role       string // dave's role; "" is annotator
}

const childEnv = "DEDUP_CHILD_SERVER"

// TestChildServer is the child's side: it serves until its standard input closes.
func TestChildServer(t *testing.T) {
	raw := os.Getenv(childEnv)
	if raw == "" {
		t.Skip("SKIPPED: the child server of the whole-process tests; they start it themselves")
	}
	var spec childSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		t.Fatal(err)
	}
	if spec.FDLimit > 0 {
		rl := syscall.Rlimit{Cur: spec.FDLimit, Max: spec.FDLimit}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			t.Fatal(err)
		}
	}
	var store *db.DB
	if spec.DB == "" {
		store = openStore(t, "child.db")
	} else {
		var err error
		if store, err = db.Open(context.Background(), spec.DB); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
	}
	role := auth.Role(spec.Role)
	if role == "" {
		role = auth.Annotator
	}
	hash, _ := auth.HashPassword("the right password", testKDF)
	if _, err := store.UserByName(context.Background(), "dave"); errors.Is(err, db.ErrNotFound) {
		if _, err := store.CreateUser(context.Background(), "test", "dave", role, hash); err != nil {
			t.Fatal(err)
		}
	}
	kdf := testKDF
	if spec.DefaultKDF {
		kdf = auth.DefaultParams
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		io.Copy(io.Discard, os.Stdin) // the parent closes it, or dies
		cancel()
	}()
	cfg := withApp(t, store, newTestJobs(t, ctx), kdf, Config{Addr: "127.0.0.1:0"})
	cfg.Ready = func(url, _ string) { fmt.Printf("\nLISTENING %s\n", url) }
	if err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
}

// child is a running child server.
type child struct {
	base string
	pid  int
}

// startChild runs a child server with spec until the test ends.
func startChild(t *testing.T, spec childSpec) child {
	t.Helper()
	raw, _ := json.Marshal(spec)
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildServer$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if url, ok := strings.CutPrefix(sc.Text(), "LISTENING "); ok {
				lines <- url
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case url := <-lines:
		return child{base: url, pid: cmd.Process.Pid}
	case <-time.After(60 * time.Second):
		t.Fatal("the child server did not start in 60 s")
	}
	return child{}
}

// peakRSS is the child's peak resident set size (VmHWM), in bytes.
func (c child) peakRSS(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.pid))
	if err != nil {
		t.Skipf("SKIPPED: no /proc to read the child's memory from: %v", err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// newTestJobs is a job registry under ctx, shut down when the test ends.
func newTestJobs(t *testing.T, ctx context.Context) *jobs.Registry {
	reg := jobs.NewRegistry(ctx)
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := reg.Shutdown(stop); err != nil {
			t.Errorf("jobs: %v", err)
		}
	})
	return reg
}
