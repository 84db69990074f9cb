package sweeprun

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

// TestFailedWriteFailsTheSweep makes the store refuse every result after the first
// transaction of them (a trigger, as a full disk or a broken file would refuse them):
// the sweep ends failed, with the first transaction stored whole and nothing of the one
// refused, and once the store takes writes again a resume ends with the results of a
// sweep never interrupted.
func TestFailedWriteFailsTheSweep(t *testing.T) {
	path := demoCopy(t)
	e := openEnv(t, path)
	ctx := context.Background()
	whole := e.run(StartRequest{CampaignID: e.campaign.ID, Grid: smallGrid()})
	want := e.results(whole.ID)

	raw, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var first int
	onFirstFlush(e.svc, func(id int64) {
		first = len(e.results(id))
		if _, err := raw.ExecContext(ctx, `CREATE TRIGGER refuse BEFORE INSERT ON sweep_results
			BEGIN SELECT RAISE(ABORT, 'no space left'); END`); err != nil {
			t.Errorf("create trigger: %v", err)
		}
	})
	cut := e.run(StartRequest{CampaignID: e.campaign.ID, Grid: smallGrid()})
	e.svc.afterFlush = nil
	if cut.State != Failed || !strings.Contains(cut.Error, "server log") {
		t.Fatalf("sweep whose writes failed: %s %q; want failed, pointing to the server log", cut.State, cut.Error)
	}
	if first != e.svc.flushEvery || cut.Done != first {
		t.Errorf("%d results stored, %d in the first transaction; want the first transaction's %d alone", cut.Done, first, e.svc.flushEvery)
	}
	e.checkConsistent(cut)

	if _, err := raw.ExecContext(ctx, `DROP TRIGGER refuse`); err != nil {
		t.Fatal(err)
	}
	resumed, err := e.svc.Resume(ctx, cut.ID, 0)
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if resumed, err = e.svc.Wait(ctx, resumed.ID); err != nil || resumed.State != Done {
		t.Fatalf("resumed: %s %q, %v; want done", resumed.State, resumed.Error, err)
	}
	e.checkConsistent(resumed)
	sameResults(t, "after the failed write and a resume", e.results(cut.ID), want)
}
