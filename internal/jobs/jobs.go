// Package jobs runs long work (imports now; sweeps and clustering next) in the
// background of the server process, so a page can show its progress, survive a reload
// and cancel it. Jobs live in memory for the life of the process.
//
// Every job runs under the registry's context, a child of the one it was made with, and
// the registry waits for its jobs: Shutdown cancels them all and returns once each has
// returned (cleanup included), so the server closes the store only after the last job
// stopped using it.
//
// A job belongs to the user who started it. Only its owner, or a caller allowed to see
// every job (an admin), can see or cancel it; to anyone else it does not exist.
package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/errkind"
)

// Errors a caller may act on.
var (
	// ErrNotFound is a job that does not exist, was forgotten, or is not the caller's.
	ErrNotFound = errkind.New(errkind.NotFound, "no such job")
	// ErrClosed refuses a new job once Shutdown has begun.
	ErrClosed = errkind.New(errkind.Unavailable, "shutting down: no new jobs")
)

// errCancelRequested is the cause of a job's context that Cancel ended.
var errCancelRequested = errors.New("job cancelled")

// CancelRequested reports whether ctx, a job's (or one made from it), ended because
// Cancel asked for it, and not because the registry shut down or its parent ended: a
// service that stores its runs records the first as cancelled, the second as interrupted.
func CancelRequested(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errCancelRequested)
}

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
	Owner    int64 // the id of the user who started it, 0 for the system
	State    State
	Progress any // the job's own progress value, as last reported
	Result   any // what the job returned (set when it finished, whatever the state)
	Err      string
	Started  time.Time
	Finished time.Time
	// Cancelling is set when a running job was asked to stop and has not returned yet
	// (an import discarding what it staged): its page says so instead of "running".
	Cancelling bool
}

// Caller is who asks about a job.
type Caller struct {
	UserID int64
	All    bool // may see and cancel every job (admins)
}

// sees reports whether c may see a job owned by owner.
func (c Caller) sees(owner int64) bool {
	return c.All || (owner != 0 && owner == c.UserID)
}

// Reporter is what a running job calls to publish its progress.
type Reporter func(progress any)

// Func is a job's work. It should return soon after ctx is cancelled; its result
// becomes Result, and an error makes the job Failed (Cancelled when ctx was).
type Func func(ctx context.Context, report Reporter) (any, error)

type job struct {
	mu     sync.Mutex
	snap   Snapshot
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when the job has returned
}

func (j *job) snapshot() Snapshot {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.snap
}

// Registry holds the jobs. The zero value is not usable: call NewRegistry.
type Registry struct {
	ctx    context.Context // every job's parent
	cancel context.CancelFunc
	wg     sync.WaitGroup // one count per running job
	now    func() time.Time
	keep   int

	mu     sync.Mutex
	jobs   map[string]*job
	closed bool
}

// NewRegistry returns an empty registry whose jobs run under a child of parent
// (cancelling parent cancels them all) and which keeps the last 200 finished jobs.
func NewRegistry(parent context.Context) *Registry {
	ctx, cancel := context.WithCancel(parent)
	return &Registry{ctx: ctx, cancel: cancel, jobs: map[string]*job{}, now: time.Now, keep: 200}
}

// Start runs fn in a goroutine as a new job owned by owner (a user id; 0 for the
// system) and returns its id. After Shutdown has begun it runs nothing and returns
// ErrClosed.
func (r *Registry) Start(kind, title string, owner int64, fn Func) (string, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return "", ErrClosed
	}
	ctx, cancel := context.WithCancelCause(r.ctx)
	id := r.newID(kind)
	j := &job{snap: Snapshot{ID: id, Kind: kind, Title: title, Owner: owner, State: Running, Started: r.now()},
		cancel: cancel, done: make(chan struct{})}
	r.jobs[id] = j
	r.gc()
	r.wg.Add(1) // under r.mu, so Shutdown's Wait counts it
	r.mu.Unlock()
	go r.run(ctx, j, fn)
	return id, nil
}

// newID returns a job id not in use: kind and 64 random bits. Ids are links (a job's
// page, where a form sent twice leads, recorded in the store), so they must not come
// round again after a restart, as counted ids did ("run-3" named another run once the
// process restarted). Caller holds r.mu.
func (r *Registry) newID(kind string) string {
	for {
		var b [8]byte
		rand.Read(b[:])
		id := kind + "-" + hex.EncodeToString(b[:])
		if _, taken := r.jobs[id]; !taken {
			return id
		}
	}
}

func (r *Registry) run(ctx context.Context, j *job, fn Func) {
	defer r.wg.Done()
	defer close(j.done)
	defer j.cancel(nil)
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
}

// gc drops the oldest finished job when there are more than keep. Caller holds r.mu.
func (r *Registry) gc() {
	if len(r.jobs) <= r.keep {
		return
	}
	var oldest string
	var oldestAt time.Time
	for id, j := range r.jobs {
		s := j.snapshot()
		if s.State != Running && (oldest == "" || s.Finished.Before(oldestAt)) {
			oldest, oldestAt = id, s.Finished
		}
	}
	if oldest != "" {
		delete(r.jobs, oldest)
	}
}

// lookup finds a job the caller may see.
func (r *Registry) lookup(id string, by Caller) (*job, error) {
	r.mu.Lock()
	j, ok := r.jobs[id]
	r.mu.Unlock()
	if !ok || !by.sees(j.snapshot().Owner) {
		return nil, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	return j, nil
}

// Get returns a job's snapshot, or ErrNotFound when by may not see it.
func (r *Registry) Get(id string, by Caller) (Snapshot, error) {
	j, err := r.lookup(id, by)
	if err != nil {
		return Snapshot{}, err
	}
	return j.snapshot(), nil
}

// Cancel asks a job to stop, or returns ErrNotFound when by may not see it. Cancelling
// a finished job does nothing.
func (r *Registry) Cancel(id string, by Caller) error {
	j, err := r.lookup(id, by)
	if err != nil {
		return err
	}
	j.mu.Lock()
	if j.snap.State == Running {
		j.snap.Cancelling = true
	}
	j.mu.Unlock()
	j.cancel(errCancelRequested)
	return nil
}

// Wait blocks until the job has finished or ctx ends, for tests and the command line
// (no owner check).
func (r *Registry) Wait(ctx context.Context, id string) (Snapshot, error) {
	j, err := r.lookup(id, Caller{All: true})
	if err != nil {
		return Snapshot{}, err
	}
	select {
	case <-j.done:
		return j.snapshot(), nil
	case <-ctx.Done():
		return j.snapshot(), ctx.Err()
	}
}

// Shutdown refuses new jobs, cancels the running ones and waits until every one has
// returned, or until ctx ends (then it returns ctx's error and the stragglers run on).
func (r *Registry) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("jobs still running: %w", ctx.Err())
	}
}
