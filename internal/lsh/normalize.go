package lsh

import (
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Normalize applies the steps of n to text and returns the result. Invalid UTF-8 bytes are
// replaced by U+FFFD so the output is always valid UTF-8 (importers reject invalid UTF-8
// before it gets here; this keeps the engine total).
func (n Norm) Normalize(text string) string {
	var it norm.Iter
	return string(n.appendNormalized(nil, &it, buildASCIITable(n), text))
}

// Normalizer applies a Norm to many short strings, keeping its tables between calls.
// It is not safe for concurrent use.
type Normalizer struct {
	norm  Norm
	table *asciiTable
	iter  norm.Iter
	buf   []byte
}

// NewNormalizer returns a Normalizer for n.
func NewNormalizer(n Norm) *Normalizer { return &Normalizer{norm: n, table: buildASCIITable(n)} }

// Normalize is n.Normalize(s).
func (z *Normalizer) Normalize(s string) string {
	z.buf = z.norm.appendNormalized(z.buf[:0], &z.iter, z.table, s)
	return string(z.buf)
}

// appendNormalized appends the normalized text to dst and returns it. it and table (n's
// buildASCIITable) are kept by the caller between documents, so nothing is allocated once
// dst has grown.
//
// NFKC is applied segment by segment, only where the text needs it: a rune that NFKC
// leaves alone in any context (nfkcStable: every ASCII byte, most letters of most
// scripts) passes through with one bit lookup; at the first rune that might change, the
// text from the previous rune up to the next stable rune is composed with x/text's norm
// and fed through the other steps. Normalization works between boundaries, so the result
// equals composing the whole text first.
func (n Norm) appendNormalized(dst []byte, it *norm.Iter, table *asciiTable, text string) []byte {
	if n == (Norm{}) && utf8.ValidString(text) {
		return append(dst, text...)
	}
	st := stepper{n: n, table: table, dst: slices.Grow(dst, len(text))}
	// Where the previous rune started, in text and in the output, and the state before it.
	prevAt, prevLen, prevPending, prevWrote := 0, len(st.dst), false, false
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			prevAt, prevLen, prevPending, prevWrote = i, len(st.dst), st.pending, st.wrote
			st.ascii(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && size == 1 {
			// An invalid byte becomes U+FFFD and nothing composes with it.
			st.rune(r)
			i++
			prevAt, prevLen, prevPending, prevWrote = i, len(st.dst), st.pending, st.wrote
			continue
		}
		if !n.NFKC || nfkcStable(r) {
			prevAt, prevLen, prevPending, prevWrote = i, len(st.dst), st.pending, st.wrote
			st.rune(r)
			i += size
			continue
		}
		// Compose text[prevAt:end], where end is the next stable rune, after undoing the
		// previous rune, which may compose with this one.
		end := i + size
		for end < len(text) {
			c := text[end]
			if c < utf8.RuneSelf {
				break
			}
			r, size := utf8.DecodeRuneInString(text[end:])
			if (r == utf8.RuneError && size == 1) || nfkcStable(r) {
				break
			}
			end += size
		}
		st.dst, st.pending, st.wrote = st.dst[:prevLen], prevPending, prevWrote
		it.InitString(norm.NFKC, text[prevAt:end])
		for !it.Done() {
			for _, r := range unsafeString(it.Next()) {
				if r < utf8.RuneSelf {
					st.ascii(byte(r))
				} else {
					st.rune(r)
				}
			}
		}
		// The composed segment is never split again: the next rune starts a new one.
		prevAt, prevLen, prevPending, prevWrote = end, len(st.dst), st.pending, st.wrote
		i = end
	}
	return st.dst
}

// stepper applies every step but NFKC, rune by rune.
type stepper struct {
	n       Norm
	table   *asciiTable
	dst     []byte
	pending bool // a collapsed space is owed before the next output
	wrote   bool // something has been written (no leading space)
}

// ascii handles one ASCII byte with a table lookup.
func (st *stepper) ascii(c byte) {
	switch m := st.table[c]; m {
	case asciiDrop:
	case asciiSpace:
		st.pending = st.wrote
	default:
		if st.pending {
			st.dst = append(st.dst, ' ')
			st.pending = false
		}
		st.dst = append(st.dst, byte(m))
		st.wrote = true
	}
}

// rune handles one non-ASCII rune.
func (st *stepper) rune(r rune) {
	n := st.n
	if n.CollapseSpace && isSpace(r) {
		st.pending = st.wrote
		return
	}
	if n.StripPunct && isPunct(r) {
		return
	}
	if n.FoldDigits && isDigit(r) {
		r = '0'
	}
	if n.Lower {
		r = toLower(r)
	}
	if st.pending {
		st.dst = append(st.dst, ' ')
		st.pending = false
	}
	st.dst = utf8.AppendRune(st.dst, r)
	st.wrote = true
}

// nfkcSafe has a bit per Basic Multilingual Plane rune that NFKC leaves alone wherever it
// stands: it is normalized on its own and always has a normalization boundary before it
// (no combining class, never composes with what precedes it). A string of such runes is
// already in NFKC, since normalization works segment by segment between boundaries.
var nfkcSafe = sync.OnceValue(func() *[1 << 16 / 64]uint64 {
	var bits [1 << 16 / 64]uint64
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
	return &bits
})

// nfkcStable reports whether rune r is certainly unchanged by NFKC in any context.
// Runes outside the BMP are rare in text and take the caller's slow path.
func nfkcStable(r rune) bool {
	return r < 1<<16 && nfkcSafe()[r/64]&(1<<(r%64)) != 0
}

func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || (r >= '\t' && r <= '\r')
	}
	return unicode.IsSpace(r)
}

