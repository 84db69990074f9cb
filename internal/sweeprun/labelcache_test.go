package sweeprun

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
)

// TestLabelsChangedFollowsTheStore: LabelsChanged, kept up to date from what changed in
// the store, answers what comparing the campaign's labels read afresh with the sweep's
// snapshot answers, after each of: nothing, a person's label that overrides a rule
// label, an adjudication, a flag, a skip, a retraction (read incrementally), and a new
// pair (read again whole).
func TestLabelsChangedFollowsTheStore(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	sw := e.runSmall("before")
	pairs, err := e.store.SweepPairs(ctx, e.campaign.ID)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := e.store.DatasetDocumentIDs(ctx, e.campaign.DatasetID)
	if err != nil {
		t.Fatal(err)
	}
	check := func(step string) {
		t.Helper()
		got, err := e.svc.LabelsChanged(ctx, sw.ID)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if want := e.labelDiffAfresh(sw.ID); got != want {
			t.Errorf("%s: LabelsChanged = %+v; read afresh %+v", step, got, want)
		}
	}
	check("right after")
	check("again")
	var last db.LabelEvent
	event := func(p db.SweepPair, l db.NewLabel, previous int64) {
		t.Helper()
		ev, err := e.store.RecordEvent(ctx, e.campaign.ID, p.ID, l, previous)
		if err != nil {
			t.Fatalf("%s on pair %d: %v", l.Kind, p.ID, err)
		}
		last = ev
	}
	u, err := e.store.CreateUser(ctx, "test", "person", "reviewer", "not a hash")
	if err != nil {
		t.Fatal(err)
	}
	flip := func(p db.SweepPair) (string, bool) {
		if p.Labels[0].Duplicate {
			return "different", false
		}
		return "exact", true
	}
	cat, dup := flip(pairs[1])
	event(pairs[1], db.NewLabel{Annotator: "person", UserID: u.ID, Kind: labels.KindLabel, Category: cat, Duplicate: dup}, 0)
	check("a person's label")
	cat, dup = flip(pairs[2])
	event(pairs[2], db.NewLabel{Annotator: "lead", UserID: u.ID, Kind: labels.KindAdjudication, Category: cat, Duplicate: dup}, 0)
	check("an adjudication")
	event(pairs[3], db.NewLabel{Annotator: "person", UserID: u.ID, Kind: labels.KindFlag, Category: "minor"}, 0)
	check("a flag")
	event(pairs[4], db.NewLabel{Annotator: "person", UserID: u.ID, Kind: labels.KindSkip, Category: "minor"}, 0)
	check("a skip")
	event(pairs[1], db.NewLabel{Annotator: "person", UserID: u.ID, Kind: labels.KindRetract, Category: "minor"}, last.ID-3)
	check("a retraction")
	if err := e.store.AddLabels(ctx, e.campaign.ID, []db.NewLabel{{DocA: ids[0], DocB: ids[len(ids)-1], Annotator: "ann", Category: "different"}},
		"test"); err != nil {
		t.Fatal(err)
	}
	check("a new pair")
	// Each event was caught up with by reading its pair; the new pair made it read all.
	if cl := e.svc.labels.campaign(e.campaign.ID); cl.reads != 2 || cl.catchUps != 5 {
		t.Errorf("%d whole reads, %d catch-ups; want 2 (the first, the new pair) and 5 (the events)", cl.reads, cl.catchUps)
	}
	// The label overriding the rules was retracted; the skipped pair keeps its rule label.
	if d, _ := e.svc.LabelsChanged(ctx, sw.ID); d.Added != 1 || d.Changed != 1 || d.Removed != 1 {
		t.Errorf("LabelsChanged = %+v at the end; want the new pair added, the adjudicated changed, the flagged removed", d)
	}
}

