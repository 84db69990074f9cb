package lsh

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/par"
)

// CandidateKeys returns the same pairs as CandidatesBounded(sigs, sh, maxBucket), as
// sorted pair keys (A<<32 | B, A < B), with the same count of skipped collisions, and
// no band counts. It differs in cost: CandidatesBounded collects every (pair, band)
// collision and sorts them all to count bands per pair, which on
// near-duplicate-heavy data is ten to thirty times the pairs (and at one row per band up
// to the bands times); here a pair is emitted only from the first band it collides in
// (earlier bands are checked against the document-major keys), and only the distinct
// pairs are held and sorted: 16 bytes a pair at the peak, plus 9 bytes a document and
// band. On the demo sample's default grid that halves the candidate time of a sweep and
// removes most of its allocation. It stops with ctx.Err() when ctx ends.
func CandidateKeys(ctx context.Context, sigs []Signature, sh Shape, maxBucket int) (keys []uint64, skipped int, err error) {
	return CandidateKeysUpTo(ctx, sigs, sh, maxBucket, 0)
}

// ErrTooManyPairs is CandidateKeysUpTo's answer for a shape that proposes more pairs
// than its limit.
var ErrTooManyPairs = errkind.New(errkind.Invalid, "the shape proposes more candidate pairs than the limit")

// CandidateKeysUpTo is CandidateKeys for at most limit pairs (limit <= 0: any number):
// as soon as the shape has proposed more, it stops and returns ErrTooManyPairs and no
// keys, having made little more than limit pairs instead of all of them.
func CandidateKeysUpTo(ctx context.Context, sigs []Signature, sh Shape, maxBucket, limit int) (keys []uint64, skipped int, err error) {
	bk, err := candidateKeys(ctx, sigs, sh, maxBucket, limit, false)
	if err != nil {
		return nil, 0, err
	}
	for _, s := range bk.skipped {
		skipped += s
	}
	return bk.Keys, skipped, nil
}

// BandedKeys are the candidate pairs of a shape with, for each pair, the first band
// that proposes it: so they hold the pairs of every shape made of the shape's first
// bands (same rows, fewer bands), which a sweep tries too (32x4 and 61x4 beside 64x4).
type BandedKeys struct {
	Shape Shape
	// Keys are the sorted pair keys, as CandidateKeysUpTo returns them; First[i] is the
	// first band in which Keys[i]'s documents share a key, neither past the first
	// maxBucket documents of that band's bucket.
	Keys    []uint64
	First   []uint16
	skipped []int // per band: collisions left out of buckets past maxBucket
}

// CandidateBands is CandidateKeysUpTo with each pair's first band (BandedKeys). sh may
// have at most 65,536 bands.
func CandidateBands(ctx context.Context, sigs []Signature, sh Shape, maxBucket, limit int) (*BandedKeys, error) {
	if sh.Bands > 1<<16 {
		return nil, fmt.Errorf("shape %v: CandidateBands takes at most 65536 bands", sh)
	}
	return candidateKeys(ctx, sigs, sh, maxBucket, limit, true)
}

// Within returns what CandidateKeysUpTo(sigs, Shape{bands, Rows}, maxBucket, limit)
// does, from the pairs of the wider shape: a pair is proposed by the first bands of a
// shape exactly when its first band is one of them (a bucket cut at maxBucket is cut
// the same in every shape that has the band, and the bands before it decide whether a
// pair was proposed before), and each band leaves out the same collisions. The keys
// are a new slice, or Keys itself when bands is every band.
func (bk *BandedKeys) Within(bands, limit int) (keys []uint64, skipped int, err error) {
	if bands < 1 || bands > bk.Shape.Bands {
		return nil, 0, fmt.Errorf("%d bands of shape %v", bands, bk.Shape)
	}
	for _, s := range bk.skipped[:bands] {
		skipped += s
	}
	if bands == bk.Shape.Bands {
		keys = bk.Keys
	} else {
		n := 0
		for _, f := range bk.First {
			n += b2i(int(f) < bands)
		}
		keys = make([]uint64, 0, n)
		for i, f := range bk.First {
			if int(f) < bands {
				keys = append(keys, bk.Keys[i])
			}
		}
	}
	if limit > 0 && len(keys) > limit {
		return nil, 0, ErrTooManyPairs
	}
	return keys, skipped, nil
}

