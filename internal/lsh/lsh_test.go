package lsh

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

func TestSpecRoundTrip(t *testing.T) {
	t.Parallel()
	specs := []Spec{DefaultSpec()}
	for _, text := range []string{
		"level=char size=5",
		"scheme=fast k=256 seed=7",
		"scheme=datasketch k=64 seed=42",
		"scheme=milvus level=char size=3 hash=sha1",
		"norm=none hash=xxh3",
		"norm=nfkc+lower+punct+digits+space size=1 k=1",
	} {
		specs = append(specs, mustSpec(t, text))
	}
	ids := map[string]Spec{}
	for _, s := range specs {
		back, err := ParseSpec(s.String())
		if err != nil {
			t.Fatalf("ParseSpec(%q): %v", s.String(), err)
		}
		if back != s {
			t.Errorf("ParseSpec(%q) = %+v; want %+v", s.String(), back, s)
		}
		if other, dup := ids[s.ID()]; dup {
			t.Errorf("%v and %v share ID %s", s, other, s.ID())
		}
		ids[s.ID()] = s
		if s.ID() != back.ID() {
			t.Errorf("ID changed over a round trip: %s vs %s", s.ID(), back.ID())
		}
	}
	// Every single-field change gives a new ID.
	base := DefaultSpec()
	variants := []func(*Spec){
		func(s *Spec) { s.Scheme = Fast },
		func(s *Spec) { s.Norm.NFKC = false },
		func(s *Spec) { s.Norm.Lower = false },
		func(s *Spec) { s.Norm.StripPunct = true },
		func(s *Spec) { s.Norm.FoldDigits = true },
		func(s *Spec) { s.Norm.CollapseSpace = false },
		func(s *Spec) { s.Level = Char },
		func(s *Spec) { s.Size = 4 },
		func(s *Spec) { s.Hashes = 256 },
		func(s *Spec) { s.Hash = SHA1 },
		func(s *Spec) { s.Seed = 2 },
	}
	for i, change := range variants {
		v := base
		change(&v)
		if v.ID() == base.ID() {
			t.Errorf("variant %d (%v) has the default's ID", i, v)
		}
	}
}

func TestParseSpecErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ text, field string }{
		{"scheme=bogus", "scheme"},
		{"level=line", "level"},
		{"size=0", "size"},
		{"k=abc", "k"},
		{"k=100000", "k"},
		{"hash=md5", "hash"},
		{"norm=upper", "norm"},
		{"colour=blue", "colour"},
		{"size=3 size=4", "size"},
		{"v9 size=3", "version"},
		{"scheme=milvus hash=xxhash", "hash"},
		{"scheme=datasketch seed=99999999999", "seed"},
		{"seed=abc", "seed"},
		{"seed=-1", "seed"},
		{"size=three", "size"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			_, err := ParseSpec(tc.text)
			var se *SpecError
			if !errors.As(err, &se) || se.Field != tc.field {
				t.Errorf("ParseSpec(%q) error = %v; want a SpecError on %q", tc.text, err, tc.field)
			}
			// The message says what is allowed, never Go's parser text.
			if err != nil && (strings.Contains(err.Error(), "strconv") || strings.Contains(err.Error(), "invalid syntax")) {
				t.Errorf("ParseSpec(%q) error = %q; want no Go error text", tc.text, err)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		norm Norm
		in   string
		want string
	}{
		{Norm{}, "A  B", "A  B"},
		{Norm{NFKC: true}, "ﬁ Ｆｕｌｌ", "fi Full"},
		{Norm{Lower: true}, "ÉCOLE Straße", "école straße"},
		{Norm{CollapseSpace: true}, " \t a \n\n b\u00a0 c ", "a b c"},
		{Norm{StripPunct: true}, "Hello, world! (c) «x» $5", "Hello world c x 5"},
		{Norm{FoldDigits: true}, "v2.100 2023-02-04 ٣", "v0.000 0000-00-00 0"},
		{Norm{StripPunct: true, CollapseSpace: true}, "a , b", "a b"},
		{Norm{}, "bad \xff byte", "bad \uFFFD byte"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := tc.norm.Normalize(tc.in); got != tc.want {
				t.Errorf("%v.Normalize(%q) = %q; want %q", tc.norm, tc.in, got, tc.want)
			}
		})
	}
}

