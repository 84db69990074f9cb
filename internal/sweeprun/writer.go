package sweeprun

import (
	"context"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// writer stores a sweep's results as the engine emits them, in a goroutine of its own:
// encoding a result and its row's insert cost about 0.1 ms each, 2.3 s of CPU time for
// the default grid's 21,840, which the engine's goroutine paid between passes while
// both cores waited on it (issue 29 item 2). The engine hands each result over a small
// channel and goes on scoring; a failure to store cancels the engine (stop) and is the
// sweep's error.
//
// Everything below belongs to the writer's goroutine until done is closed.
type writer struct {
	s           *Service
	id          int64
	ctx         context.Context // for the writes: not cancelled with the sweep
	stop        context.CancelCauseFunc
	setProgress func(func(*Progress))

	ordinal  map[sweep.Config]int
	configs  []sweep.Config
	stored   map[int]bool // ordinals stored, and those of declined shapes
	pending  map[int]bool // ordinals taken this run
	declined []sweep.Declined
	total    int
	start    time.Time // of scoring
	scored   int       // results taken this run
	lastID   int64     // the largest row ID of the sweep's results stored so far
	buf      []db.SweepResult
	bufRes   []sweep.Result // buf's results, as scored
	err      error          // the first failure; later results are dropped

	in   chan message
	done chan struct{}
}

// message is a result scored or a shape declined, in the order the engine met them.
type message struct {
	res      sweep.Result
	declined *sweep.Declined
}

// run takes messages until in is closed, storing flushEvery results per transaction and
// none later than flushAfter after it was taken; the last are stored when in closes.
func (w *writer) run() {
	defer close(w.done)
	timer := time.NewTimer(flushAfter)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case m, ok := <-w.in:
			if !ok {
				w.flush()
				return
			}
			w.take(m)
			if len(w.buf) >= w.s.flushEvery {
				w.flush()
			} else if len(w.buf) == 1 {
				timer.Reset(flushAfter)
			}
		case <-timer.C:
			w.flush()
		}
	}
}

func (w *writer) take(m message) {
	if m.declined != nil {
		w.decline(*m.declined)
		w.declined = append(w.declined, *m.declined)
		done := len(w.stored)
		w.setProgress(func(p *Progress) { p.Done, p.Declined = done, p.Declined+m.declined.Configs })
		return
	}
	if w.s.taken != nil {
		w.s.taken(w.id)
	}
	o, ok := w.ordinal[m.res.Config]
	if !ok || w.stored[o] || w.pending[o] || w.err != nil {
		return // scored again by a resume (its shape was unfinished): kept as first stored
	}
	row, err := resultRow(o, m.res)
	if err != nil {
		w.fail(err)
		return
	}
	w.pending[o] = true
	w.scored++
	w.buf = append(w.buf, row)
	w.bufRes = append(w.bufRes, m.res)
}

// decline marks the configurations of a declined shape done: a resume does not score
// them again (the limit depends on the documents alone, which a sweep keeps).
func (w *writer) decline(d sweep.Declined) {
	for i, c := range w.configs {
		if c.Spec == d.Spec && c.Shape == d.Shape {
			w.stored[i] = true
		}
	}
}

func (w *writer) fail(err error) {
	if w.err == nil {
		w.err = err
		w.stop(err)
	}
}

func (w *writer) flush() {
	if len(w.buf) == 0 || w.err != nil {
		return
	}
	if err := w.s.store.AddSweepResults(w.ctx, w.id, w.buf); err != nil {
		w.fail(err)
		return
	}
	for _, row := range w.buf {
		w.stored[row.Ordinal] = true
	}
	// The results just stored are decoded already: a page that shows them reads none of
	// them back (Results).
	w.s.results.add(w.id, w.buf, w.bufRes, w.lastID)
	for _, row := range w.buf {
		w.lastID = max(w.lastID, row.ID)
	}
	w.buf, w.bufRes = w.buf[:0], w.bufRes[:0]
	done := len(w.stored)
	if w.s.afterFlush != nil {
		w.s.afterFlush(w.id, done)
	}
	w.setProgress(func(p *Progress) {
		p.Done = done
		if el := time.Since(w.start).Seconds(); el > 0 && w.scored > 0 {
			p.Rate = float64(w.scored) / el
			p.ETA = time.Duration(float64(w.total-done) / p.Rate * float64(time.Second))
		}
	})
}
