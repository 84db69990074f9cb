package campaign

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/auth"
	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
)

// numbered is n short documents: "document 0", "document 1", ...
func numbered(n int) []db.NewDocument {
	var docs []db.NewDocument
	for i := range n {
		docs = append(docs, db.NewDocument{ExtID: fmt.Sprint(i), Text: fmt.Sprintf("document %d", i)})
	}
	return docs
}

// The tallies give the same numbers as the from-scratch Summary, db.Answers,
// Disagreements and db.DatasetOverview, at every step of a seeded random history of
// everything that changes them: labels, edits, adjudications, retractions (undo), skips
// and flags by six annotators (through RecordEvent, label imports of the command line
// and staged label imports with adjudications, as the import job runs them), pairs
// drawn, pairs wanted twice, and settings changed (threshold, categories reordered). A
// Tally that follows the whole history (reading only what changed each time) and one
// started afresh at each step (a second process, say) are both checked.
func TestTallyMatchesSummary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, texts, c := campaignOf(t, "d", numbered(60))
	rng := rand.New(rand.NewPCG(11, 17))
	next := 0
	addPairs := func(n int) {
		var pairs []db.NewPair
		for range n {
			a, b := texts[next%len(texts)].ID, texts[(next*7+3)%len(texts)].ID
			next++
			p := db.NewPair{DocA: a, DocB: b, Origin: "test", Wanted: 1 + rng.IntN(2)}
			if rng.IntN(4) > 0 {
				p.Scored, p.Similarity, p.Estimate = true, rng.Float64(), rng.Float64()
			}
			pairs = append(pairs, p)
		}
		if _, err := store.AddPairs(ctx, c.ID, pairs, "test"); err != nil {
			t.Fatal(err)
		}
	}
	addPairs(25)
	annotators := []string{"ann", "bob", "cyd", "dee", "eve", "rules"}
	kinds := []labels.Kind{labels.KindLabel, labels.KindLabel, labels.KindLabel, labels.KindLabel, labels.KindAdjudication,
		labels.KindRetract, labels.KindRetract, labels.KindSkip, labels.KindFlag, labels.KindUnflag}
	importer, err := store.CreateUser(ctx, "test", "rev", auth.Reviewer, "not a hash")
	if err != nil {
		t.Fatal(err)
	}
	following := NewTally(store)
	var reached struct{ answers, queue int }
	for step := range 40 {
		refs, _ := store.PairDocs(ctx, c.ID)
		for range 12 {
			p := refs[rng.IntN(len(refs))]
			who := annotators[rng.IntN(len(annotators))]
			cat := c.Categories[rng.IntN(3)] // three categories in use: disagreements happen
			kind := kinds[rng.IntN(len(kinds))]
			prev := int64(0)
			if e, err := store.LatestEvent(ctx, p.ID, who); err == nil {
				prev = e.ID
			}
			if _, err := store.RecordEvent(ctx, c.ID, p.ID, db.NewLabel{Annotator: who, Kind: kind, Category: cat.Key, Duplicate: rng.IntN(2) == 0}, prev); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
		switch step % 8 {
		case 2:
			addPairs(5)
		case 3:
			if _, err := store.AskSecondLabels(ctx, c.ID, 3); err != nil {
				t.Fatal(err)
			}
		case 5: // an import: labels on new and old pairs
			var ls []db.NewLabel
			for i := range 6 {
				ls = append(ls, db.NewLabel{DocA: texts[(step+i)%len(texts)].ID, DocB: texts[(step+i+11)%len(texts)].ID, Origin: "import",
					Annotator: annotators[i%len(annotators)], Category: c.Categories[i%4].Key})
			}
			if err := store.AddLabels(ctx, c.ID, ls, "test"); err != nil {
				t.Fatal(err)
			}
		case 7: // a staged import (the import job's way), an adjudication among its labels
			id, err := store.BeginLabelImport(ctx, db.NewLabelImport{CampaignID: c.ID, UserID: importer.ID, ImportedBy: importer.Name, File: "l.csv"})
			if err != nil {
				t.Fatal(err)
			}
			var ls []db.NewLabel
			for i := range 8 {
				l := db.NewLabel{DocA: texts[(step+2*i)%len(texts)].ID, DocB: texts[(step+3*i+5)%len(texts)].ID,
					Annotator: "import:" + annotators[i%len(annotators)], Category: c.Categories[i%3].Key, Duplicate: i%2 == 0}
				if i == 7 {
					l.Kind, l.Annotator = labels.KindAdjudication, importer.Name
				}
				ls = append(ls, l)
			}
			if err := store.StageLabels(ctx, id, ls, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := store.PublishLabelImport(ctx, id, nil); err != nil {
				t.Fatal(err)
			}
		case 6: // settings: another threshold, the categories reordered
			s := Settings{Spec: c.Spec, Threshold: rng.Float64(), Overlap: 1, DoubleShare: c.DoubleShare, Categories: slices.Clone(c.Categories)}
			slices.Reverse(s.Categories)
			if err := Update(ctx, store, "test", c, s); err != nil {
				t.Fatal(err)
			}
			if c, err = store.Campaign(ctx, c.ID); err != nil {
				t.Fatal(err)
			}
		}
		want, err := Summary(ctx, store, c)
		if err != nil {
			t.Fatal(err)
		}
		wantAnswers, err := store.Answers(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantQueue, err := Disagreements(ctx, store, c)
		if err != nil {
			t.Fatal(err)
		}
		reached.answers = max(reached.answers, len(wantAnswers))
		reached.queue = max(reached.queue, len(wantQueue))
		for name, tl := range map[string]*Tally{"following": following, "fresh": NewTally(store)} {
			got, err := tl.Summary(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if diff := overviewDiff(got, want); diff != "" {
				t.Fatalf("step %d, %s tally: %s", step, name, diff)
			}
			f, err := tl.Figures(ctx, c, true)
			if err != nil {
				t.Fatal(err)
			}
			wantFig := want
			wantFig.Disagreements = nil // Figures lists the adjudication queue instead
			if diff := overviewDiff(f.Overview, wantFig); diff != "" {
				t.Fatalf("step %d, %s tally: Figures: %s", step, name, diff)
			}
			if fmt.Sprint(f.Answers) != fmt.Sprint(wantAnswers) {
				t.Fatalf("step %d, %s tally: Figures.Answers = %v; db.Answers %v", step, name, f.Answers, wantAnswers)
			}
			if fmt.Sprint(f.Queue) != fmt.Sprint(wantQueue) {
				t.Fatalf("step %d, %s tally: Figures.Queue = %v;\nDisagreements %v", step, name, f.Queue, wantQueue)
			}
			if f, err = tl.Figures(ctx, c, false); err != nil || f.Queue != nil || f.Overview.Agreement.Pairs != nil {
				t.Fatalf("step %d, %s tally: Figures for an annotator: queue %v, annotator pairs %v, %v; want neither",
					step, name, f.Queue, f.Overview.Agreement.Pairs, err)
			}
			wantFig.Agreement.Pairs = nil
			if diff := overviewDiff(f.Overview, wantFig); diff != "" {
				t.Fatalf("step %d, %s tally: Figures for an annotator: %s", step, name, diff)
			}
			counts, err := tl.Counts(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			o, err := store.DatasetOverview(ctx, c.DatasetID)
			if err != nil {
				t.Fatal(err)
			}
			wantCats := map[string]int{}
			for _, k := range o.Categories {
				wantCats[k.Key] = k.N
			}
			if fmt.Sprint(counts.Categories) != fmt.Sprint(wantCats) || counts.Pairs != o.Pairs || len(counts.Annotators) != o.Annotators {
				t.Fatalf("step %d, %s tally: Counts = %v, %d pairs, %d annotators; DatasetOverview %v, %d, %d", step, name,
					counts.Categories, counts.Pairs, len(counts.Annotators), wantCats, o.Pairs, o.Annotators)
			}
		}
	}
	final, _ := following.Summary(ctx, c)
	if final.Agreement.Units == 0 || len(final.Disagreements) == 0 || final.Complete == 0 {
		t.Errorf("the history never reached agreement units, disagreements and complete pairs: %+v", final)
	}
	if reached.answers < 4 || reached.queue < 2 {
		t.Errorf("the history reached at most %d answers and %d queued disagreements; want 4 and 2", reached.answers, reached.queue)
	}
}

// overviewDiff describes the first difference between two overviews ("" for none);
// floats compare within 1e-9 (the tallies sum in another order), NaN equal to NaN.
func overviewDiff(got, want labels.Overview) string {
	near := func(a, b float64) bool {
		return (math.IsNaN(a) && math.IsNaN(b)) || a == b || math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
	}
	ga, wa := got.Agreement, want.Agreement
	switch {
	case got.Pairs != want.Pairs || got.Complete != want.Complete || got.Target != want.Target || got.Given != want.Given:
		return fmt.Sprintf("progress %d/%d/%d/%d; want %d/%d/%d/%d", got.Pairs, got.Complete, got.Target, got.Given,
			want.Pairs, want.Complete, want.Target, want.Given)
	case fmt.Sprint(got.BinLabels) != fmt.Sprint(want.BinLabels) || fmt.Sprint(got.Coverage) != fmt.Sprint(want.Coverage) ||
		fmt.Sprint(got.CoverageDup) != fmt.Sprint(want.CoverageDup):
		return fmt.Sprintf("coverage %v (duplicates %v); want %v (%v)", got.Coverage, got.CoverageDup, want.Coverage, want.CoverageDup)
	case ga.Units != wa.Units || ga.Values != wa.Values || !near(ga.Alpha, wa.Alpha) || !near(ga.PercentAgreement, wa.PercentAgreement):
		return fmt.Sprintf("agreement %d units %d values alpha %v pct %v; want %d %d %v %v", ga.Units, ga.Values, ga.Alpha,
			ga.PercentAgreement, wa.Units, wa.Values, wa.Alpha, wa.PercentAgreement)
	case fmt.Sprint(ga.Categories) != fmt.Sprint(wa.Categories) || fmt.Sprint(ga.Confusion) != fmt.Sprint(wa.Confusion):
		return fmt.Sprintf("confusion %v %v; want %v %v", ga.Categories, ga.Confusion, wa.Categories, wa.Confusion)
	case len(ga.Pairs) != len(wa.Pairs):
		return fmt.Sprintf("%d annotator pairs; want %d", len(ga.Pairs), len(wa.Pairs))
	case len(got.Disagreements) != len(want.Disagreements):
		return fmt.Sprintf("%d disagreements; want %d", len(got.Disagreements), len(want.Disagreements))
	}
	for i, p := range ga.Pairs {
		w := wa.Pairs[i]
		if p.A != w.A || p.B != w.B || p.Units != w.Units || !near(p.Observed, w.Observed) || !near(p.Kappa, w.Kappa) {
			return fmt.Sprintf("annotator pair %d: %+v; want %+v", i, p, w)
		}
	}
	for i, d := range got.Disagreements {
		w := want.Disagreements[i]
		if d.PairID != w.PairID || !near(d.Similarity, w.Similarity) || !near(d.Distance, w.Distance) || fmt.Sprint(d.Labels) != fmt.Sprint(w.Labels) {
			return fmt.Sprintf("disagreement %d: %+v; want %+v", i, d, w)
		}
	}
	return ""
}

// A pair labeled by many people (the queue hands the first pair to everyone who asks
// until a label completes it: under load a hundred people label one pair) is where the
// tallies take their shortcuts: agreement sums from category counts, and only the
// annotator pairs of whoever changed a label moved. The figures still equal the
// from-scratch ones after every event: 40 annotators labeling, editing, withdrawing and
// giving again, an adjudication and its withdrawal, with a second pair in dispute beside.
func TestTallyCrowdedPair(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, texts, c := campaignOf(t, "d", numbered(6))
	if _, err := store.AddPairs(ctx, c.ID, []db.NewPair{
		{DocA: texts[0].ID, DocB: texts[1].ID, Origin: "test", Wanted: 2, Scored: true, Similarity: 0.7, Estimate: 0.69},
		{DocA: texts[2].ID, DocB: texts[3].ID, Origin: "test", Wanted: 2, Scored: true, Similarity: 0.4, Estimate: 0.41},
	}, "test"); err != nil {
		t.Fatal(err)
	}
	refs, _ := store.PairDocs(ctx, c.ID)
	following := NewTally(store)
	check := func(step string) {
		t.Helper()
		want, err := Summary(ctx, store, c)
		if err != nil {
			t.Fatal(err)
		}
		want.Disagreements = nil
		wantAnswers, _ := store.Answers(ctx, c.ID)
		wantQueue, _ := Disagreements(ctx, store, c)
		f, err := following.Figures(ctx, c, true)
		if err != nil {
			t.Fatal(err)
		}
		if diff := overviewDiff(f.Overview, want); diff != "" {
			t.Fatalf("%s: %s", step, diff)
		}
		if fmt.Sprint(f.Answers) != fmt.Sprint(wantAnswers) || fmt.Sprint(f.Queue) != fmt.Sprint(wantQueue) {
			t.Fatalf("%s: answers %v, queue %v; want %v, %v", step, f.Answers, f.Queue, wantAnswers, wantQueue)
		}
	}
	rng := rand.New(rand.NewPCG(5, 8))
	record := func(pair int64, who string, kind labels.Kind) {
		t.Helper()
		prev := int64(0)
		if e, err := store.LatestEvent(ctx, pair, who); err == nil {
			prev = e.ID
		}
		l := db.NewLabel{Annotator: who, Kind: kind, Category: c.Categories[rng.IntN(3)].Key, Duplicate: rng.IntN(2) == 0}
		if _, err := store.RecordEvent(ctx, c.ID, pair, l, prev); err != nil {
			t.Fatalf("%s %s on pair %d: %v", who, kind, pair, err)
		}
		check(fmt.Sprintf("%s %s on pair %d", who, kind, pair))
	}
	crowd := refs[0].ID
	record(refs[1].ID, "ann00", labels.KindLabel)
	record(refs[1].ID, "ann01", labels.KindLabel)
	for i := range 40 {
		record(crowd, fmt.Sprintf("ann%02d", i), labels.KindLabel)
	}
	kinds := []labels.Kind{labels.KindLabel, labels.KindLabel, labels.KindRetract, labels.KindSkip}
	for range 80 {
		record(crowd, fmt.Sprintf("ann%02d", rng.IntN(45)), kinds[rng.IntN(len(kinds))])
	}
	record(crowd, "reviewer", labels.KindAdjudication)
	record(crowd, "ann03", labels.KindLabel)
	record(crowd, "reviewer", labels.KindRetract)
	for range 20 {
		record(crowd, fmt.Sprintf("ann%02d", rng.IntN(45)), kinds[rng.IntN(len(kinds))])
	}
	o, _ := following.Summary(ctx, c)
	if len(o.Agreement.Pairs) < 300 {
		t.Errorf("%d annotator pairs at the end; want the crowd's hundreds", len(o.Agreement.Pairs))
	}
}
