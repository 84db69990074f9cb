package sweeprun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/campaign"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/jobs"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/manifests"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// Seed is the bootstrap seed of every sweep: a sweep's results depend only on its
// inputs, so a re-run on the same labels gives the same figures.
const Seed = 1

// flushAfter bounds how long a scored configuration waits before it is stored: results
// arrive on the page within about half a second, in transactions of many (one per
// result would cost a synchronous commit each).
const flushAfter = 300 * time.Millisecond

// run is a sweep whose job runs in this process.
type run struct {
	jobID    string
	progress Progress
}

// Start stores a new sweep of req.Grid on the campaign's current labels and queues it as
// a background job (one sweep runs at a time). It returns the sweep with its JobID. A
// campaign whose dataset has fewer than two live documents is refused (see Pairless),
// and a grid over MaxSignatureValues (*VolumeError); a request whose Token started a
// sweep already returns that sweep with ErrReplayed.
func (s *Service) Start(ctx context.Context, req StartRequest) (Sweep, error) {
	return s.start(ctx, req, 0)
}

// Pairless refuses, before a grid is read, a sweep of campaign c when its dataset has
// fewer than two documents (campaign.Pairless) or fewer than two live ones, under no
// exported manifest's tombstone (manifests.TooFew): no pair, so nothing to sweep.
func (s *Service) Pairless(ctx context.Context, c db.Campaign) error {
	_, _, err := s.liveDocuments(ctx, c)
	return err
}

// liveDocuments returns the live documents of c's dataset and those an exported manifest
// removed (left out of a sweep, and out when it is resumed or rescored), both sorted, or
// the refusal of Pairless.
func (s *Service) liveDocuments(ctx context.Context, c db.Campaign) (ids, leftOut []int64, err error) {
	ds, err := s.store.Dataset(ctx, c.DatasetID)
	if err != nil {
		return nil, nil, err
	}
	if err := campaign.Pairless(ds); err != nil {
		return nil, nil, err
	}
	all, err := s.store.DatasetDocumentIDs(ctx, c.DatasetID)
	if err != nil {
		return nil, nil, err
	}
	tomb, err := s.store.Tombstoned(ctx, c.DatasetID)
	if err != nil {
		return nil, nil, err
	}
	leftOut = make([]int64, 0, len(tomb))
	for id := range tomb {
		leftOut = append(leftOut, id)
	}
	slices.Sort(leftOut)
	ids = without(all, leftOut)
	return ids, leftOut, manifests.TooFew(ds, len(ids))
}

func (s *Service) start(ctx context.Context, req StartRequest, rerunOf int64) (Sweep, error) {
	c, err := s.store.Campaign(ctx, req.CampaignID)
	if err != nil {
		return Sweep{}, err
	}
	ids, leftOut, err := s.liveDocuments(ctx, c)
	if err != nil {
		return Sweep{}, err
	}
	// Before the configurations: counting automatic shapes at a large k takes seconds.
	if err := s.CheckVolume(req.Grid, len(ids)); err != nil {
		return Sweep{}, err
	}
	configs, err := req.Grid.Configs()
	if err != nil {
		return Sweep{}, err
	}
	_, ls, outside, err := s.labelsNow(ctx, c, ids, leftOut, true)
	if err != nil {
		return Sweep{}, err
	}
	if ls.Counted == 0 {
		return Sweep{}, ErrNoLabels
	}
	grid, err := json.Marshal(req.Grid)
	if err != nil {
		return Sweep{}, fmt.Errorf("start sweep: %w", err)
	}
	pairs := snapshot(ls, ids, leftOut)
	snap, err := json.Marshal(pairs)
	if err != nil {
		return Sweep{}, fmt.Errorf("start sweep: %w", err)
	}
	name := strings.TrimSpace(req.Name)
	if name == "" {
		name = "sweep of " + time.Now().UTC().Format("2006-01-02 15:04")
	}
	id, err := s.store.CreateSweep(ctx, db.NewSweep{CampaignID: c.ID, Name: name, Notes: req.Notes, Grid: string(grid), Seed: Seed,
		Total: len(configs), LabelVersion: ls.Version, Labels: string(snap), RerunOf: rerunOf, CreatedBy: req.By, Token: req.Token, LeftOut: leftOut}, actorOf(req.By))
	if errors.Is(err, db.ErrReplayed) {
		sw, gerr := s.Get(ctx, id)
		if gerr != nil {
			return Sweep{}, gerr
		}
		return sw, ErrReplayed
	}
	if err != nil {
		return Sweep{}, err
	}
	// What its pages compare the campaign's labels with (LabelsChanged), at hand now.
	s.labels.keep(c.ID, id, pairs, ids, leftOut)
	// The label counts are known now; the design and the baseline when the run returns.
	sum := Summary{Labels: countsOf(ls, outside)}
	if err := s.setSummary(ctx, id, sum); err != nil {
		return Sweep{}, err
	}
	if err := s.launch(id, req.By, name); err != nil {
		return Sweep{}, err
	}
	return s.Get(ctx, id)
}