func candidateKeys(ctx context.Context, sigs []Signature, sh Shape, maxBucket, limit int, withBands bool) (*BandedKeys, error) {
	n := len(sigs)
	if n == 0 {
		return &BandedKeys{Shape: sh, skipped: make([]int, sh.Bands)}, nil
	}
	if n >= 1<<31 {
		return nil, fmt.Errorf("%d signatures: at most 2^31-1", n)
	}
	for i, s := range sigs {
		if err := sh.Validate(len(s)); err != nil {
			return nil, fmt.Errorf("signature %d: %w", i, err)
		}
	}
	b := sh.Bands
	// keys[doc*b+band], band keys as Shape.bucketKeys computes them.
	bandKeys := make([]uint64, n*b)
	if err := par.Chunks(ctx, n, 256, func(lo, hi int) {
		var tmp []uint64
		for doc := lo; doc < hi; doc++ {
			tmp = sh.bucketKeys(sigs[doc], tmp[:0])
			copy(bandKeys[doc*b:], tmp)
		}
	}); err != nil {
		return nil, err
	}
	// tail[band*n+doc]: doc is past the first maxBucket documents of its bucket in band,
	// so band emitted no pair with it. Marked by the first pass; only when some bucket
	// was cut does a second pass need them.
	tail := make([]bool, n*b)
	var cut, over atomic.Bool
	var made atomic.Int64 // pairs made so far by every worker, when limit > 0
	pass := func(useTails bool) ([]uint64, []int) {
		made.Store(0)
		emittedEarlier := func(x, y uint32, band int) bool {
			kx, ky := bandKeys[int(x)*b:int(x)*b+band], bandKeys[int(y)*b:int(y)*b+band]
			if !useTails {
				return anyEqual64(kx, ky)
			}
			for i := range band {
				if kx[i] == ky[i] && !tail[i*n+int(x)] && !tail[i*n+int(y)] {
					return true
				}
			}
			return false
		}
		workers := min(runtime.GOMAXPROCS(0), b)
		// Each worker's pairs in blocks of pairBlock: appending to one slice copied it
		// again at every doubling (millions of pairs for the widest shapes).
		perWorker := make([][][]uint64, workers)
		skippedPer := make([]int, b) // per band
		next := make(chan int, b)
		for band := range b {
			next <- band
		}
		close(next)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				entries, buf := make([]keyEntry, n), make([]keyEntry, n)
				var blocks [][]uint64
				var out []uint64
				emit := func(k uint64) {
					if len(out) == cap(out) {
						if out != nil {
							blocks = append(blocks, out)
						}
						out = make([]uint64, 0, pairBlock)
					}
					out = append(out, k)
				}
				made1 := 0 // pairs this worker made
				for band := range next {
					if ctx.Err() != nil || over.Load() {
						return
					}
					for doc := range n {
						entries[doc] = keyEntry{bandKeys[doc*b+band], uint32(doc)}
					}
					radixSortEntries(entries, buf) // stable: documents stay in order within a bucket
					for i := 0; i < n; {
						j := i + 1
						for j < n && entries[j].key == entries[i].key {
							j++
						}
						end, before := j, made1
						if maxBucket > 0 && end-i > maxBucket {
							end = i + maxBucket
							skippedPer[band] += (j-i)*(j-i-1)/2 - maxBucket*(maxBucket-1)/2
							if !useTails { // the second pass reads what the first marked
								for x := end; x < j; x++ {
									tail[band*n+int(entries[x].doc)] = true
								}
								cut.Store(true)
							}
						}
						for x := i; x < end; x++ {
							for y := x + 1; y < end; y++ {
								dx, dy := entries[x].doc, entries[y].doc
								if !emittedEarlier(dx, dy, band) {
									emit(uint64(dx)<<32 | uint64(dy))
									made1++
								}
							}
						}
						i = j
						if limit > 0 && made1 > before && made.Add(int64(made1-before)) > int64(limit) {
							over.Store(true)
							return
						}
					}
				}
				if out != nil {
					blocks = append(blocks, out)
				}
				perWorker[w] = blocks
			})
		}
		wg.Wait()
		total := 0
		for _, blocks := range perWorker {
			for _, p := range blocks {
				total += len(p)
			}
		}
		keys := make([]uint64, 0, total)
		for _, blocks := range perWorker {
			for _, p := range blocks {
				keys = append(keys, p...)
			}
		}
		return keys, skippedPer
	}
	keys, skipped := pass(false)
	// The first pass emits a subset of the second's pairs (a pair whose first colliding
	// band cut it is emitted by a later band only in the second), so over the limit in
	// the first is over in the second.
	if cut.Load() && ctx.Err() == nil && !over.Load() {
		keys, skipped = pass(true)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if over.Load() {
		return nil, ErrTooManyPairs
	}
	slices.Sort(keys)
	bk := &BandedKeys{Shape: sh, Keys: keys, skipped: skipped}
	if withBands {
		// Each pair's first band: the first in which the two share a key, neither in its
		// bucket's tail when the second pass ran (the band that emitted it).
		useTails := cut.Load()
		bk.First = make([]uint16, len(keys))
		if err := par.Chunks(ctx, len(keys), 4096, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				x, y := unpairKey(keys[i])
				kx, ky := bandKeys[x*b:(x+1)*b], bandKeys[y*b:(y+1)*b]
				for band := range b {
					if kx[band] == ky[band] && (!useTails || !tail[band*n+x] && !tail[band*n+y]) {
						bk.First[i] = uint16(band)
						break
					}
				}
			}
		}); err != nil {
			return nil, err
		}
	}
	return bk, nil
}

func unpairKey(k uint64) (a, b int) { return int(k >> 32), int(uint32(k)) }

// pairBlock is the pairs a candidate worker collects in one block.
const pairBlock = 1 << 16

// keyEntry is a document's key in one band.
type keyEntry struct {
	key uint64
	doc uint32
}

// radixSortEntries sorts es by key, stably, with buf (len(es)) as scratch. Band keys are
// uniform hashes, so four passes of one byte each over the top 32 bits order them but
// for keys that share those bits (about one pair in a band of 100,000 documents): runs
// of a shared top half with more than one key are then sorted by the whole key, stably.
// Half the passes of a sort on every byte, the same order.
func radixSortEntries(es, buf []keyEntry) {
	var count [256]int
	src, dst := es, buf
	for shift := uint(32); shift < 64; shift += 8 {
		count = [256]int{}
		for _, e := range src {
			count[byte(e.key>>shift)]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, e := range src {
			d := byte(e.key >> shift)
			dst[count[d]] = e
			count[d]++
		}
		src, dst = dst, src
	}
	// Four passes: the entries are back in es.
	for i := 0; i < len(es); {
		top, mixed := es[i].key>>32, false
		j := i + 1
		for ; j < len(es) && es[j].key>>32 == top; j++ {
			mixed = mixed || es[j].key != es[i].key
		}
		if mixed {
			slices.SortStableFunc(es[i:j], func(a, b keyEntry) int { return cmp.Compare(a.key, b.key) })
		}
		i = j
	}
}
