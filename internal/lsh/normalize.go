package lsh

import (
	"context"
	"encoding/binary"
	"math/bits"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/dedupstudio/dedupstudio/internal/par"
	"golang.org/x/text/unicode/norm"
)

// Normalize applies the steps of n to text and returns the result. Invalid UTF-8 bytes are
// replaced by U+FFFD so the output is always valid UTF-8 (importers reject invalid UTF-8
// before it gets here; this keeps the engine total).
func (n Norm) Normalize(text string) string {
	var it norm.Iter
	return string(n.appendNormalized(nil, &it, tablesFor(n), text))
}

// Normalizer applies a Norm to many short strings, keeping its tables between calls.
// It is not safe for concurrent use.
type Normalizer struct {
	norm  Norm
	table *normTables
	iter  norm.Iter
	buf   []byte
}

// NewNormalizer returns a Normalizer for n.
func NewNormalizer(n Norm) *Normalizer { return &Normalizer{norm: n, table: tablesFor(n)} }

// Normalize is n.Normalize(s).
func (z *Normalizer) Normalize(s string) string {
	z.buf = z.norm.appendNormalized(z.buf[:0], &z.iter, z.table, s)
	return string(z.buf)
}

// appendNormalized appends the normalized text to dst and returns it. it and table (n's
// tablesFor) are kept by the caller between documents, so nothing is allocated once dst
// has grown.
//
// NFKC is applied segment by segment, only where the text needs it: a rune that NFKC
// leaves alone in any context (nfkcStable: every ASCII byte, most letters of most
// scripts) passes through with one bit lookup; at the first rune that might change, the
// text from the previous rune up to the next stable rune is composed with x/text's norm
// and fed through the other steps. Normalization works between boundaries, so the result
// equals composing the whole text first.
func (n Norm) appendNormalized(dst []byte, it *norm.Iter, table *normTables, text string) []byte {
	if n == (Norm{}) && utf8.ValidString(text) {
		return append(dst, text...)
	}
	st := stepper{n: n, table: table}
	st.run(dst, it, text)
	return st.dst
}

// appendWords is appendNormalized for a Norm with CollapseSpace, which also returns the
// bounds of the words of the normalized text, reusing the memory of bounds: -1, the index
// of each space in the returned slice, then its length, so word i is
// out[bounds[i]+1:bounds[i+1]] and the words i..j-1 joined by their spaces are
// out[bounds[i]+1:bounds[j]]. The spaces are recorded as they are written, which saves
// looking for them again.
func (n Norm) appendWords(dst []byte, bounds []int32, it *norm.Iter, table *normTables, text string) ([]byte, []int32) {
	st := stepper{n: n, table: table, track: true, spaces: append(bounds[:0], int32(len(dst))-1)}
	st.run(dst, it, text)
	return st.dst, append(st.spaces, int32(len(st.dst)))
}

