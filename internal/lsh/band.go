package lsh

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/cespare/xxhash/v2"
)

// Shape is an LSH banding: the first Bands*Rows values of a signature are cut into Bands
// bands of Rows values each; two documents become a candidate pair when any band matches
// in full. At Jaccard s that happens with probability 1-(1-s^Rows)^Bands.
type Shape struct {
	Bands int
	Rows  int
}

func (sh Shape) String() string { return fmt.Sprintf("%dx%d", sh.Bands, sh.Rows) }

// Validate reports whether sh fits signatures of k values.
func (sh Shape) Validate(k int) error {
	if sh.Bands < 1 || sh.Rows < 1 {
		return fmt.Errorf("shape %v: bands and rows must be at least 1", sh)
	}
	if sh.Bands*sh.Rows > k {
		return fmt.Errorf("shape %v needs %d hash values; the signatures have %d", sh, sh.Bands*sh.Rows, k)
	}
	return nil
}

// BandKeys appends to dst the Bands keys of sig: XXH64 of the band index (4 bytes LE)
// followed by the band's values (4 bytes LE each), so equal values in different bands
// never share a key.
func (sh Shape) BandKeys(sig Signature, dst []uint64) []uint64 {
	var buf [4 + 4*64]byte
	var d xxhash.Digest
	for band := range sh.Bands {
		d.Reset()
		binary.LittleEndian.PutUint32(buf[:4], uint32(band))
		n := 4
		row := band * sh.Rows
		for r := range sh.Rows {
			binary.LittleEndian.PutUint32(buf[n:], sig[row+r])
			n += 4
			if n == len(buf) || r == sh.Rows-1 {
				d.Write(buf[:n])
				n = 0
			}
		}
		dst = append(dst, d.Sum64())
	}
	return dst
}

// Candidate is a pair of documents (indexes into the signature list, A < B) that share a
// band key in Bands bands.
type Candidate struct {
	A, B  int
	Bands int
}

// Candidates returns every pair of sigs that collides in at least one band of sh, once,
// sorted by (A, B). Each band's keys are sorted and equal runs emit their pairs; bands run
// in parallel. The work is proportional to the number of colliding pairs, so a band where
// thousands of documents are identical costs the square of that.
func Candidates(sigs []Signature, sh Shape) ([]Candidate, error) {
	c, _, err := CandidatesBounded(sigs, sh, 0)
	return c, err
}

// MaxBucket is the bucket bound every run of Dedup Studio passes to CandidatesBounded:
// the sweep, the studio's runs over a dataset and the dedup command over a corpus. One
// value, so that a configuration proposes the same candidate pairs in each.
const MaxBucket = 1000

// CandidatesBounded is Candidates with the quadratic case bounded: a band bucket
// holding more than maxBucket documents contributes only the pairs among its first
// maxBucket documents (in index order); skipped counts the (pair, band) collisions left
// out.
// A sample where thousands of documents are identical then costs at most
// bands x maxBucket²/2 pairs per such bucket. maxBucket <= 0 means no bound.
func CandidatesBounded(sigs []Signature, sh Shape, maxBucket int) (cands []Candidate, skipped int, err error) {
	if len(sigs) == 0 {
		return nil, 0, nil
	}
	for i, s := range sigs {
		if err := sh.Validate(len(s)); err != nil {
			return nil, 0, fmt.Errorf("signature %d: %w", i, err)
		}
	}
	if len(sigs) >= 1<<31 {
		return nil, 0, fmt.Errorf("%d signatures: at most 2^31-1", len(sigs))
	}
	// keys[band*n+doc]
	n := len(sigs)
	keys := make([]uint64, sh.Bands*n)
	parallel(n, func(lo, hi int) {
		var tmp []uint64
		for doc := lo; doc < hi; doc++ {
			tmp = sh.BandKeys(sigs[doc], tmp[:0])
			for band, k := range tmp {
				keys[band*n+doc] = k
			}
		}
	})

	type entry struct {
		key uint64
		doc uint32
	}
	pairsPerBand := make([][]uint64, sh.Bands)
	skippedPerBand := make([]int, sh.Bands)
	parallel(sh.Bands, func(lo, hi int) {
		entries := make([]entry, n)
		for band := lo; band < hi; band++ {
			for doc := range n {
				entries[doc] = entry{keys[band*n+doc], uint32(doc)}
			}
			slices.SortFunc(entries, func(x, y entry) int {
				if x.key != y.key {
					if x.key < y.key {
						return -1
					}
					return 1
				}
				return int(x.doc) - int(y.doc)
			})
			var pairs []uint64
			for i := 0; i < n; {
				j := i + 1
				for j < n && entries[j].key == entries[i].key {
					j++
				}
				end := j
				if maxBucket > 0 && end-i > maxBucket {
					end = i + maxBucket
					all, kept := (j-i)*(j-i-1)/2, maxBucket*(maxBucket-1)/2
					skippedPerBand[band] += all - kept
				}
				for x := i; x < end; x++ {
					for y := x + 1; y < end; y++ {
						pairs = append(pairs, uint64(entries[x].doc)<<32|uint64(entries[y].doc))
					}
				}
				i = j
			}
			pairsPerBand[band] = pairs
		}
	})
	total := 0
	for band, p := range pairsPerBand {
		total += len(p)
		skipped += skippedPerBand[band]
	}
	all := make([]uint64, 0, total)
	for _, p := range pairsPerBand {
		all = append(all, p...)
	}
	slices.Sort(all)
	var out []Candidate
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j] == all[i] {
			j++
		}
		out = append(out, Candidate{A: int(all[i] >> 32), B: int(all[i] & 0xFFFFFFFF), Bands: j - i})
		i = j
	}
	return out, skipped, nil
}

