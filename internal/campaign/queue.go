package campaign

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
)

// The queue. A campaign's pairs are ranked once, when they change (drawn, imported,
// rescored, a new threshold), so that serving the next pair is a walk down an index.
// The ranking interleaves strata round-robin, so the first pairs anyone sees span the
// similarity range instead of the densest corner of it (in the demo: byte-identical
// MIT licenses): pairs near the threshold first in every round (the decisions that move
// it), then the similarity bins from the threshold outwards, then exact copies, then
// pairs never scored. Within a stratum the order is a fixed shuffle of the pair ids, so
// pairs drawn one after another (often from one family of documents) spread out.
// Serving adds one rule the ranking cannot know: after an exact copy, the next pair is
// not an exact copy while others wait.

// NearBand is how close to the threshold (in Jaccard) a pair must be to count as near
// it in the queue's first stratum.
const NearBand = 0.05

// strata of the queue besides the similarity bins 0..Bins-1.
const (
	stratumNear     = -1
	stratumExact    = Bins
	stratumUnscored = Bins + 1
)

// stratum places a pair of similarity sim (NaN when not scored) in the queue's strata.
func stratum(p db.QueuePair, threshold float64) int {
	switch {
	case p.Exact:
		return stratumExact
	case !p.Similarity.Valid || math.IsNaN(p.Similarity.Float64):
		return stratumUnscored
	case math.Abs(p.Similarity.Float64-threshold) <= NearBand:
		return stratumNear
	}
	return labels.Bin(p.Similarity.Float64, Bins)
}

// strataOrder is the order strata take their turn in each round: near the threshold,
// the bins by the distance of their middle to the threshold (ties to the higher bin),
// exact copies, unscored pairs.
func strataOrder(threshold float64) []int {
	order := []int{stratumNear}
	bins := make([]int, Bins)
	for b := range bins {
		bins[b] = b
	}
	mid := func(b int) float64 { return (float64(b) + 0.5) / Bins }
	slices.SortStableFunc(bins, func(a, b int) int {
		return cmp.Or(cmp.Compare(math.Abs(mid(a)-threshold), math.Abs(mid(b)-threshold)), cmp.Compare(b, a))
	})
	order = append(order, bins...)
	return append(order, stratumExact, stratumUnscored)
}

// mix is SplitMix64's finalizer: a fixed shuffle of pair ids within a stratum.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// QueueOrder returns the ids of pairs in queue order for a campaign whose threshold is
// threshold: strata interleaved round-robin (see the comment above).
func QueueOrder(pairs []db.QueuePair, threshold float64) []int64 {
	by := map[int][]int64{}
	for _, p := range pairs {
		s := stratum(p, threshold)
		by[s] = append(by[s], p.ID)
	}
	for _, ids := range by {
		slices.SortFunc(ids, func(a, b int64) int { return cmp.Compare(mix(uint64(a)), mix(uint64(b))) })
	}
	order := strataOrder(threshold)
	out := make([]int64, 0, len(pairs))
	for round := 0; len(out) < len(pairs); round++ {
		for _, s := range order {
			if round < len(by[s]) {
				out = append(out, by[s][round])
			}
		}
	}
	return out
}

// Rank orders campaign c's queue (QueueOrder) and stores it. It runs whenever the
// pairs or what ranks them changed: after drawing, importing and scoring pairs, and
// after new settings.
func Rank(ctx context.Context, store *db.DB, c db.Campaign) error {
	pairs, err := store.QueuePairs(ctx, c.ID)
	if err != nil {
		return err
	}
	return store.SetQueueRanks(ctx, c.ID, QueueOrder(pairs, c.Threshold))
}

// RankUnranked ranks every campaign with pairs added since it was last ranked (a
// database from before the queue was ranked, or an import cut short before scoring).
func RankUnranked(ctx context.Context, store *db.DB) error {
	ids, err := store.UnrankedCampaigns(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		c, err := store.Campaign(ctx, id)
		if err != nil {
			return err
		}
		if err := Rank(ctx, store, c); err != nil {
			return err
		}
	}
	return nil
}

// Next returns the next pair of c for annotator, after the pair after (the one just
// decided or skipped; 0 when coming from elsewhere); ok is false when the annotator's
// queue is empty. Pairs the annotator skipped come after all others, and the pair after
// only when nothing else is left. Following an exact copy (after, or else the
// annotator's last pair in c), it serves a pair that is not one while any waits.
func Next(ctx context.Context, store *db.DB, c db.Campaign, annotator string, after int64) (pairID int64, ok bool, err error) {
	prev := after
	if prev == 0 {
		prev, err = store.LastServed(ctx, c.ID, annotator)
		if err != nil && !errors.Is(err, db.ErrNotFound) {
			return 0, false, err
		}
	}
	afterExact := false
	if prev != 0 {
		if afterExact, err = store.PairExact(ctx, c.ID, prev); err != nil && !errors.Is(err, db.ErrNotFound) {
			return 0, false, err
		}
	}
	tries := []db.QueueFilter{{After: after}, {After: after, Skipped: true}}
	if after != 0 {
		tries = append(tries, db.QueueFilter{Skipped: true})
	}
	for _, f := range tries {
		for _, notExact := range []bool{true, false} {
			if notExact && !afterExact {
				continue
			}
			f.NotExact = notExact
			id, err := store.NextPair(ctx, c.ID, annotator, f)
			if err == nil {
				return id, true, nil
			}
			if !errors.Is(err, db.ErrNotFound) {
				return 0, false, fmt.Errorf("next pair: %w", err)
			}
		}
	}
	return 0, false, nil
}
