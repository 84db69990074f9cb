package lsh

import (
	"crypto/sha1"
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf8"
	"unsafe"

	"github.com/cespare/xxhash/v2"
	"github.com/zeebo/xxh3"
	"golang.org/x/text/unicode/norm"
)

// span is a token's byte range in the normalized text.
type span struct{ start, end int32 }

// Hasher turns documents into shingles, shingle hashes and signatures under one Spec.
// It keeps its buffers between documents, so after warming up it allocates nothing per
// shingle or per document; it is not safe for concurrent use: give each goroutine its own
// (Spec.Signatures does).
type Hasher struct {
	spec   Spec
	perm   permutations
	fast   fastParams
	tables *normTables
	norm   []byte
	iter   norm.Iter
	toks   []span
	bounds []int32 // word bounds of norm (Norm.appendWords)
	keys   []uint8 // each shingle's length bucket (hashByLength)
	order  []int32 // the shingles in length order (hashByLength)
	lanes  []int64 // hashWide's starts then lengths, eight at a time
	buf    []byte
	low    []byte   // the milvus profile's lowercased word tokens, back to back
	base   []uint64 // one 64-bit base hash per distinct shingle (per shingle, fast), in no set order
	all    []uint64 // every shingle's hash before deduplication (hashShingles)
	set    []uint64 // open-addressing table deduplicating base
	count  []int32  // ShingleSet's buckets (sortedSet)
	sorted []uint64 // ShingleSet's hashes in bucket order
	spare  []uint64 // the table's previous memory, reused when it grows
	zero   bool     // base holds the hash 0
	xs     []uint64 // the 32-bit base hashes the permutations take, in uint64 lanes
	xsExt  []uint64 // those of them to be sign-extended from bit 31 (perm.bExt)
	acc    []uint64
	filled []uint64 // the fast scheme's bins that a shingle hashed to, a bit each
}

// NewHasher returns a Hasher for s, or the reason s is not valid.
func NewHasher(s Spec) (*Hasher, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	h := &Hasher{spec: s, tables: tablesFor(s.Norm)}
	if s.Scheme == Fast {
		h.fast = newFastParams(s.Seed)
	} else {
		h.perm = newPermutations(s.Scheme, s.Seed, s.Hashes)
		if s.Scheme == Milvus && s.Hash == SHA1 {
			h.perm.signExtend()
		}
	}
	return h, nil
}

// Spec returns the representation h computes.
func (h *Hasher) Spec() Spec { return h.spec }

// Normalized returns the text that the last Signature or ShingleSet call shingled: that
// document under the Spec's Norm, the bytes of Norm.Normalize, without normalizing it a
// second time. The slice is h's buffer, valid until its next call.
func (h *Hasher) Normalized() []byte { return h.norm }

// Shingles returns the distinct shingles of text in first-seen order, as the bytes that
// are hashed. It allocates; it is for inspection and tests, not for the hot path.
func (h *Hasher) Shingles(text string) []string {
	var out []string
	seen := map[string]bool{}
	h.eachShingle(text, func(b []byte) {
		if !seen[string(b)] {
			seen[string(b)] = true
			out = append(out, string(b))
		}
	})
	return out
}

// ShingleSet returns the sorted distinct 64-bit hashes of text's shingles: the set that
// ExactJaccard compares. The slice is owned by the caller.
func (h *Hasher) ShingleSet(text string) []uint64 {
	// Every shingle's hash, repeats included, then sorted and deduplicated at once: the
	// open-addressing table Signature deduplicates with, followed by a comparison sort,
	// cost about five times as much (half the CPU of a large sweep's exact Jaccard).
	h.hashAllShingles(text)
	return h.sortedSet(h.base)
}

// hashShingles fills h.base with the distinct 64-bit base hashes of text's shingles.
func (h *Hasher) hashShingles(text string) {
	h.base = h.base[:0]
	h.resetSet(len(text))
	if all, ok := h.charsWide(text, h.all); ok {
		h.all = all
		for _, v := range all {
			h.insert(v)
		}
		return
	}
	if t, n, ok := h.wordsInPlace(text); ok {
		b := h.bounds
		if h.spec.Hash == XXHash {
			// Hashed in length order and in pairs (hashByLength), then deduplicated: the
			// set's order does not matter to anything that reads it.
			if m := len(b) - n; m > 0 {
				all := slices.Grow(h.all[:0], m)[:m]
				h.all = all
				h.hashByLength(t, b, n, all)
				for _, v := range all {
					h.insert(v)
				}
			}
			return
		}
		for i := 0; i+n < len(b); i++ {
			h.insert(h.baseHash(t[b[i]+1 : b[i+n]]))
		}
		return
	}
	h.eachShingle(text, h.addShingle)
}

