package lsh

import (
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The milvus profile's word tokens: Milvus's default analyzer (tantivy's SimpleTokenizer
// and LowerCaser). Size-1 shingles are the distinct tokens in order.
func TestMilvusTokens(t *testing.T) {
	t.Parallel()
	h, err := NewHasher(mustSpec(t, "scheme=milvus size=1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"", nil},
		{" ,.;-- ", nil},
		{"isn't", []string{"isn", "t"}},
		{"pi is 3.14", []string{"pi", "is", "3", "14"}},
		{"www.gnu.org", []string{"www", "gnu", "org"}},
		{"a_b", []string{"a", "b"}},
		{"1998-2017,2018", []string{"1998", "2017", "2018"}},
		// A run of ideographs and kana with no separator is one token.
		{"日本語のテキスト、カタカナ。한국어 텍스트", []string{"日本語のテキスト", "カタカナ", "한국어", "텍스트"}},
		// Numbers of any kind (No, Nl) count: ², ①, Ⅻ.
		{"x²³ ① Ⅻ", []string{"x²³", "①", "ⅻ"}},
		// Rust's lowercase: İ becomes i + U+0307; Σ is σ wherever it stands (tantivy
		// lowercases char by char, so there is no final ς); ǅ becomes ǆ.
		{"İstanbul ΣΊΣΥΦΟΣ ǅemal Straße ÆRØ", []string{"i\u0307stanbul", "σίσυφοσ", "ǆemal", "straße", "ærø"}},
		// Other_Uppercase and Other_Lowercase symbols are alphabetic: Ⓑ becomes ⓑ.
		{"ⓐⒷ", []string{"ⓐⓑ"}},
		// A virama (Mn, not Alphabetic) splits; vowel signs (Other_Alphabetic) do not.
		{"हिन्दी", []string{"हिन", "दी"}},
		{"ok 👍 ok", []string{"ok"}},
		{"ﬁnance", []string{"ﬁnance"}},
		{"tab\tnew\nline\u00a0nbsp", []string{"tab", "new", "line", "nbsp"}},
		{"bad \xff byte", []string{"bad", "byte"}},
	} {
		if got := h.Shingles(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("milvus tokens of %q = %q; want %q", tc.text, got, tc.want)
		}
	}
}

// Shingles join tokens with nothing; a text with fewer tokens than the shingle size is one
// shingle; char shingles are raw bytes, not lowercased or normalized.
func TestMilvusShingles(t *testing.T) {
	t.Parallel()
	checkShingles(t, []shingleCase{
		{"scheme=milvus", "The quick brown fox", []string{"thequickbrown", "quickbrownfox"}},
		{"scheme=milvus", "Two words", []string{"twowords"}},
		{"scheme=milvus token_level=word shingle_size=2", "a b a b", []string{"ab", "ba"}},
		{"scheme=milvus level=char size=2", "AbC", []string{"Ab", "bC"}},
		{"scheme=milvus level=char", "ﬁ", []string{"ﬁ"}},
		{"scheme=milvus level=char size=3", "Ａb", []string{"\xef\xbc\xa1", "\xbc\xa1b"}},
		{"scheme=milvus level=char size=5", "abc", []string{"abc"}},
		{"scheme=milvus level=char", "", nil},
	})
}

// isAlnumRust's BMP bitmap and ASCII table agree with the Unicode tables for every rune.
func TestIsAlnumRustEveryRune(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if got, want := isAlnumRust(r), referenceAlnum(r); got != want {
			t.Fatalf("isAlnumRust(%U) = %v; want %v", r, got, want)
		}
	}
}

// referenceAlnum is Rust's char::is_alphanumeric as Unicode defines it: Alphabetic
// (L, Nl, Other_Alphabetic, Other_Lowercase, Other_Uppercase) or Numeric (N).
func referenceAlnum(r rune) bool {
	return unicode.In(r, unicode.L, unicode.Nl, unicode.Other_Alphabetic, unicode.Other_Lowercase,
		unicode.Other_Uppercase, unicode.N)
}

// referenceMilvusShingles is the plain definition of the profile's word shingles: split at
// every non-alphanumeric rune, lowercase rune by rune (İ to i + U+0307), join n tokens
// at a time with nothing, all tokens as one shingle when there are fewer than n.
func referenceMilvusShingles(text string, n int) []string {
	var toks []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return !referenceAlnum(r) }) {
		var b strings.Builder
		for _, r := range f {
			if r == 'İ' {
				b.WriteString("i\u0307")
			} else {
				b.WriteRune(unicode.ToLower(r))
			}
		}
		toks = append(toks, b.String())
	}
	if len(toks) == 0 {
		return nil
	}
	n = min(n, len(toks))
	var out []string
	for i := 0; i+n <= len(toks); i++ {
		out = append(out, strings.Join(toks[i:i+n], ""))
	}
	return out
}