// run appends the normalized text to dst, leaving the result in st.dst.
func (st *stepper) run(dst []byte, it *norm.Iter, text string) {
	n, table := st.n, st.table
	st.dst = slices.Grow(dst, len(text)+8)
	// Where the previous rune started, in text and in the output, and the state before it.
	prevAt, prevLen, prevPending, prevWrote := 0, len(st.dst), false, false
	raw := unsafe.Slice(unsafe.StringData(text), len(text))
	// Where the next 64-byte block may be tried: past a non-ASCII byte that one refused.
	wide := 0
	if !wideBlocks || n.StripPunct {
		wide = len(text)
	}
	// The same for 32-byte blocks (block32), on CPUs with AVX2 and no 64-byte blocks.
	narrow := len(text)
	if !wideBlocks && narrowBlocks && !n.StripPunct {
		narrow = 0
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			// 64 bytes at a time where the CPU can (block64, on the same terms as the
			// eight-byte blocks below).
			if i >= wide && i+64 <= len(raw) && (i+64 == len(raw) || raw[i+64] < utf8.RuneSelf) {
				if k := st.block64(raw[i : i+64]); k == 64 {
					i += 64
					continue
				} else {
					wide = i + k + 1
				}
			}
			if i >= narrow && i+32 <= len(raw) && (i+32 == len(raw) || raw[i+32] < utf8.RuneSelf) {
				if k := st.block32(raw[i : i+32]); k == 32 {
					i += 32
					continue
				} else if k >= 0 {
					narrow = i + k + 1
				}
			}
			// Eight bytes at a time while they are ASCII. A block is taken whole only when
			// the byte after it is ASCII too (or the text ends there): only then can no
			// combining rune reach back into the block, so prevAt and the rest need not
			// be kept inside it (the next iteration sets them before any rune needs them).
			if i+8 <= len(raw) {
				w := binary.LittleEndian.Uint64(raw[i:])
				if hi := w & highBits; hi != 0 {
					// ASCII up to the first non-ASCII byte: one byte at a time.
					for end := i + bits.TrailingZeros64(hi)>>3; i < end; i++ {
						prevAt, prevLen, prevPending, prevWrote = i, len(st.dst), st.pending, st.wrote
						st.ascii(raw[i])
					}
					continue
				}
				if i+8 == len(raw) || raw[i+8] < utf8.RuneSelf {
					if !st.block(w) {
						for end := i + 8; i < end; i++ {
							st.ascii(raw[i])
						}
						// The block's last byte is ASCII and so is the next: nothing
						// composes across, prevAt is set before it is needed.
						continue
					}
					i += 8
					continue
				}
			}
			prevAt, prevLen, prevPending, prevWrote = i, len(st.dst), st.pending, st.wrote
			st.ascii(c)
			i++
			continue
		}
		var r rune
		var size int
		if c < 0xE0 && c >= 0xC2 && i+1 < len(raw) && raw[i+1]&0xC0 == 0x80 {
			r, size = rune(c&0x1F)<<6|rune(raw[i+1]&0x3F), 2 // U+0080..U+07FF
		} else {
			r, size = utf8.DecodeRuneInString(text[i:])
			if r == utf8.RuneError && size == 1 {
				// An invalid byte becomes U+FFFD and nothing composes with it.
				st.rune(r)
				i++
				prevAt, prevLen, prevPending, prevWrote = i, len(st.dst), st.pending, st.wrote
				continue
			}
		}
		if r < 1<<16 {
			if e := table.runes.lookup(r); e&runeUnstable == 0 {
				prevAt, prevLen, prevPending, prevWrote = i, len(st.dst), st.pending, st.wrote
				if e == runeSame && size == 2 && !st.pending {
					// Left alone, nothing owed before it: its two bytes as they are
					// (most letters of two-byte scripts; utf8.AppendRune calls out).
					st.dst = append(st.dst, c, raw[i+1])
					st.wrote = true
				} else {
					st.entry(r, e)
				}
				i += size
				continue
			}
		} else if !n.NFKC {
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
			if (r == utf8.RuneError && size == 1) || (r < 1<<16 && table.runes.lookup(r)&runeUnstable == 0) {
				break
			}
			end += size
		}
		st.dst, st.pending, st.wrote = st.dst[:prevLen], prevPending, prevWrote
		for k := len(st.spaces); k > 0 && st.spaces[k-1] >= int32(prevLen); k-- {
			st.spaces = st.spaces[:k-1] // spaces written since, undone too
		}
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
}

// stepper applies every step but NFKC, rune by rune.
type stepper struct {
	n       Norm
	table   *normTables
	dst     []byte
	pending bool    // a collapsed space is owed before the next output
	wrote   bool    // something has been written (no leading space)
	track   bool    // record where spaces are written
	spaces  []int32 // with track, the index in dst of each space written
}

// space writes the collapsed space owed.
func (st *stepper) space() {
	if st.track {
		st.spaces = append(st.spaces, int32(len(st.dst)))
	}
	st.dst = append(st.dst, ' ')
	st.pending = false
}

// ascii handles one ASCII byte with a table lookup.
func (st *stepper) ascii(c byte) {
	switch m := st.table.ascii[c]; m {
	case asciiDrop:
	case asciiSpace:
		st.pending = st.wrote
	default:
		if st.pending {
			st.space()
		}
		st.dst = append(st.dst, byte(m))
		st.wrote = true
	}
}

