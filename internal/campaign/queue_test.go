package campaign

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/labels"
)

func qp(id int64, sim float64, exact bool) db.QueuePair {
	p := db.QueuePair{ID: id, Exact: exact}
	if !math.IsNaN(sim) {
		p.Similarity = sql.NullFloat64{Float64: sim, Valid: true}
	}
	return p
}

// QueueOrder interleaves the strata: near the threshold first, then the bins from the
// threshold outwards, exact copies and unscored pairs last in every round.
func TestQueueOrderInterleaves(t *testing.T) {
	t.Parallel()
	var pairs []db.QueuePair
	id := int64(0)
	add := func(n int, sim float64, exact bool) {
		for range n {
			id++
			pairs = append(pairs, qp(id, sim, exact))
		}
	}
	add(60, 1, true)          // a crowd of exact copies, drawn first (as in the demo)
	add(5, 0.95, false)       // bin 9
	add(5, 0.81, false)       // near 0.8
	add(5, 0.45, false)       // bin 4
	add(5, 0.02, false)       // bin 0
	add(3, math.NaN(), false) // not scored
	order := QueueOrder(pairs, 0.8)
	if len(order) != len(pairs) {
		t.Fatalf("QueueOrder returned %d ids for %d pairs", len(order), len(pairs))
	}
	seen := map[int64]bool{}
	for _, id := range order {
		if seen[id] {
			t.Fatalf("pair %d ranked twice", id)
		}
		seen[id] = true
	}
	byID := map[int64]db.QueuePair{}
	for _, p := range pairs {
		byID[p.ID] = p
	}
	strata := func(ids []int64) []int {
		out := make([]int, len(ids))
		for i, id := range ids {
			out[i] = stratum(byID[id], 0.8)
		}
		return out
	}
	// The first round: near, bin 9 (0.95, nearest above), bin 4, bin 0, exact, unscored.
	want := []int{stratumNear, 9, 4, 0, stratumExact, stratumUnscored}
	if got := strata(order[:6]); !slices.Equal(got, want) {
		t.Errorf("first round of strata = %v; want %v", got, want)
	}
	// Exact copies never follow each other while other pairs are left.
	got := strata(order)
	lastOther := 0
	for i, s := range got {
		if s != stratumExact {
			lastOther = i
		}
	}
	for i := 1; i <= lastOther; i++ {
		if got[i] == stratumExact && got[i-1] == stratumExact {
			t.Errorf("positions %d and %d are both exact copies with other pairs still waiting: %v", i-1, i, got[:lastOther+1])
			break
		}
	}
	// Deterministic.
	if again := QueueOrder(pairs, 0.8); !slices.Equal(again, order) {
		t.Error("QueueOrder is not deterministic")
	}
}

// After an exact copy the queue serves a pair that is not one, whatever the ranks say,
// and comes back to exact copies when nothing else is left.
func TestNextAvoidsTwoExactCopies(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 40)
	ctx := context.Background()
	// Three exact copies (a document with itself is refused, so: the same text twice)
	// ranked first, then two different pairs.
	var exact []db.NewDocument
	for i := range 3 {
		text := "the very same text " + strings.Repeat("x", i)
		hash := fmt.Sprintf("hash-%d", i)
		exact = append(exact, db.NewDocument{ExtID: fmt.Sprintf("copy-a%d", i), Text: text, ContentHash: hash},
			db.NewDocument{ExtID: fmt.Sprintf("copy-b%d", i), Text: text, ContentHash: hash})
	}
	ds := dbtest.Dataset(t, f.store, "copies", exact)
	c, err := Start(ctx, f.store, ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	texts, _ := f.store.DatasetTexts(ctx, ds.ID)
	var pairs []db.NewPair
	for i := 0; i < 6; i += 2 {
		pairs = append(pairs, db.NewPair{DocA: texts[i].ID, DocB: texts[i+1].ID, Origin: "test", Wanted: 1})
	}
	pairs = append(pairs, db.NewPair{DocA: texts[0].ID, DocB: texts[2].ID, Origin: "test", Wanted: 1},
		db.NewPair{DocA: texts[1].ID, DocB: texts[4].ID, Origin: "test", Wanted: 1})
	if _, err := f.store.AddPairs(ctx, c.ID, pairs, "test"); err != nil {
		t.Fatal(err)
	}
	refs, _ := f.store.PairDocs(ctx, c.ID) // unranked: served in the order they came
	ann := f.user("ann", auth.Annotator)
	var served []int64
	after := int64(0)
	for range len(refs) + 1 {
		id, ok, err := Next(ctx, f.store, c, "ann", after)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		served = append(served, id)
		if err := Record(ctx, f.store, c, id, ann, Decision{Kind: labels.KindLabel, Category: "exact"}); err != nil {
			t.Fatal(err)
		}
		after = id
	}
	want := []int64{refs[0].ID, refs[3].ID, refs[1].ID, refs[4].ID, refs[2].ID}
	if !slices.Equal(served, want) {
		t.Errorf("served %v; want %v (exact copies %d, %d, %d never twice in a row while %d, %d wait)",
			served, want, refs[0].ID, refs[1].ID, refs[2].ID, refs[3].ID, refs[4].ID)
	}
}