// checkKept checks that what who kept of sweep id (its snapshot and the index of its
// documents) is what reading the sweep from the store gives, and not empty.
func (e *env) checkKept(who string, id int64, kept *sweepLabels) {
	e.t.Helper()
	ctx := context.Background()
	stored, err := e.store.Sweep(ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	read, err := e.svc.sweepLabels(ctx, stored)
	if err != nil {
		e.t.Fatal(err)
	}
	if !slices.Equal(kept.snap, read.snap) || !maps.Equal(kept.index, read.index) || len(kept.snap) == 0 {
		e.t.Errorf("%s kept %d pairs over %d documents; the store gives %d over %d, or they differ",
			who, len(kept.snap), len(kept.index), len(read.snap), len(read.index))
	}
}

// labelDiffAfresh compares the campaign's labels read afresh with the sweep's
// snapshot, as LabelsChanged did before it kept them.
func (e *env) labelDiffAfresh(id int64) LabelDiff {
	e.t.Helper()
	ctx := context.Background()
	all, err := e.store.DatasetDocumentIDs(ctx, e.campaign.DatasetID)
	if err != nil {
		e.t.Fatal(err)
	}
	leftOut, err := e.store.SweepLeftOut(ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	c, err := e.store.Campaign(ctx, e.campaign.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	_, ls, _, err := e.svc.labelsNow(ctx, c, without(all, leftOut), leftOut, false)
	if err != nil {
		e.t.Fatal(err)
	}
	snap, err := e.svc.readSnapshot(ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	then := make(map[int64]snapPair, len(snap))
	for _, p := range snap {
		then[p.ID] = p
	}
	d := LabelDiff{Version: ls.Version}
	for _, p := range slices.Concat(ls.Pairs, ls.Gone) {
		old, ok := then[p.ID]
		switch {
		case !ok:
			d.Added++
		case old.Category != p.Category || old.Duplicate != p.Duplicate:
			d.Changed++
		}
		delete(then, p.ID)
	}
	d.Removed = len(then)
	return d
}

// TestLabelCacheKeepsFewSweeps: a new sweep's comparison state is taken from Start, as
// reading the store gives it, and a campaign's entry keeps at most sweepsKept sweeps,
// dropping the one looked at longest ago (a sweep looked at again stays).
func TestLabelCacheKeepsFewSweeps(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	sw := e.runSmall("kept")
	cl := e.svc.labels.campaign(e.campaign.ID)
	cl.mu.Lock()
	kept := cl.sweeps[sw.ID]
	cl.mu.Unlock()
	if kept == nil {
		t.Fatal("no comparison state kept for the sweep Start made")
	}
	e.checkKept("Start", sw.ID, kept)
	want, err := e.svc.LabelsChanged(ctx, sw.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Other sweeps come and go (ids above and below the real one); the real one is
	// looked at between them.
	for i := range 3 * sweepsKept {
		id := sw.ID + 1000 + int64(i)
		if i%2 == 1 {
			id = -int64(i)
		}
		cl.mu.Lock()
		cl.put(id, &sweepLabels{})
		n := len(cl.sweeps)
		cl.mu.Unlock()
		if n > sweepsKept {
			t.Fatalf("%d sweeps kept after %d; at most %d", n, i+1, sweepsKept)
		}
		if i%5 == 4 {
			if got, err := e.svc.LabelsChanged(ctx, sw.ID); err != nil || got != want {
				t.Fatalf("LabelsChanged = %+v, %v; want %+v", got, err, want)
			}
		}
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.sweeps[sw.ID] != kept {
		t.Error("the sweep looked at every fifth put was dropped")
	}
	if _, ok := cl.sweeps[sw.ID+1000]; ok {
		t.Error("the first other sweep, never looked at again, is still kept")
	}
}

// TestWarmReadsSnapshots: after a restart, Warm (run by the server in the background at
// start) reads the campaign's labels and the snapshots of its newest sweepsWarmed
// sweeps, those the sweeps list compares, as reading them on a look would; an older
// sweep's snapshot is read when it is looked at.
func TestWarmReadsSnapshots(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	sw := e.runSmall("oldest")
	snap, err := e.store.SweepLabels(ctx, sw.ID)
	if err != nil {
		t.Fatal(err)
	}
	// More sweeps on the same labels, stored as Start stores them (not run: Warm reads
	// only their snapshots and documents).
	ids := []int64{sw.ID}
	for i := range sweepsWarmed {
		id, err := e.store.CreateSweep(ctx, db.NewSweep{CampaignID: e.campaign.ID, Name: "copy", Grid: `{}`, Total: 1,
			LabelVersion: sw.LabelVersion, Labels: snap}, "test")
		if err != nil {
			t.Fatalf("sweep %d: %v", i, err)
		}
		ids = append(ids, id)
	}

	restarted := New(e.store, sigcache.New(e.store), e.reg)
	if err := restarted.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	cl := restarted.labels.campaign(e.campaign.ID)
	cl.mu.Lock()
	if !cl.loaded || cl.reads != 1 {
		t.Errorf("after Warm: loaded %v, %d reads of the campaign's pairs; want loaded, 1", cl.loaded, cl.reads)
	}
	for _, id := range ids[1:] {
		if cl.sweeps[id] == nil {
			t.Errorf("sweep %d, one of the %d newest, not read ahead", id, sweepsWarmed)
		}
	}
	if cl.sweeps[sw.ID] != nil {
		t.Errorf("sweep %d, the %dth newest, read ahead", sw.ID, sweepsWarmed+1)
	}
	warmed := cl.sweeps[ids[1]]
	cl.mu.Unlock()
	if warmed == nil {
		t.FailNow()
	}
	e.checkKept("Warm", ids[1], warmed)
	for _, id := range []int64{ids[1], sw.ID} {
		got, err := restarted.LabelsChanged(ctx, id)
		if want := e.labelDiffAfresh(id); err != nil || got != want {
			t.Errorf("LabelsChanged(%d) after Warm = %+v, %v; read afresh %+v", id, got, err, want)
		}
	}
	if cl.reads != 1 {
		t.Errorf("%d reads of the campaign's pairs; Warm's should serve", cl.reads)
	}
}

// TestLabelViewsPerDocuments: sweeps on the same documents share one view of the
// campaign's counted pairs; a sweep that left a document out gets a view of its own,
// and each sweep's comparison is what reading afresh gives, before and after labels
// change.
func TestLabelViewsPerDocuments(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	sw := e.runSmall("run")
	snap, err := e.store.SweepLabels(ctx, sw.ID)
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := e.store.SweepPairs(ctx, e.campaign.ID)
	if err != nil {
		t.Fatal(err)
	}
	ids := []int64{sw.ID}
	for _, leftOut := range [][]int64{nil, {pairs[0].A}} {
		id, err := e.store.CreateSweep(ctx, db.NewSweep{CampaignID: e.campaign.ID, Name: "stored", Grid: `{}`, Total: 1,
			LabelVersion: sw.LabelVersion, Labels: snap, LeftOut: leftOut}, "test")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	check := func(step string) {
		t.Helper()
		for _, id := range ids {
			got, err := e.svc.LabelsChanged(ctx, id)
			if want := e.labelDiffAfresh(id); err != nil || got != want {
				t.Errorf("%s: LabelsChanged(%d) = %+v, %v; read afresh %+v", step, id, got, err, want)
			}
		}
	}
	check("right after")
	cl := e.svc.labels.campaign(e.campaign.ID)
	if n := len(cl.views); n != 2 {
		t.Errorf("%d views for sweeps over two sets of documents; want 2", n)
	}
	// The pairs naming the document left out still count (as pairs of a document no
	// longer live, at other indexes): the version differs, nothing is removed.
	if a, b := e.labelDiffAfresh(ids[0]), e.labelDiffAfresh(ids[2]); a.Version == b.Version || b.Removed != 0 {
		t.Fatalf("leaving document %d out: %+v, %+v; want another version and no pair removed", pairs[0].A, a, b)
	}
	cat, dup := "exact", true
	if pairs[0].Labels[0].Duplicate {
		cat, dup = "different", false
	}
	if err := e.store.AddLabels(ctx, e.campaign.ID, []db.NewLabel{
		{DocA: pairs[1].A, DocB: pairs[1].B, Annotator: "adj", Kind: "adjudication", Category: cat, Duplicate: dup},
		{DocA: pairs[0].A, DocB: pairs[0].B, Annotator: "adj", Kind: "adjudication", Category: cat, Duplicate: dup},
	}, "test"); err != nil {
		t.Fatal(err)
	}
	check("after two adjudications")
	check("again")
}
