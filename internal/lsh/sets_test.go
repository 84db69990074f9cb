package lsh

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// naiveOverlap is the definition: the values in both sets.
func naiveOverlap[T uint32 | uint64](a, b []T) int {
	n := 0
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); ok {
			n++
		}
	}
	return n
}

// randomSets draws two sorted sets of distinct values from a universe of u values
// (spread over the whole type's range, top bits included), sharing about share of them.
func randomSets(rng *rand.Rand, na, nb int, share float64, wide bool) ([]uint64, []uint64) {
	seen := map[uint64]bool{}
	draw := func() uint64 {
		for {
			v := rng.Uint64()
			if !wide {
				v >>= 32
			}
			if rng.IntN(4) == 0 {
				v = uint64(rng.IntN(64)) // crowd the small values too
				if !wide {
					v |= 1 << 31 // and values whose top bit a signed compare would read wrong
				}
			}
			if !seen[v] {
				seen[v] = true
				return v
			}
		}
	}
	var a, b []uint64
	for range na {
		a = append(a, draw())
	}
	for range nb {
		if len(a) > 0 && rng.Float64() < share {
			b = append(b, a[rng.IntN(len(a))])
		} else {
			b = append(b, draw())
		}
	}
	slices.Sort(a)
	slices.Sort(b)
	return a, slices.Compact(b)
}

func to32(s []uint64) []uint32 {
	out := make([]uint32, len(s))
	for i, v := range s {
		out[i] = uint32(v)
	}
	return out
}

// withSets runs f with the set kernels on (where the CPU has them) and off.
func withSets(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	was := setsAVX2
	defer func() { setsAVX2 = was }()
	for _, on := range []bool{false, true} {
		if on && !was {
			t.Log("this CPU lacks AVX2 or POPCNT: the kernels are not tested here")
			continue
		}
		setsAVX2 = on
		name := "generic"
		if on {
			name = "avx2"
		}
		t.Run(name, f)
	}
}

func TestSetKernels(t *testing.T) {
	withSets(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 11))
		sizes := []int{0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 257, 1000}
		for trial := range 3000 {
			na, nb := sizes[rng.IntN(len(sizes))], sizes[rng.IntN(len(sizes))]
			share := []float64{0, 0.1, 0.5, 0.9, 1}[trial%5]
			a64, b64 := randomSets(rng, na, nb, share, true)
			a32s, b32s := randomSets(rng, na, nb, share, false)
			a32, b32 := to32(a32s), to32(b32s)
			want64, want32 := naiveOverlap(a64, b64), naiveOverlap(a32, b32)
			if got := Overlap64(a64, b64, 0); got != want64 {
				t.Fatalf("Overlap64 of %d and %d values: %d, want %d", len(a64), len(b64), got, want64)
			}
			if got := Overlap64(b64, a64, 0); got != want64 {
				t.Fatalf("Overlap64 swapped: %d, want %d", got, want64)
			}
			if got := Overlap32(a32, b32, 0); got != want32 {
				t.Fatalf("Overlap32 of %d and %d values: %d, want %d", len(a32), len(b32), got, want32)
			}
			if got := Overlap32(b32, a32, 0); got != want32 {
				t.Fatalf("Overlap32 swapped: %d, want %d", got, want32)
			}
			if got := Intersection(a64, b64); got != want64 {
				t.Fatalf("Intersection: %d, want %d", got, want64)
			}
			// With a need: the count itself when it reaches need, else an upper bound
			// under need.
			for _, need := range []int{1, want32, want32 + 1, want32 + 9, min(na, nb)} {
				got := Overlap32(a32, b32, need)
				switch {
				case want32 >= need && got != want32:
					t.Fatalf("Overlap32 need %d: %d, want %d", need, got, want32)
				case want32 < need && (got >= need || got < want32):
					t.Fatalf("Overlap32 need %d: %d, want a bound in [%d, %d)", need, got, want32, need)
				}
				got = Overlap64(a64, b64, need)
				switch {
				case want64 >= need && got != want64:
					t.Fatalf("Overlap64 need %d: %d, want %d", need, got, want64)
				case want64 < need && (got >= need || got < want64):
					t.Fatalf("Overlap64 need %d: %d, want a bound in [%d, %d)", need, got, want64, need)
				}
			}
		}
	})
}

func TestEstimateKernel(t *testing.T) {
	withSets(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 5))
		for _, k := range []int{1, 7, 15, 16, 17, 31, 32, 64, 100, 128, 256, 1000} {
			for range 50 {
				a, b := make(Signature, k), make(Signature, k)
				want := 0
				for i := range a {
					a[i] = rng.Uint32()
					b[i] = rng.Uint32()
					if rng.IntN(3) == 0 {
						b[i] = a[i]
					}
					if a[i] == b[i] {
						want++
					}
				}
				if got := Estimate(a, b); got != float64(want)/float64(k) {
					t.Fatalf("k=%d: Estimate %v, want %d/%d", k, got, want, k)
				}
			}
		}
	})
}