// Resume continues an interrupted, cancelled or failed sweep in a new job, scoring only
// the configurations not stored yet, on the labels it was started with.
func (s *Service) Resume(ctx context.Context, id, by int64) (Sweep, error) {
	sw, err := s.Get(ctx, id)
	if err != nil {
		return Sweep{}, err
	}
	switch {
	case sw.JobID != "" || sw.State == Running || sw.State == Queued:
		return Sweep{}, ErrRunning
	case !sw.State.Resumable():
		return Sweep{}, ErrNotResumable
	}
	s.mu.Lock()
	if _, ok := s.running[id]; ok {
		s.mu.Unlock()
		return Sweep{}, ErrRunning
	}
	s.running[id] = &run{} // held until launch replaces it, so two resumes cannot both start
	s.mu.Unlock()
	if err := s.store.ResumeSweep(ctx, id, by, actorOf(by)); err != nil {
		s.forget(id)
		if errors.Is(err, db.ErrStale) {
			return Sweep{}, ErrRunning
		}
		return Sweep{}, err
	}
	if err := s.launch(id, by, sw.Name); err != nil {
		return Sweep{}, err
	}
	return s.Get(ctx, id)
}

// Rerun starts a new sweep with the grid, name (marked as a re-run) and notes of sweep id,
// on the campaign's current labels.
func (s *Service) Rerun(ctx context.Context, id, by int64, token string) (Sweep, error) {
	sw, err := s.Get(ctx, id)
	if err != nil {
		return Sweep{}, err
	}
	name := strings.TrimSuffix(sw.Name, " (re-run)") + " (re-run)"
	return s.start(ctx, StartRequest{CampaignID: sw.CampaignID, Name: name, Notes: sw.Notes, Grid: sw.Grid, By: by, Token: token}, id)
}

// Cancel asks a running or queued sweep to stop; what it scored stays stored and it can
// be resumed (a queued one leaves the queue). Permissions are the caller's to check.
func (s *Service) Cancel(id int64) error {
	s.mu.Lock()
	r, ok := s.running[id]
	s.mu.Unlock()
	if !ok || r.jobID == "" {
		return ErrNotRunning
	}
	if err := s.jobs.Cancel(r.jobID, jobs.Caller{All: true}); err != nil && !errors.Is(err, jobs.ErrNotFound) {
		return err
	}
	return nil
}

// MarkInterrupted marks every sweep the store holds as running or queued, which no job of
// this process runs, as interrupted; the server calls it at start, before it starts any
// sweep. It returns how many it marked.
func (s *Service) MarkInterrupted(ctx context.Context) (int, error) {
	s.mu.Lock()
	var mine []int64
	for id := range s.running {
		mine = append(mine, id)
	}
	s.mu.Unlock()
	return s.store.InterruptSweeps(ctx, mine)
}