// hashAllShingles fills h.base with the base hashes of text's shingles, repeats included
// and in no particular order (see hashByLength):
// for the fast scheme, whose per-bin minimum makes deduplication a no-op.
func (h *Hasher) hashAllShingles(text string) {
	h.base = h.base[:0]
	if base, ok := h.charsWide(text, h.base); ok {
		h.base = base
		return
	}
	if t, n, ok := h.wordsInPlace(text); ok {
		b := h.bounds
		m := len(b) - n
		if m <= 0 {
			return
		}
		base := slices.Grow(h.base, m)[:m]
		if h.spec.Hash == XXHash {
			h.hashByLength(t, b, n, base)
		} else {
			for i := range base {
				base[i] = h.baseHash(t[b[i]+1 : b[i+n]])
			}
		}
		h.base = base
		return
	}
	h.eachShingle(text, h.appendShingle)
}

// charsWide is the character shingles' way on a CPU that hashes eight at a time
// (wideHash): it normalizes text and returns the XXH64 of each of its shingles, repeats
// included and in text order, in dst's memory; ok is false for any other representation
// (word or Milvus shingles, another hash, no wide hashing), which eachShingle takes one
// shingle at a time. One XXH64 call per shingle was the most of a character
// representation's shingling in a large sweep.
func (h *Hasher) charsWide(text string, dst []uint64) (hashes []uint64, ok bool) {
	if !wideHash || h.spec.Level != Char || h.spec.Scheme == Milvus || h.spec.Hash != XXHash {
		return dst, false
	}
	h.norm = h.spec.Norm.appendNormalized(h.norm[:0], &h.iter, h.tables, text)
	t := h.norm
	if len(t) == 0 {
		return dst[:0], true
	}
	h.runeStarts(t)
	starts, n := h.toks, h.spec.Size
	if len(starts)-1 <= n {
		return append(dst[:0], xxhash.Sum64(t)), true // the whole text, one shingle
	}
	m := len(starts) - n // shingle i is t[starts[i].start:starts[i+n].start]
	lanes := h.laneSets(m)
	longs := h.order[:0]
	p := 0
	for i := range m {
		at, end := starts[i].start, starts[i+n].start
		if end-at >= wideLong {
			longs = append(longs, int32(i))
			continue
		}
		g := laneSlot(p)
		lanes[g], lanes[g+8] = int64(at), int64(end-at)
		p++
	}
	h.order = longs
	hashes = slices.Grow(dst[:0], m)[:m]
	h.hashWide(t, lanes, p, hashes)
	for j, i := range longs {
		hashes[p+j] = xxhash.Sum64(t[starts[i].start:starts[int(i)+n].start])
	}
	return hashes, true
}

// wordsInPlace normalizes and splits text into words when its shingles are word
// shingles that lie in place in the normalized text (collapsed white space, not the
// milvus profile), the common case that hashShingles and hashAllShingles take without
// eachShingle's callback: shingle i is t[b[i]+1:b[i+n]] for i+n < len(b), where b is
// h.bounds (Norm.appendWords). A text with no word has no bounds.
func (h *Hasher) wordsInPlace(text string) (t []byte, n int, ok bool) {
	if h.spec.Level != Word || h.spec.Scheme == Milvus || !h.spec.Norm.CollapseSpace {
		return nil, 0, false
	}
	h.norm, h.bounds = h.spec.Norm.appendWords(h.norm[:0], h.bounds, &h.iter, h.tables, text)
	t = h.norm
	if len(t) == 0 {
		h.bounds = h.bounds[:0]
		return t, 1, true
	}
	return t, min(h.spec.Size, len(h.bounds)-1), true
}

func (h *Hasher) addShingle(b []byte) { h.insert(h.baseHash(b)) }

func (h *Hasher) appendShingle(b []byte) { h.base = append(h.base, h.baseHash(b)) }

func (h *Hasher) baseHash(b []byte) uint64 {
	switch h.spec.Hash {
	case SHA1:
		sum := sha1.Sum(b)
		return binary.LittleEndian.Uint64(sum[:8])
	case XXH3:
		return xxh3.Hash(b)
	default:
		return xxhash.Sum64(b)
	}
}

