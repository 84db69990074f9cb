package lsh

import (
	"encoding/binary"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Signature is a MinHash signature: k 32-bit values. Two signatures of the same Spec agree
// at each position with probability equal to the Jaccard similarity of the shingle sets.
type Signature []uint32

// Bytes returns the signature little-endian, k*4 bytes: the layout of a Milvus
// BINARY_VECTOR field of dim 32*k.
func (s Signature) Bytes() []byte {
	out := make([]byte, 4*len(s))
	for i, v := range s {
		binary.LittleEndian.PutUint32(out[4*i:], v)
	}
	return out
}

// SignatureFromBytes is the inverse of Signature.Bytes.
func SignatureFromBytes(b []byte) (Signature, bool) {
	if len(b)%4 != 0 {
		return nil, false
	}
	s := make(Signature, len(b)/4)
	for i := range s {
		s[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return s, true
}

// Estimate returns the share of positions where a and b agree: the MinHash estimate of
// their Jaccard similarity. It is NaN when the lengths differ (signatures of different
// Specs are not comparable).
func Estimate(a, b Signature) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return math.NaN()
	}
	return float64(Agreement(a, b)) / float64(len(a))
}

// ExactJaccard returns |A ∩ B| / |A ∪ B| for two sorted sets of distinct shingle hashes
// (Hasher.ShingleSet). Two empty sets have similarity 1: identical (empty) documents.
func ExactJaccard(a, b []uint64) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := Intersection(a, b)
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// Intersection counts the hashes two sorted sets share (a merge, linear time); with
// the set sizes it gives Jaccard and containment.
func Intersection(a, b []uint64) int { return Overlap64(a, b, 0) }

// Signature computes text's signature into dst (grown if needed) and returns it. A document
// with no shingles (empty after normalization) gets all 0xFFFFFFFF.
func (h *Hasher) Signature(text string, dst Signature) Signature {
	if h.spec.Scheme == Fast {
		h.hashAllShingles(text)
	} else {
		h.hashShingles(text)
	}
	return h.signatureOfBase(dst)
}

// SignatureOfShingles is Signature for input that is already shingled: each string is
// one shingle's bytes, hashed as given (no normalization). Duplicates are allowed.
func (h *Hasher) SignatureOfShingles(shingles []string, dst Signature) Signature {
	h.base = h.base[:0]
	n := 0
	for _, s := range shingles {
		n += len(s)
	}
	h.resetSet(n)
	for _, s := range shingles {
		h.addShingle([]byte(s))
	}
	return h.signatureOfBase(dst)
}

// signatureOfBase computes the signature of the distinct base hashes in h.base.
func (h *Hasher) signatureOfBase(dst Signature) Signature {
	k := h.spec.Hashes
	dst = slices.Grow(dst[:0], k)[:k]
	if h.spec.Scheme == Fast {
		h.fastSignature(dst)
		return dst
	}
	// The permutations take the low 32 bits of each base hash. Milvus with SHA-1 builds
	// its value in a C++ int, so a hash with bit 31 set enters as uint64(int64(int32(x))),
	// the top 32 bits all ones; those go through the bExt parameters (see permutations).
	h.xs, h.xsExt = h.xs[:0], h.xsExt[:0]
	signExt := h.perm.bExt != nil
	for _, v := range h.base {
		x := v & maxHash
		if signExt && x >= 1<<31 {
			h.xsExt = append(h.xsExt, x)
		} else {
			h.xs = append(h.xs, x)
		}
	}
	h.acc = slices.Grow(h.acc[:0], k)[:k]
	for i := range h.acc {
		h.acc[i] = maxHash
	}
	if len(h.xs) > 0 {
		permuteMin(h.xs, h.perm.a, h.perm.b, h.acc)
	}
	if len(h.xsExt) > 0 {
		permuteMin(h.xsExt, h.perm.a, h.perm.bExt, h.acc)
	}
	for i, v := range h.acc {
		dst[i] = uint32(v)
	}
	return dst
}

// fastParams seed the fast scheme: key mixes shingle hashes, dens drives densification.
type fastParams struct{ key, dens uint64 }

func newFastParams(seed uint64) fastParams {
	g := splitMix64(seed ^ 0x6a09e667f3bcc908) // distinct stream from the classic scheme's
	return fastParams{key: g.next(), dens: g.next()}
}

// fastSignature is one-permutation hashing with optimal densification (Shrivastava 2017):
// each shingle hash picks one of k bins and competes for its minimum; each empty bin then
// borrows the value of the first non-empty bin along its own seeded probe sequence. The
// probe sequence depends only on (seed, bin, attempt), so two documents with the same
// non-empty bins borrow alike, which keeps P[equal] = Jaccard at every position.
func (h *Hasher) fastSignature(sig Signature) {
	k := uint64(len(sig))
	// filled has a bit per bin that some shingle hashed to; the loop takes no branch on
	// the data (the minimum is a conditional move), as the bins come in random order.
	filled := resize(h.filled, (len(sig)+63)/64)
	h.filled = filled
	for i := range sig {
		sig[i] = maxHash
	}
	for _, v := range h.base {
		z := mix64(v ^ h.fast.key)
		bin := (z >> 32) * k >> 32
		sig[bin] = min(sig[bin], uint32(z))
		filled[bin/64] |= 1 << (bin % 64)
	}
	n := 0
	for _, f := range filled {
		n += bits.OnesCount64(f)
	}
	if n == 0 || n == len(sig) {
		return
	}
	for i := range sig {
		if filled[i/64]&(1<<(i%64)) != 0 {
			continue
		}
		for attempt := uint64(1); ; attempt++ {
			j := (mix64(h.fast.dens^uint64(i)<<32^attempt) >> 32) * k >> 32
			if filled[j/64]&(1<<(j%64)) != 0 {
				sig[i] = sig[j]
				break
			}
		}
	}
}

// Signatures computes the signatures of texts on all cores, in order.
func (s Spec) Signatures(texts []string) ([]Signature, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	k := s.Hashes
	backing := make([]uint32, len(texts)*k)
	out := make([]Signature, len(texts))
	for i := range out {
		out[i] = backing[i*k : (i+1)*k : (i+1)*k]
	}
	workers := min(runtime.GOMAXPROCS(0), max(1, len(texts)))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		h, _ := NewHasher(s)
		wg.Go(func() {
			const chunk = 16
			for {
				lo := int(next.Add(chunk)) - chunk
				if lo >= len(texts) {
					return
				}
				for i := lo; i < min(lo+chunk, len(texts)); i++ {
					h.Signature(texts[i], out[i])
				}
			}
		})
	}
	wg.Wait()
	return out, nil
}
