package sweeprun

import (
	"container/list"
	"context"
	"fmt"
	"sync"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// StatesKept is how many prepared configurations Select keeps: each holds its
// candidates (10-16 bytes a pair) and the dataset's texts it was prepared over.
const StatesKept = 4

// Select rescores configuration c of sweep id at threshold, on the labels the sweep was
// scored on. The first call for a configuration prepares its candidates (as long as one
// shape of the sweep took); the last few prepared are kept, so moving the threshold
// costs milliseconds. c need not be one of the sweep's results (any threshold, any
// configuration over the campaign's dataset). Result.Optimal and Result.Observed are
// left zero (the stored result of the configuration has them; the datasketch optimum
// can take 100 ms for a new threshold).
//
// The last few selections are kept (SelectionsKept): the dashboard and two of its charts
// ask for the same one, and the outcomes of a campaign's every labeled pair are sorted
// each time (a second at a million pairs). Callers must not modify what they get.
func (s *Service) Select(ctx context.Context, id int64, c sweep.Config, threshold float64) (Selection, error) {
	if !(threshold > 0 && threshold <= 1) {
		return Selection{}, &sweep.GridError{Axis: "thresholds", Index: 0, Msg: fmt.Sprintf("threshold %v outside (0, 1]", threshold)}
	}
	c.Threshold = threshold
	e, err := s.selections.get(ctx, stateKey{id, c}, func(e *stateEntry) { e.sel, e.err = s.selectAfresh(ctx, id, c, threshold) })
	if err != nil {
		return Selection{}, err
	}
	return e.sel, nil
}

// SelectionsKept is how many selections Select keeps: each holds the outcome of every
// counted pair (about 80 bytes a pair).
const SelectionsKept = 4

func (s *Service) selectAfresh(ctx context.Context, id int64, c sweep.Config, threshold float64) (Selection, error) {
	st, err := s.state(ctx, id, c)
	if err != nil {
		return Selection{}, err
	}
	r, err := st.Rescore(ctx, threshold)
	if err != nil {
		return Selection{}, err
	}
	outs, err := st.Outcomes(ctx, threshold)
	if err != nil {
		return Selection{}, err
	}
	sel := Selection{Result: r, Outcomes: outs, Collisions: sweep.CollisionRates(outs, CollisionBins)}
	for _, o := range outs {
		switch {
		case o.FalseMerge():
			sel.FalseMerges++
		case o.Missed():
			sel.Misses++
		}
	}
	return sel, nil
}

// state returns the prepared State of c (its threshold aside) over sweep id's dataset
// and label snapshot, preparing it once however many ask at the same time.
func (s *Service) state(ctx context.Context, id int64, c sweep.Config) (*sweep.State, error) {
	c.Threshold = 0.5 // where the State starts; every call names its own
	e, err := s.states.get(ctx, stateKey{id, c}, func(e *stateEntry) { e.st, e.err = s.prepare(ctx, id, c) })
	if err != nil {
		return nil, err
	}
	return e.st, nil
}

func (s *Service) prepare(ctx context.Context, id int64, c sweep.Config) (*sweep.State, error) {
	sw, err := s.store.Sweep(ctx, id)
	if err != nil {
		return nil, err
	}
	camp, err := s.store.Campaign(ctx, sw.CampaignID)
	if err != nil {
		return nil, err
	}
	g, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	snap, err := s.readSnapshot(ctx, id)
	if err != nil {
		return nil, err
	}
	docs, err := s.sweepDocuments(ctx, id, camp.DatasetID, snap)
	if err != nil {
		return nil, err
	}
	pairs, err := fromSnapshot(snap, docs.IDs, docs.leftOut)
	if err != nil {
		return nil, err
	}
	longs := sweep.Requests(append([]lsh.Spec{c.Spec}, g.Grid.Specs...))
	return sweep.Prepare(ctx, s.input(ctx, camp, docs, pairs, longs), c, sweep.Options{Seed: Seed})
}

type stateKey struct {
	sweep  int64
	config sweep.Config
}

type stateEntry struct {
	key   stateKey
	ready chan struct{}
	st    *sweep.State
	sel   Selection // in the selections cache, whose keys hold the threshold
	err   error
}

// stateCache keeps the last few prepared States, least recently used out first.
type stateCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *stateEntry, most recent first
	byKey map[stateKey]*list.Element
}

func newStateCache(max int) *stateCache {
	return &stateCache{max: max, order: list.New(), byKey: map[stateKey]*list.Element{}}
}

// get returns k's entry once it is ready: filled by fill (its value and err) when k is
// new, else by the caller that came first, waited for until ctx ends. A failed entry is
// dropped, so the next call tries again.
func (c *stateCache) get(ctx context.Context, k stateKey, fill func(e *stateEntry)) (*stateEntry, error) {
	e, owner := c.entry(k)
	if owner {
		fill(e)
		if e.err != nil {
			c.drop(k, e)
		}
		close(e.ready)
	}
	select {
	case <-e.ready:
		return e, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// entry returns k's entry; owner is true when it is new and the caller must fill it and
// close its ready channel.
func (c *stateCache) entry(k stateKey) (e *stateEntry, owner bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[k]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*stateEntry), false
	}
	e = &stateEntry{key: k, ready: make(chan struct{})}
	c.byKey[k] = c.order.PushFront(e)
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*stateEntry).key)
	}
	return e, true
}

// drop forgets e (a failed preparation), so the next call tries again.
func (c *stateCache) drop(k stateKey, e *stateEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[k]; ok && el.Value.(*stateEntry) == e {
		c.order.Remove(el)
		delete(c.byKey, k)
	}
}