// shingleCase is a text's shingles under a spec.
type shingleCase struct {
	spec, text string
	want       []string
}

func checkShingles(t *testing.T, cases []shingleCase) {
	t.Helper()
	for _, tc := range cases {
		h, err := NewHasher(mustSpec(t, tc.spec))
		if err != nil {
			t.Fatal(err)
		}
		if got := h.Shingles(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("[%s] Shingles(%q) = %q; want %q", tc.spec, tc.text, got, tc.want)
		}
	}
}

func TestShingles(t *testing.T) {
	t.Parallel()
	checkShingles(t, []shingleCase{
		{"size=3", "The quick  brown\nfox jumps", []string{"the quick brown", "quick brown fox", "brown fox jumps"}},
		{"size=3 norm=none", "a  b\tc d", []string{"a b c", "b c d"}},
		{"size=5", "only three words", []string{"only three words"}},
		{"size=5", "   ", nil},
		{"size=2", "a b a b a b", []string{"a b", "b a"}},
		{"level=char size=3 norm=none", "añob", []string{"año", "ñob"}},
		{"level=char size=5", "ab", []string{"ab"}},
		{"scheme=milvus size=2", "Milvus is a vector-db.", []string{"milvusis", "isa", "avector", "vectordb"}},
		{"scheme=milvus level=char size=2 norm=none", "ñb", []string{"\xc3\xb1", "\xb1b"}},
	})
}

func TestEmptyDocumentSignature(t *testing.T) {
	t.Parallel()
	for _, scheme := range []string{"classic", "fast", "datasketch", "milvus"} {
		h, err := NewHasher(mustSpec(t, "scheme="+scheme+" k=64"))
		if err != nil {
			t.Fatal(err)
		}
		sig := h.Signature(" \n ", nil)
		for i, v := range sig {
			if v != maxHash {
				t.Fatalf("%s: empty document signature[%d] = %#x; want 0xFFFFFFFF", scheme, i, v)
			}
		}
	}
}

// Deduplicating shingles must not change a signature: a document repeated twice has the
// same shingle set up to the one shingle that spans the seam.
func TestDuplicateShinglesIgnored(t *testing.T) {
	t.Parallel()
	for _, scheme := range []string{"classic", "fast"} {
		h, _ := NewHasher(mustSpec(t, "scheme="+scheme+" size=1"))
		a := h.Signature("one two three", nil)
		b := h.Signature("one two three three two one one", nil)
		if !slices.Equal(a, b) {
			t.Errorf("%s: repeating shingles changed the signature", scheme)
		}
	}
}

// setPair returns two sets of random 64-bit elements with |A∩B| = inter and |A∪B| = union.
func setPair(rng *rand.Rand, inter, union int) (a, b []uint64) {
	onlyA := (union - inter) / 2
	onlyB := union - inter - onlyA
	for range inter {
		v := rng.Uint64()
		a = append(a, v)
		b = append(b, v)
	}
	for range onlyA {
		a = append(a, rng.Uint64())
	}
	for range onlyB {
		b = append(b, rng.Uint64())
	}
	return a, b
}

func signatureOf(h *Hasher, set []uint64) Signature {
	h.base = append(h.base[:0], set...)
	return h.signatureOfBase(nil)
}