// launch queues sweep id (stored as queued) and starts its job, which waits for its
// turn, then runs. The queue place is taken here, before launch returns, so the order of
// the queue is the order of the calls and a caller sees its position at once.
func (s *Service) launch(id, by int64, name string) error {
	r := &run{progress: Progress{SweepID: id, Phase: "queued", Started: time.Now()}}
	turn := make(chan struct{})
	s.mu.Lock()
	s.running[id] = r
	if s.active == 0 && len(s.queue) == 0 {
		s.active = id
		close(turn)
	} else {
		s.queue = append(s.queue, id)
		s.turn[id] = turn
		s.positionsLocked()
	}
	s.mu.Unlock()
	jobID, err := s.jobs.Start(JobKind, "Sweep: "+name, by, func(ctx context.Context, report jobs.Reporter) (any, error) {
		defer s.forget(id)
		if err := s.waitTurn(ctx, id, r, turn, report); err != nil {
			return id, s.endQueued(ctx, id)
		}
		defer s.passTurn(id)
		if err := s.store.StartSweep(ctx, id); err != nil {
			return id, err
		}
		s.mu.Lock()
		r.progress.Phase, r.progress.Position, r.progress.Started = "loading", 0, time.Now()
		s.mu.Unlock()
		return id, s.runJob(ctx, id, r, report)
	})
	if err != nil {
		s.leaveQueue(id)
		s.forget(id)
		// Nothing ran: the stored sweep waits to be resumed.
		_ = s.store.FinishSweep(context.Background(), id, string(Interrupted), err.Error(), "")
		return err
	}
	s.mu.Lock()
	r.jobID = jobID
	s.mu.Unlock()
	return nil
}

// waitTurn returns when sweep id may run (nil: turn is closed) or its job is cancelled
// while it waits (ctx's error, and the sweep has left the queue).
func (s *Service) waitTurn(ctx context.Context, id int64, r *run, turn chan struct{}, report jobs.Reporter) error {
	s.mu.Lock()
	p := r.progress
	s.mu.Unlock()
	report(p)
	select {
	case <-turn:
		return nil
	case <-ctx.Done():
		s.leaveQueue(id)
		return ctx.Err()
	}
}

// leaveQueue takes sweep id out of the queue, passing the turn on if it had it.
func (s *Service) leaveQueue(id int64) {
	s.mu.Lock()
	got := s.active == id
	if i := slices.Index(s.queue, id); i >= 0 {
		s.queue = slices.Delete(s.queue, i, i+1)
	}
	delete(s.turn, id)
	s.positionsLocked()
	s.mu.Unlock()
	if got {
		s.passTurn(id)
	}
}

// passTurn gives the turn of sweep id, which ran, to the first queued sweep.
func (s *Service) passTurn(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active != id {
		return
	}
	s.active = 0
	if len(s.queue) > 0 {
		next := s.queue[0]
		s.queue = s.queue[1:]
		s.active = next
		close(s.turn[next])
		delete(s.turn, next)
		s.positionsLocked()
	}
}

// positionsLocked renumbers the queued sweeps' positions (s.mu held).
func (s *Service) positionsLocked() {
	for i, q := range s.queue {
		if r, ok := s.running[q]; ok {
			r.progress.Position = i + 1
		}
	}
}

// endQueued records a sweep whose job ended before its turn: cancelled when Cancel asked
// for it, else interrupted (the process is shutting down). Nothing of it ran.
func (s *Service) endQueued(ctx context.Context, id int64) error {
	state := Interrupted
	if jobs.CancelRequested(ctx) {
		state = Cancelled
	}
	return s.store.FinishSweep(context.WithoutCancel(ctx), id, string(state), "", "")
}

func (s *Service) forget(id int64) {
	s.mu.Lock()
	delete(s.running, id)
	s.mu.Unlock()
}

// runJob scores the configurations of sweep id not stored yet and records how it ended.
func (s *Service) runJob(ctx context.Context, id int64, r *run, report jobs.Reporter) error {
	err := s.score(ctx, id, r, report)
	state, msg := Done, ""
	switch {
	case err == nil:
	case jobs.CancelRequested(ctx): // whatever failed on the way out, a person stopped it
		state = Cancelled
	case ctx.Err() != nil: // the process is shutting down
		state = Interrupted
	default:
		state, msg = Failed, failureMessage(id, err)
	}
	if ferr := s.store.FinishSweep(context.WithoutCancel(ctx), id, string(state), msg, ""); ferr != nil {
		return errors.Join(err, ferr)
	}
	if state == Done {
		s.warmDashboard(context.WithoutCancel(ctx), id)
	}
	return err
}