// Eight-byte blocks, SWAR: the bytes of a uint64 (little-endian, byte j in bits 8j..8j+7)
// classified at once. Every mask below has 0x80 in each byte that is in the class.
const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// inRange marks the bytes of w in lo..hi; every byte of w must be ASCII (high bit clear),
// so no addition carries into the next byte.
func inRange(w uint64, lo, hi byte) uint64 {
	return (w + lowBits*uint64(0x80-lo)) &^ (w + lowBits*uint64(0x7F-hi)) & highBits
}

// zeroBytes marks the bytes of x that are 0, exactly (no false positive from a borrow).
func zeroBytes(x uint64) uint64 {
	return ^((x&^highBits + ^uint64(highBits)) | x | ^uint64(highBits))
}

// block applies the steps to eight ASCII bytes w (text order, little-endian) at once, as
// eight calls of ascii would, and reports true; or reports false, changing nothing, when
// a byte needs ascii: punctuation to strip, two white space bytes side by side, or white
// space where collapsing depends on what came before (a leading one, or one after a
// pending space).
func (st *stepper) block(w uint64) bool {
	n := st.n
	if n.StripPunct && inRange(w, '!', '/')|inRange(w, ':', '@')|inRange(w, '[', '`')|inRange(w, '{', '~') != 0 {
		return false
	}
	if n.FoldDigits {
		w &^= inRange(w, '0', '9') >> 7 * 0x0F // '0'..'9' are 0x30..0x39
	}
	if n.Lower {
		w |= inRange(w, 'A', 'Z') >> 2 // set 0x20
	}
	if cap(st.dst)-len(st.dst) < 9 {
		st.dst = slices.Grow(st.dst, 64)
	}
	l := len(st.dst)
	if !n.CollapseSpace {
		st.dst = st.dst[:l+8]
		binary.LittleEndian.PutUint64(st.dst[l:], w)
		st.wrote = true
		return true
	}
	sp := inRange(w, '\t', '\r') | zeroBytes(w^(lowBits*' '))
	if sp&(sp<<8) != 0 || (sp&0x80 != 0 && (st.pending || !st.wrote)) {
		return false
	}
	// Each white space byte stands alone between written bytes: it becomes one space.
	w = w&^(sp>>7*0xFF) | sp>>2
	if st.pending { // the block starts with a written byte
		st.space()
		l++
	}
	st.dst = st.dst[:l+8]
	binary.LittleEndian.PutUint64(st.dst[l:], w)
	if st.track {
		for m := sp &^ (1 << 63); m != 0; m &= m - 1 { // the last byte's space is owed
			st.spaces = append(st.spaces, int32(l+bits.TrailingZeros64(m)>>3))
		}
	}
	st.pending = sp>>63 != 0 // a trailing space is owed, not written
	if st.pending {
		st.dst = st.dst[:l+7]
	}
	st.wrote = true
	return true
}

// blockMode is the steps of n the block kernels take: 1 lower A-Z, 2 fold digits, 4
// collapse white space (block64AVX512, block32AVX2).
func (n Norm) blockMode() uint64 {
	var mode uint64
	if n.Lower {
		mode |= 1
	}
	if n.FoldDigits {
		mode |= 2
	}
	if n.CollapseSpace {
		mode |= 4
	}
	return mode
}