// meanAbsError returns the mean |estimate - s| over trials of a scheme at Jaccard s.
func meanAbsError(t *testing.T, scheme string, k, union int, s float64, trials int, seed uint64) float64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, uint64(s*1000)))
	inter := int(math.Round(s * float64(union)))
	exact := float64(inter) / float64(union)
	sum := 0.0
	for trial := range trials {
		h, err := NewHasher(mustSpec(t, "scheme="+scheme+" k="+itoa(k)+" seed="+itoa(trial+1)))
		if err != nil {
			t.Fatal(err)
		}
		a, b := setPair(rng, inter, union)
		sum += math.Abs(Estimate(signatureOf(h, a), signatureOf(h, b)) - exact)
	}
	return sum / float64(trials)
}

// At k=256 the estimate is a binomial share: its standard deviation is sqrt(s(1-s)/k) and
// its mean absolute error sqrt(2/pi) times that. The MAE must sit inside the 1/sqrt(k)
// envelope and within 20% of the binomial value (400 trials: the MAE's own relative
// standard error is about 4%).
func TestEstimateError(t *testing.T) {
	t.Parallel()
	const k, trials = 256, 400
	for _, s := range []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9} {
		mae := meanAbsError(t, "classic", k, 600, s, trials, 11)
		want := math.Sqrt(2/math.Pi) * math.Sqrt(s*(1-s)/k)
		if mae > 1/math.Sqrt(k) {
			t.Errorf("s=%.1f: MAE %.4f outside the 1/sqrt(k) = %.4f envelope", s, mae, 1/math.Sqrt(k))
		}
		if math.Abs(mae-want) > 0.2*want {
			t.Errorf("s=%.1f: MAE %.4f; want %.4f ± 20%% (binomial)", s, mae, want)
		}
	}
}

// The fast scheme (one-permutation hashing, optimal densification) must estimate as well
// as the classic one: same MAE within statistical tolerance, for large sets (few empty
// bins) and for small ones (most bins densified).
func TestFastSchemeMatchesClassicError(t *testing.T) {
	t.Parallel()
	const k, trials = 256, 400
	for _, union := range []int{2000, 120} {
		for _, s := range []float64{0.2, 0.5, 0.8, 0.9} {
			classic := meanAbsError(t, "classic", k, union, s, trials, 5)
			fast := meanAbsError(t, "fast", k, union, s, trials, 5)
			// Two independent MAE estimates, each with ~4% relative standard error:
			// their ratio stays within ±25% unless the estimators differ.
			if fast > 1.25*classic || fast < 0.75*classic {
				t.Errorf("union=%d s=%.1f: fast MAE %.4f vs classic %.4f", union, s, fast, classic)
			}
		}
	}
}

func TestTextbookTable(t *testing.T) {
	t.Parallel()
	sh := Shape{Bands: 20, Rows: 5}
	want := map[float64]float64{.2: .006, .3: .047, .4: .186, .5: .470, .6: .802, .7: .975, .8: .9996}
	for s, p := range want {
		got := Probability(s, sh)
		digits := 3.0
		if s == .8 {
			digits = 4
		}
		if math.Abs(got-p) > 0.5*math.Pow(10, -digits) {
			t.Errorf("P(%.1f; 20, 5) = %.5f; want %v", s, got, p)
		}
	}
	if got := ThresholdApprox(sh); math.Abs(got-0.5493) > 1e-4 {
		t.Errorf("ThresholdApprox(20x5) = %.4f; want 0.5493", got)
	}
}

func TestAreas(t *testing.T) {
	t.Parallel()
	// For b = r = 1, P(s) = s: FP = t²/2, FN = (1-t)²/2.
	sh := Shape{Bands: 1, Rows: 1}
	for _, th := range []float64{0, 0.3, 0.9, 1} {
		if got, want := FalsePositiveArea(th, sh), th*th/2; math.Abs(got-want) > 1e-12 {
			t.Errorf("FP(%v; 1x1) = %v; want %v", th, got, want)
		}
		if got, want := FalseNegativeArea(th, sh), (1-th)*(1-th)/2; math.Abs(got-want) > 1e-12 {
			t.Errorf("FN(%v; 1x1) = %v; want %v", th, got, want)
		}
	}
	// 1-(1-s^2)^2 = 2s^2 - s^4: integral over [0, t] is 2t^3/3 - t^5/5.
	th := 0.7
	want := 2*math.Pow(th, 3)/3 - math.Pow(th, 5)/5
	if got := FalsePositiveArea(th, Shape{Bands: 2, Rows: 2}); math.Abs(got-want) > 1e-12 {
		t.Errorf("FP(0.7; 2x2) = %v; want %v", got, want)
	}
}

