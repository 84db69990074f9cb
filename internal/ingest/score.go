package ingest

import (
	"context"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// CampaignSpec is the representation a campaign scores pairs with.
func CampaignSpec(c db.Campaign) (lsh.Spec, error) {
	if c.Spec == "" {
		return lsh.DefaultSpec(), nil
	}
	return lsh.ParseSpec(c.Spec)
}

// ScorePairs computes the exact Jaccard and MinHash estimate of every pair of the
// campaign that has none yet (imported pairs, or all after the spec changed).
func ScorePairs(ctx context.Context, store *db.DB, c db.Campaign) (int, error) {
	spec, err := CampaignSpec(c)
	if err != nil {
		return 0, err
	}
	refs, err := store.PairsWithoutSimilarity(ctx, c.ID)
	if err != nil || len(refs) == 0 {
		return 0, err
	}
	h, err := lsh.NewHasher(spec)
	if err != nil {
		return 0, err
	}
	texts := map[int64]string{}
	text := func(id int64) (string, error) {
		if t, ok := texts[id]; ok {
			return t, nil
		}
		d, err := store.Document(ctx, id)
		if err != nil {
			return "", err
		}
		texts[id] = d.Text
		return d.Text, nil
	}
	scores := make([]db.PairScore, 0, len(refs))
	for _, r := range refs {
		a, err := text(r.DocA)
		if err != nil {
			return 0, err
		}
		b, err := text(r.DocB)
		if err != nil {
			return 0, err
		}
		sim, est := labels.Score(h, a, b)
		scores = append(scores, db.PairScore{ID: r.ID, Similarity: sim, Estimate: est})
	}
	return len(scores), store.SetPairScores(ctx, scores)
}
