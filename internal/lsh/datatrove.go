package lsh

import (
	"crypto/sha1"
	"encoding/binary"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// Datatrove is datatrove's MinHash, as its MinhashDedupSignature computes it with
// HashConfig(precision=64): each n-gram's text hashed to 64 bits (xxhash64, or with
// hash_fc="sha1" the first 8 bytes of its SHA-1, little-endian), then n permutations
// ((a*x + b) mod 2^61-1 in wrapping uint64, no 32-bit mask) drawn by numpy's
// RandomState(seed) as datatrove draws them (randint(1, P, size=n) for every a, then
// randint(0, P, size=n) for every b), the minimum of each. Its values are 64-bit and are
// never a studio signature: the studio computes them only to measure what a datatrove
// run of a calibrated configuration will do (internal/manifests). It reproduces the
// signatures of testdata/datatrove-vectors.jsonl, made by datatrove 0.10.0 itself.
type Datatrove struct {
	a, b []uint64
	sha1 bool
}

// NewDatatrove returns datatrove's MinHash of n = buckets x hashes per bucket values for
// the seed; sha1 chooses hash_fc="sha1" over "xxhash".
func NewDatatrove(seed uint32, n int, sha1 bool) *Datatrove {
	g := newMT19937(seed)
	d := &Datatrove{a: make([]uint64, n), b: make([]uint64, n), sha1: sha1}
	for i := range d.a {
		d.a[i] = 1 + g.boundedMasked(mersenne61-2)
	}
	for i := range d.b {
		d.b[i] = g.boundedMasked(mersenne61 - 1)
	}
	return d
}

// Hash is datatrove's 64-bit hash of an n-gram's text (its tokens joined by spaces).
func (d *Datatrove) Hash(ngram string) uint64 {
	if d.sha1 {
		sum := sha1.Sum([]byte(ngram))
		return binary.LittleEndian.Uint64(sum[:8])
	}
	return xxhash.Sum64String(ngram)
}

// Signature appends to dst[:0] the signature of a document's n-gram hashes (Hash), or
// returns it empty for a document without n-grams, to which datatrove gives none.
func (d *Datatrove) Signature(hashes []uint64, dst []uint64) []uint64 {
	dst = dst[:0]
	if len(hashes) == 0 {
		return dst
	}
	dst = slices.Grow(dst, len(d.a))[:len(d.a)]
	for i := range dst {
		dst[i] = 1<<64 - 1
	}
	for _, x := range hashes {
		for i, a := range d.a {
			if v := (a*x + d.b[i]) % mersenne61; v < dst[i] {
				dst[i] = v
			}
		}
	}
	return dst
}