func TestOptimalShape(t *testing.T) {
	t.Parallel()
	got, err := OptimalShape(0.9, 128, EqualWeights)
	if err != nil {
		t.Fatal(err)
	}
	if got.Shape != (Shape{Bands: 5, Rows: 25}) {
		t.Errorf("OptimalShape(0.9, 128) = %v; want 5x25 (datasketch)", got.Shape)
	}
	// Weighting false negatives up must not raise the false-negative area.
	fnHeavy, _ := OptimalShape(0.9, 128, Weights{FP: 0.1, FN: 0.9})
	if fnHeavy.FN > got.FN {
		t.Errorf("FN-heavy weights gave FN %.4f > equal weights' %.4f", fnHeavy.FN, got.FN)
	}
	for _, bad := range []struct {
		t float64
		k int
		w Weights
	}{{1.5, 128, EqualWeights}, {0.5, 0, EqualWeights}, {0.5, 128, Weights{}}, {math.NaN(), 128, EqualWeights}} {
		if _, err := OptimalShape(bad.t, bad.k, bad.w); err == nil {
			t.Errorf("OptimalShape(%v, %d, %v) accepted bad input", bad.t, bad.k, bad.w)
		}
	}
}

// Against an observed distribution, a sample whose pairs all sit far from the threshold
// is served by a broad, cheap curve, while one crowded near the threshold needs a steep
// one: the observed optimizer must pick more rows (a steeper S) in the second case.
func TestOptimalShapeObserved(t *testing.T) {
	t.Parallel()
	far := []float64{0.05, 0.1, 0.1, 0.15, 0.95, 0.98, 1}
	near := []float64{0.7, 0.72, 0.75, 0.78, 0.82, 0.85, 0.88}
	a, err := OptimalShapeObserved(0.8, 128, EqualWeights, far)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OptimalShapeObserved(0.8, 128, EqualWeights, near)
	if err != nil {
		t.Fatal(err)
	}
	if b.Shape.Rows <= a.Shape.Rows && b.Error >= a.Error {
		t.Errorf("near-threshold sample chose %v (err %.4f), far sample %v (err %.4f)", b.Shape, b.Error, a.Shape, a.Error)
	}
	// Its error is what it says: recompute for the chosen shape.
	var fp, fn float64
	for _, s := range near {
		p := Probability(s, b.Shape)
		if s < 0.8 {
			fp += p
		} else {
			fn += 1 - p
		}
	}
	n := float64(len(near))
	if math.Abs(b.FP-fp/n) > 1e-12 || math.Abs(b.FN-fn/n) > 1e-12 {
		t.Errorf("reported FP/FN %.4f/%.4f; recomputed %.4f/%.4f", b.FP, b.FN, fp/n, fn/n)
	}
	if _, err := OptimalShapeObserved(0.8, 128, EqualWeights, []float64{1.2}); err == nil {
		t.Error("accepted a similarity above 1")
	}
}

