// Package jobs tracks long-running work (imports now, sweeps later) so a page can show
// its progress, survive a reload, and cancel it. Jobs live in memory for the life of the
// server process.
package jobs

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// State is a job's lifecycle state.
type State string

// States.
const (
	Running   State = "running"
	Done      State = "done"
	Failed    State = "failed"
	Cancelled State = "cancelled"
)

// Snapshot is a job as seen from outside, safe to read after the call.
type Snapshot struct {
	ID       string
	Kind     string
	Title    string
	Owner    int64 // user id that started it, 0 when none
	State    State
	Progress any // the job's own progress value
	Result   any // set when Done (and sometimes Failed)
	Err      string
	Started  time.Time
	Finished time.Time
}

type job struct {
	mu     sync.Mutex
	snap   Snapshot
	cancel context.CancelFunc
}

// Registry holds the jobs.
type Registry struct {
	mu   sync.Mutex
	jobs map[string]*job
	next int
	now  func() time.Time
	keep int
}

// NewRegistry returns an empty registry that keeps the last 200 finished jobs.
func NewRegistry() *Registry {
	return &Registry{jobs: map[string]*job{}, now: time.Now, keep: 200}
}

// Reporter is what a running job uses to publish progress.
type Reporter func(progress any)

// Start runs fn in a goroutine as a new job and returns its id. fn's result becomes
// Result; an error makes the job Failed (Cancelled when ctx was cancelled).
func (r *Registry) Start(kind, title string, owner int64, fn func(ctx context.Context, report Reporter) (any, error)) string {
	ctx, cancel := context.WithCancel(context.Background())
	r.mu.Lock()
	r.next++
	id := fmt.Sprintf("%s-%d", kind, r.next)
	j := &job{snap: Snapshot{ID: id, Kind: kind, Title: title, Owner: owner, State: Running, Started: r.now()}, cancel: cancel}
	r.jobs[id] = j
	r.gc()
	r.mu.Unlock()
	go func() {
		defer cancel()
		res, err := fn(ctx, func(p any) {
			j.mu.Lock()
			j.snap.Progress = p
			j.mu.Unlock()
		})
		j.mu.Lock()
		defer j.mu.Unlock()
		j.snap.Finished = r.now()
		j.snap.Result = res
		switch {
		case err != nil && ctx.Err() != nil:
			j.snap.State, j.snap.Err = Cancelled, "cancelled"
		case err != nil:
			j.snap.State, j.snap.Err = Failed, err.Error()
		default:
			j.snap.State = Done
		}
	}()
	return id
}

// gc drops the oldest finished jobs beyond keep. Caller holds r.mu.
func (r *Registry) gc() {
	if len(r.jobs) <= r.keep {
		return
	}
	var oldest string
	var oldestAt time.Time
	for id, j := range r.jobs {
		j.mu.Lock()
		s := j.snap
		j.mu.Unlock()
		if s.State != Running && (oldest == "" || s.Finished.Before(oldestAt)) {
			oldest, oldestAt = id, s.Finished
		}
	}
	if oldest != "" {
		delete(r.jobs, oldest)
	}
}

// Get returns a job's snapshot.
func (r *Registry) Get(id string) (Snapshot, bool) {
	r.mu.Lock()
	j, ok := r.jobs[id]
	r.mu.Unlock()
	if !ok {
		return Snapshot{}, false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.snap, true
}

// Cancel asks a running job to stop; it reports whether the job exists.
func (r *Registry) Cancel(id string) bool {
	r.mu.Lock()
	j, ok := r.jobs[id]
	r.mu.Unlock()
	if ok {
		j.cancel()
	}
	return ok
}

// Wait blocks until the job finishes or ctx ends, polling; for tests and the CLI.
func (r *Registry) Wait(ctx context.Context, id string) (Snapshot, error) {
	for {
		s, ok := r.Get(id)
		if !ok {
			return s, fmt.Errorf("job %s: not found", id)
		}
		if s.State != Running {
			return s, nil
		}
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}