func FuzzMilvusShinglesMatchReference(f *testing.F) {
	for _, s := range []string{"", "isn't 3.14 www.gnu.org a_b", "İstanbul ΣΊΣΥΦΟΣ ǅemal ﬁnance Ⅻ ²³ ①",
		"日本語のテキスト、カタカナとひらがな。한국어 텍스트도 있습니다.", "हिन्दी ⓐⒷ", "\xff\xfeA\x00b", "MiXeD CaSe"} {
		f.Add(s, uint8(3))
	}
	hashers := map[int]*Hasher{}
	f.Fuzz(func(t *testing.T, text string, size uint8) {
		n := int(size%6) + 1
		h := hashers[n]
		if h == nil {
			h, _ = NewHasher(Spec{Scheme: Milvus, Level: Word, Size: n, Hashes: 4, Hash: XXH3, Seed: 1234})
			hashers[n] = h
		}
		var got []string
		h.eachShingle(text, func(b []byte) { got = append(got, string(b)) })
		if want := referenceMilvusShingles(text, n); !slices.Equal(got, want) {
			t.Fatalf("size %d shingles of %q = %q; want %q", n, text, got, want)
		}
	})
}

// Milvus builds a SHA-1 base hash in a C++ int, so "The" (first digest bytes 93 ef 0d d8)
// enters the permutations as 0xffffffffd80def93. The profile feeds the low 32 bits with
// adjusted b parameters instead; both must give the same values.
func TestMilvusSHA1SignExtension(t *testing.T) {
	t.Parallel()
	sum := sha1.Sum([]byte("The"))
	x := uint64(int64(int32(binary.LittleEndian.Uint32(sum[:4]))))
	if x != 0xffffffffd80def93 {
		t.Fatalf("sign-extended SHA-1 of \"The\" = %#x; want 0xffffffffd80def93", x)
	}
	for _, k := range []int{7, 64} { // the generic loop and, where present, the vector kernel
		spec := mustSpec(t, "scheme=milvus hash_function=sha1 token_level=char shingle_size=3 num_hashes="+itoa(k))
		h, _ := NewHasher(spec)
		got := h.Signature("The", nil) // one shingle: the whole text
		for i := range k {
			if want := uint32(permute(h.perm.a[i], h.perm.b[i], x)); got[i] != want {
				t.Fatalf("k=%d: signature[%d] = %d; want %d (permutation of the sign-extended hash)", k, i, got[i], want)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		a, b := rng.Uint64()%(mersenne61-1)+1, rng.Uint64()%mersenne61
		lo := rng.Uint64()&maxHash | 1<<31
		if got, want := permute(a, b-a<<32, lo), permute(a, b, uint64(int64(int32(uint32(lo))))); got != want {
			t.Fatalf("a=%d b=%d lo=%#x: permute with bExt = %d; with the sign-extended x = %d", a, b, lo, got, want)
		}
	}
}

// Milvus's own parameter names, values and defaults, as key=value or a JSON object.
func TestParseSpecMilvusParams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ text, want string }{
		{"scheme=milvus", "v2 scheme=milvus norm=none level=word size=3 k=128 hash=xxh3 seed=1234"},
		{"scheme=milvus level=char", "v2 scheme=milvus norm=none level=char size=3 k=128 hash=xxh3 seed=1234"},
		{"num_hashes=16", "v2 scheme=milvus norm=none level=word size=3 k=16 hash=xxh3 seed=1234"},
		{"scheme=milvus num_hashes=64 shingle_size=5 hash_function=sha1 token_level=char seed=42",
			"v2 scheme=milvus norm=none level=char size=5 k=64 hash=sha1 seed=42"},
		{"Num_Hashes=8 HASH_FUNCTION=XXHash64 token_level=Character", "v2 scheme=milvus norm=none level=char size=3 k=8 hash=xxh3 seed=1234"},
		{`{"num_hashes": 128, "shingle_size": 3, "hash_function": "xxhash", "token_level": "word", "seed": 1234}`,
			"v2 scheme=milvus norm=none level=word size=3 k=128 hash=xxh3 seed=1234"},
		{` {"num_hashes": "32", "token_level": "char", "seed": "-1"} `, "v2 scheme=milvus norm=none level=char size=3 k=32 hash=xxh3 seed=18446744073709551615"},
		{`{}`, "v2 scheme=milvus norm=none level=word size=3 k=128 hash=xxh3 seed=1234"},
		{`{"scheme": "milvus", "norm": "nfkc", "k": 16}`, "v2 scheme=milvus norm=nfkc level=word size=3 k=16 hash=xxh3 seed=1234"},
		// Texts written before the profile matched Milvus read as today's profile, under a new version.
		{"v1 scheme=milvus norm=lower level=word size=3 k=128 hash=xxh3 seed=1234", "v2 scheme=milvus norm=lower level=word size=3 k=128 hash=xxh3 seed=1234"},
		// Other schemes keep version 1 and their defaults.
		{"scheme=datasketch", "v1 scheme=datasketch norm=none level=word size=5 k=128 hash=sha1 seed=1"},
		{"v2 k=64", "v1 scheme=classic norm=nfkc+lower+space level=word size=5 k=64 hash=xxhash seed=1"},
	} {
		s, err := ParseSpec(tc.text)
		if err != nil {
			t.Errorf("ParseSpec(%q): %v", tc.text, err)
			continue
		}
		if s.String() != tc.want {
			t.Errorf("ParseSpec(%q) = %s; want %s", tc.text, s, tc.want)
		}
		if back, err := ParseSpec(s.String()); err != nil || back != s {
			t.Errorf("ParseSpec(%q) = %v, %v; want %v", s.String(), back, err, s)
		}
	}
	for _, tc := range []struct{ text, field string }{
		{"scheme=classic num_hashes=16", "num_hashes"},
		{"scheme=milvus k=16 num_hashes=16", "num_hashes"},
		{"shingle_size=3 size=3", "size"},
		{"hash_function=md5", "hash_function"},
		{"token_level=sentence", "token_level"},
		{"num_hashes=0", "k"},
		{"num_hashes=many", "num_hashes"},
		{"scheme=milvus seed=x", "seed"},
		{"seed=-1", "seed"},
		{`{"num_hashes": 16`, "json"},
		{`{"num_hashes": 16} k=2`, "json"},
		{`{"num_hashes": [16]}`, "num_hashes"},
		{`{"num_hashes": 16, "num_hashes": 32}`, "num_hashes"},
		{`{"analyzer_params": "x"}`, "analyzer_params"},
		{`["num_hashes"]`, "json"},
		{"v3 scheme=milvus", "version"},
		{"v0", "version"},
	} {
		_, err := ParseSpec(tc.text)
		if se, ok := errors.AsType[*SpecError](err); !ok || se.Field != tc.field {
			t.Errorf("ParseSpec(%q) error = %v; want a SpecError on %q", tc.text, err, tc.field)
		}
	}
}