// The measured rate at which pairs of known Jaccard s become candidates, over many seeds,
// must lie within a 99.9% binomial confidence interval of P(s; b, r).
func TestBandCollisionRate(t *testing.T) {
	t.Parallel()
	const trials = 600
	const union = 400
	for _, sh := range []Shape{{20, 5}, {10, 10}, {32, 4}, {5, 25}} {
		for _, s := range []float64{0.3, 0.5, 0.7, 0.85} {
			rng := rand.New(rand.NewPCG(uint64(sh.Bands), uint64(s*100)))
			inter := int(math.Round(s * union))
			exact := float64(inter) / union
			hits := 0
			for trial := range trials {
				h, _ := NewHasher(mustSpec(t, "k=128 seed="+itoa(trial+100)))
				a, b := setPair(rng, inter, union)
				cands, err := Candidates([]Signature{signatureOf(h, a), signatureOf(h, b)}, sh)
				if err != nil {
					t.Fatal(err)
				}
				if len(cands) == 1 {
					hits++
				}
			}
			p := Probability(exact, sh)
			rate := float64(hits) / trials
			// normal approximation with a continuity correction; z = 3.29 for 99.9%
			half := 3.29*math.Sqrt(p*(1-p)/trials) + 0.5/trials
			if math.Abs(rate-p) > half {
				t.Errorf("%v at s=%.2f: collision rate %.3f; want %.3f ± %.3f", sh, exact, rate, p, half)
			}
		}
	}
}

func randomSignatures(rng *rand.Rand, n, k int) []Signature {
	// Families of near-copies so that bands collide: each doc copies a family root and
	// changes a few positions.
	roots := make([]Signature, n/5+1)
	for i := range roots {
		roots[i] = make(Signature, k)
		for j := range roots[i] {
			roots[i][j] = rng.Uint32()
		}
	}
	sigs := make([]Signature, n)
	for i := range sigs {
		sigs[i] = slices.Clone(roots[rng.IntN(len(roots))])
		for range rng.IntN(k / 2) {
			sigs[i][rng.IntN(k)] = rng.Uint32()
		}
	}
	return sigs
}

func TestCandidatesMatchBruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	sigs := randomSignatures(rng, 300, 64)
	sh := Shape{Bands: 8, Rows: 4}
	got, err := Candidates(sigs, sh)
	if err != nil {
		t.Fatal(err)
	}
	var want []Candidate
	for a := range sigs {
		for b := a + 1; b < len(sigs); b++ {
			n := 0
			for band := range sh.Bands {
				lo, hi := band*sh.Rows, (band+1)*sh.Rows
				if slices.Equal(sigs[a][lo:hi], sigs[b][lo:hi]) {
					n++
				}
			}
			if n > 0 {
				want = append(want, Candidate{A: a, B: b, Bands: n})
			}
		}
	}
	if len(want) < 50 {
		t.Fatalf("fixture too sparse: %d pairs", len(want))
	}
	if !slices.Equal(got, want) {
		t.Errorf("Candidates found %d pairs; brute force %d", len(got), len(want))
	}
	if _, err := Candidates(sigs, Shape{Bands: 20, Rows: 4}); err == nil {
		t.Error("accepted a shape needing 80 values from 64-value signatures")
	}
}

// Equal values in different bands must not collide: the band index is part of the key.
func TestBandKeysIncludeBandIndex(t *testing.T) {
	t.Parallel()
	a := Signature{1, 2, 3, 4}
	b := Signature{3, 4, 1, 2}
	if c, _ := Candidates([]Signature{a, b}, Shape{Bands: 2, Rows: 2}); len(c) != 0 {
		t.Errorf("bands with equal contents at different indexes collided: %v", c)
	}
}

func TestExactJaccard(t *testing.T) {
	t.Parallel()
	h, _ := NewHasher(mustSpec(t, "size=1"))
	a := h.ShingleSet("a b c d")
	b := h.ShingleSet("c d e f g h")
	if got := ExactJaccard(a, b); got != 2.0/8 {
		t.Errorf("ExactJaccard = %v; want 0.25", got)
	}
	if got := ExactJaccard(nil, nil); got != 1 {
		t.Errorf("ExactJaccard(empty, empty) = %v; want 1", got)
	}
	if got := ExactJaccard(a, nil); got != 0 {
		t.Errorf("ExactJaccard(a, empty) = %v; want 0", got)
	}
}

