// Package searchindex keeps a store's search indexes (internal/incremental, under the
// configuration of a signed-off manifest) in memory for the search API: each is rebuilt
// from its stored signatures once, at start (Warm) or on its first search, and every
// insert is stored (one transaction, on disk) before the index shows it.
//
// An index whose manifest was revoked answers no more searches (ErrRevoked): the
// configuration it was bound to is no longer signed off.
package searchindex

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/incremental"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// ErrRevoked is a search of an index whose manifest was revoked.
var ErrRevoked = errkind.New(errkind.Conflict, "the manifest's sign-off was revoked")

// Service holds the indexes of one store that this process has loaded. One Service
// serves a process: two would each insert without seeing the other's inserts.
type Service struct {
	store *db.DB
	log   *slog.Logger

	mu sync.Mutex
	m  map[int64]*entry
}

type entry struct {
	ready chan struct{} // closed once ix and err are set
	ix    *Index
	err   error
}

// Index is a loaded index: its record and the in-memory index.
type Index struct {
	Meta  db.SearchIndex
	store *db.DB
	ix    *incremental.Index
}

// New returns a Service over store that has loaded nothing yet; log may be nil.
func New(store *db.DB, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{store: store, log: log, m: map[int64]*entry{}}
}

// config is what an index with params searches under.
func config(p review.Params) incremental.Config {
	return incremental.Config{Spec: p.Spec, Shape: p.Shape, Threshold: p.Threshold, Exact: p.Verification == review.Exact}
}

// Open returns index id, loading it from the store the first time while other callers
// wait (each until its own ctx is done). An unknown index is db.ErrNotFound, a revoked
// one ErrRevoked; a failed load is forgotten, so the next call tries again.
func (s *Service) Open(ctx context.Context, id int64) (*Index, error) {
	// The load finishes for everyone waiting even if this caller goes away.
	return s.open(ctx, context.WithoutCancel(ctx), id)
}

// open is Open loading under loadCtx.
func (s *Service) open(ctx, loadCtx context.Context, id int64) (*Index, error) {
	s.mu.Lock()
	e, ok := s.m[id]
	if !ok {
		e = &entry{ready: make(chan struct{})}
		s.m[id] = e
	}
	s.mu.Unlock()
	if !ok {
		e.ix, e.err = s.load(loadCtx, id)
		if e.err != nil {
			s.mu.Lock()
			delete(s.m, id)
			s.mu.Unlock()
		}
		close(e.ready)
	}
	select {
	case <-e.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return e.ix, e.err
}

func (s *Service) load(ctx context.Context, id int64) (*Index, error) {
	start := time.Now()
	meta, err := s.store.SearchIndexByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if meta.ManifestState == review.Revoked {
		return nil, fmt.Errorf("search index %d (manifest %d): %w", id, meta.ManifestID, ErrRevoked)
	}
	ix, err := incremental.New(config(meta.Params))
	if err != nil {
		return nil, fmt.Errorf("search index %d: %w", id, err)
	}
	err = s.store.EachSearchDoc(ctx, id, func(d db.SearchDoc) error {
		return ix.Add(incremental.Entry{ID: d.ID, Signature: d.Signature, Shingles: d.Shingles})
	})
	if err != nil {
		return nil, fmt.Errorf("load search index %d: %w", id, err)
	}
	s.log.Info("search index loaded", "index", id, "documents", ix.Len(), "duration", time.Since(start).Round(time.Millisecond))
	return &Index{Meta: meta, store: s.store, ix: ix}, nil
}

// Warm loads every index that is not revoked, so the first searches after a start do
// not wait for it. It stops at the first failure (ctx's, or the store's); cancelling
// ctx (a shutdown) stops a load halfway, and searches waiting for it fail.
func (s *Service) Warm(ctx context.Context) error {
	list, err := s.store.SearchIndexes(ctx)
	if err != nil {
		return err
	}
	for _, x := range list {
		if x.ManifestState == review.Revoked {
			continue
		}
		if _, err := s.open(ctx, ctx, x.ID); err != nil {
			return err
		}
	}
	return nil
}

// CloseManifest drops the loaded indexes of manifest id, which was revoked: their next
// search loads them again and finds them refused.
func (s *Service) CloseManifest(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, e := range s.m {
		select {
		case <-e.ready:
			if e.err == nil && e.ix.Meta.ManifestID == id {
				delete(s.m, k)
			}
		default: // still loading: it read the manifest's state before the revocation
		}
	}
}

// Search answers each document's near-duplicates, inserting nothing.
func (ix *Index) Search(docs []incremental.Doc) []incremental.Result { return ix.ix.Search(docs) }

// SearchInsert answers each document's near-duplicates and inserts the ones that have
// none (incremental.Index.SearchInsert), storing them in one transaction before the
// index shows them.
func (ix *Index) SearchInsert(ctx context.Context, docs []incremental.Doc) ([]incremental.Result, error) {
	return ix.ix.SearchInsert(ctx, docs, func(ctx context.Context, es []incremental.Entry) error {
		rows := make([]db.SearchDoc, len(es))
		for i, e := range es {
			rows[i] = db.SearchDoc{ID: e.ID, Signature: e.Signature, Shingles: e.Shingles}
		}
		return ix.store.InsertSearchDocs(ctx, ix.Meta.ID, rows)
	})
}

// Len returns the number of documents the index holds.
func (ix *Index) Len() int { return ix.ix.Len() }
