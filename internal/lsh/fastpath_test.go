package lsh

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
)

// The hot path (eight-byte ASCII blocks, the rune table, tokens split eight bytes at a
// time, shingles hashed in place) is checked here against the plain definitions:
// referenceNormalize, then tokens and shingles built with the strings package.

// referenceShingles returns every shingle of text under s, repeats included, in order.
func referenceShingles(s Spec, text string) []string {
	t := referenceNormalize(s.Norm, text)
	n := s.Size
	if t == "" {
		return nil
	}
	windows := func(units []string, sep string) []string {
		if len(units) == 0 {
			return nil
		}
		if len(units) <= n {
			return []string{strings.Join(units, sep)}
		}
		var out []string
		for i := 0; i+n <= len(units); i++ {
			out = append(out, strings.Join(units[i:i+n], sep))
		}
		return out
	}
	switch {
	case s.Level == Char && s.Scheme == Milvus:
		var bytes []string
		for i := range len(t) {
			bytes = append(bytes, t[i:i+1])
		}
		return windows(bytes, "")
	case s.Level == Char:
		var runes []string
		for _, r := range t {
			runes = append(runes, string(r))
		}
		return windows(runes, "")
	case s.Scheme == Milvus:
		var toks []string
		for _, f := range strings.FieldsFunc(t, func(r rune) bool { return !isAlnumRust(r) }) {
			var low []byte
			for _, r := range f {
				low = appendLowerRust(low, r)
			}
			toks = append(toks, string(low))
		}
		return windows(toks, "")
	default:
		return windows(strings.FieldsFunc(t, unicode.IsSpace), " ")
	}
}

