package sweeprun

import (
	"context"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// TestDeclinedShapesKeptOverResume sweeps the demo's character 3-shingles with a shape
// that proposes a fifth of its pairs (declined: sweep.DefaultCandidateShare) and three
// steep ones, cancels it at its first stored results and resumes it: the declined
// shape is in the summary once, counts as done, and is not scored or declined again.
func TestDeclinedShapesKeptOverResume(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	spec, err := lsh.ParseSpec("level=char size=3 k=128")
	if err != nil {
		t.Fatal(err)
	}
	flat := lsh.Shape{Bands: 37, Rows: 3}
	g := sweep.Grid{Specs: []lsh.Spec{spec}, Shapes: []lsh.Shape{flat, {Bands: 8, Rows: 16}, {Bands: 16, Rows: 8}, {Bands: 4, Rows: 32}},
		Thresholds: []float64{0.5, 0.6, 0.7, 0.8}, Verifications: []sweep.Verification{sweep.MinHashEstimate}, Policies: []cluster.Policy{cluster.Components}}
	check := func(what string, sw Sweep) {
		t.Helper()
		e.checkConsistent(sw)
		if sw.Summary == nil || len(sw.Summary.Declined) != 1 || sw.Summary.Declined[0].Shape != flat || sw.Summary.Declined[0].Configs != 4 {
			t.Fatalf("%s: summary's declined shapes %+v; want %v once, 4 configurations", what, sw.Summary, flat)
		}
		for _, r := range e.results(sw.ID) {
			if r.Config.Shape == flat {
				t.Errorf("%s: a result of the declined shape: %v", what, r.Config)
			}
		}
	}
	whole := e.run(StartRequest{CampaignID: e.campaign.ID, Grid: g})
	if whole.State != Done || whole.Done+whole.Summary.DeclinedConfigs() != whole.Total || whole.Total != 16 {
		t.Fatalf("sweep %s, %d stored and %d declined of %d; want done, 12 and 4 of 16", whole.State, whole.Done, whole.Summary.DeclinedConfigs(), whole.Total)
	}
	check("whole", whole)

	onFirstFlush(e.svc, func(id int64) {
		if err := e.svc.Cancel(id); err != nil {
			t.Errorf("Cancel(%d): %v", id, err)
		}
	})
	cut := e.run(StartRequest{CampaignID: e.campaign.ID, Grid: g})
	e.svc.afterFlush = nil
	if cut.State != Cancelled || cut.Done == 0 || cut.Done >= 12 {
		t.Fatalf("cut sweep %s with %d stored; want cancelled with some of the 12", cut.State, cut.Done)
	}
	check("cancelled", cut)
	resumed, err := e.svc.Resume(ctx, cut.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if resumed, err = e.svc.Wait(ctx, resumed.ID); err != nil {
		t.Fatal(err)
	}
	if resumed.State != Done || resumed.Done != 12 {
		t.Fatalf("resumed sweep %s with %d stored; want done with 12", resumed.State, resumed.Done)
	}
	check("resumed", resumed)
	sameResults(t, "after resume", e.results(cut.ID), e.results(whole.ID))
}