// warmDashboard computes what a finished sweep's dashboard shows first, so that it is
// ready when the page opens: the analysis under the default target and the live
// threshold panel of the configuration it selects (the recommendation, else the first
// result), with its prepared candidates. A failure here is the page's to report when it
// asks again.
func (s *Service) warmDashboard(ctx context.Context, id int64) {
	a, err := s.Analyze(ctx, id, sweep.DefaultTarget)
	if err != nil || len(a.Results) == 0 {
		return
	}
	sel := 0
	if a.RecErr == nil {
		sel = a.Rec.Index
	}
	c := a.Results[sel].Config
	_, _ = s.Select(ctx, id, c, c.Threshold)
}

// failureMessage is what a failed sweep stores and its page shows: the error itself
// when a person can act on it (an error of a kind, internal/errkind: a grid, an input or
// a representation the sweep cannot use; a campaign or dataset deleted meanwhile), else
// a sentence pointing to the server log, where the error is written in full: internal
// error text (paths, SQL) is not for the page.
func failureMessage(id int64, err error) string {
	switch {
	case errors.Is(err, db.ErrNotFound):
		return "The campaign or its dataset was deleted while the sweep ran."
	case errkind.Of(err) != errkind.Internal:
		return err.Error()
	}
	at := time.Now().UTC().Format("2006-01-02 15:04:05 UTC")
	slog.Error("sweep failed", "sweep", id, "err", err)
	return fmt.Sprintf("An internal error stopped this sweep at %s; the server log has the details (sweep %d). Resume it to try again.", at, id)
}

// score is the work of a sweep's job.
func (s *Service) score(ctx context.Context, id int64, r *run, report jobs.Reporter) error {
	setProgress := func(f func(p *Progress)) {
		s.mu.Lock()
		f(&r.progress)
		p := r.progress
		s.mu.Unlock()
		report(p)
	}
	sw, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	c, err := s.store.Campaign(ctx, sw.CampaignID)
	if err != nil {
		return err
	}
	configs, err := sw.Grid.Configs()
	if err != nil {
		return err
	}
	ordinal := make(map[sweep.Config]int, len(configs))
	for i, cfg := range configs {
		ordinal[cfg] = i
	}
	have, err := s.store.SweepOrdinals(ctx, id)
	if err != nil {
		return err
	}
	stored := make(map[int]bool, len(have))
	for _, o := range have {
		stored[o] = true
	}
	// The configurations of shapes an earlier run declined are done.
	w := &writer{s: s, id: id, setProgress: setProgress, ordinal: ordinal, configs: configs, stored: stored,
		pending: map[int]bool{}}
	if sw.Summary != nil {
		w.declined = slices.Clone(sw.Summary.Declined)
	}
	for _, d := range w.declined {
		w.decline(d)
	}
	total := len(configs)
	setProgress(func(p *Progress) { p.Done, p.Total, p.Declined = len(stored), total, sw.Summary.DeclinedConfigs() })
	if len(stored) == total {
		return nil
	}
	snap, err := s.readSnapshot(ctx, id)
	if err != nil {
		return err
	}
	docs, err := s.sweepDocuments(ctx, id, c.DatasetID, snap)
	if err != nil {
		return err
	}
	pairs, err := fromSnapshot(snap, docs.IDs, docs.leftOut)
	if err != nil {
		return err
	}
	longs := sweep.Requests(sw.Grid.Specs)
	setProgress(func(p *Progress) { p.Phase = "signing" })
	if err := s.cache.Ensure(ctx, c.DatasetID, longs, func(done, total int) {
		setProgress(func(p *Progress) { p.Signed, p.ToSign = done, total })
	}); err != nil {
		return err
	}
	in := s.input(ctx, c, docs, pairs, longs)

	start := time.Now()
	setProgress(func(p *Progress) { p.Phase, p.Started = "scoring", start })
	w.start, w.total = start, total
	if len(stored) > 0 {
		// A resumed sweep's results stored so far are read (and kept decoded) first.
		before, err := s.Results(ctx, id)
		if err != nil {
			return err
		}
		for _, r := range before {
			w.lastID = max(w.lastID, r.ID)
		}
	}
	// Writes are not cancelled with the sweep: what was scored before a cancel is kept.
	// The engine runs in rctx, which the writer ends when a write fails.
	w.ctx = context.WithoutCancel(ctx)
	rctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	// The engine may run half a transaction ahead of the writer, no more: a cancel (or
	// a failed write) stops it within that many results.
	w.stop, w.in, w.done = stop, make(chan message, max(s.flushEvery/2, 1)), make(chan struct{})
	grids := remaining(sw.Grid, configs, stored)
	go w.run()
	onResult := func(res sweep.Result) { w.in <- message{res: res} }
	onDeclined := func(d sweep.Declined) { w.in <- message{declined: &d} }
	var rep *sweep.Report
	for _, g := range grids {
		rep, err = sweep.Run(rctx, in, g, sweep.Options{Seed: Seed, OnResult: onResult, OnDeclined: onDeclined})
		if err != nil {
			break
		}
	}
	close(w.in)
	<-w.done
	if w.err != nil { // the engine stopped because a write failed: that is the sweep's error
		err = w.err
	}
	// The summary is stored however the run ended (a failed sweep's page shows its
	// model, and a resume skips the shapes declined so far).
	if rep != nil {
		sum := Summary{Model: rep.Model, ModelNote: rep.ModelNote, Baseline: rep.Baseline, Declined: w.declined}
		if sw.Summary != nil {
			sum.Labels = sw.Summary.Labels
		}
		if serr := s.setSummary(w.ctx, id, sum); serr != nil && err == nil {
			err = serr
		}
	}
	return err
}