// block64 is block for 64 ASCII bytes at once, on CPUs with AVX-512 BW and VBMI2
// (wideBlocks), for every Norm but StripPunct: the steps on all 64 bytes, then the
// white space bytes that collapsing drops (one after another, at the start with nothing
// written yet, and the run that ends the block, whose space is owed) squeezed out with
// VPCOMPRESSB. It returns 64, or, changing nothing, the index of the first byte that is
// not ASCII.
func (st *stepper) block64(src []byte) int {
	n := st.n
	mode := n.blockMode()
	st.dst = slices.Grow(st.dst, 65)
	l := len(st.dst)
	// An owed space goes before the block when the block starts with a written byte;
	// when it starts with white space, that byte's space is the one owed.
	lead := 0
	if st.pending && !isSpace(rune(src[0])) {
		lead = 1
	}
	out := st.dst[l : l+lead+64]
	k, spaces, flags := block64AVX512(&src[0], &out[lead], mode, !st.wrote)
	if flags&1 == 0 {
		return k
	}
	if lead == 1 {
		st.space() // writes out[0]
	}
	base := int32(l + lead)
	if st.track {
		for ; spaces != 0; spaces &= spaces - 1 {
			st.spaces = append(st.spaces, base+int32(bits.TrailingZeros64(spaces)))
		}
	}
	st.dst = st.dst[:int(base)+k]
	if flags&4 != 0 {
		st.wrote = true
	}
	st.pending = flags&2 != 0 && st.wrote
	return 64
}

// block32 is block for 32 ASCII bytes at once, on CPUs with AVX2 (narrowBlocks) and
// without the 64-byte blocks, for every Norm but StripPunct, on the same terms as block:
// it returns 32, or, changing nothing, the index of the first byte that is not ASCII,
// or -1 when a white space byte needs the byte-wise path (two side by side, or one at
// the start with a space owed or nothing written yet).
func (st *stepper) block32(src []byte) int {
	n := st.n
	mode := n.blockMode()
	var buf [32]byte
	sp, high := block32AVX2(&src[0], &buf[0], mode)
	if high != 0 {
		return bits.TrailingZeros32(high)
	}
	if !n.CollapseSpace {
		st.dst = append(st.dst, buf[:]...)
		st.wrote = true
		return 32
	}
	if sp&(sp<<1) != 0 || (sp&1 != 0 && (st.pending || !st.wrote)) {
		return -1
	}
	if st.pending { // the block starts with a written byte
		st.space()
	}
	l := len(st.dst)
	st.dst = append(st.dst, buf[:]...)
	if st.track {
		for m := sp &^ (1 << 31); m != 0; m &= m - 1 { // the last byte's space is owed
			st.spaces = append(st.spaces, int32(l+bits.TrailingZeros32(m)))
		}
	}
	st.pending = sp>>31 != 0 // a trailing space is owed, not written
	if st.pending {
		st.dst = st.dst[:l+31]
	}
	st.wrote = true
	return 32
}

// entry handles one non-ASCII rune r by its runeTable entry e.
func (st *stepper) entry(r rune, e uint32) {
	switch e &^= runeUnstable; e {
	case runeSpace:
		st.pending = st.wrote
		return
	case runeDrop:
		return
	}
	if st.pending {
		st.space()
	}
	st.dst = utf8.AppendRune(st.dst, r+rune(e)-runeSame)
	st.wrote = true
}

// rune handles one non-ASCII rune.
func (st *stepper) rune(r rune) {
	if r < 1<<16 {
		st.entry(r, st.table.runes.lookup(r))
		return
	}
	// Outside the BMP, from the definitions.
	st.entry(r, entryOf(r, st.n.mapRune(r)))
}

// mapRune is what the steps but NFKC make of r: a rune, runeSpace or runeDrop.
func (n Norm) mapRune(r rune) uint32 {
	if n.CollapseSpace && isSpace(r) {
		return runeSpace
	}
	if n.StripPunct && isPunct(r) {
		return runeDrop
	}
	if n.FoldDigits && isDigit(r) {
		r = '0'
	}
	if n.Lower {
		r = toLower(r)
	}
	return uint32(r)
}

// nfkcAloneOf returns m when NFKC turns the BMP rune r into the single rune m in any
// context (nfkcAloneTable; nfkcAlone is the definition).
func nfkcAloneOf(r rune) (rune, bool) {
	i, ok := slices.BinarySearchFunc(nfkcAloneTable, r, func(p [2]rune, r rune) int { return int(p[0] - r) })
	if !ok {
		return 0, false
	}
	return nfkcAloneTable[i][1], true
}