// resetSet empties the dedup table, sized for a document of n bytes (about n/6 word
// shingles); insert grows it when a document has more. The table keeps its memory
// between documents.
func (h *Hasher) resetSet(n int) {
	size := 64
	for size < n/2 && size < 1<<16 {
		size <<= 1
	}
	h.zero = false
	h.set = resize(h.set, size)
}

// resize returns s with length size, zeroed, reusing its memory when it is large enough.
func resize[T any](s []T, size int) []T {
	if cap(s) < size {
		return make([]T, size)
	}
	s = s[:size]
	clear(s)
	return s
}

// insert adds v to base unless it is there already. The table holds the hashes themselves
// (uniformly distributed already, so their low bits index it); 0 marks an empty slot, so a
// hash of 0 is tracked by a flag.
func (h *Hasher) insert(v uint64) {
	if v == 0 {
		if !h.zero {
			h.zero = true
			h.base = append(h.base, 0)
		}
		return
	}
	if 2*len(h.base) >= len(h.set) {
		h.growSet()
	}
	mask := uint64(len(h.set) - 1)
	for i := v & mask; ; i = (i + 1) & mask {
		switch h.set[i] {
		case v:
			return
		case 0:
			h.set[i] = v
			h.base = append(h.base, v)
			return
		}
	}
}

func (h *Hasher) growSet() {
	h.spare = resize(h.spare, 2*len(h.set))
	h.set, h.spare = h.spare, h.set
	mask := uint64(len(h.set) - 1)
	for _, v := range h.base {
		if v == 0 {
			continue
		}
		i := v & mask
		for h.set[i] != 0 {
			i = (i + 1) & mask
		}
		h.set[i] = v
	}
}

// eachShingle normalizes text and calls fn with the bytes of every shingle, duplicates
// included. The slice passed to fn is only valid during the call.
func (h *Hasher) eachShingle(text string, fn func([]byte)) {
	h.norm = h.spec.Norm.appendNormalized(h.norm[:0], &h.iter, h.tables, text)
	t := h.norm
	n := h.spec.Size
	if len(t) == 0 {
		return
	}
	milvus := h.spec.Scheme == Milvus
	if h.spec.Level == Char {
		if milvus { // Milvus shingles bytes
			if len(t) <= n {
				fn(t)
				return
			}
			for i := 0; i+n <= len(t); i++ {
				fn(t[i : i+n])
			}
			return
		}
		h.runeStarts(t)
		starts := h.toks // start offsets in .start; a sentinel at len(t)
		if len(starts)-1 <= n {
			fn(t)
			return
		}
		for i := 0; i+n < len(starts); i++ {
			fn(t[starts[i].start:starts[i+n].start])
		}
		return
	}
	switch {
	case milvus:
		h.milvusTokens(t)
		t = h.low
	case h.spec.Norm.CollapseSpace:
		h.spaceTokens(t)
	default:
		h.fieldTokens(t)
	}
	toks := h.toks
	if len(toks) == 0 {
		return
	}
	if len(toks) < n {
		n = len(toks)
	}
	// Milvus's tokens lie back to back in h.low and single-space-separated tokens (always
	// so with collapsed whitespace) in t, so those shingles are hashed in place; otherwise
	// the shingle is assembled in buf.
	inPlace := milvus || h.spec.Norm.CollapseSpace
	for i := 0; i+n <= len(toks); i++ {
		if inPlace {
			fn(t[toks[i].start:toks[i+n-1].end])
			continue
		}
		h.buf = h.buf[:0]
		for j := i; j < i+n; j++ {
			if j > i {
				h.buf = append(h.buf, ' ')
			}
			h.buf = append(h.buf, t[toks[j].start:toks[j].end]...)
		}
		fn(h.buf)
	}
}

// spaceTokens splits t at single spaces: the only white space left after CollapseSpace.
// Words are short, so it looks for spaces eight bytes at a time rather than calling
// bytes.IndexByte once per word.
func (h *Hasher) spaceTokens(t []byte) {
	toks := h.toks[:0]
	start, i := 0, 0
	for ; i+8 <= len(t); i += 8 {
		for m := zeroBytes(binary.LittleEndian.Uint64(t[i:]) ^ lowBits*' '); m != 0; m &= m - 1 {
			end := i + bits.TrailingZeros64(m)>>3
			toks = append(toks, span{int32(start), int32(end)})
			start = end + 1
		}
	}
	for ; i < len(t); i++ {
		if t[i] == ' ' {
			toks = append(toks, span{int32(start), int32(i)})
			start = i + 1
		}
	}
	h.toks = append(toks, span{int32(start), int32(len(t))})
}