// Signatures (parallel) must equal one Hasher's sequential results.
func TestSignaturesParallelMatchesSequential(t *testing.T) {
	t.Parallel()
	docs := readJSONLGz[struct{ ID, Text string }](t, "testdata/corpus5000.jsonl.gz")[:300]
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.Text
	}
	for _, text := range []string{"k=128", "scheme=fast k=128", "scheme=milvus k=64"} {
		spec := mustSpec(t, text)
		got, err := spec.Signatures(texts)
		if err != nil {
			t.Fatal(err)
		}
		h, _ := NewHasher(spec)
		for i, text := range texts {
			if want := h.Signature(text, nil); !slices.Equal(got[i], want) {
				t.Fatalf("%v: doc %d differs between Signatures and Hasher.Signature", spec, i)
			}
		}
	}
}

func FuzzShingles(f *testing.F) {
	for _, s := range []string{"", "a", "Hello, World!", "ﬁ ﬂ", "\xff\xfe", "a\x00b", "\ufeffBOM", "x\r\ny", strings.Repeat("long ", 100), "日本語のテキスト"} {
		f.Add(s, uint8(3), true)
	}
	specs := []Spec{}
	for _, text := range []string{"size=3", "level=char size=3", "scheme=milvus size=2", "norm=nfkc+lower+punct+digits+space size=2", "norm=none level=char size=1"} {
		s, err := ParseSpec(text + " k=8")
		if err != nil {
			f.Fatal(err)
		}
		specs = append(specs, s)
	}
	f.Fuzz(func(t *testing.T, text string, pick uint8, valid bool) {
		if valid && !utf8.ValidString(text) {
			return
		}
		spec := specs[int(pick)%len(specs)]
		h, _ := NewHasher(spec)
		n := spec.Norm.Normalize(text)
		if !utf8.ValidString(n) {
			t.Fatalf("Normalize(%q) = %q: invalid UTF-8", text, n)
		}
		if n2 := spec.Norm.Normalize(text); n2 != n {
			t.Fatalf("Normalize not deterministic")
		}
		sh := h.Shingles(text)
		for _, s := range sh {
			if s == "" {
				t.Fatalf("empty shingle from %q", text)
			}
			if spec.Scheme != Milvus && !utf8.ValidString(s) {
				t.Fatalf("shingle %q of %q is not valid UTF-8", s, text)
			}
		}
		// Non-blank text always yields a shingle (Milvus's analyzer may drop every segment).
		if spec.Scheme != Milvus && len(strings.Fields(n)) > 0 && len(sh) == 0 {
			t.Fatalf("no shingles from %q (normalized %q)", text, n)
		}
		a := h.Signature(text, nil)
		b := h.Signature(text, nil)
		if !slices.Equal(a, b) {
			t.Fatalf("signature of %q not deterministic", text)
		}
	})
}

func itoa(n int) string { return strconv.Itoa(n) }

