// Package sigcache keeps the MinHash signatures of a dataset's documents in the store,
// per representation (lsh.Spec), so drawing pairs, sweeps and clustering sign each
// document once per Spec however often they ask.
//
// Signing is the expensive step (about 12 MB/s per core for word 5-shingles at k=128),
// and a sweep over several Specs of a 100k-document dataset asks for each of them. The
// cache therefore computes what is missing in batches: it reads the texts of one batch
// of documents, signs them on all cores, stores the batch in one transaction and lets the
// texts go before the next batch, so memory stays bounded by the batch, not the
// dataset, and a cancelled run keeps every batch it finished. The context is checked
// between batches (lsh.Spec.Signatures itself takes none), so cancelling waits at most
// for one batch.
//
// What a caller holds in the end is only the signatures: k*4 bytes per document (51 MB
// for 100k documents at k=128), aligned with the documents' ids.
package sigcache

import (
	"context"
	"fmt"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// DefaultBatch is how many documents are read, signed and stored together: large enough
// to keep every core busy and a transaction worth its commit, small enough that a batch
// of 20 kB documents is 10 MB of text and a cancel is answered within a second.
const DefaultBatch = 512

// Progress is told, after every batch, how many documents of total have been signed so
// far. total counts only the documents whose signatures were missing; a dataset that is
// fully cached reports nothing.
type Progress func(done, total int)

// Cache reads and fills the signature store. It holds no signatures itself and is safe
// for concurrent use (two callers filling the same gap both sign it; the second write
// replaces the first with the same values).
type Cache struct {
	store  *db.DB
	batch  int
	frames frames // the most recent sampling frames (Frame)
}

// New returns a cache over store, signing DefaultBatch documents at a time.
func New(store *db.DB) *Cache {
	return &Cache{store: store, batch: DefaultBatch}
}

// Set is every document of a dataset with its signature under one Spec: Sigs[i] is the
// signature of document IDs[i], ids ascending.
type Set struct {
	Spec lsh.Spec
	IDs  []int64
	Sigs []lsh.Signature
}

// Signatures returns the signature of every document of the dataset under spec, reading
// stored ones and computing (and storing) the rest in batches. It stops with ctx's
// error when ctx is cancelled; the batches done until then stay stored.
func (c *Cache) Signatures(ctx context.Context, datasetID int64, spec lsh.Spec, progress Progress) (Set, error) {
	if err := spec.Validate(); err != nil {
		return Set{}, err
	}
	ids, sigs, err := c.store.DatasetSignatures(ctx, datasetID, spec)
	if err != nil {
		return Set{}, err
	}
	var holes []int // positions without a stored signature
	for i, s := range sigs {
		if s == nil {
			holes = append(holes, i)
		}
	}
	missing := make([]int64, len(holes))
	for j, i := range holes {
		missing[j] = ids[i]
	}
	err = c.fill(ctx, spec, missing, progress, func(j int, sig lsh.Signature) { sigs[holes[j]] = sig })
	if err != nil {
		return Set{}, fmt.Errorf("signatures of dataset %d under %s: %w", datasetID, spec.ID(), err)
	}
	return Set{Spec: spec, IDs: ids, Sigs: sigs}, nil
}

// Ensure computes and stores the missing signatures of the dataset under each spec in
// turn, holding none of them: a sweep calls it once for all its Specs (with one progress
// over the lot), then reads one Spec at a time with Signatures. Progress counts the
// documents of every Spec together.
func (c *Cache) Ensure(ctx context.Context, datasetID int64, specs []lsh.Spec, progress Progress) error {
	for _, spec := range specs {
		if err := spec.Validate(); err != nil {
			return err
		}
	}
	missing := make([][]int64, len(specs))
	total := 0
	for i, spec := range specs {
		ids, err := c.store.MissingSignatures(ctx, datasetID, spec)
		if err != nil {
			return err
		}
		missing[i] = ids
		total += len(ids)
	}
	base := 0
	for i, spec := range specs {
		overall := func(done, _ int) {
			if progress != nil {
				progress(base+done, total)
			}
		}
		if err := c.fill(ctx, spec, missing[i], overall, nil); err != nil {
			return fmt.Errorf("signatures of dataset %d under %s: %w", datasetID, spec.ID(), err)
		}
		base += len(missing[i])
	}
	return nil
}

// fill signs the documents ids under spec batch by batch, stores each batch, and hands
// each signature (by its position in ids) to got when got is not nil.
func (c *Cache) fill(ctx context.Context, spec lsh.Spec, ids []int64, progress Progress, got func(j int, sig lsh.Signature)) error {
	for lo := 0; lo < len(ids); lo += c.batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch := ids[lo:min(lo+c.batch, len(ids))]
		texts, err := c.store.DocumentTexts(ctx, batch)
		if err != nil {
			return err
		}
		sigs, err := spec.Signatures(texts)
		if err != nil {
			return err
		}
		if err := c.store.StoreSignatures(ctx, spec, batch, sigs); err != nil {
			return err
		}
		if got != nil {
			for k, sig := range sigs {
				got(lo+k, sig)
			}
		}
		if progress != nil {
			progress(lo+len(batch), len(ids))
		}
	}
	return nil
}