// fieldTokens splits t at Unicode white space, like strings.Fields.
func (h *Hasher) fieldTokens(t []byte) {
	h.toks = h.toks[:0]
	start := -1
	for i := 0; i < len(t); {
		c := t[i]
		var r rune
		size := 1
		if c < utf8.RuneSelf {
			r = rune(c)
		} else {
			r, size = utf8.DecodeRune(t[i:])
		}
		if isSpace(r) {
			if start >= 0 {
				h.toks = append(h.toks, span{int32(start), int32(i)})
				start = -1
			}
		} else if start < 0 {
			start = i
		}
		i += size
	}
	if start >= 0 {
		h.toks = append(h.toks, span{int32(start), int32(len(t))})
	}
}

// milvusTokens is Milvus's default "standard" analyzer: tantivy's SimpleTokenizer, which
// cuts t into maximal runs of runes for which Rust's char::is_alphanumeric holds (so
// "isn't" gives isn and t, "3.14" gives 3 and 14, and a run of ideographs and kana with
// no separator is one token), then tantivy's LowerCaser, which lowercases each token
// rune by rune with char::to_lowercase. There is no length limit and no stop word. The
// lowercased tokens are written back to back into h.low, their spans into h.toks, so a
// shingle (consecutive tokens joined with nothing, as Milvus joins them) is one slice.
func (h *Hasher) milvusTokens(t []byte) {
	h.toks = h.toks[:0]
	low := h.low[:0]
	start := -1 // where the current token starts in low, or -1 between tokens
	for i := 0; i < len(t); {
		c := t[i]
		if c < utf8.RuneSelf {
			i++
			if l := asciiLowerAlnum[c]; l != 0 {
				if start < 0 {
					start = len(low)
				}
				low = append(low, l)
				continue
			}
		} else {
			r, size := utf8.DecodeRune(t[i:])
			i += size
			if isAlnumRust(r) {
				if start < 0 {
					start = len(low)
				}
				low = appendLowerRust(low, r)
				continue
			}
		}
		if start >= 0 {
			h.toks = append(h.toks, span{int32(start), int32(len(low))})
			start = -1
		}
	}
	if start >= 0 {
		h.toks = append(h.toks, span{int32(start), int32(len(low))})
	}
	h.low = low
}

