package campaign

import (
	"context"
	"fmt"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
)

// MaxDraw bounds each count of a DrawPlan.
const MaxDraw = 1000

// DrawPlan says which pairs to add to a campaign: PerBin pairs from every bin of
// estimated similarity (or only from Bin, when it is not -1), Boundary pairs whose
// estimate is nearest the campaign's threshold, and Random pairs drawn uniformly (the
// negatives LSH never proposes). Seed makes the draw repeatable.
type DrawPlan struct {
	PerBin   int
	Bin      int
	Boundary int
	Random   int
	Seed     uint64
}

// Check reports the first count out of range as an *InvalidError naming it.
func (p DrawPlan) Check() error {
	for _, f := range []struct {
		name    string
		n, l, h int
	}{
		{"pairs per bin", p.PerBin, 0, MaxDraw},
		{"bin", p.Bin, -1, Bins - 1},
		{"pairs near the threshold", p.Boundary, 0, MaxDraw},
		{"random pairs", p.Random, 0, MaxDraw},
	} {
		if f.n < f.l || f.n > f.h {
			return invalid("%s: want a whole number from %d to %d", f.name, f.l, f.h)
		}
	}
	return nil
}

// Draw draws pairs from c's dataset per plan and adds the new ones to c, by actor; it
// returns how many were added. Candidates come from the dataset's signatures under the
// campaign's representation, from sigs (signed and stored on first use). Each new pair
// is scored and wanted Overlap times (twice for a DoubleShare of them).
func Draw(ctx context.Context, store *db.DB, sigs *sigcache.Cache, actor string, c db.Campaign, plan DrawPlan) (int, error) {
	if err := plan.Check(); err != nil {
		return 0, err
	}
	// Signatures first: filling the cache reads texts a batch at a time.
	set, err := sigs.Signatures(ctx, c.DatasetID, c.Spec, nil)
	if err != nil {
		return 0, err
	}
	if len(set.IDs) < 2 {
		return 0, invalid("the dataset has %d document(s): there is no pair to draw", len(set.IDs))
	}
	docs, err := store.DatasetTexts(ctx, c.DatasetID)
	if err != nil {
		return 0, err
	}
	if len(docs) != len(set.IDs) {
		return 0, fmt.Errorf("draw pairs: %d documents, %d signatures", len(docs), len(set.IDs))
	}
	texts := make([]string, len(docs))
	for i, d := range docs {
		if set.IDs[i] != d.ID {
			return 0, fmt.Errorf("draw pairs: signature %d is of document %d, not %d", i, set.IDs[i], d.ID)
		}
		texts[i] = d.Text
	}
	existing, err := store.PairDocs(ctx, c.ID)
	if err != nil {
		return 0, err
	}
	have := make(map[[2]int64]bool, len(existing))
	for _, p := range existing {
		have[[2]int64{p.DocA, p.DocB}] = true // doc_a < doc_b in the store
	}
	drawn, err := labels.DrawWith(texts, set.Sigs, c.Spec, labels.Plan{Bins: Bins, PerBin: plan.PerBin, TargetBin: plan.Bin,
		Boundary: plan.Boundary, Threshold: c.Threshold, Random: plan.Random, Overlap: c.Overlap, DoubleShare: c.DoubleShare, Seed: plan.Seed},
		func(a, b int) bool { return have[[2]int64{min(docs[a].ID, docs[b].ID), max(docs[a].ID, docs[b].ID)}] })
	if err != nil {
		return 0, fmt.Errorf("draw pairs for campaign %d: %w", c.ID, err)
	}
	pairs := make([]db.NewPair, len(drawn))
	for i, d := range drawn {
		pairs[i] = db.NewPair{DocA: docs[d.A].ID, DocB: docs[d.B].ID, Origin: d.Origin, Scored: true,
			Similarity: d.Similarity, Estimate: d.Estimate, Wanted: d.Wanted}
	}
	added, err := store.AddPairs(ctx, c.ID, pairs, actor)
	if err != nil {
		return 0, err
	}
	return added, Rank(ctx, store, c)
}