// referenceNormalize is the plain definition: NFKC of the whole text first, then the
// other steps rune by rune.
func referenceNormalize(n Norm, text string) string {
	text = string([]rune(text)) // each invalid byte becomes U+FFFD, as range does
	if n.NFKC {
		text = norm.NFKC.String(text)
	}
	var b strings.Builder
	pending, wrote := false, false
	for _, r := range text {
		switch {
		case n.CollapseSpace && unicode.IsSpace(r):
			pending = wrote
			continue
		case n.StripPunct && (unicode.IsPunct(r) || unicode.IsSymbol(r)):
			continue
		}
		if n.FoldDigits && unicode.IsDigit(r) {
			r = '0'
		}
		if n.Lower {
			r = unicode.ToLower(r)
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		b.WriteRune(r)
		wrote = true
	}
	return b.String()
}

var allNorms = []Norm{
	{NFKC: true},
	{NFKC: true, Lower: true, CollapseSpace: true},
	{NFKC: true, Lower: true, StripPunct: true, FoldDigits: true, CollapseSpace: true},
	{Lower: true, StripPunct: true},
}

func TestNormalizeMatchesReference(t *testing.T) {
	t.Parallel()
	texts := []string{
		"e\u0301 cafe\u0301", "ﬁnal ﬂow", "\u1100\u1161\u11a8 한국어", "a\u00a0b\u2003c", "Ｆｕｌｌ（ｗｉｄｔｈ）",
		"x\u0323\u0302y", "\u0301leading mark", "😀 emoji \U0001D400 math", "½ ² ㎏", "bad\xffbyte e\xcc",
	}
	for _, d := range readJSONLGz[struct{ ID, Text string }](t, "testdata/corpus5000.jsonl.gz")[:2000] {
		texts = append(texts, d.Text)
	}
	for _, n := range allNorms {
		z := NewNormalizer(n)
		for _, text := range texts {
			want := referenceNormalize(n, text)
			if got := n.Normalize(text); got != want {
				t.Fatalf("%v.Normalize(%.60q) = %.80q; want %.80q", n, text, got, want)
			}
			if got := z.Normalize(text); got != want {
				t.Fatalf("Normalizer(%v).Normalize(%.60q) = %.80q; want %.80q", n, text, got, want)
			}
		}
	}
}

func FuzzNormalizeMatchesReference(f *testing.F) {
	for _, s := range []string{"e\u0301", "ﬁ", "\u1100\u1161\u11a8", "a\u00a0b", "x\u0323\u0302", "\xff", "Ａ１"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, n := range allNorms {
			if got, want := n.Normalize(text), referenceNormalize(n, text); got != want {
				t.Fatalf("%v.Normalize(%q) = %q; want %q", n, text, got, want)
			}
		}
	})
}

// After warming up on a document, a Hasher allocates nothing per document or shingle.
func TestSignatureAllocatesNothing(t *testing.T) {
	docs := readJSONLGz[struct{ ID, Text string }](t, "testdata/corpus5000.jsonl.gz")
	for _, text := range []string{"k=256", "scheme=fast k=256", "level=char size=5 k=64"} {
		h, _ := NewHasher(mustSpec(t, text))
		dst := make(Signature, 0, 256)
		for _, d := range docs[:200] { // warm up on texts of every kind
			dst = h.Signature(d.Text, dst)
		}
		allocs := testing.AllocsPerRun(5, func() {
			for _, d := range docs[:200] {
				dst = h.Signature(d.Text, dst)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %.0f allocations per 200 documents; want 0", text, allocs)
		}
	}
}

func TestCandidatesBounded(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 9))
	same := make(Signature, 16)
	for i := range same {
		same[i] = rng.Uint32()
	}
	var sigs []Signature
	for range 50 {
		sigs = append(sigs, slices.Clone(same)) // 50 identical documents
	}
	sigs = append(sigs, randomSignatures(rng, 20, 16)...)
	sh := Shape{Bands: 4, Rows: 4}
	full, _ := Candidates(sigs, sh)
	bounded, skipped, err := CandidatesBounded(sigs, sh, 10)
	if err != nil {
		t.Fatal(err)
	}
	idents := 0
	for _, c := range bounded {
		if c.B < 50 {
			idents++
			if c.A >= 10 || c.B >= 10 {
				t.Fatalf("pair %v outside the first 10 of the big bucket", c)
			}
		}
	}
	if idents != 45 || skipped != 4*(50*49/2-45) {
		t.Errorf("bounded: %d pairs among the identical documents, %d skipped; want 45 and %d", idents, skipped, 4*(50*49/2-45))
	}
	if len(full)-len(bounded) != 50*49/2-45 {
		t.Errorf("full %d vs bounded %d pairs", len(full), len(bounded))
	}
}

