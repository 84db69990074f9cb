package sigcache

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/db"
	"github.com/dedupstudio/dedupstudio/internal/db/dbtest"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/realtext"
)

// realDataset stores the first n documents of the engine's test corpus (real web text)
// as a ready dataset and returns the store, the dataset and the texts by document id.
func realDataset(t *testing.T, n int) (*db.DB, db.Dataset, map[int64]string) {
	t.Helper()
	var docs []db.NewDocument
	for _, d := range realtext.Docs(t, n) {
		docs = append(docs, db.NewDocument{ExtID: d.ID, Text: d.Text})
	}
	store := dbtest.Open(t)
	ds := dbtest.Dataset(t, store, "corpus", docs)
	all, err := store.DatasetTexts(context.Background(), ds.ID)
	if err != nil || len(all) != n {
		t.Fatalf("%d documents stored (%v); want %d", len(all), err, n)
	}
	texts := map[int64]string{}
	for _, d := range all {
		texts[d.ID] = d.Text
	}
	return store, ds, texts
}

// checkSet compares every signature of s with the engine's own.
func checkSet(t *testing.T, s Set, texts map[int64]string) {
	t.Helper()
	if len(s.IDs) != len(texts) || len(s.Sigs) != len(s.IDs) || !slices.IsSorted(s.IDs) {
		t.Fatalf("set of %d ids, %d signatures; want %d, ids ascending", len(s.IDs), len(s.Sigs), len(texts))
	}
	h, err := lsh.NewHasher(s.Spec)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range s.IDs {
		if want := h.Signature(texts[id], nil); !slices.Equal(s.Sigs[i], want) {
			t.Fatalf("signature of document %d differs from the engine's", id)
		}
	}
}

type progressLog struct {
	mu    sync.Mutex
	calls [][2]int
}

func (p *progressLog) report(done, total int) {
	p.mu.Lock()
	p.calls = append(p.calls, [2]int{done, total})
	p.mu.Unlock()
}

// checkCached checks that the signatures of dataset id under spec are all in the store:
// Signatures returns them right and computes none (it reports no progress).
func checkCached(t *testing.T, c *Cache, id int64, spec lsh.Spec, texts map[int64]string) {
	t.Helper()
	var log progressLog
	s, err := c.Signatures(context.Background(), id, spec, log.report)
	if err != nil {
		t.Fatal(err)
	}
	checkSet(t, s, texts)
	if len(log.calls) != 0 {
		t.Errorf("%s: a fully cached dataset reported progress %v", spec, log.calls)
	}
}

// newCache is a Cache over a store of n real documents, filling batch at a time.
func newCache(t *testing.T, n, batch int) (*Cache, *db.DB, db.Dataset, map[int64]string) {
	t.Helper()
	store, ds, texts := realDataset(t, n)
	c := New(store)
	c.batch = batch
	return c, store, ds, texts
}

func TestSignaturesFillsInBatches(t *testing.T) {
	t.Parallel()
	c, store, ds, texts := newCache(t, 1100, 500)
	spec, _ := lsh.ParseSpec("level=word size=5 k=64")
	ctx := context.Background()

	var log progressLog
	s, err := c.Signatures(ctx, ds.ID, spec, log.report)
	if err != nil {
		t.Fatal(err)
	}
	checkSet(t, s, texts)
	if want := [][2]int{{500, 1100}, {1000, 1100}, {1100, 1100}}; !slices.Equal(log.calls, want) {
		t.Errorf("progress %v; want %v", log.calls, want)
	}
	// The second time everything comes from the store.
	checkCached(t, c, ds.ID, spec, texts)
	if missing, _ := store.MissingSignatures(ctx, ds.ID, spec); len(missing) != 0 {
		t.Errorf("%d signatures missing after Signatures", len(missing))
	}
	if _, err := c.Signatures(ctx, ds.ID, lsh.Spec{}, nil); err == nil {
		t.Error("Signatures under an invalid spec: no error")
	}
}

// Cancelling between batches stops the work and keeps the batches already done.
func TestSignaturesCancel(t *testing.T) {
	t.Parallel()
	c, store, ds, texts := newCache(t, 700, 200)
	spec, _ := lsh.ParseSpec("level=char size=5 k=32")
	ctx, cancel := context.WithCancel(context.Background())
	_, err := c.Signatures(ctx, ds.ID, spec, func(done, total int) {
		if done >= 400 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Signatures cancelled after two batches: %v; want context.Canceled", err)
	}
	missing, err := store.MissingSignatures(context.Background(), ds.ID, spec)
	if err != nil || len(missing) != 300 {
		t.Errorf("%d signatures missing after the cancel (%v); want 300 (two batches of 200 kept)", len(missing), err)
	}
	s, err := c.Signatures(context.Background(), ds.ID, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkSet(t, s, texts)
}

func TestEnsureSeveralSpecs(t *testing.T) {
	t.Parallel()
	c, _, ds, texts := newCache(t, 300, 128)
	word, _ := lsh.ParseSpec("level=word size=3 k=32")
	char, _ := lsh.ParseSpec("level=char size=4 k=16")
	ctx := context.Background()
	// One Spec half cached already.
	if _, err := c.Signatures(ctx, ds.ID, word, nil); err != nil {
		t.Fatal(err)
	}
	var log progressLog
	if err := c.Ensure(ctx, ds.ID, []lsh.Spec{word, char}, log.report); err != nil {
		t.Fatal(err)
	}
	if want := [][2]int{{128, 300}, {256, 300}, {300, 300}}; !slices.Equal(log.calls, want) {
		t.Errorf("progress over both specs %v; want %v (only the char spec was missing)", log.calls, want)
	}
	for _, spec := range []lsh.Spec{word, char} {
		checkCached(t, c, ds.ID, spec, texts)
	}
}

// Two callers filling the same gap at once both get the engine's signatures.
func TestSignaturesConcurrent(t *testing.T) {
	t.Parallel()
	c, _, ds, texts := newCache(t, 400, 100)
	spec, _ := lsh.ParseSpec("k=16")
	var wg sync.WaitGroup
	sets := make([]Set, 3)
	errs := make([]error, 3)
	for i := range sets {
		wg.Go(func() { sets[i], errs[i] = c.Signatures(context.Background(), ds.ID, spec, nil) })
	}
	wg.Wait()
	for i := range sets {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		checkSet(t, sets[i], texts)
	}
}