// The adjudication queue: most distinct answers first, then nearest the threshold; a
// party to a disagreement cannot settle it while someone else could, and the audit log
// records a party who settles it because nobody else could.
func TestAdjudicationQueueAndParties(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30)
	ctx := context.Background()
	f.addPairs(4)
	if _, err := ScorePairs(ctx, f.store, f.c.ID); err != nil {
		t.Fatal(err)
	}
	refs, _ := f.store.PairDocs(ctx, f.c.ID)
	stats, _ := f.store.PairStats(ctx, f.c.ID)
	ann, bob, rev := f.user("ann", auth.Annotator), f.user("bob", auth.Annotator), f.user("rev", auth.Reviewer)
	label := func(u db.User, pair int64, cat string) {
		t.Helper()
		if err := Record(ctx, f.store, f.c, pair, u, Decision{Kind: labels.KindLabel, Category: cat, Duplicate: "no"}); err != nil {
			t.Fatal(err)
		}
	}
	// Pair 0: three answers. Pairs 1 and 2: two answers each. Pair 3: agreement.
	label(ann, refs[0].ID, "exact")
	label(bob, refs[0].ID, "different")
	label(rev, refs[0].ID, "minor")
	label(ann, refs[1].ID, "exact")
	label(rev, refs[1].ID, "different")
	label(ann, refs[2].ID, "exact")
	label(bob, refs[2].ID, "different")
	label(ann, refs[3].ID, "different")
	label(bob, refs[3].ID, "different")
	ds, err := Disagreements(ctx, f.store, f.c)
	if err != nil {
		t.Fatal(err)
	}
	// Pairs 1 and 2 by distance to the threshold.
	near, far := refs[1].ID, refs[2].ID
	if math.Abs(stats[1].Similarity.Float64-f.c.Threshold) > math.Abs(stats[2].Similarity.Float64-f.c.Threshold) {
		near, far = far, near
	}
	want := []int64{refs[0].ID, near, far}
	var got []int64
	for _, d := range ds {
		got = append(got, d.PairID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("adjudication queue %v; want %v (3 answers first, then nearest the threshold)", got, want)
	}
	if ds[0].Answers != 3 || len(ds[0].Labels) != 3 {
		t.Errorf("first disagreement %+v; want 3 answers from 3 labels", ds[0])
	}
	// rev labeled pairs 0 and 1; an admin could settle them: rev is refused, and
	// served pair 2 first.
	admin := f.user("root", auth.Admin)
	err = Record(ctx, f.store, f.c, refs[0].ID, rev, Decision{Kind: labels.KindAdjudication, Category: "minor", Duplicate: "yes"})
	var pe *PartyError
	if !errors.As(err, &pe) || len(pe.Others) != 1 || pe.Others[0] != "root" {
		t.Fatalf("adjudication by a party = %v; want a *PartyError naming root", err)
	}
	if id, ok, err := NextDisagreement(ctx, f.store, f.c, "rev", 0); err != nil || !ok || id != refs[2].ID {
		t.Errorf("NextDisagreement for rev = %d, %v, %v; want pair %d, the one rev did not label", id, ok, err, refs[2].ID)
	}
	if id, ok, _ := NextDisagreement(ctx, f.store, f.c, "root", refs[0].ID); !ok || id != near {
		t.Errorf("NextDisagreement for root after pair %d = %d; want %d", refs[0].ID, id, near)
	}
	// When every adjudicator labeled the pair, nobody else could: rev may, and the
	// audit log says so.
	label(admin, refs[1].ID, "minor")
	mine, _ := f.store.LatestEvent(ctx, refs[1].ID, "rev")
	if err := Record(ctx, f.store, f.c, refs[1].ID, rev, Decision{Kind: labels.KindAdjudication, Category: "minor", Duplicate: "yes", Previous: mine.ID}); err != nil {
		t.Fatalf("adjudication by a party when every adjudicator is one: %v; want it recorded", err)
	}
	events, _ := f.store.AuditLog(ctx, 10)
	if events[0].Action != "label.adjudicate" || !strings.Contains(events[0].Detail, `"by_party":true`) || events[0].Actor != "rev" {
		t.Errorf("audit of the adjudication: %+v; want label.adjudicate by rev, by_party true", events[0])
	}
	if ds, _ := Disagreements(ctx, f.store, f.c); len(ds) != 2 || ds[0].PairID != refs[0].ID || ds[1].PairID != refs[2].ID {
		t.Errorf("after adjudicating pair %d the queue is %+v; want pairs %d and %d", refs[1].ID, ds, refs[0].ID, refs[2].ID)
	}
}
