package bulk

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"sync"
	"sync/atomic"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// shingles is stage 4: a second streaming pass over the corpus that writes the shingle
// set (sorted distinct 64-bit hashes, lsh.Hasher.ShingleSet) of every document in a
// candidate pair to shingles.bin, and each document's offset in it to shingles.idx
// (Docs+1 little-endian int64; a document without a set has an empty range).
func (r *run) shingles(ctx context.Context) error {
	if err := r.sameInput(); err != nil {
		return err
	}
	n := r.sum.Docs
	need := make([]bool, n)
	err := r.eachCandidate(func(pairs []uint64) error {
		for _, p := range pairs {
			need[p>>32], need[p&0xFFFFFFFF] = true, true
		}
		return nil
	})
	if err != nil {
		return err
	}
	src, chunks, stop, err := r.stream(ctx, 0)
	if err != nil {
		return err
	}
	defer stop()
	hashers := make([]*lsh.Hasher, r.opt.Workers)
	for i := range hashers {
		if hashers[i], err = lsh.NewHasher(r.opt.Params.Spec); err != nil {
			return err
		}
	}
	offsets := make([]int64, 0, n+1)
	var off int64
	doc := 0
	err = writeFile(r.path(setsFile), func(w *bufio.Writer) error {
		for c := range chunks {
			if c.err != nil {
				return c.err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if doc+len(c.docs) > n {
				return fmt.Errorf("%s: more documents than the first pass read (%d): did the input change?", r.input.Name, n)
			}
			sets := make([][]uint64, len(c.docs))
			onWorkers(hashers, len(c.docs), func(h *lsh.Hasher, i int) {
				if need[doc+i] {
					sets[i] = h.ShingleSet(c.docs[i].Text)
				}
			})
			var b [8]byte
			for _, set := range sets {
				offsets = append(offsets, off)
				for _, v := range set {
					binary.LittleEndian.PutUint64(b[:], v)
					w.Write(b[:])
				}
				off += int64(len(set)) * 8
			}
			doc += len(c.docs)
			r.reportDocs(c.pos, src.size, int64(doc))
		}
		return ctx.Err()
	})
	if err != nil {
		return err
	}
	if doc != n {
		return fmt.Errorf("%s: %d documents, the first pass read %d: did the input change?", r.input.Name, doc, n)
	}
	offsets = append(offsets, off)
	return writeFile(r.path(setsIdxFile), func(w *bufio.Writer) error {
		var b [8]byte
		for _, o := range offsets {
			binary.LittleEndian.PutUint64(b[:], uint64(o))
			w.Write(b[:])
		}
		return nil
	})
}

// sameInput refuses an input that changed since the run's key was taken: the second
// pass must read the documents the first one did.
func (r *run) sameInput() error {
	st, err := os.Stat(r.opt.In)
	if err != nil {
		return err
	}
	if st.Size() != r.input.Size || !st.ModTime().UTC().Equal(r.input.ModTime) {
		return fmt.Errorf("%s changed while the run was reading it (size or modification time): run again to start over", r.input.Name)
	}
	return nil
}

// simSource measures the similarity of two documents from the files on disk: the
// MinHash estimate from signatures.bin, exact Jaccard from shingles.bin (a follower of an
// exact group reads its first member's set, which is the same). Safe for concurrent use.
type simSource struct {
	sigs    sigReader
	sets    *os.File
	offsets []int64
	rep     []int32
	missing atomic.Int64 // exact Jaccard asked of a document without a stored set
}

// openSims reads exact.jsonl and opens the similarity source over it; it returns the
// exact groups too.
func (r *run) openSims() (*simSource, [][]int, error) {
	groups, err := r.readExact()
	if err != nil {
		return nil, nil, err
	}
	sf, err := os.Open(r.path(sigFile))
	if err != nil {
		return nil, nil, err
	}
	s := &simSource{sigs: sigReader{f: sf, k: r.opt.Params.Spec.Hashes}, rep: follower(r.sum.Docs, groups)}
	if s.sets, err = os.Open(r.path(setsFile)); err != nil {
		sf.Close()
		return nil, nil, err
	}
	b, err := os.ReadFile(r.path(setsIdxFile))
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	if len(b) != (r.sum.Docs+1)*8 {
		s.Close()
		return nil, nil, fmt.Errorf("%s: %d bytes for %d documents", setsIdxFile, len(b), r.sum.Docs)
	}
	s.offsets = make([]int64, r.sum.Docs+1)
	for i := range s.offsets {
		s.offsets[i] = int64(binary.LittleEndian.Uint64(b[i*8:]))
	}
	return s, groups, nil
}

func (s *simSource) Close() error {
	s.sigs.f.Close()
	return s.sets.Close()
}

// scratch is one goroutine's buffers.
type scratch struct {
	a, b     lsh.Signature
	raw      []byte
	sa, sb   []uint64
	lastA    int
	haveA    bool
	lastSetA int
	haveSetA bool
}

func (s *simSource) set(doc int, dst []uint64, raw []byte) ([]uint64, []byte, error) {
	d := s.rep[doc]
	lo, hi := s.offsets[d], s.offsets[d+1]
	if hi == lo {
		s.missing.Add(1)
		return dst[:0], raw, nil
	}
	n := int(hi - lo)
	if cap(raw) < n {
		raw = make([]byte, n)
	}
	raw = raw[:n]
	if _, err := s.sets.ReadAt(raw, lo); err != nil {
		return dst, raw, err
	}
	dst = dst[:0]
	for i := 0; i < n; i += 8 {
		dst = append(dst, binary.LittleEndian.Uint64(raw[i:]))
	}
	return dst, raw, nil
}

func (s *simSource) estimate(a, b int, sc *scratch) (float64, error) {
	var err error
	if !sc.haveA || sc.lastA != a {
		if sc.a, sc.raw, err = s.sigs.read(a, sc.a, sc.raw); err != nil {
			return 0, err
		}
		sc.lastA, sc.haveA = a, true
	}
	if sc.b, sc.raw, err = s.sigs.read(b, sc.b, sc.raw); err != nil {
		return 0, err
	}
	return lsh.Estimate(sc.a, sc.b), nil
}

func (s *simSource) exact(a, b int, sc *scratch) (float64, error) {
	var err error
	if !sc.haveSetA || sc.lastSetA != a {
		if sc.sa, sc.raw, err = s.set(a, sc.sa, sc.raw); err != nil {
			return 0, err
		}
		sc.lastSetA, sc.haveSetA = a, true
	}
	if sc.sb, sc.raw, err = s.set(b, sc.sb, sc.raw); err != nil {
		return 0, err
	}
	if len(sc.sa) == 0 && len(sc.sb) == 0 {
		return 0, nil
	}
	return lsh.ExactJaccard(sc.sa, sc.sb), nil
}

func (s *simSource) sim(v review.Verification, a, b int, sc *scratch) (float64, error) {
	if v == review.Exact {
		return s.exact(a, b, sc)
	}
	return s.estimate(a, b, sc)
}

// verify is stage 5: every candidate's similarity under the configuration's
// verification, written to edges.bin (a, b as little-endian uint32, the similarity as a
// float64), in candidate order.
func (r *run) verify(ctx context.Context) error {
	src, _, err := r.openSims()
	if err != nil {
		return err
	}
	defer src.Close()
	v := r.opt.Params.Verification
	t := r.opt.Params.Threshold
	scratches := make([]scratch, r.opt.Workers)
	var done, accepted int64
	err = writeFile(r.path(edgesFile), func(w *bufio.Writer) error {
		return r.eachCandidate(func(pairs []uint64) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			sims := make([]float64, len(pairs))
			errs := make([]error, len(scratches))
			per := (len(pairs) + len(scratches) - 1) / len(scratches)
			var wg sync.WaitGroup
			for wi := range scratches {
				lo := wi * per
				if lo >= len(pairs) {
					break
				}
				wg.Go(func() {
					sc := &scratches[wi]
					for i := lo; i < min(lo+per, len(pairs)); i++ {
						s, err := src.sim(v, int(pairs[i]>>32), int(pairs[i]&0xFFFFFFFF), sc)
						if err != nil {
							errs[wi] = err
							return
						}
						sims[i] = s
					}
				})
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					return err
				}
			}
			var b [16]byte
			for i, p := range pairs {
				binary.LittleEndian.PutUint32(b[:], uint32(p>>32))
				binary.LittleEndian.PutUint32(b[4:], uint32(p))
				binary.LittleEndian.PutUint64(b[8:], math.Float64bits(sims[i]))
				w.Write(b[:])
				if sims[i] >= t {
					accepted++
				}
			}
			done += int64(len(pairs))
			r.report(done, r.sum.Candidates, "pairs", false, false)
			return nil
		})
	})
	if err != nil {
		return err
	}
	if m := src.missing.Load(); m > 0 {
		return fmt.Errorf("%d shingle sets missing for candidate pairs: %s is inconsistent", m, setsFile)
	}
	r.sum.Accepted = accepted
	return nil
}
