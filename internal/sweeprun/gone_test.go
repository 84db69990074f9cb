package sweeprun

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// TestLabelsOfRemovedDocumentsStillCount: after an export tombstones a document of a
// labeled duplicate pair, a new sweep still counts the pair for its bin's share of
// non-duplicates (the demo lost 278 of its 826 labeled pairs that way: every pair naming
// a removed document was dropped), but nowhere in what counts the live dataset's pairs;
// its summary says how many labeled pairs name documents no longer live, and its stored
// snapshot holds them, so the slider rescores to the figures the sweep stored.
func TestLabelsOfRemovedDocumentsStillCount(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	grid := sweep.Grid{Specs: []lsh.Spec{lsh.DefaultSpec()}, Shapes: []lsh.Shape{{Bands: 32, Rows: 4}}, Thresholds: []float64{0.8},
		Verifications: []sweep.Verification{sweep.ExactJaccard}, Policies: []cluster.Policy{cluster.Components}}
	before := e.run(StartRequest{CampaignID: e.campaign.ID, Grid: grid})

	// A labeled duplicate of the demo's J 0.9-1 stratum whose normalized texts differ (a
	// pair in a bin, not a certain duplicate).
	docs, err := e.store.SweepDocuments(ctx, e.campaign.DatasetID)
	if err != nil {
		t.Fatal(err)
	}
	norm := lsh.NewNormalizer(sweep.DemoRep.Norm)
	text := map[int64]string{}
	for i, id := range docs.IDs {
		text[id] = norm.Normalize(docs.Texts[i])
	}
	pairs, err := e.store.SweepPairs(ctx, e.campaign.ID)
	if err != nil {
		t.Fatal(err)
	}
	counted := func(i int) sweep.Resolution { return sweep.Resolve(labeledPair(pairs[i], 0, 1), e.campaign.Categories) }
	pick := -1
	for i, p := range pairs {
		if r := counted(i); r.Status == sweep.Counted && r.Duplicate && strings.HasSuffix(p.Stratum, "|j0.9-1") && text[p.A] != text[p.B] {
			pick = i
			break
		}
	}
	if pick < 0 {
		t.Fatal("the demo has no labeled duplicate in J 0.9-1 with texts that differ")
	}
	keeper, gone := pairs[pick].A, pairs[pick].B
	var goneIDs []int64 // counted pairs naming the removed document
	goneDups := 0
	for i, p := range pairs {
		if r := counted(i); r.Status == sweep.Counted && (p.A == gone || p.B == gone) {
			goneIDs = append(goneIDs, p.ID)
			if r.Duplicate {
				goneDups++
			}
		}
	}
	dbtest.ExportRemovals(t, e.store, e.campaign.DatasetID, []int64{keeper, gone})
	after := e.run(StartRequest{CampaignID: e.campaign.ID, Grid: grid})

	// The labels: every pair still counts, those naming the removed document said apart.
	bl, al := before.Summary.Labels, after.Summary.Labels
	if al.Counted != bl.Counted || al.Gone != len(goneIDs) || bl.Gone != 0 || al.Outside != 0 {
		t.Errorf("after the export: %d pairs counted, %d naming a document no longer live, %d outside the dataset; "+
			"want %d counted (as before), %d, 0", al.Counted, al.Gone, al.Outside, bl.Counted, len(goneIDs))
	}
	// The model: every bin's labels as before the export (the removed pair's bin included).
	bm, am := before.Summary.Model, after.Summary.Model
	if bm == nil || am == nil {
		t.Fatalf("models before %v, after %v; want both", bm != nil, am != nil)
	}
	if am.Pairs != bm.Pairs || am.Gone+am.GoneUnused != len(goneIDs) || am.Gone == 0 {
		t.Errorf("model after: %d pairs, %d naming the removed document, %d of those unused; before %d pairs; want %d pairs, %d named",
			am.Pairs, am.Gone, am.GoneUnused, bm.Pairs, bm.Pairs, len(goneIDs))
	}
	for b := range bm.Bins {
		x, y := bm.Bins[b], am.Bins[b]
		if x.Labeled != y.Labeled || x.NonDup != y.NonDup || x.Size != y.Size {
			t.Errorf("bin %s: %d labeled, %d not duplicates, size %.0f after the export; before %d, %d, %.0f",
				x.Label, y.Labeled, y.NonDup, y.Size, x.Labeled, x.NonDup, x.Size)
		}
	}
	if top := am.Bins[len(am.Bins)-1]; top.Label != "j0.9-1" || top.Labeled == 0 {
		t.Errorf("the last bin is %s with %d labels; want j0.9-1 with the removed pair among them", top.Label, top.Labeled)
	}
	if !slices.Contains(am.Notes, am.Assumption()) || !strings.Contains(am.Assumption(), sweep.GoneAssumption) {
		t.Errorf("the model's notes do not state the assumption of labels on removed documents:\n%s", strings.Join(am.Notes, "\n"))
	}
	if strings.Contains(bm.Assumption(), sweep.GoneAssumption) {
		t.Errorf("before the export the model states the assumption of labels on removed documents: %s", bm.Assumption())
	}

	// The live dataset: the removed document is left out, and the labeled-pairs figures
	// count the live pairs only.
	leftOut, err := e.store.SweepLeftOut(ctx, after.ID)
	if err != nil || !slices.Contains(leftOut, gone) {
		t.Fatalf("SweepLeftOut(after) = %v, %v; want document %d among them", leftOut, err, gone)
	}
	b, a := e.results(before.ID)[0], e.results(after.ID)[0]
	if a.Recall.Of != b.Recall.Of-goneDups {
		t.Errorf("labeled duplicates in the labeled-pairs recall: %d after the export, %d before; want %d fewer", a.Recall.Of, b.Recall.Of, goneDups)
	}
	if b.Removals-a.Removals != 1 {
		t.Errorf("the configuration removes %d before the export, %d after; want one fewer (the removed document)", b.Removals, a.Removals)
	}
	sel, err := e.svc.Select(ctx, after.ID, a.Config, a.Config.Threshold)
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Outcomes) != al.Counted-al.Gone {
		t.Errorf("the slider shows %d labeled pairs; want the %d between live documents", len(sel.Outcomes), al.Counted-al.Gone)
	}
	for _, o := range sel.Outcomes {
		if slices.Contains(goneIDs, o.Pair) {
			t.Errorf("the slider shows pair %d, which names the removed document", o.Pair)
		}
	}
	// The snapshot: the pairs naming the removed document round-trip, and the slider
	// estimates as the sweep did.
	snap, err := e.svc.readSnapshot(ctx, after.ID)
	if err != nil {
		t.Fatal(err)
	}
	inSnap := 0
	for _, p := range snap {
		if slices.Contains(goneIDs, p.ID) && (p.A == gone || p.B == gone) {
			inSnap++
		}
	}
	if len(snap) != al.Counted || inSnap != len(goneIDs) {
		t.Errorf("the snapshot holds %d pairs, %d naming the removed document; want %d, %d", len(snap), inSnap, al.Counted, len(goneIDs))
	}
	stored := a.Result
	stored.Optimal, stored.Observed = lsh.ShapeChoice{}, nil // the slider leaves them to Optima
	if g, w := figures(t, sel.Result), figures(t, stored); g != w {
		t.Errorf("the slider at the sweep's threshold:\n%s\nthe stored result:\n%s", g, w)
	}
	if d, err := e.svc.LabelsChanged(ctx, after.ID); err != nil || d.N() != 0 || d.Version != after.LabelVersion {
		t.Errorf("LabelsChanged(after) = %+v, %v; want none, version %s", d, err, after.LabelVersion)
	}
}