// remaining returns the sweeps that score every configuration of g not in stored: the
// whole grid when nothing is stored, else one grid per representation over its shapes
// with a configuration missing, at every threshold, verification and policy of g (a
// shape's configurations share their candidates, and the engine's early stop depends on
// the grid's lowest threshold, so each is scored as the whole grid would score it).
func remaining(g sweep.Grid, configs []sweep.Config, stored map[int]bool) []sweep.Grid {
	if len(stored) == 0 {
		return []sweep.Grid{g}
	}
	type key struct {
		spec  lsh.Spec
		shape lsh.Shape
	}
	missing := map[key]bool{}
	var shapes = map[lsh.Spec][]lsh.Shape{}
	for i, c := range configs {
		k := key{c.Spec, c.Shape}
		if !stored[i] && !missing[k] {
			missing[k] = true
			shapes[c.Spec] = append(shapes[c.Spec], c.Shape)
		}
	}
	var out []sweep.Grid
	for _, spec := range g.Specs {
		if len(shapes[spec]) == 0 {
			continue
		}
		out = append(out, sweep.Grid{Specs: []lsh.Spec{spec}, Shapes: shapes[spec], Thresholds: g.Thresholds,
			Verifications: g.Verifications, Policies: g.Policies})
		delete(shapes, spec) // a spec listed twice is refused by Validate; this keeps it once anyway
	}
	return out
}

// resultRow is a result as stored.
func resultRow(ordinal int, r sweep.Result) (db.SweepResult, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return db.SweepResult{}, fmt.Errorf("store result %d: %w", ordinal, err)
	}
	c := r.Config
	return db.SweepResult{Ordinal: ordinal, Spec: c.Spec.String(), Bands: c.Shape.Bands, Rows: c.Shape.Rows, Threshold: c.Threshold,
		Verification: string(c.Verification), Policy: string(c.Policy), Metrics: string(b)}, nil
}

func (s *Service) setSummary(ctx context.Context, id int64, sum Summary) error {
	b, err := json.Marshal(sum)
	if err != nil {
		return fmt.Errorf("summary of sweep %d: %w", id, err)
	}
	return s.store.SetSweepSummary(ctx, id, string(b))
}

func countsOf(ls sweep.LabelSet, outside int) LabelCounts {
	return LabelCounts{Counted: ls.Counted, Flagged: ls.Flagged, Skipped: ls.Skipped, Tied: ls.Tied, Unlabeled: ls.Unlabeled,
		Adjudicated: ls.Adjudicated, Majority: ls.Majority, RuleOnly: ls.RuleOnly, Gone: len(ls.Gone), Outside: outside, Version: ls.Version}
}

// actorOf names who started a sweep in the audit log when no name is at hand.
func actorOf(by int64) string {
	if by == 0 {
		return "system"
	}
	return fmt.Sprintf("user:%d", by)
}
