package corpus

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/realtext"
)

// stringStopDef is stringStopAVX2's definition: the first quote, backslash or control
// byte among b's whole 32-byte blocks, else the start of the incomplete last block, and
// whether a byte before that is 0x80 or above.
func stringStopDef(b []byte) (int, bool) {
	high := false
	for i, c := range b[:len(b)/32*32] {
		if c == '"' || c == '\\' || c < 0x20 {
			return i, high
		}
		high = high || c >= 0x80
	}
	return len(b) / 32 * 32, high
}

// The AVX2 scan finds the first stop byte wherever it stands in a block and whatever
// follows it, and says whether a high byte came before it, not after.
func TestStringStopAVX2(t *testing.T) {
	if !wideStringScan {
		t.Skip("no AVX2 here: lineScanner.string takes 8 bytes at a time")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	stops := []byte{'"', '\\', 0, 0x1f, '\n'}
	plain := []byte("a Z~ !#[]{}\x7f\x20")
	high := []byte{0x80, 0xc3, 0xa9, 0xff}
	check := func(b []byte) {
		t.Helper()
		n, h := stringStopAVX2(b)
		wn, wh := stringStopDef(b)
		if n != wn || (h != 0) != wh {
			t.Fatalf("stringStopAVX2(%q) = %d, %v; want %d, %v", b, n, h != 0, wn, wh)
		}
	}
	for size := 0; size <= 130; size++ {
		b := make([]byte, size)
		for i := range b {
			b[i] = plain[rng.IntN(len(plain))]
		}
		check(b)
		for at := range size {
			for _, s := range stops {
				c := append([]byte(nil), b...)
				c[at] = s
				check(c)
				if at > 0 {
					for _, hb := range high { // a high byte just before, long before, and after the stop
						d := append([]byte(nil), c...)
						d[at-1] = hb
						check(d)
						d[at-1] = c[at-1]
						d[rng.IntN(at)] = hb
						check(d)
						if at+1 < size {
							d = append([]byte(nil), c...)
							d[at+1] = hb
							check(d)
						}
					}
				}
			}
		}
	}
	for range 20000 { // random mixtures
		b := make([]byte, rng.IntN(200))
		for i := range b {
			switch rng.IntN(40) {
			case 0:
				b[i] = stops[rng.IntN(len(stops))]
			case 1, 2:
				b[i] = high[rng.IntN(len(high))]
			default:
				b[i] = plain[rng.IntN(len(plain))]
			}
		}
		check(b)
	}
}

// The scanner finds the same strings, escapes and first invalid byte with the AVX2 scan
// and with the 8-byte one (which CPUs without AVX2 run), on real lines and on strings
// with a stop byte or a bad byte at every offset across the blocks of either.
func TestScannerSameWithoutAVX2(t *testing.T) {
	if !wideStringScan {
		t.Skip("no AVX2 here: the 8-byte scan is the one every test runs")
	}
	var lines []string
	for _, l := range bytes.Split(bytes.TrimSpace(realtext.Bytes(t, realtext.Corpus)), []byte("\n"))[:300] {
		lines = append(lines, string(l))
	}
	for at := range 80 {
		pad := strings.Repeat("é", at/2) + strings.Repeat("a", at%2)
		for _, mid := range []string{`\n`, `\"`, `\\`, `\u00e9`, `\ud83d\ude00`, "\xff", "\xc3", "\x01", `\ud800`, `"`} {
			lines = append(lines, `{"id":"x","text":"`+pad+mid+strings.Repeat("b", 40)+`"}`)
		}
	}
	scan := func(line string) lineScanner {
		var s lineScanner
		s.scan([]byte(line))
		return s
	}
	defer func() { wideStringScan = true }()
	for _, line := range lines {
		wideStringScan = true
		wide := scan(line)
		wideStringScan = false
		narrow := scan(line)
		if wide.syntax != narrow.syntax || wide.badUTF8 != narrow.badUTF8 || wide.badEscape != narrow.badEscape ||
			!reflect.DeepEqual(wide.fields, narrow.fields) || !slices.Equal(wide.escapes, narrow.escapes) {
			t.Fatalf("line %.80q: with AVX2 syntax %q, bad byte %d, bad escape %d, fields %v; without %q, %d, %d, %v",
				line, wide.syntax, wide.badUTF8, wide.badEscape, wide.fields, narrow.syntax, narrow.badUTF8, narrow.badEscape, narrow.fields)
		}
		checkScanner(t, line)
	}
}
