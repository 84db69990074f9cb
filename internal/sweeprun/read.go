package sweeprun

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// Get returns a sweep, with its JobID when it runs in this process.
func (s *Service) Get(ctx context.Context, id int64) (Sweep, error) {
	row, err := s.store.Sweep(ctx, id)
	if err != nil {
		return Sweep{}, err
	}
	return s.fromRow(row)
}

// List returns the sweeps of a campaign, newest first (campaignID 0: of every campaign).
func (s *Service) List(ctx context.Context, campaignID int64) ([]Sweep, error) {
	rows, err := s.store.Sweeps(ctx, campaignID)
	if err != nil {
		return nil, err
	}
	out := make([]Sweep, len(rows))
	for i, row := range rows {
		if out[i], err = s.fromRow(row); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Service) fromRow(row db.Sweep) (Sweep, error) {
	sw := Sweep{ID: row.ID, CampaignID: row.CampaignID, DatasetID: row.DatasetID, Name: row.Name, Notes: row.Notes,
		State: State(row.State), Error: row.Error, Done: row.Done, Total: row.Total, LabelVersion: row.LabelVersion,
		CreatedBy: row.CreatedBy, CreatedAt: row.CreatedAt, StartedAt: row.StartedAt, FinishedAt: row.FinishedAt}
	if err := json.Unmarshal([]byte(row.Grid), &sw.Grid); err != nil {
		return Sweep{}, fmt.Errorf("grid of sweep %d: %w", row.ID, err)
	}
	if row.Summary != "" {
		sw.Summary = new(Summary)
		if err := json.Unmarshal([]byte(row.Summary), sw.Summary); err != nil {
			return Sweep{}, fmt.Errorf("summary of sweep %d: %w", row.ID, err)
		}
	}
	s.mu.Lock()
	if r, ok := s.running[row.ID]; ok {
		sw.JobID = r.jobID
	}
	s.mu.Unlock()
	return sw, nil
}

// Results returns the stored results of a sweep in grid order (Ordinal), as many as are
// stored: a running sweep's grow as it runs. The results of the last few sweeps asked
// for are kept decoded (a default grid's 7,280 are 23 MB of JSON), so a later call reads
// only what was stored since; callers must not modify what they get.
func (s *Service) Results(ctx context.Context, id int64) ([]Result, error) {
	if _, err := s.store.Sweep(ctx, id); err != nil {
		return nil, err
	}
	e := s.results.entry(id)
	e.mu.Lock()
	defer e.mu.Unlock()
	fresh, err := s.ResultsAfter(ctx, id, e.maxID)
	if err != nil {
		return nil, err
	}
	if len(fresh) > 0 || len(e.kept) > 0 {
		// A new slice: what earlier calls returned is never changed under them.
		rs := make([]Result, 0, len(e.rs)+len(e.kept)+len(fresh))
		rs = append(append(append(rs, e.rs...), e.kept...), fresh...)
		slices.SortFunc(rs, func(a, b Result) int { return cmp.Compare(a.Ordinal, b.Ordinal) })
		e.rs, e.kept = rs, nil
		for _, r := range fresh {
			e.maxID = max(e.maxID, r.ID)
		}
	}
	return e.rs, nil
}

// ResultsAfter returns the results of sweep id stored after the result whose ID is after
// (0: all of them), in the order they were stored: what a page that polls a running sweep
// has not shown yet.
func (s *Service) ResultsAfter(ctx context.Context, id, after int64) ([]Result, error) {
	rows, err := s.store.SweepResultsAfter(ctx, id, after)
	if err != nil {
		return nil, err
	}
	out := make([]Result, len(rows))
	// Decoding is the cost (about 3 KB of JSON a result): spread it over the cores.
	workers := min(runtime.GOMAXPROCS(0), max(1, len(rows)/256))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(rows); i += workers {
				if out[i], errs[w] = fromResultRow(rows[i]); errs[w] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s.decoded.Add(int64(len(out)))
	return out, nil
}

// add keeps results a sweep's job has just stored (rows with their IDs, 0 for one not
// stored; results the scored values they were written from) in the sweep's entry, when
// the entry holds every result stored before them (those up to the row ID before): a
// page reading them then finds them decoded. An entry holds every row up to its maxID:
// rows of one sweep are written one transaction at a time, and a reader sees a
// transaction whole or not at all.
func (c *resultCache) add(id int64, rows []db.SweepResult, results []sweep.Result, before int64) {
	e := c.entry(id)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.maxID < before {
		return // the entry was dropped meanwhile (or never read): Results reads the store
	}
	maxID := e.maxID
	for i, row := range rows {
		if row.ID > e.maxID {
			e.kept = append(e.kept, Result{ID: row.ID, Ordinal: row.Ordinal, Result: results[i]})
			maxID = max(maxID, row.ID)
		}
	}
	e.maxID = maxID
}

// resultsKept is how many sweeps' decoded results Results keeps.
const resultsKept = 3

type resultEntry struct {
	mu    sync.Mutex
	maxID int64    // every result stored up to this row ID is in rs or kept
	rs    []Result // by ordinal
	kept  []Result // added by the sweep's job since the last read, in no order
}

// resultCache keeps the decoded results of the last few sweeps asked for.
type resultCache struct {
	mu    sync.Mutex
	order []int64 // most recent last
	byID  map[int64]*resultEntry
}

func (c *resultCache) entry(id int64) *resultEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = map[int64]*resultEntry{}
	}
	c.order = append(slices.DeleteFunc(c.order, func(x int64) bool { return x == id }), id)
	e, ok := c.byID[id]
	if !ok {
		e = &resultEntry{}
		c.byID[id] = e
	}
	for len(c.order) > resultsKept {
		delete(c.byID, c.order[0])
		c.order = c.order[1:]
	}
	return e
}