// runeStarts records the byte offset of every rune of t in h.toks[i].start, plus a
// sentinel at len(t).
func (h *Hasher) runeStarts(t []byte) {
	h.toks = h.toks[:0]
	for i := 0; i < len(t); {
		h.toks = append(h.toks, span{start: int32(i)})
		if t[i] < utf8.RuneSelf {
			i++
		} else {
			_, size := utf8.DecodeRune(t[i:])
			i += size
		}
	}
	h.toks = append(h.toks, span{start: int32(len(t))})
}

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// hashByLength sets base[j] to the XXH64 of the word n-shingles of t (shingle i is
// t[b[i]+1:b[i+n]], bounds as from Norm.appendWords), taken in order of length (those
// of 64 bytes and more last), not in text order; the fast scheme keeps a minimum per
// bin, so the order of its hashes does not matter.
//
// XXH64 branches on the length: a 32-byte stripe or not, how many 8-byte words, a
// 4-byte word, how many single bytes. Word shingles in text order have lengths that look
// random to the branch predictor, and each miss also keeps the next hash from starting
// early. In length order every branch goes the way it went the time before, and two
// shingles of one length are hashed side by side (xxh64Pair). Per real word 5-shingle
// of testdata/corpus-whole, on one core of a Zen 1 EPYC: 38 ns in text order, 28 in
// length order, 20 two at a time; the counting sort costs less than the difference (see
// the README's speed section for the end-to-end figures).
func (h *Hasher) hashByLength(t []byte, b []int32, n int, base []uint64) {
	const long = wideLong // shingles this long or longer share the last bucket
	m := len(b) - n
	// A counting sort: each shingle's bucket, then where each bucket starts. Two tables
	// of counts, so that neighbours of one length do not wait on each other's increment.
	keys := slices.Grow(h.keys[:0], m)[:m]
	h.keys = keys
	var c0, c1 [long + 1]int32
	i := 0
	for ; i+2 <= m; i += 2 {
		k0 := min(b[i+n]-b[i]-1, long)
		k1 := min(b[i+1+n]-b[i+1]-1, long)
		keys[i], keys[i+1] = uint8(k0), uint8(k1)
		c0[k0]++
		c1[k1]++
	}
	if i < m {
		k0 := min(b[i+n]-b[i]-1, long)
		keys[i] = uint8(k0)
		c0[k0]++
	}
	var at, end [long + 1]int32 // where each bucket's next entry goes, and its end
	sum := int32(0)
	for l := range at {
		at[l] = sum
		sum += c0[l] + c1[l]
		end[l] = sum
	}
	if wideHash {
		// Placed straight into the sets of eight starts and lengths that xxh64x8 takes
		// (hashWide); a long shingle's start is its index.
		lanes := h.laneSets(m)
		for i, k := range keys {
			p := at[k]
			at[k]++
			v := int64(b[i] + 1)
			if k == long {
				v = int64(i)
			}
			g := laneSlot(int(p))
			lanes[g], lanes[g+8] = v, int64(k)
		}
		short := int(end[long-1])
		h.hashWide(t, lanes, short, base)
		for p := short; p < m; p++ {
			i := lanes[laneSlot(p)]
			base[p] = xxhash.Sum64(t[b[i]+1 : b[int(i)+n]])
		}
		return
	}
	// order holds the start in t of each shingle shorter than long (its length is its
	// bucket's), and the index of each longer one.
	order := slices.Grow(h.order[:0], m)[:m]
	h.order = order
	for i, k := range keys {
		v := b[i] + 1
		if k == long {
			v = int32(i)
		}
		order[at[k]] = v
		at[k]++
	}
	j := 0
	lo := int32(0)
	for l := range int32(long) {
		bucket := order[lo:end[l]]
		for ; len(bucket) >= 2; bucket = bucket[2:] {
			s0, s1 := bucket[0], bucket[1]
			base[j], base[j+1] = xxh64Pair(t[s0:s0+l], t[s1:s1+l])
			j += 2
		}
		for _, s := range bucket {
			base[j] = xxhash.Sum64(t[s : s+l])
			j++
		}
		lo = end[l]
	}
	for _, i := range order[lo:] {
		base[j] = xxhash.Sum64(t[b[i]+1 : b[int(i)+n]])
		j++
	}
}

// wideLong is the length from which a shingle is hashed alone: xxh64x8 takes shorter ones.
const wideLong = 64

// laneSets returns h's buffer for the starts and lengths of m shingles in xxh64x8's
// sets (laneSlot).
func (h *Hasher) laneSets(m int) []int64 {
	size := 16 * ((m + 7) / 8)
	h.lanes = slices.Grow(h.lanes[:0], size)[:size]
	return h.lanes
}

// laneSlot is where the p-th shingle's start goes in the lane sets, its length 8 after:
// sets of sixteen values, eight starts then their eight lengths, one set per xxh64x8 call.
func laneSlot(p int) int { return p/8*16 + p%8 }

// hashWide hashes the count shingles of the lane sets (laneSets, laneSlot), all shorter
// than wideLong, on a CPU that hashes eight at a time (wideHash), writing their hashes
// to base[:count]: one xxh64x8 call per set, so a set's shingles should differ little in
// length. The lanes read up to 7 bytes past a shingle's end, so t (h.norm) gets 8 bytes
// of room past its end.
func (h *Hasher) hashWide(t []byte, lanes []int64, count int, base []uint64) {
	if cap(t)-len(t) < 8 {
		t = slices.Grow(t, 8)
		h.norm = t
	}
	p := unsafe.SliceData(t)
	// Every call's starts and lengths are written before the first call: xxh64x8 loads
	// each set of eight as one vector, which waited on the eight stores just made (a store
	// forwarding stall, a quarter of its time) when each call's were written just before it.
	g := 0
	for ; g < count/8; g++ {
		xxh64x8(p, (*[8]int64)(lanes[16*g:]), (*[8]int64)(lanes[16*g+8:]), (*[8]uint64)(base[8*g:]), 0xFF)
	}
	if r := count % 8; r > 0 { // the last, short set: its other lanes masked off
		var out [8]uint64
		xxh64x8(p, (*[8]int64)(lanes[16*g:]), (*[8]int64)(lanes[16*g+8:]), &out, 1<<r-1)
		copy(base[8*g:], out[:r])
	}
}
