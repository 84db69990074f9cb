package sweeprun

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// TestOldPolicyNamesLoad: a sweep stored before the cluster policy registry names
// connected components "connected-components" in its grid, its results' policy column
// and their figures; a new process reads it with the registered policy
// (cluster.Components), its figures are those stored, and the slider rescores a
// configuration of it.
func TestOldPolicyNamesLoad(t *testing.T) {
	ctx := context.Background()
	path := demoCopy(t)
	e := openEnv(t, path)
	grid := sweep.Grid{Specs: []lsh.Spec{lsh.DefaultSpec()}, Shapes: []lsh.Shape{{Bands: 32, Rows: 4}}, Thresholds: []float64{0.7, 0.9},
		Verifications: []sweep.Verification{sweep.ExactJaccard}, Policies: []cluster.Policy{cluster.Components, cluster.KeeperStar}}
	sw := e.run(StartRequest{CampaignID: e.campaign.ID, Name: "before the registry", Grid: grid})
	before := e.results(sw.ID)
	if len(before) != 4 {
		t.Fatalf("%d results; want 4", len(before))
	}
	c := before[0].Config
	if c.Policy != cluster.Components {
		t.Fatalf("first result's policy %q; want components", c.Policy)
	}
	sel, err := e.svc.Select(ctx, sw.ID, c, 0.62)
	if err != nil {
		t.Fatal(err)
	}

	// The rows as a binary before the registry wrote them.
	raw, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]int64{
		`UPDATE sweeps SET grid = replace(grid, '"components"', '"connected-components"') WHERE id = ?`: 1,
		`UPDATE sweep_results SET policy = 'connected-components',
			metrics = replace(metrics, '"Policy":"components"', '"Policy":"connected-components"') WHERE sweep_id = ? AND policy = 'components'`: 2,
	} {
		res, err := raw.ExecContext(ctx, q, sw.ID)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if n, _ := res.RowsAffected(); n != want {
			t.Fatalf("%s: %d rows; want %d", q, n, want)
		}
	}
	var grid0, metrics0 string
	if err := raw.QueryRowContext(ctx, `SELECT s.grid, r.metrics FROM sweeps s JOIN sweep_results r ON r.sweep_id = s.id
		WHERE s.id = ? AND r.policy = 'connected-components' ORDER BY r.ordinal LIMIT 1`, sw.ID).Scan(&grid0, &metrics0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(grid0, `"connected-components"`) || !strings.Contains(metrics0, `"Policy":"connected-components"`) {
		t.Fatalf("the old names are not stored:\n%s\n%.300s", grid0, metrics0)
	}
	raw.Close()

	up := openEnv(t, path) // a new process: nothing cached
	got, err := up.svc.Get(ctx, sw.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Grid.Policies, grid.Policies) {
		t.Errorf("grid policies %q; want %q", got.Grid.Policies, grid.Policies)
	}
	after := up.results(sw.ID)
	sameResults(t, "read by the new process, against those stored", after, before)
	again, err := up.svc.Select(ctx, sw.ID, after[0].Config, 0.62)
	if err != nil {
		t.Fatalf("Select of a result stored with the old name: %v", err)
	}
	if g, w := figures(t, again.Result), figures(t, sel.Result); g != w {
		t.Errorf("the slider on the old sweep:\n%.300s\nbefore:\n%.300s", g, w)
	}
}