func distinct(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// fastPathSpecs cover every code path of shingling: each norm step alone and together,
// collapsed white space (tokens in place) or not (tokens joined), word and char level,
// every scheme and base hash.
var fastPathSpecs = []string{
	"k=16",
	"scheme=fast k=16",
	"scheme=fast k=16 size=3 hash=xxh3",
	"norm=nfkc+lower+punct+digits+space size=3 k=16 hash=sha1",
	"norm=lower+space size=2 k=16",
	"norm=space size=4 k=16 hash=xxh3",
	"norm=punct size=2 k=16",
	"norm=digits+lower size=2 k=16",
	"norm=none size=3 k=16",
	"norm=nfkc level=char size=4 k=16",
	"level=char size=5 k=16 scheme=fast",
	"level=char size=20 k=16", // shingles of 64 bytes and more in scripts of 3- and 4-byte runes
	"norm=none level=char size=1 k=16 scheme=fast",
	"scheme=datasketch k=16",
	"scheme=datasketch norm=nfkc+lower+space k=16",
	"scheme=milvus k=16",
	"scheme=milvus norm=nfkc+lower+space k=16 hash=sha1",
	"scheme=milvus level=char size=4 k=16",
}

// checkPaths compares every normalization of norms over texts with the reference, and
// every spec of fastPathSpecs over hashed (checkFastPath).
func checkPaths(t *testing.T, norms []Norm, texts, hashed []string) {
	t.Helper()
	for _, n := range norms {
		z := NewNormalizer(n)
		for _, text := range texts {
			if got, want := z.Normalize(text), referenceNormalize(n, text); got != want {
				t.Fatalf("%v.Normalize(%q) =\n%q\nwant\n%q", n, text, got, want)
			}
		}
	}
	for _, spec := range fastPathSpecs {
		h, err := NewHasher(mustSpec(t, spec))
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range hashed {
			checkFastPath(t, h, text)
		}
	}
}

// checkFastPath compares h's shingles and signature of text with the definitions'.
func checkFastPath(t *testing.T, h *Hasher, text string) {
	t.Helper()
	s := h.Spec()
	ref := referenceShingles(s, text)
	if got, want := h.Shingles(text), distinct(ref); !slices.Equal(got, want) {
		t.Fatalf("[%v] Shingles(%q) =\n%q\nwant\n%q", s, text, got, want)
	}
	if got, want := h.Signature(text, nil), h.SignatureOfShingles(ref, nil); !slices.Equal(got, want) {
		t.Fatalf("[%v] Signature(%q) differs from the signature of its reference shingles", s, text)
	}
	var set []uint64
	for _, sh := range ref {
		set = append(set, h.baseHash([]byte(sh)))
	}
	slices.Sort(set)
	if got, want := h.ShingleSet(text), slices.Compact(set); !slices.Equal(got, want) {
		t.Fatalf("[%v] ShingleSet(%q) = %x\nwant the sorted distinct hashes of its reference shingles %x", s, text, got, want)
	}
	h.Signature(text, nil)
	if got, want := string(h.Normalized()), referenceNormalize(s.Norm, text); got != want {
		t.Fatalf("[%v] after Signature(%q), Normalized() =\n%q\nwant\n%q", s, text, got, want)
	}
}

// randomText draws text from pieces that take every path of the normalizer: runs of
// ASCII long and short (so eight-byte blocks start and end anywhere), every ASCII white
// space and control byte, punctuation and digits, letters of two-byte and three-byte
// scripts with their case pairs, runes NFKC changes or composes (ligatures, full width,
// combining marks after ASCII and after other runes, Hangul jamo, U+0130), Unicode white
// space, runes outside the BMP, and invalid UTF-8 of every kind.
func randomText(rng *rand.Rand) string {
	pieces := []string{
		"the", "Quick", "BROWN", "fox", "jumps", "over", "lazy", "dog", "a", "Go", "x",
		" ", " ", " ", "  ", "\t", "\n", "\r\n", "\v", "\f", " \t ", "\x00", "\x1f", "\x7f", "\x1c",
		",", ".", "!", "'", "\"", "(", ")", "-", "_", "~", "{", "}", "@", "[", "`", "/", ":",
		"0", "42", "3.14", "1999", "Ⅻ", "٣", "²",
		"Ünïcödé", "straße", "ΣΊΣΥΦΟΣ", "σίσυφος", "Привет", "МИР", "עברית", "عربي", "ǅ", "İstanbul", "ı",
		"日本語", "のテキスト", "한국어", "中文", "Ａ１", "（ｗ）", "ﬁ", "ﬂow", "½", "㎏", "ℌ",
		"e\u0301", "\u0301", "x\u0323\u0302y", "\u1100\u1161\u11a8", "\u1100", "\u11a8", "A\u030a",
		"\u00a0", "\u2003", "\u0085", "\u3000", "\u2028", "\u200b", "\ufeff",
		"😀", "\U0001D400", "\U0001F1EB\U0001F1F7", "\U00010400", "𝔘",
		"\xff", "\xfe", "\xc0\x80", "\xc3", "\xe2\x82", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\x80", "\ufffd",
	}
	var b strings.Builder
	for range rng.IntN(60) {
		p := pieces[rng.IntN(len(pieces))]
		if rng.IntN(4) == 0 { // long ASCII runs, so whole blocks occur
			p = strings.Repeat("Word ", 1+rng.IntN(6))
		}
		b.WriteString(p)
	}
	return b.String()
}

func TestFastPathMatchesReference(t *testing.T) {
	t.Parallel()
	fastPathMatchesReference(t)
}

// The same without the AVX-512 paths (the normalizer's 64-byte blocks, shingles hashed
// eight at a time), so that a CPU which takes them checks the other paths too. Not
// parallel: it switches the package's wideBlocks and wideHash.
func TestFastPathWithoutAVX512(t *testing.T) {
	if !wideBlocks && !wideHash {
		t.Skip("this CPU takes no AVX-512 text path: TestFastPathMatchesReference checks the others")
	}
	if testing.Short() {
		t.Skip("SKIPPED in -short mode: the reference checks a second time, on the other paths")
	}
	blocks, hash := wideBlocks, wideHash
	wideBlocks, wideHash = false, false
	defer func() { wideBlocks, wideHash = blocks, hash }()
	fastPathMatchesReference(t)
	fastPathBlockBoundaries(t)
}

// The 64-byte blocks (AVX-512) against the definitions: ASCII text built to meet every
// case of a block, each at every offset (white space runs that cross a block's start or
// end, start a text, end it or fill a whole block, upper case, digits, punctuation, a
// non-ASCII letter or combining mark at every position of a block and right after it),
// under every Norm and through the hashers' word bounds.
func TestWideBlocks(t *testing.T) {
	t.Parallel()
	if !wideBlocks {
		t.Skip("this CPU takes no 64-byte blocks (AVX-512 BW and VBMI2)")
	}
	n := 3000
	if testing.Short() {
		n = 300 // -race in CI
	}
	texts := blockTexts(n)
	checkPaths(t, append(allNorms, Norm{}, Norm{Lower: true}, Norm{CollapseSpace: true}, Norm{FoldDigits: true}), texts, texts[:n/3])
}

// TestNarrowBlocks: the 32-byte blocks (AVX2, where a CPU has no 64-byte ones) against
// the definitions, on TestWideBlocks' texts. Not parallel: it switches wideBlocks off.
func TestNarrowBlocks(t *testing.T) {
	if !narrowBlocks {
		t.Skip("this CPU takes no 32-byte blocks (AVX2)")
	}
	n := 3000
	if testing.Short() {
		n = 300
	}
	blocks := wideBlocks
	wideBlocks = false
	defer func() { wideBlocks = blocks }()
	texts := blockTexts(n)
	checkPaths(t, append(allNorms, Norm{}, Norm{Lower: true}, Norm{CollapseSpace: true}, Norm{FoldDigits: true}), texts, texts[:n/3])
}

// blockTexts are ASCII texts built to meet every case of a block, each at every offset
// (white space runs that cross a block's start or end, start a text, end it or fill a
// whole block, upper case, digits, punctuation, a non-ASCII letter or combining mark at
// every position of a block and right after it).
func blockTexts(n int) []string {
	rng := rand.New(rand.NewPCG(29, 4))
	pieces := []string{"a", "word", "MiXeD", "UPPER", "42", "1999", " ", " ", "  ", "\n", "\n\n", "\t", " \r\n ",
		"\v\f", ".", ", ", "(x)", "é", "\u0301", "日本", "\xff"}
	var texts []string
	for range n {
		var b strings.Builder
		for b.Len() < 60+rng.IntN(200) {
			p := pieces[rng.IntN(len(pieces))]
			if rng.IntN(4) > 0 && !strings.ContainsAny(p, "é\u0301日\xff") {
				p = strings.Repeat(p, 1+rng.IntN(12)) // long ASCII runs, so that blocks happen
			}
			b.WriteString(p)
		}
		texts = append(texts, b.String())
	}
	for _, body := range []string{strings.Repeat("Ab 9 ", 40), strings.Repeat(" ", 130), strings.Repeat("x", 130),
		strings.Repeat("ab\n\n", 33), strings.Repeat("A", 64) + "\u0301" + strings.Repeat("b", 70)} {
		for shift := range 70 {
			texts = append(texts, body[:shift]+"é"+body[shift:], strings.Repeat(" ", shift)+body, body+strings.Repeat("\t", shift))
		}
	}
	return texts
}

func fastPathMatchesReference(t *testing.T) {
	var texts []string
	rng := rand.New(rand.NewPCG(13, 2))
	for range 2000 {
		texts = append(texts, randomText(rng))
	}
	for _, d := range readJSONLGz[struct{ ID, Text string }](t, "testdata/corpus5000.jsonl.gz")[:300] {
		texts = append(texts, d.Text)
	}
	var whole []string
	for _, d := range readJSONLGz[struct{ ID, Text string }](t, "testdata/corpus-whole.jsonl.gz") {
		if len(d.Text) < 1<<16 && utf8.ValidString(d.Text) {
			whole = append(whole, d.Text)
		}
	}
	texts = append(texts, whole[:min(len(whole), 30)]...)
	invalid := 0
	for _, text := range texts {
		if !utf8.ValidString(text) {
			invalid++
		}
	}
	if invalid < 500 {
		t.Fatalf("only %d texts with invalid UTF-8", invalid)
	}
	checkPaths(t, append(allNorms, Norm{}, Norm{Lower: true}, Norm{CollapseSpace: true}, Norm{FoldDigits: true}, Norm{StripPunct: true, CollapseSpace: true}), texts, texts)
}

// Every ASCII block boundary: the same text shifted by 0 to 15 bytes of prefix, so each
// byte of it meets each position in an eight-byte block, with and without a combining
// mark or an invalid byte right after a block.
func TestFastPathBlockBoundaries(t *testing.T) {
	t.Parallel()
	fastPathBlockBoundaries(t)
}

func fastPathBlockBoundaries(t *testing.T) {
	bodies := []string{
		"Hello  World\tOF go\n\nTEXT, with 1234 DIGITS and (punct)!  end ",
		"abcdefgh\u0301ijklmnop\xffqrstuvwx e\u0301 ABCDEFG\u0327 ",
		"        leading spaces and trailing        ",
		"ONE-TWO THREE\u00a0FOUR FIVE\u3000SIX seven\u2003EIGHT",
	}
	for _, spec := range fastPathSpecs {
		h, _ := NewHasher(mustSpec(t, spec))
		for _, body := range bodies {
			for shift := range 16 {
				for _, pre := range []string{"x", " ", "É"} {
					checkFastPath(t, h, strings.Repeat(pre, shift)+body)
					checkFastPath(t, h, body+strings.Repeat(pre, shift))
				}
			}
		}
	}
}

// Every rune that the rune table maps through NFKC on its own (nfkcAlone: no-break
// space, full-width forms, ...) normalizes as the definition says between neighbours that
// compose, decompose or reorder: combining marks, Hangul jamo of each kind, other such
// runes, and runes that are not stable at all.
func TestNFKCAloneInContext(t *testing.T) {
	t.Parallel()
	var alone []rune
	for r := rune(0x80); r < 1<<16; r++ {
		if _, ok := nfkcAlone(r); ok && !nfkcStable(r) {
			alone = append(alone, r)
		}
	}
	if len(alone) < 100 {
		t.Fatalf("only %d runes that NFKC maps alone; the test would prove little", len(alone))
	}
	t.Logf("%d runes NFKC maps alone", len(alone))
	contexts := []string{"", "a", "A", " ", "\u0301", "\u0327\u0301", "\u1100", "\u1161", "\u11a8", "\u3131",
		"\u314f", "\uac00", "\u00a0", "\uff21", "\u064b", "\u3099", "\u304b", "e\u0301", "\u2026", "\ufb01"}
	for _, spec := range []string{"norm=nfkc+lower+space", "norm=nfkc", "norm=nfkc+lower+punct+digits+space"} {
		n := mustSpec(t, spec).Norm
		for i, r := range alone {
			// Each rune between every pair would be 160k cases per Norm: every
			// context before, and a few after in turn, is enough to meet each kind.
			for j, before := range contexts {
				after := contexts[(i+j)%len(contexts)]
				text := before + string(r) + after
				if got, want := n.Normalize(text), referenceNormalize(n, text); got != want {
					t.Fatalf("[%v] Normalize(%+q) = %+q; want %+q", spec, text, got, want)
				}
			}
		}
	}
}

// The fast scheme hashes its shingles in order of length (hashByLength): every length
// from 1 byte to well past the 64 where the buckets end, repeats included, must give the
// hashes of the reference shingles, as a multiset.
func TestFastSchemeHashesEveryLength(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(13, 1))
	var words []string
	for l := 1; l <= 100; l++ { // each length twice, in random order: repeats too
		for range 2 {
			words = append(words, strings.Repeat(string(rune('a'+rng.IntN(2))), l))
		}
	}
	rng.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
	text := strings.Join(words, " ")
	for _, spec := range []string{"scheme=fast k=16 size=1", "scheme=fast k=16 size=2", "scheme=fast k=16 size=5"} {
		h, _ := NewHasher(mustSpec(t, spec))
		h.hashAllShingles(text)
		got := slices.Clone(h.base)
		var want []uint64
		lengths := map[int]bool{}
		for _, sh := range referenceShingles(h.Spec(), text) {
			want = append(want, xxhash.Sum64String(sh))
			lengths[len(sh)] = true
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("[%v] hashAllShingles: %d hashes, not those of the %d reference shingles", spec, len(got), len(want))
		}
		if spec == "scheme=fast k=16 size=1" {
			for l := 1; l <= 100; l++ {
				if !lengths[l] {
					t.Fatalf("no shingle of %d bytes: the test text misses a length", l)
				}
			}
		}
	}
}