// TestCandidateBandsWithin: the pairs of a shape's first bands, taken from the wider
// shape's banded keys, are those CandidateKeysUpTo proposes for the narrower shape,
// with the same skipped count and the same refusal over a limit: with no bucket cut,
// with cuts in early bands only, in late bands only, and everywhere.
func TestCandidateBandsWithin(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(6, 7))
	const k = 48
	base := randomSignatures(rng, 400, k)
	same := make(Signature, k)
	for i := range same {
		same[i] = rng.Uint32()
	}
	// A crowd of documents that agree with same on bands [from, to) of 2 rows.
	crowd := func(from, to int) []Signature {
		out := slices.Clone(base)
		for range 60 {
			s := make(Signature, k)
			for i := range s {
				s[i] = rng.Uint32()
			}
			copy(s[2*from:2*to], same[2*from:2*to])
			out = append(out, s)
		}
		return out
	}
	// Documents past a cut bucket's first maxBucket in the early bands that meet again,
	// uncut, in a later band: their pairs' first band is the later one.
	again := crowd(0, 3)
	shared := make(Signature, 2)
	shared[0], shared[1] = rng.Uint32(), rng.Uint32()
	for _, d := range again[len(base)+40 : len(base)+46] {
		copy(d[20:22], shared) // band 10
	}
	copy(again[len(base)][20:22], shared) // and one from the head of the early buckets
	sets := map[string][]Signature{"no crowd": base, "early crowd": crowd(0, 3), "late crowd": crowd(15, 24),
		"crowd everywhere": crowd(0, 24), "tails meet again": again}
	for name, sigs := range sets {
		for _, maxBucket := range []int{0, 20} {
			wide := Shape{Bands: 24, Rows: 2}
			bk, err := CandidateBands(t.Context(), sigs, wide, maxBucket, 0)
			if err != nil {
				t.Fatal(err)
			}
			cutSome := false
			for bands := 1; bands <= wide.Bands; bands++ {
				want, wantSkipped, err := CandidateKeysUpTo(t.Context(), sigs, Shape{Bands: bands, Rows: 2}, maxBucket, 0)
				if err != nil {
					t.Fatal(err)
				}
				cutSome = cutSome || wantSkipped > 0
				got, skipped, err := bk.Within(bands, 0)
				if err != nil || !slices.Equal(got, want) || skipped != wantSkipped {
					t.Fatalf("%s, max bucket %d, %d bands: %d pairs, %d skipped, %v; want %d, %d", name, maxBucket, bands, len(got), skipped, err, len(want), wantSkipped)
				}
				if len(want) > 0 {
					if _, _, err := bk.Within(bands, len(want)-1); !errors.Is(err, ErrTooManyPairs) {
						t.Fatalf("%s, %d bands, limit %d of %d pairs: %v; want ErrTooManyPairs", name, bands, len(want)-1, len(want), err)
					}
					if got, _, err := bk.Within(bands, len(want)); err != nil || len(got) != len(want) {
						t.Fatalf("%s, %d bands, limit %d: %d pairs, %v", name, bands, len(want), len(got), err)
					}
				}
			}
			if maxBucket > 0 && name != "no crowd" && !cutSome {
				t.Fatalf("%s: no bucket was cut; the case is not tested", name)
			}
			// The wide shape's own limit.
			if all := len(bk.Keys); all > 0 {
				if _, err := CandidateBands(t.Context(), sigs, wide, maxBucket, all-1); !errors.Is(err, ErrTooManyPairs) {
					t.Fatalf("%s: CandidateBands with limit %d of %d pairs: %v; want ErrTooManyPairs", name, all-1, all, err)
				}
				if got, err := CandidateBands(t.Context(), sigs, wide, maxBucket, all); err != nil || !slices.Equal(got.Keys, bk.Keys) || !slices.Equal(got.First, bk.First) {
					t.Fatalf("%s: CandidateBands with limit %d = its pairs: %v", name, all, err)
				}
			}
		}
	}
	if _, _, err := (&BandedKeys{Shape: Shape{Bands: 2, Rows: 2}, skipped: make([]int, 2)}).Within(3, 0); err == nil {
		t.Error("Within(3) of a 2-band shape: no error")
	}
}
