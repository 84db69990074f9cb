package lsh

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The definitions of the tables in unicodetables.go, which TestUnicodeTables checks the
// file against and writes it from (-update). The program uses the file: asking x/text and
// the unicode package about every rune of the Basic Multilingual Plane took 6-7 ms of
// each process's start (2 cores), before the first document could be signed. A build
// whose x/text or Go has other Unicode tables than the file was made from (x/text picks
// its tables by Go version) computes them at start instead (useUnicodeTables).

// nfkcSafeDef has a bit per Basic Multilingual Plane rune that NFKC leaves alone wherever
// it stands: it is normalized on its own and always has a normalization boundary before it
// (no combining class, never composes with what precedes it). A string of such runes is
// already in NFKC, since normalization works segment by segment between boundaries.
func nfkcSafeDef() (bits [1 << 16 / 64]uint64) {
	var buf [4]byte
	for r := rune(0); r < 1<<16; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		s := buf[:utf8.EncodeRune(buf[:], r)]
		if norm.NFKC.Properties(s).BoundaryBefore() && norm.NFKC.IsNormal(s) {
			bits[r/64] |= 1 << (r % 64)
		}
	}
	return bits
}

// nfkcAlone returns m when NFKC turns the BMP rune r into the single rune m in any
// context: r has a normalization boundary before it (nothing before it composes with it
// or with what it becomes) and so does m. What follows r may still compose with m, as
// with any rune: run composes the segment again from r when the next rune is not
// stable. No-break space (U+00A0, which NFKC makes a space) is most of the runes of real
// text that are not nfkcStable, then full-width punctuation; taken from the rune table,
// they do not need a trip through x/text's norm.Iter each.
func nfkcAlone(r rune) (rune, bool) {
	if r >= 0xD800 && r <= 0xDFFF {
		return 0, false
	}
	s := string(r)
	out := norm.NFKC.String(s)
	m, size := utf8.DecodeRuneInString(out)
	if size != len(out) || m == utf8.RuneError {
		return 0, false
	}
	if !norm.NFKC.PropertiesString(s).BoundaryBefore() || !norm.NFKC.PropertiesString(out).BoundaryBefore() {
		return 0, false
	}
	return m, true
}

// nfkcAloneDef lists, in order, the BMP runes that are not NFKC-safe and that nfkcAlone
// maps, with what it maps them to: the rune table's NFKC entries.
func nfkcAloneDef(safe *[1 << 16 / 64]uint64) (pairs [][2]rune) {
	for r := rune(0); r < 1<<16; r++ {
		if safe[r/64]&(1<<(r%64)) != 0 {
			continue
		}
		if m, ok := nfkcAlone(r); ok {
			pairs = append(pairs, [2]rune{r, m})
		}
	}
	return pairs
}

// alnumDef has a bit per Basic Multilingual Plane rune for which isAlnumTables holds (the
// Milvus analyzer's word characters): one lookup instead of up to five table searches per
// rune of non-Latin text.
func alnumDef() (bits [1 << 16 / 64]uint64) {
	for r := rune(0); r < 1<<16; r++ {
		if isAlnumTables(r) {
			bits[r/64] |= 1 << (r % 64)
		}
	}
	return bits
}

// The tables in use (useUnicodeTables): the generated ones, or those computed at start
// by a build with other Unicode versions than the file's.
var (
	nfkcSafeTable, alnumTable *[1 << 16 / 64]uint64
	nfkcAloneTable            [][2]rune
)

func init() {
	useUnicodeTables(norm.Version == unicodeTablesNormVersion && unicode.Version == unicodeTablesVersion)
}

// useUnicodeTables takes the generated tables when they are current, else computes them.
func useUnicodeTables(current bool) {
	if current {
		nfkcSafeTable, alnumTable, nfkcAloneTable = &nfkcSafeBits, &alnumBits, nfkcAloneRunes[:]
		return
	}
	safe, alnum := nfkcSafeDef(), alnumDef()
	nfkcSafeTable, alnumTable, nfkcAloneTable = &safe, &alnum, nfkcAloneDef(&safe)
}