// TestBandKeysDefinition: each band key is XXH64 of the band index (4 bytes little-endian)
// followed by the band's values (4 bytes each), for rows that fit BandKeys' one-call
// buffer and rows past it.
func TestBandKeysDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, sh := range []Shape{{1, 1}, {3, 2}, {5, 4}, {2, 13}, {2, 63}, {2, 64}, {2, 65}, {1, 100}, {3, 130}} {
		sig := make(Signature, sh.Bands*sh.Rows)
		for i := range sig {
			sig[i] = rng.Uint32()
		}
		got := sh.BandKeys(sig, nil)
		for band := range sh.Bands {
			b := binary.LittleEndian.AppendUint32(nil, uint32(band))
			for _, v := range sig[band*sh.Rows : (band+1)*sh.Rows] {
				b = binary.LittleEndian.AppendUint32(b, v)
			}
			if want := xxhash.Sum64(b); got[band] != want {
				t.Fatalf("shape %v band %d: key %x, want %x", sh, band, got[band], want)
			}
		}
	}
}

// TestBucketKeys: the keys candidate generation buckets by are equal for equal bands
// and differ when any value of a band differs, or the band index does; and they do not
// collide on low-entropy bands (small counters) nor on many random ones.
func TestBucketKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	for _, sh := range []Shape{{1, 1}, {3, 2}, {5, 3}, {4, 4}, {2, 13}, {2, 64}, {1, 65}, {2, 100}} {
		sig := make(Signature, sh.Bands*sh.Rows)
		for i := range sig {
			sig[i] = rng.Uint32()
		}
		keys := sh.bucketKeys(sig, nil)
		if len(keys) != sh.Bands {
			t.Fatalf("shape %v: %d keys", sh, len(keys))
		}
		// The same band values under another band index, the others changed.
		for band := range sh.Bands {
			other := slices.Clone(sig)
			for i := range other {
				if i/sh.Rows != band {
					other[i] = rng.Uint32()
				}
			}
			if got := sh.bucketKeys(other, nil); got[band] != keys[band] {
				t.Fatalf("shape %v band %d: equal values, keys %x and %x", sh, band, got[band], keys[band])
			}
			for i := band * sh.Rows; i < (band+1)*sh.Rows; i++ {
				for _, flip := range []uint32{1, 1 << 31, rng.Uint32() | 1} {
					changed := slices.Clone(sig)
					changed[i] ^= flip
					if got := sh.bucketKeys(changed, nil); got[band] == keys[band] {
						t.Fatalf("shape %v band %d: value %d changed (^%x), key unchanged", sh, band, i, flip)
					}
				}
			}
		}
		if sh.Bands > 1 {
			same := make(Signature, len(sig))
			for i := range same {
				same[i] = sig[i%sh.Rows] // every band holds the first band's values
			}
			if ks := sh.bucketKeys(same, nil); ks[0] == ks[1] {
				t.Fatalf("shape %v: equal values in bands 0 and 1 share a key", sh)
			}
		}
	}
	seen := map[uint64]string{}
	add := func(sh Shape, sig Signature) {
		for band, k := range sh.bucketKeys(sig, nil) {
			id := fmt.Sprint(sh, band, sig[band*sh.Rows:(band+1)*sh.Rows])
			if prev, ok := seen[k]; ok && prev != id {
				t.Fatalf("key %x for %s and %s", k, prev, id)
			}
			seen[k] = id
		}
	}
	for _, rows := range []int{1, 2, 3, 4, 7} {
		sh := Shape{Bands: 1, Rows: rows}
		for c := range 20000 {
			sig := make(Signature, rows) // counters: all but the low bits zero
			sig[0] = uint32(c)
			if rows > 1 {
				sig[rows-1] = uint32(c >> 8)
			}
			add(sh, sig)
		}
	}
	for range 100000 {
		sh := Shape{Bands: 2, Rows: 4}
		sig := make(Signature, 8)
		for i := range sig {
			sig[i] = rng.Uint32()
		}
		add(sh, sig)
	}
}

// TestRadixSortEntries: the band keys' sort orders entries by key, documents in order
// within a key, as a stable comparison sort does: for uniform keys, repeated keys, and
// keys that share their top 32 bits (the part the radix passes read) but not the rest.
func TestRadixSortEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	for trial := range 200 {
		n := rng.IntN(3000)
		es := make([]keyEntry, n)
		tops := []uint64{rng.Uint64() >> 32, rng.Uint64() >> 32, rng.Uint64() >> 32}
		for i := range es {
			k := rng.Uint64()
			switch rng.IntN(4) {
			case 0: // a shared top half, several bottoms
				k = tops[rng.IntN(len(tops))]<<32 | uint64(rng.IntN(5))
			case 1: // a repeat of an earlier key
				if i > 0 {
					k = es[rng.IntN(i)].key
				}
			}
			es[i] = keyEntry{key: k, doc: uint32(i)}
		}
		want := slices.Clone(es)
		slices.SortStableFunc(want, func(a, b keyEntry) int { return cmp.Compare(a.key, b.key) })
		radixSortEntries(es, make([]keyEntry, n))
		if !slices.Equal(es, want) {
			t.Fatalf("trial %d (%d entries): not the stable order by key", trial, n)
		}
	}
}

func TestAnyEqual64(t *testing.T) {
	withSets(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 6))
		for n := range 70 {
			for range 40 {
				a, b := make([]uint64, n), make([]uint64, n)
				want := false
				for i := range a {
					a[i], b[i] = rng.Uint64(), rng.Uint64()
				}
				if n > 0 && rng.IntN(2) == 0 {
					i := rng.IntN(n)
					b[i] = a[i]
					want = true
				}
				if got := anyEqual64(a, b); got != want {
					t.Fatalf("%d values: anyEqual64 %v, want %v", n, got, want)
				}
			}
		}
	})
}
