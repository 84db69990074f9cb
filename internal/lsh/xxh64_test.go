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
