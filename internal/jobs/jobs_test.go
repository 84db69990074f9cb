package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	admin = Caller{UserID: 1, All: true}
	owner = Caller{UserID: 7}
	other = Caller{UserID: 8}
)

// blocked is a job that reports, then waits for release or cancellation.
func blocked(release <-chan struct{}) Func {
	return func(ctx context.Context, report Reporter) (any, error) {
		report(42)
		select {
		case <-release:
			return "ok", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func mustStart(t *testing.T, r *Registry, owner int64, fn Func) string {
	t.Helper()
	id, err := r.Start("import", "x", owner, fn)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func waitFor(t *testing.T, r *Registry, id string) Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := r.Wait(ctx, id)
	if err != nil {
		t.Fatalf("Wait(%s) = %v", id, err)
	}
	return s
}

func TestJobLifecycle(t *testing.T) {
	t.Parallel()
	r := NewRegistry(context.Background())
	release := make(chan struct{})
	id := mustStart(t, r, 7, blocked(release))
	for {
		if s, _ := r.Get(id, owner); s.Progress == 42 {
			if s.State != Running || s.Owner != 7 {
				t.Errorf("running job = %+v", s)
			}
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	if s := waitFor(t, r, id); s.State != Done || s.Result != "ok" || s.Finished.IsZero() {
		t.Errorf("finished job = %+v", s)
	}
	failing := mustStart(t, r, 0, func(ctx context.Context, report Reporter) (any, error) { return nil, errors.New("boom") })
	if s := waitFor(t, r, failing); s.State != Failed || s.Err != "boom" {
		t.Errorf("failed job = %+v", s)
	}
	slow := mustStart(t, r, 7, blocked(nil))
	if err := r.Cancel(slow, owner); err != nil {
		t.Fatal(err)
	}
	if s := waitFor(t, r, slow); s.State != Cancelled {
		t.Errorf("cancelled job = %+v", s)
	}
	if _, err := r.Get("nope", admin); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of an unknown job: %v; want ErrNotFound", err)
	}
}

// Only the owner, or a caller who sees every job, can see or cancel a job.
func TestOwnerChecks(t *testing.T) {
	t.Parallel()
	r := NewRegistry(context.Background())
	release := make(chan struct{})
	defer close(release)
	mine := mustStart(t, r, 7, blocked(release))
	system := mustStart(t, r, 0, blocked(release))
	for _, tc := range []struct {
		name string
		id   string
		by   Caller
		sees bool
	}{
		{"owner", mine, owner, true},
		{"another user", mine, other, false},
		{"nobody", mine, Caller{}, false},
		{"admin", mine, admin, true},
		{"system job, a user", system, owner, false},
		{"system job, nobody", system, Caller{}, false},
		{"system job, admin", system, admin, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Get(tc.id, tc.by)
			if tc.sees != (err == nil) || (!tc.sees && !errors.Is(err, ErrNotFound)) {
				t.Errorf("Get(%s) by %+v = %v; want seen %v", tc.id, tc.by, err, tc.sees)
			}
			if !tc.sees {
				if err := r.Cancel(tc.id, tc.by); !errors.Is(err, ErrNotFound) {
					t.Errorf("Cancel(%s) by %+v = %v; want ErrNotFound", tc.id, tc.by, err)
				}
			}
		})
	}
	// Nobody's refused cancel stopped anything.
	for _, id := range []string{mine, system} {
		if s, _ := r.Get(id, admin); s.State != Running {
			t.Errorf("job %s is %s after refused cancels; want running", id, s.State)
		}
	}
	if err := r.Cancel(mine, admin); err != nil {
		t.Fatal(err)
	}
	if s := waitFor(t, r, mine); s.State != Cancelled {
		t.Errorf("job cancelled by an admin is %s", s.State)
	}
}

// CancelRequested tells a job that Cancel stopped from one that a shutdown stopped.
func TestCancelRequested(t *testing.T) {
	t.Parallel()
	r := NewRegistry(context.Background())
	asked := func(ctx context.Context, report Reporter) (any, error) {
		<-ctx.Done()
		return CancelRequested(ctx), ctx.Err()
	}
	cancelled, shutDown := mustStart(t, r, 7, asked), mustStart(t, r, 7, asked)
	if err := r.Cancel(cancelled, owner); err != nil {
		t.Fatal(err)
	}
	if s := waitFor(t, r, cancelled); s.Result != true {
		t.Errorf("CancelRequested in a job stopped by Cancel = %v; want true", s.Result)
	}
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s, _ := r.Get(shutDown, admin); s.Result != false {
		t.Errorf("CancelRequested in a job stopped by Shutdown = %v; want false", s.Result)
	}
}

// Shutdown cancels the running jobs and returns only after each has returned, its
// cleanup done; no job starts afterwards.
func TestShutdownWaits(t *testing.T) {
	t.Parallel()
	r := NewRegistry(context.Background())
	var cleaned atomic.Int32
	ids := make([]string, 3)
	for i := range ids {
		ids[i] = mustStart(t, r, 7, func(ctx context.Context, report Reporter) (any, error) {
			<-ctx.Done()
			time.Sleep(20 * time.Millisecond) // cleanup that uses the store
			cleaned.Add(1)
			return nil, ctx.Err()
		})
	}
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := cleaned.Load(); n != 3 {
		t.Errorf("Shutdown returned with %d of 3 jobs cleaned up", n)
	}
	for _, id := range ids {
		if s, _ := r.Get(id, admin); s.State != Cancelled {
			t.Errorf("job %s is %s after Shutdown; want cancelled", id, s.State)
		}
	}
	if _, err := r.Start("import", "late", 7, blocked(nil)); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Shutdown: %v; want ErrClosed", err)
	}
}

// A job that ignores cancellation makes Shutdown give up when its context ends.
func TestShutdownGivesUp(t *testing.T) {
	t.Parallel()
	r := NewRegistry(context.Background())
	release := make(chan struct{})
	id := mustStart(t, r, 7, func(ctx context.Context, report Reporter) (any, error) {
		<-release
		return nil, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := r.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown with a stuck job: %v; want DeadlineExceeded", err)
	}
	close(release)
	waitFor(t, r, id)
	if err := r.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown once the job returned: %v", err)
	}
}

func TestParentCancelsJobs(t *testing.T) {
	t.Parallel()
	parent, cancel := context.WithCancel(context.Background())
	r := NewRegistry(parent)
	id := mustStart(t, r, 7, blocked(nil))
	cancel()
	if s := waitFor(t, r, id); s.State != Cancelled {
		t.Errorf("job after its parent context ended: %s; want cancelled", s.State)
	}
}

// Many goroutines starting, reading and cancelling jobs at once (run with -race).
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	r := NewRegistry(context.Background())
	r.keep = 20
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			by := Caller{UserID: int64(g + 1)}
			for i := range 30 {
				id, err := r.Start("sweep", fmt.Sprint(i), by.UserID, func(ctx context.Context, report Reporter) (any, error) {
					for p := range 3 {
						report(p)
					}
					return i, nil
				})
				if err != nil {
					t.Error(err)
					return
				}
				r.Get(id, by)
				if i%3 == 0 {
					r.Cancel(id, by)
				}
			}
		})
	}
	wg.Wait()
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	n := len(r.jobs)
	r.mu.Unlock()
	if n > 8*30 || n < r.keep {
		t.Errorf("%d jobs kept; want about keep=%d (finished ones are forgotten beyond it)", n, r.keep)
	}
}

// Job ids do not come round again after a restart (a new registry): they used to count
// from 1 in every process, so a link or a form's recorded target named another job.
func TestJobIDsUniqueAcrossRestarts(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for restart := range 3 {
		r := NewRegistry(context.Background())
		for range 50 {
			id, err := r.Start("run", "t", 1, func(context.Context, Reporter) (any, error) { return nil, nil })
			if err != nil {
				t.Fatal(err)
			}
			if seen[id] || !strings.HasPrefix(id, "run-") {
				t.Fatalf("after %d restarts: id %q; want a new id of kind run", restart, id)
			}
			seen[id] = true
		}
		if err := r.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