// Result returns one stored result by its id (sweep_results.id), with the sweep it
// belongs to.
func (s *Service) Result(ctx context.Context, resultID int64) (Sweep, Result, error) {
	row, err := s.store.SweepResultByID(ctx, resultID)
	if err != nil {
		return Sweep{}, Result{}, err
	}
	sw, err := s.Get(ctx, row.SweepID)
	if err != nil {
		return Sweep{}, Result{}, err
	}
	r, err := fromResultRow(row)
	return sw, r, err
}

func fromResultRow(row db.SweepResult) (Result, error) {
	r := Result{ID: row.ID, Ordinal: row.Ordinal}
	if err := json.Unmarshal([]byte(row.Metrics), &r.Result); err != nil {
		return Result{}, fmt.Errorf("sweep result %d: %w", row.ID, err)
	}
	return r, nil
}

// Progress returns the progress of a sweep running in this process; ok is false when
// it runs in none.
func (s *Service) Progress(id int64) (p Progress, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.running[id]
	if !ok {
		return Progress{}, false
	}
	return r.progress, true
}

// Wait blocks until the sweep's job (if any runs in this process) has finished or ctx
// ends, and returns the sweep as stored then: for tests and the command line.
func (s *Service) Wait(ctx context.Context, id int64) (Sweep, error) {
	s.mu.Lock()
	var jobID string
	if r, ok := s.running[id]; ok {
		jobID = r.jobID
	}
	s.mu.Unlock()
	if jobID != "" {
		if _, err := s.jobs.Wait(ctx, jobID); err != nil {
			return Sweep{}, err
		}
	}
	return s.Get(ctx, id)
}

// SetNotes replaces a sweep's name and notes.
func (s *Service) SetNotes(ctx context.Context, id int64, name, notes string) error {
	return s.store.SetSweepNotes(ctx, id, name, notes)
}

// LabelsChanged compares the campaign's resolved labels now with those the sweep was
// scored on. The campaign's labels are kept resolved and brought up to date from what
// changed in the store (labelCache), so a look costs the comparison, not a read of every
// label.
func (s *Service) LabelsChanged(ctx context.Context, id int64) (LabelDiff, error) {
	sw, err := s.store.Sweep(ctx, id)
	if err != nil {
		return LabelDiff{}, err
	}
	c, err := s.store.Campaign(ctx, sw.CampaignID)
	if err != nil {
		return LabelDiff{}, err
	}
	return s.labelDiff(ctx, sw, c)
}
