package campaign

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// MaxOverlap is the most labels a campaign may want per pair.
const MaxOverlap = 10

// Settings are what a reviewer changes on a campaign.
type Settings struct {
	Spec        lsh.Spec          // the representation pairs are scored under
	Threshold   float64           // the decision boundary, in [0, 1]
	Overlap     int               // labels wanted per pair, 1 to MaxOverlap
	DoubleShare float64           // with Overlap 1, the share of new pairs wanted twice, in [0, 1]
	Categories  []labels.Category // nil keeps the campaign's list
}

// Check reports the first setting out of range as an *InvalidError naming it. NaN is
// out of every range, so a form value that is not a number can be passed as NaN.
func (s Settings) Check() error {
	if err := s.Spec.Validate(); err != nil {
		return &InvalidError{err}
	}
	switch {
	case !(s.Threshold >= 0 && s.Threshold <= 1):
		return invalid("threshold: want a number between 0 and 1")
	case s.Overlap < 1 || s.Overlap > MaxOverlap:
		return invalid("labels per pair: want a whole number from 1 to %d", MaxOverlap)
	case !(s.DoubleShare >= 0 && s.DoubleShare <= 1):
		return invalid("share labeled twice: want a number between 0 and 1")
	}
	return nil
}

// Update applies new settings to campaign c, by actor. A category that standing labels
// use cannot leave the list. When the representation changes, every pair is rescored
// under the new one (documents read in batches), and the scores are stored together
// with the settings in one transaction. If someone else changed the representation
// since c was read, nothing is written and the error is db.ErrStale.
func Update(ctx context.Context, store *db.DB, actor string, c db.Campaign, s Settings) error {
	if err := s.Check(); err != nil {
		return err
	}
	next := c
	next.Spec, next.Threshold, next.Overlap, next.DoubleShare = s.Spec, s.Threshold, s.Overlap, s.DoubleShare
	if s.Categories != nil {
		next.Categories = s.Categories
		if err := keepsUsedCategories(ctx, store, c.ID, s.Categories); err != nil {
			return err
		}
	}
	var scores []db.PairScore
	if next.Spec != c.Spec {
		refs, err := store.PairDocs(ctx, c.ID)
		if err != nil {
			return err
		}
		if scores, err = score(ctx, store, next.Spec, refs); err != nil {
			return fmt.Errorf("rescore campaign %d: %w", c.ID, err)
		}
	}
	if err := store.UpdateCampaign(ctx, actor, c.Spec, next, scores); err != nil {
		return err
	}
	if next.Spec == c.Spec && next.Threshold == c.Threshold {
		return nil // the queue's order depends on scores and the threshold only
	}
	return Rank(ctx, store, next)
}

// keepsUsedCategories refuses a category list that drops a category with standing
// labels: those labels would lose their meaning.
func keepsUsedCategories(ctx context.Context, store *db.DB, campaignID int64, cats []labels.Category) error {
	cur, err := store.CurrentLabels(ctx, campaignID)
	if err != nil {
		return err
	}
	used := map[string]int{}
	for _, l := range cur {
		used[l.Category]++
	}
	keys := make([]string, 0, len(used))
	for k := range used {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		if _, ok := labels.Find(cats, key); !ok {
			return invalid("category %q has %s: keep it in the list", key, review.Quantity(used[key], "standing label", "standing labels"))
		}
	}
	return nil
}

// ScorePairs computes the exact Jaccard and MinHash estimate, under the campaign's
// representation, of every pair of the campaign that has none yet (imported pairs) and
// stores them, then ranks the queue again; it returns how many pairs it scored. Should
// the representation change while it works, it starts over under the new one.
func ScorePairs(ctx context.Context, store *db.DB, campaignID int64) (int, error) {
	for {
		c, err := store.Campaign(ctx, campaignID)
		if err != nil {
			return 0, err
		}
		refs, err := store.PairsWithoutScores(ctx, c.ID)
		if err != nil || len(refs) == 0 {
			return 0, err
		}
		scores, err := score(ctx, store, c.Spec, refs)
		if err != nil {
			return 0, fmt.Errorf("score pairs of campaign %d: %w", c.ID, err)
		}
		err = store.SetPairScores(ctx, c.ID, c.Spec, scores)
		if errors.Is(err, db.ErrStale) {
			continue
		}
		if err != nil {
			return 0, err
		}
		return len(scores), Rank(ctx, store, c)
	}
}

// scoreBatch is how many pairs are scored per read of their documents' texts.
const scoreBatch = 256

// score computes the pairs' scores under spec, reading the texts of scoreBatch pairs at a
// time in one query, and stops between batches when ctx is cancelled.
func score(ctx context.Context, store *db.DB, spec lsh.Spec, refs []db.PairRef) ([]db.PairScore, error) {
	h, err := lsh.NewHasher(spec)
	if err != nil {
		return nil, err
	}
	out := make([]db.PairScore, 0, len(refs))
	ids := make([]int64, 0, 2*scoreBatch)
	for lo := 0; lo < len(refs); lo += scoreBatch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		batch := refs[lo:min(lo+scoreBatch, len(refs))]
		ids = ids[:0]
		for _, r := range batch {
			ids = append(ids, r.DocA, r.DocB)
		}
		texts, err := store.DocumentTexts(ctx, ids)
		if err != nil {
			return nil, err
		}
		for i, r := range batch {
			sim, est := labels.Score(h, texts[2*i], texts[2*i+1])
			out = append(out, db.PairScore{ID: r.ID, Similarity: sim, Estimate: est})
		}
	}
	return out, nil
}
