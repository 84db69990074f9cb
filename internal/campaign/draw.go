package campaign

import (
	"context"
	"fmt"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/frame"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sigcache"
)

// MaxDraw bounds each count of a DrawPlan.
const MaxDraw = 1000

// MaxPlanned bounds the pairs of one labeling plan (DrawPlan.Counts).
const MaxPlanned = 20_000

// DrawPlan says which pairs to add to a campaign: PerBin pairs from every bin of exact
// Jaccard similarity (or only from Bin, when it is not -1), or Counts[b] from each bin b
// (a labeling plan the dashboard proposes), Boundary pairs whose similarity is nearest
// the campaign's threshold, and Random pairs drawn uniformly (the negatives LSH never
// proposes). Seed makes the draw repeatable. Scheme and Rep choose the bins: the
// default is frame.Default under the campaign's representation; a plan made on the
// demo's design draws in its bins (frame.Demo12 under sweep.DemoRep).
type DrawPlan struct {
	PerBin   int
	Bin      int
	Counts   []int
	Boundary int
	Random   int
	Seed     uint64
	Scheme   frame.Scheme
	Rep      *lsh.Spec
}

// scheme returns the plan's bin scheme.
func (p DrawPlan) scheme() frame.Scheme {
	if p.Scheme == "" {
		return frame.Default
	}
	return p.Scheme
}

// Check reports the first count out of range as an *InvalidError naming it.
func (p DrawPlan) Check() error {
	bins := p.scheme().Bins()
	for _, f := range []struct {
		name    string
		n, l, h int
	}{
		{"pairs per bin", p.PerBin, 0, MaxDraw},
		{"bin", p.Bin, -1, bins - 1},
		{"pairs near the threshold", p.Boundary, 0, MaxDraw},
		{"random pairs", p.Random, 0, MaxDraw},
	} {
		if f.n < f.l || f.n > f.h {
			return invalid("%s: want a whole number from %d to %d", f.name, f.l, f.h)
		}
	}
	if p.Counts != nil {
		if len(p.Counts) != bins {
			return invalid("plan: %d bins given, the scheme %s has %d", len(p.Counts), p.scheme(), bins)
		}
		total := 0
		for b, n := range p.Counts {
			if n < 0 || n > MaxPlanned {
				return invalid("plan: bin %s: want a whole number from 0 to %d", p.scheme().Label(b), MaxPlanned)
			}
			total += n
		}
		if total > MaxPlanned {
			return invalid("plan: %d pairs in all; at most %d at a time", total, MaxPlanned)
		}
	}
	return nil
}

// Draw draws pairs from c's dataset per plan and adds the new ones to c, by actor; it
// returns how many were added. Pairs come from the dataset's sampling frame under the
// campaign's representation (sigs builds and keeps it: every pair banding finds, binned
// by exact Jaccard), each recorded with its design, stratum and the stratum's size, so
// sweeps can estimate over the whole dataset. Each new pair is scored and wanted Overlap
// times (twice for a DoubleShare of them).
func Draw(ctx context.Context, store *db.DB, sigs *sigcache.Cache, actor string, c db.Campaign, plan DrawPlan) (int, error) {
	// A dataset without pairs first: the plan's fields do not matter there.
	ds, err := store.Dataset(ctx, c.DatasetID)
	if err != nil {
		return 0, fmt.Errorf("draw pairs for campaign %d: %w", c.ID, err)
	}
	if err := Pairless(ds); err != nil {
		return 0, err
	}
	if err := plan.Check(); err != nil {
		return 0, err
	}
	rep := c.Spec
	if plan.Rep != nil {
		rep = *plan.Rep
	}
	// Signatures first (they are needed anyway): a dataset too small to draw from is
	// refused before its frame is built.
	set, err := sigs.Signatures(ctx, c.DatasetID, rep, nil)
	if err != nil {
		return 0, err
	}
	if len(set.IDs) < 2 {
		return 0, invalid("the dataset has %s: there is no pair to draw", documents(len(set.IDs)))
	}
	f, set, err := sigs.Frame(ctx, c.DatasetID, rep, plan.scheme())
	if err != nil {
		return 0, fmt.Errorf("draw pairs for campaign %d: %w", c.ID, err)
	}
	docs := set.IDs
	existing, err := store.PairDocs(ctx, c.ID)
	if err != nil {
		return 0, err
	}
	have := make(map[[2]int64]bool, len(existing))
	for _, p := range existing {
		have[[2]int64{p.DocA, p.DocB}] = true // doc_a < doc_b in the store
	}
	drawn, err := labels.Draw(f, set.Sigs, labels.Plan{PerBin: plan.PerBin, TargetBin: plan.Bin, Counts: plan.Counts,
		Boundary: plan.Boundary, Threshold: c.Threshold, Random: plan.Random, Overlap: c.Overlap, DoubleShare: c.DoubleShare, Seed: plan.Seed},
		func(a, b int) bool { return have[[2]int64{min(docs[a], docs[b]), max(docs[a], docs[b])}] })
	if err != nil {
		return 0, fmt.Errorf("draw pairs for campaign %d: %w", c.ID, err)
	}
	if rep != c.Spec {
		// The campaign's pages show similarity under its own representation.
		if err := scoreDrawn(ctx, store, c.Spec, docs, drawn); err != nil {
			return 0, fmt.Errorf("draw pairs for campaign %d: %w", c.ID, err)
		}
	}
	pairs := make([]db.NewPair, len(drawn))
	for i, d := range drawn {
		pairs[i] = db.NewPair{DocA: docs[d.A], DocB: docs[d.B], Origin: d.Origin, Scored: true,
			Similarity: d.Similarity, Estimate: d.Estimate, Wanted: d.Wanted,
			Design: d.Design, Stratum: d.Stratum, FrameSize: d.FrameSize}
	}
	added, err := store.AddPairs(ctx, c.ID, pairs, actor)
	if err != nil {
		return 0, err
	}
	return added, Rank(ctx, store, c)
}

// scoreDrawnBatch is how many documents' texts scoreDrawn reads at a time.
const scoreDrawnBatch = 256

// scoreDrawn fills the exact Jaccard of each drawn pair under spec (documents by index
// into ids), reading the texts of the drawn documents a batch at a time and keeping only
// their shingle sets.
func scoreDrawn(ctx context.Context, store *db.DB, spec lsh.Spec, ids []int64, drawn []labels.Drawn) error {
	h, err := lsh.NewHasher(spec)
	if err != nil {
		return err
	}
	var need []int
	sets := map[int][]uint64{}
	for _, d := range drawn {
		for _, i := range []int{d.A, d.B} {
			if _, ok := sets[i]; !ok {
				sets[i] = nil
				need = append(need, i)
			}
		}
	}
	for lo := 0; lo < len(need); lo += scoreDrawnBatch {
		part := need[lo:min(lo+scoreDrawnBatch, len(need))]
		batch := make([]int64, len(part))
		for j, i := range part {
			batch[j] = ids[i]
		}
		texts, err := store.DocumentTexts(ctx, batch)
		if err != nil {
			return err
		}
		for j, i := range part {
			sets[i] = h.ShingleSet(texts[j])
		}
	}
	for k := range drawn {
		drawn[k].Similarity = lsh.ExactJaccard(sets[drawn[k].A], sets[drawn[k].B])
	}
	return nil
}
