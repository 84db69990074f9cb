package corpus

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/dedupstudio/dedupstudio/internal/realtext"
)

// TestValidUTF8 holds validUTF8 (32 bytes a step with AVX2) to unicode/utf8.Valid: every
// sequence of one to three bytes and a sample of four-byte ones, each at every offset of
// a block and after ASCII and multi-byte text (where the vector code carries a sequence
// over from one block to the next), truncated at the end, and real text of many scripts
// with a byte changed at random.
func TestValidUTF8(t *testing.T) {
	check := func(b []byte) {
		t.Helper()
		if got, want := validUTF8(b), utf8.Valid(b); got != want {
			t.Fatalf("validUTF8(%q) = %v; utf8.Valid %v", b, got, want)
		}
	}
	pads := [][]byte{nil, []byte("0123456789abcdef0123456789abcde"), []byte("żółw € 𝄞 кот 猫 and some more text to pass 32 bytes")}
	seq := func(s []byte) {
		for _, pad := range pads {
			for off := range 34 {
				b := append(append(append([]byte{}, pad...), make([]byte, off)...), s...)
				for i := len(pad); i < len(pad)+off; i++ {
					b[i] = 'a'
				}
				check(b)
				check(append(b, "and then a tail of ASCII text longer than one block"...))
			}
		}
	}
	var interesting []byte
	for c := range 256 {
		if c < 0x80 && c%16 != 0 && c != 0x7f {
			continue // ASCII is alike: a few stand for all
		}
		interesting = append(interesting, byte(c))
	}
	for _, a := range interesting {
		seq([]byte{a})
		for _, b := range interesting {
			if a >= 0xc0 || b >= 0x80 { // pairs that can start a sequence or break one
				seq([]byte{a, b})
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		s := []byte{0xe0 + byte(rng.IntN(32)), 0x80 + byte(rng.IntN(64)), 0x80 + byte(rng.IntN(64))}
		if rng.IntN(4) == 0 {
			s[rng.IntN(3)] = byte(rng.IntN(256))
		}
		if rng.IntN(2) == 0 {
			s = append(s, 0x80+byte(rng.IntN(64)))
		}
		for _, pad := range pads {
			off := rng.IntN(40)
			b := append(append([]byte{}, pad...), make([]byte, off)...)
			for i := len(pad); i < len(b); i++ {
				b[i] = 'x'
			}
			check(append(b, s...))
		}
	}
	for range 3000 {
		b := make([]byte, rng.IntN(200))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		check(b)
	}
	for _, d := range realtext.DemoDocs(t)[:400] {
		b := []byte(d.Text)
		check(b)
		for range 20 {
			if len(b) == 0 {
				break
			}
			c := append([]byte{}, b...)
			c[rng.IntN(len(c))] = byte(rng.IntN(256))
			check(c)
		}
	}
}