// nfkcStable reports whether rune r is certainly unchanged by NFKC in any context.
// Runes outside the BMP are rare in text and take the caller's slow path.
func nfkcStable(r rune) bool {
	return r < 1<<16 && nfkcSafeTable[r/64]&(1<<(r%64)) != 0
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

// normTables say what a Norm's steps but NFKC make of each ASCII byte and each rune of
// the Basic Multilingual Plane, and which runes NFKC may change.
type normTables struct {
	ascii asciiTable
	runes runeTable
}

// tablesFor returns n's tables, built once per Norm and shared.
func tablesFor(n Norm) *normTables {
	key := 0
	for i, on := range []bool{n.NFKC, n.Lower, n.StripPunct, n.FoldDigits, n.CollapseSpace} {
		if on {
			key |= 1 << i
		}
	}
	return normTableCache[key](n)
}

var normTableCache = func() (c [32]func(Norm) *normTables) {
	for i := range c {
		var once sync.Once
		var t *normTables
		c[i] = func(n Norm) *normTables {
			once.Do(func() { t = &normTables{ascii: *buildASCIITable(n), runes: buildRuneTable(n)} })
			return t
		}
	}
	return c
}()

// runeTable maps each BMP rune to an entry saying what the steps but NFKC make of it:
// runeSpace (white space to collapse), runeDrop (punctuation to strip) or a rune, stored
// as its distance from the rune looked up plus runeSame, so that a rune left alone has
// entry runeSame whatever it is. With NFKC, a rune that NFKC makes one other rune
// wherever it stands (nfkcAlone) has the entry of that rune, and runeUnstable is set on
// any other rune that is not nfkcStable. It is two-level, 256-rune blocks with identical blocks stored once
// (most blocks map every rune to itself), and replaces up to five searches of Unicode
// tables per rune by one lookup.
type runeTable struct {
	index  [1 << 8]uint16
	blocks [][1 << 8]uint32
}

const (
	runeSame     = 0x110000 // entry of a rune mapped to itself; others differ by the distance
	runeSpace    = 0x300000 // beyond runeSame ± every distance
	runeDrop     = 0x300001
	runeUnstable = uint32(1 << 31)
)

// lookup returns r's entry; r must be in the BMP.
func (t *runeTable) lookup(r rune) uint32 {
	return t.blocks[t.index[uint16(r)>>8]][uint8(r)]
}

// entryOf encodes what the steps make of r (Norm.mapRune) as a runeTable entry.
func entryOf(r rune, m uint32) uint32 {
	if m == runeSpace || m == runeDrop {
		return m
	}
	return uint32(int32(m) - r + runeSame)
}

func buildRuneTable(n Norm) runeTable {
	// Every block's entries on every core (1.1 ms on two cores, 1.6-2.3 on one, at every
	// process's start), then the blocks shared in order. What NFKC makes of a rune comes
	// from the generated tables (unicodetables.go).
	var all [1 << 8][1 << 8]uint32
	par.Chunks(context.Background(), 1<<8, 8, func(from, to int) {
		for hi := from; hi < to; hi++ {
			for lo := range 1 << 8 {
				r := rune(hi<<8 | lo) // surrogates too, never looked up
				e := entryOf(r, n.mapRune(r))
				if n.NFKC && !nfkcStable(r) {
					if m, ok := nfkcAloneOf(r); ok {
						e = entryOf(r, n.mapRune(m))
					} else {
						e |= runeUnstable
					}
				}
				all[hi][lo] = e
			}
		}
	})
	var t runeTable
	seen := map[[1 << 8]uint32]uint16{}
	for hi := range 1 << 8 {
		block := all[hi]
		b, ok := seen[block]
		if !ok {
			b = uint16(len(t.blocks))
			seen[block] = b
			t.blocks = append(t.blocks, block)
		}
		t.index[hi] = b
	}
	return t
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
		return alnumTable[r/64]&(1<<(r%64)) != 0
	}
	return isAlnumTables(r)
}

func isAlnumTables(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) ||
		unicode.In(r, unicode.Other_Alphabetic, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

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
