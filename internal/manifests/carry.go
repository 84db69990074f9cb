package manifests

import (
	"context"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// Preparing a manifest again: a stale manifest's removals were computed on documents or
// labels that changed, so a new run computes them again on the live documents and the
// current labels, and the people's decisions on the old one carry over where they still
// apply: the same document removed in favour of the same keeper. A decision keeps who
// made it and when (they are its deciders in the new manifest too, for separation of
// duties). Keepers chosen by hand are not carried over: the clusters they were chosen in
// may be gone; the new manifest's page says how many there were.

// carrier holds the decisions of the manifest prepared again.
type carrier struct {
	from      int64
	decided   map[int64]db.Item // by document: approved or excluded removals
	overrides int
}

// carrierOf reads the decisions of manifest id, which must be of dataset datasetID.
func carrierOf(ctx context.Context, store *db.DB, datasetID, id int64) (*carrier, error) {
	m, err := store.Manifest(ctx, id)
	if err != nil {
		return nil, err
	}
	if m.DatasetID != datasetID {
		return nil, &review.InputError{Field: "manifest", Msg: "the manifest prepared again is of another dataset"}
	}
	items, err := store.Items(ctx, id)
	if err != nil {
		return nil, err
	}
	c := &carrier{from: id, decided: map[int64]db.Item{}}
	for _, it := range items {
		if it.Decision != review.Proposed {
			c.decided[it.Doc] = it
		}
	}
	rows, err := store.Clusters(ctx, id, db.ClusterFilter{})
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.Override != "" {
			c.overrides++
		}
	}
	return c, nil
}

// apply gives the removals of clusters the decisions that still apply, and says what it
// carried over.
func (c *carrier) apply(clusters []db.Cluster) *review.CarriedOver {
	out := &review.CarriedOver{From: c.from, Overrides: c.overrides}
	for i := range clusters {
		for j := range clusters[i].Items {
			it := &clusters[i].Items[j]
			was, ok := c.decided[it.Doc]
			if !ok || was.Keeper != it.Keeper {
				continue
			}
			it.Decision, it.DecidedBy, it.DecidedAt, it.BulkBar = was.Decision, was.DecidedBy, was.DecidedAt, was.BulkBar
			out.Decisions++
		}
	}
	out.NotApplying = len(c.decided) - out.Decisions
	return out
}