// parallel runs fn over [0, n) split into contiguous ranges, one per core.
func parallel(n int, fn func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += step {
		wg.Go(func() { fn(lo, min(lo+step, n)) })
	}
	wg.Wait()
}

// Index is an incremental LSH index for search-before-insert: query a document's
// signature for candidates, then insert it (or not). It is not safe for concurrent use.
type Index struct {
	shape   Shape
	k       int
	buckets []map[uint64][]string // per band: key -> ids
	keys    map[string][]uint64   // id -> its band keys, for Remove
}

// Match is an indexed document that shares Bands band keys with a query.
type Match struct {
	ID    string
	Bands int
}

// NewIndex returns an empty index for signatures of k values under sh.
func NewIndex(sh Shape, k int) (*Index, error) {
	if err := sh.Validate(k); err != nil {
		return nil, err
	}
	ix := &Index{shape: sh, k: k, buckets: make([]map[uint64][]string, sh.Bands), keys: map[string][]uint64{}}
	for i := range ix.buckets {
		ix.buckets[i] = map[uint64][]string{}
	}
	return ix, nil
}

// Len returns the number of indexed documents.
func (ix *Index) Len() int { return len(ix.keys) }

func (ix *Index) check(sig Signature) error {
	if len(sig) != ix.k {
		return fmt.Errorf("signature has %d values; the index takes %d", len(sig), ix.k)
	}
	return nil
}

// Insert adds id with its signature. Inserting an id that is present is an error: Remove
// it first.
func (ix *Index) Insert(id string, sig Signature) error {
	if err := ix.check(sig); err != nil {
		return err
	}
	if _, ok := ix.keys[id]; ok {
		return fmt.Errorf("index insert %q: already present", id)
	}
	keys := ix.shape.BandKeys(sig, nil)
	for band, k := range keys {
		ix.buckets[band][k] = append(ix.buckets[band][k], id)
	}
	ix.keys[id] = keys
	return nil
}

// Query returns the indexed documents sharing at least one band key with sig, most
// shared bands first, then by id.
func (ix *Index) Query(sig Signature) ([]Match, error) {
	if err := ix.check(sig); err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for band, k := range ix.shape.BandKeys(sig, nil) {
		for _, id := range ix.buckets[band][k] {
			counts[id]++
		}
	}
	out := make([]Match, 0, len(counts))
	for id, n := range counts {
		out = append(out, Match{ID: id, Bands: n})
	}
	slices.SortFunc(out, func(x, y Match) int {
		if x.Bands != y.Bands {
			return y.Bands - x.Bands
		}
		if x.ID < y.ID {
			return -1
		}
		if x.ID > y.ID {
			return 1
		}
		return 0
	})
	return out, nil
}

// Remove deletes id from the index; it reports whether id was there.
func (ix *Index) Remove(id string) bool {
	keys, ok := ix.keys[id]
	if !ok {
		return false
	}
	for band, k := range keys {
		ids := ix.buckets[band][k]
		if i := slices.Index(ids, id); i >= 0 {
			ids = slices.Delete(ids, i, i+1)
		}
		if len(ids) == 0 {
			delete(ix.buckets[band], k)
		} else {
			ix.buckets[band][k] = ids
		}
	}
	delete(ix.keys, id)
	return true
}
