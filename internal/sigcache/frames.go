package sigcache

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"

	"github.com/dedupstudio/dedupstudio/internal/frame"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// framesKept bounds the frames held in memory: each holds its dataset's shingle sets
// (8 bytes a distinct shingle), so only the most recently used few.
const framesKept = 2

// frameKey names a frame: the dataset and the exact documents it holds (their ids'
// fingerprint: a dataset whose documents changed is another frame), the representation
// and the bin scheme.
type frameKey struct {
	dataset int64
	ids     uint64
	spec    lsh.Spec
	scheme  frame.Scheme
}

type frameEntry struct {
	key  frameKey
	once sync.Once
	f    *frame.Frame
	err  error
}

// frames is the cache's memory of built frames, most recent last.
type frames struct {
	mu   sync.Mutex
	list []*frameEntry
}

// Frame returns the sampling frame of a dataset's pairs under spec, cut into scheme's
// bins of exact Jaccard (frame.Build), with the signatures it was built from. Building
// reads every text once and holds the dataset's shingle sets; the most recent frames
// are kept, and callers asking for one being built wait for it.
func (c *Cache) Frame(ctx context.Context, datasetID int64, spec lsh.Spec, scheme frame.Scheme) (*frame.Frame, Set, error) {
	set, err := c.Signatures(ctx, datasetID, spec, nil)
	if err != nil {
		return nil, Set{}, err
	}
	h := fnv.New64a()
	for _, id := range set.IDs {
		fmt.Fprint(h, id, ",")
	}
	key := frameKey{dataset: datasetID, ids: h.Sum64(), spec: spec, scheme: scheme}
	c.frames.mu.Lock()
	i := slices.IndexFunc(c.frames.list, func(e *frameEntry) bool { return e.key == key })
	var e *frameEntry
	if i >= 0 {
		e = c.frames.list[i]
		c.frames.list = append(slices.Delete(c.frames.list, i, i+1), e)
	} else {
		e = &frameEntry{key: key}
		c.frames.list = append(c.frames.list, e)
		if len(c.frames.list) > framesKept {
			c.frames.list = c.frames.list[len(c.frames.list)-framesKept:]
		}
	}
	c.frames.mu.Unlock()
	e.once.Do(func() { e.f, e.err = c.buildFrame(ctx, datasetID, set, scheme) })
	if e.err != nil {
		c.frames.mu.Lock()
		c.frames.list = slices.DeleteFunc(c.frames.list, func(x *frameEntry) bool { return x == e })
		c.frames.mu.Unlock()
		return nil, Set{}, e.err
	}
	return e.f, set, nil
}

func (c *Cache) buildFrame(ctx context.Context, datasetID int64, set Set, scheme frame.Scheme) (*frame.Frame, error) {
	texts, err := c.store.DocumentTexts(ctx, set.IDs)
	if err != nil {
		return nil, fmt.Errorf("frame of dataset %d: %w", datasetID, err)
	}
	sets, err := frame.NewSets(ctx, len(texts), func(i int) string { return texts[i] }, set.Spec, 0)
	if err != nil {
		return nil, fmt.Errorf("frame of dataset %d: %w", datasetID, err)
	}
	f, err := frame.Build(ctx, set.Sigs, sets, scheme, frame.Options{})
	if err != nil {
		return nil, fmt.Errorf("frame of dataset %d: %w", datasetID, err)
	}
	return f, nil
}
