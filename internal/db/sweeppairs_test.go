package db_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/labels"
)

// TestSweepPairsChanged: read from where the log stood, SweepPairsChanged gives exactly
// the pairs an event since touched (a label, an adjudication, a flag, a skip, an
// unflag), each as SweepPairs gives it; from the start of the log, every pair with
// an event.
func TestSweepPairsChanged(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "pairs.db")
	d, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	built, err := dbtest.Build(ctx, path, "pairs", dbtest.Campaign{Docs: 200, Pairs: 2000, Events: 6000})
	if err != nil {
		t.Fatal(err)
	}
	byID := func(ps []db.SweepPair) map[int64]db.SweepPair {
		m := map[int64]db.SweepPair{}
		for _, p := range ps {
			m[p.ID] = p
		}
		return m
	}
	all, err := d.SweepPairs(ctx, built.CampaignID)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2000 {
		t.Fatalf("SweepPairs: %d pairs; want 2000", len(all))
	}
	fromStart, err := d.SweepPairsChanged(ctx, built.CampaignID, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := byID(all)
	for _, p := range fromStart {
		if !reflect.DeepEqual(p, want[p.ID]) {
			t.Fatalf("pair %d from the start of the log:\n%+v\nSweepPairs:\n%+v", p.ID, p, want[p.ID])
		}
	}
	if len(fromStart) != 2000 { // every generated pair has an event
		t.Errorf("SweepPairsChanged(0): %d pairs; want 2000", len(fromStart))
	}

	m, err := d.LabelMark(ctx, built.CampaignID)
	if err != nil {
		t.Fatal(err)
	}
	touched := map[int64]labels.Kind{3: labels.KindLabel, 10: labels.KindAdjudication, 25: labels.KindFlag, 40: labels.KindSkip,
		50: labels.KindUnflag}
	for k, kind := range touched {
		l := db.NewLabel{Annotator: fmt.Sprintf("new%d", k), Kind: kind, Category: "minor", Duplicate: true}
		if _, err := d.RecordEvent(ctx, built.CampaignID, built.FirstPair+k, l, 0); err != nil {
			t.Fatalf("event %s on pair %d: %v", kind, k, err)
		}
	}
	changed, err := d.SweepPairsChanged(ctx, built.CampaignID, m.LastEvent)
	if err != nil {
		t.Fatal(err)
	}
	now, err := d.SweepPairs(ctx, built.CampaignID)
	if err != nil {
		t.Fatal(err)
	}
	want = byID(now)
	if len(changed) != len(touched) {
		t.Errorf("SweepPairsChanged after %d events: %d pairs; want %d", len(touched), len(changed), len(touched))
	}
	for _, p := range changed {
		if _, ok := touched[p.ID-built.FirstPair]; !ok {
			t.Errorf("pair %d changed; no event touched it", p.ID)
		}
		if !reflect.DeepEqual(p, want[p.ID]) {
			t.Errorf("changed pair %d:\n%+v\nSweepPairs:\n%+v", p.ID, p, want[p.ID])
		}
	}
}