// The canonical text and ID of the specs of the other schemes do not depend on this
// profile: stored representations keep their IDs.
func TestSpecIDsOfOtherSchemesUnchanged(t *testing.T) {
	t.Parallel()
	for text, id := range map[string]string{
		"v1 scheme=classic norm=nfkc+lower+space level=word size=5 k=128 hash=xxhash seed=1": DefaultSpec().ID(),
		"v1 scheme=classic norm=nfkc+lower+space level=word size=5 k=32 hash=xxhash seed=1":  "ra227b0c4ada1",
		"v1 scheme=datasketch norm=lower level=word size=5 k=32 hash=sha1 seed=1":            "r76a381a102f9",
		"v1 scheme=fast norm=nfkc+lower+space level=word size=5 k=32 hash=xxhash seed=1":     "r9655d17320d7",
	} {
		s := mustSpec(t, text)
		if s.String() != text || s.ID() != id {
			t.Errorf("ParseSpec(%q) = %s (%s); want the same text (%s)", text, s, s.ID(), id)
		}
	}
}

type milvusGolden struct {
	Params    string    `json:"params"`
	Spec      string    `json:"spec"`
	Text      string    `json:"text"`
	Shingles  []string  `json:"shingles"` // as Go string literals without the quotes: char shingles are bytes
	Signature Signature `json:"signature"`
}

