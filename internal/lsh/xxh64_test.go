package lsh

import (
	"math/rand/v2"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// xxh64Pair must equal xxhash.Sum64 at every length it takes, on random bytes of every
// value, whatever the alignment of each input.
func TestXXH64Pair(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(64, 2))
	buf := make([]byte, 512)
	for range 50 {
		for i := range buf {
			buf[i] = byte(rng.Uint32())
		}
		for n := range 64 {
			i, j := rng.IntN(200), rng.IntN(200)
			a, b := buf[i:i+n], buf[j:j+n]
			ha, hb := xxh64Pair(a, b)
			if want := xxhash.Sum64(a); ha != want {
				t.Fatalf("xxh64Pair(%x, ...) = %#x, ...; want %#x", a, ha, want)
			}
			if want := xxhash.Sum64(b); hb != want {
				t.Fatalf("xxh64Pair(..., %x) = ..., %#x; want %#x", b, hb, want)
			}
		}
	}
}

// xxh64x8 must equal xxhash.Sum64 in every lane: lanes of every length under 64 side by
// side (so each step runs on some lanes and not others), every lane mask, inputs at
// every alignment and ending at the last byte of the buffer, which has just the 8 bytes
// of room past its end that the caller leaves.
func TestXXH64x8(t *testing.T) {
	t.Parallel()
	if !wideHash {
		t.Skip("this CPU does not hash eight shingles at a time (AVX-512 F and DQ)")
	}
	rng := rand.New(rand.NewPCG(64, 8))
	mem := make([]byte, 300, 308)
	for i := range mem {
		mem[i] = byte(rng.Uint32())
	}
	for round := range 20000 {
		var s, n [8]int64
		var out [8]uint64
		mask := uint64(rng.IntN(256))
		if round%4 == 0 {
			mask = 0xFF
		}
		for j := range 8 {
			n[j] = int64(rng.IntN(64))
			if round%3 == 0 {
				n[j] = int64(round/3%64+j) % 64 // neighbours one byte apart, every length
			}
			s[j] = int64(rng.IntN(len(mem) - int(n[j]) + 1))
			if rng.IntN(8) == 0 {
				s[j] = int64(len(mem)) - n[j] // ends at the buffer's end
			}
		}
		xxh64x8(&mem[0], &s, &n, &out, mask)
		for j := range 8 {
			if mask>>j&1 == 0 {
				if out[j] != 0 {
					t.Fatalf("lane %d is not in mask %#x but was written: %#x", j, mask, out[j])
				}
				continue
			}
			in := mem[s[j] : s[j]+n[j]]
			if want := xxhash.Sum64(in); out[j] != want {
				t.Fatalf("xxh64x8 lane %d of mask %#x, %d bytes at %d (%x) = %#x; want %#x", j, mask, n[j], s[j], in, out[j], want)
			}
		}
	}
}
