// Package campaign runs labeling campaigns over the store: opening one for a dataset,
// changing its settings (rescoring every pair in the same transaction when the
// representation changes), drawing pairs to label from the dataset's cached
// signatures, and the rules of the pair page: what an annotator sees of a pair (labels
// are blind until one decides), what a decision may be, the queue, and undo.
//
// A campaign's pairs carry their exact Jaccard similarity and MinHash estimate under the
// campaign's representation (lsh.Spec): the campaign page bins them by similarity and
// the adjudication queue sorts by distance to the threshold. Those scores change only
// together with the representation, so a settings change and its rescoring are one
// write: a failure leaves both as they were.
//
// Functions take the store and plain values and return db and labels values; requests
// that cannot be taken as given come back as an *InvalidError whose text is for the
// person who made them. No HTTP here: web parses, calls and renders.
package campaign

import (
	"context"
	"fmt"
	"math"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// Bins is the number of similarity bins over [0, 1] the campaign page and drawing use.
const Bins = 10

// InvalidError is a request the campaign cannot take as given: a setting out of range,
// a category list that would drop a category in use, a decision without a category.
// Its text is written for the person who sent the request.
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string { return e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

func invalid(format string, args ...any) error {
	return &InvalidError{fmt.Errorf(format, args...)}
}

// Start opens the default campaign of a ready dataset, with the default categories; a
// dataset that has one gets it back. An unknown dataset is db.ErrNotFound; one of fewer
// than two documents, where no pair can be drawn, is refused (Pairless) and nothing is
// stored.
func Start(ctx context.Context, store *db.DB, datasetID int64) (db.Campaign, error) {
	ds, err := store.Dataset(ctx, datasetID)
	if err != nil {
		return db.Campaign{}, err
	}
	if err := Pairless(ds); err != nil {
		return db.Campaign{}, err
	}
	return store.EnsureCampaign(ctx, datasetID, "default", nil)
}

// Pairless refuses, as an *InvalidError naming why, work on a dataset of fewer than two
// documents: a pair takes two, so there is nothing to label, draw or deduplicate.
func Pairless(ds db.Dataset) error {
	if ds.Docs >= 2 {
		return nil
	}
	return invalid("%s has %s, so no pairs: a pair takes two documents; import a sample of at least two", ds.Name, documents(ds.Docs))
}

// documents is a count of documents in words: "1 document", "0 documents".
func documents(n int) string { return review.Quantity(n, "document", "documents") }

// Summary computes the campaign page's numbers: progress against the labels wanted,
// the coverage matrix (category by similarity bin), agreement between annotators and
// the adjudication queue, nearest the threshold first.
func Summary(ctx context.Context, store *db.DB, c db.Campaign) (labels.Overview, error) {
	states, err := pairStates(ctx, store, c.ID)
	if err != nil {
		return labels.Overview{}, fmt.Errorf("summary of campaign %d: %w", c.ID, err)
	}
	return labels.Summarize(states, c.Categories, Bins, c.Threshold), nil
}

// pairStates joins a campaign's pairs with their standing labels.
func pairStates(ctx context.Context, store *db.DB, campaignID int64) ([]labels.PairState, error) {
	stats, err := store.PairStats(ctx, campaignID)
	if err != nil {
		return nil, err
	}
	cur, err := store.CurrentLabels(ctx, campaignID)
	if err != nil {
		return nil, err
	}
	byPair := map[int64][]labels.Label{}
	for _, l := range cur {
		byPair[l.PairID] = append(byPair[l.PairID], labels.Label{Annotator: l.Annotator, Kind: l.Kind, Category: l.Category, Duplicate: l.Duplicate})
	}
	out := make([]labels.PairState, len(stats))
	for i, p := range stats {
		sim := math.NaN()
		if p.Similarity.Valid {
			sim = p.Similarity.Float64
		}
		out[i] = labels.PairState{ID: p.ID, Similarity: sim, Wanted: p.Wanted, Labels: byPair[p.ID]}
	}
	return out, nil
}