func FuzzFastPathMatchesReference(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 13))
	for range 20 {
		f.Add(randomText(rng), uint8(rng.IntN(256)))
	}
	f.Add("abcdefgh\u0301", uint8(0))
	f.Add("ABCDEFGH\xffIJ", uint8(1))
	hashers := map[string]*Hasher{}
	f.Fuzz(func(t *testing.T, text string, pick uint8) {
		spec := fastPathSpecs[int(pick)%len(fastPathSpecs)]
		h := hashers[spec]
		if h == nil {
			h, _ = NewHasher(mustSpec(t, spec))
			hashers[spec] = h
		}
		checkFastPath(t, h, text)
	})
}

// Character shingles of 64 bytes and more, which the eight-lane hashing leaves to one
// call each, among shorter ones: runs of 3- and 4-byte runes between ASCII.
func TestCharShinglesLongAndShort(t *testing.T) {
	t.Parallel()
	texts := []string{
		strings.Repeat("日本語のテキスト", 12),
		"short ascii then " + strings.Repeat("😀𝔘", 30) + " and ascii again, long enough to matter",
		strings.Repeat("a日", 40) + strings.Repeat("한국어 ", 20),
	}
	for _, spec := range []string{"level=char size=22 k=16", "level=char size=22 k=16 scheme=fast", "level=char size=17 k=16 norm=none"} {
		h, err := NewHasher(mustSpec(t, spec))
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range texts {
			checkFastPath(t, h, text)
		}
	}
}
