package sweeprun

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/jobs"
)

// TestFailedWriteFailsTheSweep makes the store refuse results (a trigger, as a full disk
// or a broken file would refuse them), after the first transaction of them and then in
// the last alone: each time the sweep ends failed with the store's error, what was
// stored before stays whole and nothing of the refused transaction is, the summary is
// stored, the engine stops soon after the first refusal, and once the store takes
// writes again a resume ends with the results of a sweep never interrupted.
func TestFailedWriteFailsTheSweep(t *testing.T) {
	path := demoCopy(t)
	e := openEnv(t, path)
	ctx := context.Background()
	whole := e.run(StartRequest{CampaignID: e.campaign.ID, Grid: smallGrid()})
	want := e.results(whole.ID)
	// The result the engine reports last is the one stored last.
	last := want[0]
	for _, r := range want {
		if r.ID > last.ID {
			last = r
		}
	}

	raw, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// run starts a sweep of the small grid and waits for it, counting the results its
	// writer took; it returns the sweep and its job's error.
	run := func() (Sweep, string, int) {
		t.Helper()
		var taken atomic.Int64
		e.svc.taken = func(int64) { taken.Add(1) }
		defer func() { e.svc.taken = nil }()
		sw, err := e.svc.Start(ctx, StartRequest{CampaignID: e.campaign.ID, Grid: smallGrid()})
		if err != nil {
			t.Fatal(err)
		}
		job := sw.JobID
		if sw, err = e.svc.Wait(ctx, sw.ID); err != nil {
			t.Fatal(err)
		}
		snap, err := e.reg.Get(job, jobs.Caller{All: true})
		if err != nil {
			t.Fatal(err)
		}
		return sw, snap.Err, int(taken.Load())
	}
	check := func(what string, sw Sweep, jobErr string) {
		t.Helper()
		if sw.State != Failed || !strings.Contains(sw.Error, "server log") {
			t.Errorf("%s: sweep %s %q; want failed, pointing to the server log", what, sw.State, sw.Error)
		}
		if !strings.Contains(jobErr, "no space left") {
			t.Errorf("%s: the job's error is %q; want the store's", what, jobErr)
		}
		if sw.Summary == nil || sw.Summary.Model == nil {
			t.Errorf("%s: no summary with the model stored", what)
		}
		e.checkConsistent(sw)
	}
	resume := func(what string, sw Sweep) {
		t.Helper()
		exec(`DROP TRIGGER refuse`)
		resumed, err := e.svc.Resume(ctx, sw.ID, 0)
		if err != nil {
			t.Fatalf("%s: Resume: %v", what, err)
		}
		if resumed, err = e.svc.Wait(ctx, resumed.ID); err != nil || resumed.State != Done {
			t.Fatalf("%s: resumed: %s %q, %v; want done", what, resumed.State, resumed.Error, err)
		}
		e.checkConsistent(resumed)
		sameResults(t, what+", resumed", e.results(sw.ID), want)
	}

	// Refused after the first transaction.
	var first int
	onFirstFlush(e.svc, func(id int64) {
		first = len(e.results(id))
		exec(`CREATE TRIGGER refuse BEFORE INSERT ON sweep_results BEGIN SELECT RAISE(ABORT, 'no space left'); END`)
	})
	cut, jobErr, taken := run()
	e.svc.afterFlush = nil
	check("refused after the first transaction", cut, jobErr)
	if first == 0 || cut.Done != first {
		t.Errorf("%d results stored, %d in the first transaction; want the first transaction's alone", cut.Done, first)
	}
	// The writer takes the refused transaction's results and at most a channel's worth
	// (flushEvery/2) more, and one the engine was handing over.
	if most := first + 2*e.svc.flushEvery + 1; taken > most {
		t.Errorf("the writer took %d results; want at most %d: the engine went on after the refusal", taken, most)
	}
	resume("refused after the first transaction", cut)

	// Refused in the last transaction alone: the engine has finished by then.
	exec(fmt.Sprintf(`CREATE TRIGGER refuse BEFORE INSERT ON sweep_results WHEN NEW.ordinal = %d
		BEGIN SELECT RAISE(ABORT, 'no space left'); END`, last.Ordinal))
	end, jobErr, _ := run()
	check("refused at the end", end, jobErr)
	if end.Done == 0 || end.Done >= end.Total-end.Summary.DeclinedConfigs() {
		t.Errorf("refused at the end: %d of %d stored; want all but the last transaction's", end.Done, end.Total)
	}
	resume("refused at the end", end)
}