// TestMilvusGolden keeps the profile's shingles and signatures for texts that exercise
// its analyzer in testdata/golden-milvus.json (rewrite with -update after a deliberate
// change, which must come with a new milvus version in Spec.Version).
func TestMilvusGolden(t *testing.T) {
	t.Parallel()
	params := []string{
		`{"num_hashes": 16, "shingle_size": 3, "hash_function": "xxhash", "token_level": "word", "seed": 1234}`,
		`{"num_hashes": 16, "shingle_size": 2, "hash_function": "sha1", "token_level": "word", "seed": 7}`,
		`{"num_hashes": 16, "shingle_size": 4, "hash_function": "xxhash", "token_level": "char", "seed": 1234}`,
		`{"num_hashes": 16, "shingle_size": 3, "hash_function": "sha1", "token_level": "char", "seed": 42}`,
	}
	texts := []string{
		"",
		"Hello",
		"It isn't 3.14, see www.gnu.org/a_b (1998-2017,2018).",
		"İstanbul ΣΊΣΥΦΟΣ ǅemal ﬁnance Ⅻ x²³ ① ⓐⒷ",
		"日本語のテキスト、カタカナとひらがな。हिन्दी 👍",
		"Permission is hereby granted, free of charge, to any person obtaining a copy of this software",
	}
	var got []milvusGolden
	for _, p := range params {
		spec := mustSpec(t, p)
		h, _ := NewHasher(spec)
		for _, text := range texts {
			var quoted []string
			for _, s := range h.Shingles(text) {
				q := strconv.Quote(s)
				quoted = append(quoted, q[1:len(q)-1])
			}
			got = append(got, milvusGolden{Params: p, Spec: spec.String(), Text: text, Shingles: quoted, Signature: h.Signature(text, nil)})
		}
	}
	want := golden(t, "testdata/golden-milvus.json", got)
	for i := range got {
		g, w := got[i], want[i]
		if g.Spec != w.Spec || g.Text != w.Text || !slices.Equal(g.Shingles, w.Shingles) || !slices.Equal(g.Signature, w.Signature) {
			t.Errorf("%s, text %.30q: got spec %s shingles %q signature %v; golden %s %q %v",
				g.Params, g.Text, g.Spec, g.Shingles, g.Signature, w.Spec, w.Shingles, w.Signature)
		}
	}
}

// BenchmarkMilvusShingles measures the milvus profile's shingling and base hashing on one
// core over testdata/corpus5000.jsonl.gz: Milvus's analyzer at word level, raw bytes at
// char level.
func BenchmarkMilvusShingles(b *testing.B) {
	texts, n := benchCorpus(b)
	for _, name := range []string{"word3", "char3"} {
		spec := mustSpec(b, "scheme=milvus size=3 level="+name[:4])
		b.Run(name, func(b *testing.B) {
			h, _ := NewHasher(spec)
			b.SetBytes(n)
			b.ReportAllocs()
			for b.Loop() {
				for _, t := range texts {
					h.hashShingles(t)
				}
			}
			reportDocs(b, len(texts))
		})
	}
}
