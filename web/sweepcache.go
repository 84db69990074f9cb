package web

import (
	"context"
	"sync"

	"github.com/dedupstudio/dedupstudio/internal/sweeprun"
)

// resultCache keeps the results of the sweeps viewed last. The dashboard and each of
// its charts need every result of a sweep (thousands, each decoded from the store), and a
// page asks for six of them at once; results only grow while a sweep runs and never
// change after, so an entry is keyed by the sweep's state and count and read once for
// everyone who asks meanwhile.
type resultCache struct {
	mu      sync.Mutex
	entries map[resultKey]*resultEntry
	order   []resultKey // oldest first
}

type resultKey struct {
	id    int64
	state sweeprun.State
	done  int
}

type resultEntry struct {
	ready   chan struct{}
	results []sweeprun.Result
	err     error
}

// resultsKept bounds the sweeps whose results are kept.
const resultsKept = 4

// results returns sw's results, loading them with load when they are not kept for sw's
// state and count. A failed load is not kept.
func (c *resultCache) results(ctx context.Context, sw sweeprun.Sweep, load func(context.Context, int64) ([]sweeprun.Result, error)) ([]sweeprun.Result, error) {
	key := resultKey{sw.ID, sw.State, sw.Done}
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[resultKey]*resultEntry{}
	}
	e, ok := c.entries[key]
	if !ok {
		e = &resultEntry{ready: make(chan struct{})}
		c.entries[key] = e
		c.order = append(c.order, key)
		for len(c.order) > resultsKept {
			delete(c.entries, c.order[0])
			c.order = c.order[1:]
		}
	}
	c.mu.Unlock()
	if !ok {
		// The load outlives a caller that goes away: others may be waiting for it.
		e.results, e.err = load(context.WithoutCancel(ctx), sw.ID)
		if e.err != nil {
			c.mu.Lock()
			if c.entries[key] == e {
				delete(c.entries, key)
			}
			c.mu.Unlock()
		}
		close(e.ready)
	}
	select {
	case <-e.ready:
		return e.results, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
