package frame

import (
	"context"
	"errors"
	"fmt"
	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/zeebo/xxh3"
)

// DefaultSetBudget bounds the bytes of shingle sets Sets holds (8 bytes a distinct
// shingle, once per class of equal sets).
const DefaultSetBudget = 1 << 30

// ErrTooLarge is returned when a dataset's shingle sets do not fit the budget: exact bins
// need every document's set at hand.
var ErrTooLarge = errkind.New(errkind.TooLarge, "frame: the shingle sets do not fit the set budget")

// Sets are the shingle sets of a dataset's documents under one representation, held
// once per class of equal sets, with what exact bins need of every pair: how many
// shingles two documents share of their union, and whether their texts are identical
// after the representation's normalization (a certain duplicate, which needs no label).
// It is safe for concurrent use.
type Sets struct {
	rep   lsh.Spec
	class []int32    // per document: its class of equal shingle sets
	sets  [][]uint64 // per class
	text  []int32    // per document: its class of identical normalized text
	texts int        // number of text classes

	// dense holds intersection+1 of class pairs at y(y-1)/2+x when classes <=
	// denseClasses (0: not computed; read and written atomically), else memo under mu.
	dense []uint32
	mu    sync.Mutex
	memo  map[uint64]uint32
}

// denseClasses bounds the classes whose pair intersections are kept in a table (64 MB).
const denseClasses = 4096

// memoCap bounds the remembered intersections when the classes are too many for the table.
const memoCap = 16 << 20

// NewSets shingles n documents (text(i) is document i; it is called from several
// goroutines at once) under rep. It returns ErrTooLarge when the distinct sets would
// take more than budget bytes (DefaultSetBudget when budget <= 0).
func NewSets(ctx context.Context, n int, text func(i int) string, rep lsh.Spec, budget int64) (*Sets, error) {
	if budget <= 0 {
		budget = DefaultSetBudget
	}
	workers := runtime.GOMAXPROCS(0)
	sets := make([][]uint64, n)
	norm := make([]xxh3.Uint128, n)
	var used atomic.Int64
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	const chunk = 16
	for w := range workers {
		wg.Go(func() {
			h, err := lsh.NewHasher(rep)
			if err != nil {
				errs[w] = err
				return
			}
			z := lsh.NewNormalizer(rep.Norm)
			for {
				lo := int(next.Add(chunk)) - chunk
				if lo >= n || used.Load() > budget || ctx.Err() != nil {
					return
				}
				for i := lo; i < min(lo+chunk, n); i++ {
					t := text(i)
					s := h.ShingleSet(t)
					if s == nil {
						s = []uint64{}
					}
					sets[i] = slices.Clip(s)
					norm[i] = xxh3.HashString128(z.Normalize(t))
					used.Add(8*int64(len(s)) + 24)
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("frame: shingle under %s: %w", rep, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if used.Load() > budget {
		return nil, ErrTooLarge
	}
	s := &Sets{rep: rep, class: make([]int32, n), text: make([]int32, n)}
	byHash := map[uint64][]int32{}
	byText := map[xxh3.Uint128]int32{}
	for i, set := range sets {
		hs := setHash(set)
		c := int32(-1)
		for _, k := range byHash[hs] {
			if slices.Equal(s.sets[k], set) {
				c = k
				break
			}
		}
		if c < 0 {
			c = int32(len(s.sets))
			s.sets = append(s.sets, set)
			byHash[hs] = append(byHash[hs], c)
		}
		s.class[i] = c
		t, ok := byText[norm[i]]
		if !ok {
			t = int32(len(byText))
			byText[norm[i]] = t
		}
		s.text[i] = t
	}
	s.texts = len(byText)
	if c := len(s.sets); c <= denseClasses {
		s.dense = make([]uint32, c*(c-1)/2)
	} else {
		s.memo = map[uint64]uint32{}
	}
	return s, nil
}

func setHash(s []uint64) uint64 {
	var h uint64 = 0x9e3779b97f4a7c15
	for _, v := range s {
		h = (h ^ v) * 0xff51afd7ed558ccd
		h ^= h >> 32
	}
	return h ^ uint64(len(s))
}

// Rep returns the representation the sets were made under.
func (s *Sets) Rep() lsh.Spec { return s.rep }

// Docs returns the number of documents.
func (s *Sets) Docs() int { return len(s.class) }

// Classes returns the number of classes of equal shingle sets.
func (s *Sets) Classes() int { return len(s.sets) }

// Class returns document i's class of equal shingle sets.
func (s *Sets) Class(i int) int { return int(s.class[i]) }

// Set returns the shingle set of class c (not to be changed).
func (s *Sets) Set(c int) []uint64 { return s.sets[c] }

// Identical reports whether documents a and b have the same text after the
// representation's normalization (compared by a 128-bit hash).
func (s *Sets) Identical(a, b int) bool { return s.text[a] == s.text[b] }

// TextClass returns document i's class of identical normalized text.
func (s *Sets) TextClass(i int) int { return int(s.text[i]) }

// TextClasses returns the number of classes of identical normalized text.
func (s *Sets) TextClasses() int { return s.texts }

// Counts returns the shingles documents a and b share and their union.
func (s *Sets) Counts(a, b int) (inter, union int) {
	x, y := s.class[a], s.class[b]
	inter = s.classInter(x, y)
	return inter, len(s.sets[x]) + len(s.sets[y]) - inter
}

// CountsOnce returns what Counts does without remembering it, for callers that keep
// their own memo or ask for a pair once: the remembered pairs are a locked map that
// costs more to search, once large, than two sets of word shingles to intersect.
func (s *Sets) CountsOnce(a, b int) (inter, union int) {
	x, y := s.class[a], s.class[b]
	if x == y {
		inter = len(s.sets[x])
	} else {
		inter = lsh.Intersection(s.sets[x], s.sets[y])
	}
	return inter, len(s.sets[x]) + len(s.sets[y]) - inter
}

// Jaccard returns the exact Jaccard similarity of documents a and b (two empty sets: 1).
func (s *Sets) Jaccard(a, b int) float64 {
	inter, union := s.Counts(a, b)
	if union == 0 {
		return 1
	}
	return float64(inter) / float64(union)
}

// Bin returns the bin of documents a and b under scheme.
func (s *Sets) Bin(scheme Scheme, a, b int) int {
	inter, union := s.Counts(a, b)
	return scheme.Bin(inter, union)
}

// classInter returns the intersection of two classes' sets, remembered.
func (s *Sets) classInter(x, y int32) int {
	if x == y {
		return len(s.sets[x])
	}
	x, y = min(x, y), max(x, y)
	if s.dense != nil {
		// Without a lock: a value is written whole, and two goroutines that compute the
		// same pair write the same value.
		at := int(y)*(int(y)-1)/2 + int(x)
		if v := atomic.LoadUint32(&s.dense[at]); v != 0 {
			return int(v - 1)
		}
		v := lsh.Intersection(s.sets[x], s.sets[y])
		atomic.StoreUint32(&s.dense[at], uint32(v+1))
		return v
	}
	s.mu.Lock()
	key := uint64(x)<<32 | uint64(y)
	if v, ok := s.memo[key]; ok {
		s.mu.Unlock()
		return int(v)
	}
	s.mu.Unlock()
	v := lsh.Intersection(s.sets[x], s.sets[y])
	s.mu.Lock()
	if len(s.memo) < memoCap {
		s.memo[key] = uint32(v)
	}
	s.mu.Unlock()
	return v
}