func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return (r >= '!' && r <= '/') || (r >= ':' && r <= '@') || (r >= '[' && r <= '`') || (r >= '{' && r <= '~')
	}
	return unicode.IsPunct(r) || unicode.IsSymbol(r)
}

func isDigit(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= '0' && r <= '9'
	}
	return unicode.IsDigit(r)
}

func toLower(r rune) rune {
	if r < utf8.RuneSelf {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	return unicode.ToLower(r)
}

// asciiTable maps each ASCII byte to what it becomes under a Norm: a byte value, or one
// of the markers below.
type asciiTable [128]int16

const (
	asciiDrop  = -1
	asciiSpace = -2
)

// buildASCIITable maps each ASCII byte to its normalized form under n.
func buildASCIITable(n Norm) *asciiTable {
	var t asciiTable
	for c := range 128 {
		r := rune(c)
		switch {
		case n.CollapseSpace && isSpace(r):
			t[c] = asciiSpace
		case n.StripPunct && isPunct(r):
			t[c] = asciiDrop
		case n.FoldDigits && isDigit(r):
			t[c] = '0'
		case n.Lower:
			t[c] = int16(toLower(r))
		default:
			t[c] = int16(c)
		}
	}
	return &t
}

// The two rules below are Rust's, as Milvus's default analyzer applies them (tantivy's
// SimpleTokenizer and LowerCaser, see milvusTokens). Go's unicode tables are Unicode
// 15.0.0; a Milvus build on a newer Rust may know characters assigned since.

// isAlnumRust reports whether Rust's char::is_alphanumeric holds for r: the Alphabetic
// property (letters, letter numbers and the Other_Alphabetic, Other_Lowercase and
// Other_Uppercase runes such as combining vowel signs and circled letters) or a number
// (general category Nd, Nl or No, so ² and ① count).
func isAlnumRust(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiLowerAlnum[r] != 0
	}
	if r < 1<<16 {
		return alnumBMP()[r/64]&(1<<(r%64)) != 0
	}
	return isAlnumTables(r)
}

func isAlnumTables(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) ||
		unicode.In(r, unicode.Other_Alphabetic, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

// alnumBMP has a bit per Basic Multilingual Plane rune for which isAlnumTables holds:
// one lookup instead of up to five table searches per rune of non-Latin text.
var alnumBMP = sync.OnceValue(func() *[1 << 16 / 64]uint64 {
	var bits [1 << 16 / 64]uint64
	for r := rune(0); r < 1<<16; r++ {
		if isAlnumTables(r) {
			bits[r/64] |= 1 << (r % 64)
		}
	}
	return &bits
})

// asciiLowerAlnum maps an ASCII letter or digit to its lowercase form and every other
// ASCII byte to 0.
var asciiLowerAlnum = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			t[c] = byte(c)
		case c >= 'A' && c <= 'Z':
			t[c] = byte(c) + 'a' - 'A'
		}
	}
	return t
}()

// appendLowerRust appends r as Rust's char::to_lowercase writes it: the Unicode
// lowercase mapping including SpecialCasing's unconditional entries, of which one
// changes length: İ (U+0130) becomes i and U+0307 COMBINING DOT ABOVE, where Go's
// unicode.ToLower gives a plain i. It takes no context, so a word-final Σ becomes σ,
// not ς (tantivy's LowerCaser lowercases char by char; Rust's str::to_lowercase would
// give ς).
func appendLowerRust(dst []byte, r rune) []byte {
	if r == '\u0130' {
		return append(dst, "i\u0307"...)
	}
	return utf8.AppendRune(dst, unicode.ToLower(r))
}
