package lsh

import (
	"encoding/binary"
	"fmt"
	"math/bits"
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
	if sh.Rows <= 64 {
		// The whole band fits the buffer: one Sum64 call, the same value as the
		// streaming digest below at a fraction of its cost (a sweep computes the keys of
		// every document for every shape).
		for band := range sh.Bands {
			binary.LittleEndian.PutUint32(buf[:4], uint32(band))
			row := sig[band*sh.Rows : (band+1)*sh.Rows]
			for r, v := range row {
				binary.LittleEndian.PutUint32(buf[4+4*r:], v)
			}
			dst = append(dst, xxhash.Sum64(buf[:4+4*len(row)]))
		}
		return dst
	}
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

// bucketKeys appends to dst the keys CandidateKeysUpTo buckets documents by, one per
// band of sh: a function of the band index and the band's values, equal for equal
// bands. They stay in memory (BandKeys' XXH64 definition is what indexes and hand-offs
// store), so they are made with arithmetic on the values as they lie, two at a time,
// instead of copying each band into bytes for one XXH64 call: a sweep keys every
// document for every shape (at 100,000 documents, 650 bands of up to 64 rows per
// representation), and the copies and calls were two thirds of it. Two different
// bands share a key with probability about 2^-64, as with XXH64; a shared key only
// proposes a pair to verify.
func (sh Shape) bucketKeys(sig Signature, dst []uint64) []uint64 {
	const p1, p2 = 0x9e3779b185ebca87, 0xc2b2ae3d27d4eb4f // XXH64's primes 1 and 2
	for band := range sh.Bands {
		row := sig[band*sh.Rows : (band+1)*sh.Rows]
		h := (uint64(band)<<32 | uint64(len(row))) * p1
		i := 0
		for ; i+2 <= len(row); i += 2 {
			x := uint64(row[i]) | uint64(row[i+1])<<32
			h = bits.RotateLeft64(h^(x*p2), 31) * p1
		}
		if i < len(row) {
			h = bits.RotateLeft64(h^(uint64(row[i])*p2), 31) * p1
		}
		// XXH64's avalanche: every bit of the key depends on every value (the radix
		// sort of a band reads the top bits).
		h ^= h >> 33
		h *= p2
		h ^= h >> 29
		h *= 0x165667b19e3779f9
		h ^= h >> 32
		dst = append(dst, h)
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
			tmp = sh.bucketKeys(sigs[doc], tmp[:0])
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
