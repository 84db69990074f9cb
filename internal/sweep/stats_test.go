package sweep

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

func TestWilsonTextbook(t *testing.T) {
	t.Parallel()
	// Newcombe (1998), "Two-sided confidence intervals for the single proportion",
	// Statistics in Medicine 17:857-872, Table I, method 3 (Wilson score, no continuity
	// correction), given to 4 decimals.
	cases := []struct {
		hits, n int
		lo, hi  float64
	}{
		{81, 263, 0.2553, 0.3662},
		{15, 148, 0.0624, 0.1605},
		{0, 20, 0.0000, 0.1611},
		{1, 29, 0.0061, 0.1718},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d of %d", c.hits, c.n), func(t *testing.T) {
			got := Wilson(c.hits, c.n)
			if math.Abs(got.Lo-c.lo) > 5e-5 || math.Abs(got.Hi-c.hi) > 5e-5 {
				t.Errorf("Wilson(%d, %d) = [%.4f, %.4f]; want [%.4f, %.4f]", c.hits, c.n, got.Lo, got.Hi, c.lo, c.hi)
			}
			if want := float64(c.hits) / float64(c.n); got.Value != want {
				t.Errorf("Wilson(%d, %d).Value = %v; want %v", c.hits, c.n, got.Value, want)
			}
		})
	}
	if got := Wilson(0, 0); !math.IsNaN(got.Value) || got.Lo != 0 || got.Hi != 1 {
		t.Errorf("Wilson(0, 0) = %+v; want NaN in [0, 1]", got)
	}
}

func TestIntervalJSON(t *testing.T) {
	t.Parallel()
	r := NewRate(0, 0)
	b, err := json.Marshal(struct{ R Rate }{r})
	if err != nil {
		t.Fatalf("Marshal(rate with NaN) = %v", err)
	}
	var back struct{ R Rate }
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(back.R.Value) || back.R.Hi != 1 || back.R.Of != 0 {
		t.Errorf("round trip of %s = %+v; want NaN value, Hi 1", b, back.R)
	}
	r = NewRate(3, 7)
	b, _ = json.Marshal(r)
	var r2 Rate
	if err := json.Unmarshal(b, &r2); err != nil || r2 != r {
		t.Errorf("round trip of %s = %+v, %v; want %+v", b, r2, err, r)
	}
}

func TestQuantile(t *testing.T) {
	t.Parallel()
	xs := []float64{1, 2, 3, 4, 5}
	for _, c := range []struct{ q, want float64 }{{0, 1}, {0.5, 3}, {0.25, 2}, {0.1, 1.4}, {1, 5}} {
		t.Run(fmt.Sprint(c.q), func(t *testing.T) {
			if got := quantile(xs, c.q); math.Abs(got-c.want) > 1e-12 {
				t.Errorf("quantile(%v, %v) = %v; want %v", xs, c.q, got, c.want)
			}
		})
	}
}

// TestExpectedRecallSimulation checks the S-curve formula behind ExpectedCandidateRecall
// against simulation: pairs of sets with known Jaccard, real classic signatures with
// many seeds, the share that collide in a band.
func TestExpectedRecallSimulation(t *testing.T) {
	t.Parallel()
	const trials = 1500
	shapes := []lsh.Shape{{Bands: 20, Rows: 5}, {Bands: 9, Rows: 13}, {Bands: 32, Rows: 4}}
	for _, j := range []float64{0.3, 0.5, 0.7, 0.85} {
		// A = 0..99, B = 100-s..199-s shares s elements: J = s/(200-s).
		s := int(math.Round(200 * j / (1 + j)))
		a, b := tokens(0, 100), tokens(100-s, 200-s)
		exact := float64(s) / float64(200-s)
		for _, sh := range shapes {
			hits := 0
			for seed := range trials {
				spec, err := lsh.ParseSpec("level=word size=1 k=128")
				if err != nil {
					t.Fatal(err)
				}
				spec.Seed = uint64(seed) + 1
				sigs, err := spec.Signatures([]string{a, b})
				if err != nil {
					t.Fatal(err)
				}
				if collides(sigs[0], sigs[1], sh) {
					hits++
				}
			}
			p := lsh.Probability(exact, sh)
			got := float64(hits) / trials
			// Binomial sd is at most 0.013 at 1500 trials; allow 4 sd plus a little.
			tol := 4*math.Sqrt(p*(1-p)/trials) + 0.005
			if math.Abs(got-p) > tol {
				t.Errorf("J=%.3f %v: collided in %.3f of %d trials; 1-(1-J^r)^b = %.3f (tolerance %.3f)", exact, sh, got, trials, p, tol)
			}
		}
	}
}

func collides(a, b lsh.Signature, sh lsh.Shape) bool {
	for band := range sh.Bands {
		same := true
		for r := range sh.Rows {
			if a[band*sh.Rows+r] != b[band*sh.Rows+r] {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}

func TestJaccardAtLeast(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	set := func(n int, universe uint64) []uint64 {
		m := map[uint64]bool{}
		for len(m) < n {
			m[rng.Uint64N(universe)] = true
		}
		out := make([]uint64, 0, n)
		for v := range m {
			out = append(out, v)
		}
		return sortedCopy(out)
	}
	for i := range 2000 {
		a := set(rng.IntN(300), 600)
		b := set(rng.IntN(300), 600)
		floor := []float64{0, 0.1, 0.3, 0.5, 0.8, 1}[i%6]
		want := lsh.ExactJaccard(a, b)
		got := jaccardAtLeast(a, b, len(a), len(b), floor)
		if want >= floor && got != want {
			t.Fatalf("jaccardAtLeast(|%d|, |%d|, %v) = %v; want exactly %v", len(a), len(b), floor, got, want)
		}
		if want < floor && !(got < floor && got >= want) {
			t.Fatalf("jaccardAtLeast(|%d|, |%d|, %v) = %v; want a bound in [%v, %v)", len(a), len(b), floor, got, want, floor)
		}
		// The same through numbered shingles (exactJaccard.sets32): a's numbered, b a
		// document without a resident set, of which only the shingles with a number are
		// listed (set32): the same value, or a bound below floor.
		ids := newShingleIDs(1 << 20)
		a32, ok := ids.number(a)
		if !ok {
			t.Fatal("numbering 300 shingles passed a bound of 2^20")
		}
		got32 := jaccardAtLeast(a32, ids.known(b), len(a), len(b), floor)
		if want >= floor && got32 != want || want < floor && !(got32 < floor && got32 >= want) {
			t.Fatalf("jaccardAtLeast over ids (|%d|, |%d|, %v) = %v; exact %v", len(a), len(b), floor, got32, want)
		}
	}
	if got := jaccardAtLeast[uint64](nil, nil, 0, 0, 0.5); got != 1 {
		t.Errorf("jaccardAtLeast(empty, empty) = %v; want 1", got)
	}
}

// hashedBytes is what exactJaccard counts for the sets of hashes of texts under spec.
func hashedBytes(t *testing.T, spec lsh.Spec, texts []string) int64 {
	h, err := lsh.NewHasher(shingleKey(spec))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, text := range texts {
		n += 8*int64(len(h.ShingleSet(text))) + 24
	}
	return n
}

// firstDifferent describes where two lists of similarities first differ.
func firstDifferent(got, want []float64) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("at %d: %v, want %v", i, got[i], want[i])
		}
	}
	return fmt.Sprintf("%d values, want %d", len(got), len(want))
}

func sortedCopy(xs []uint64) []uint64 {
	out := append([]uint64(nil), xs...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// TestExactJaccardBlocks checks that the block mode (shingle sets over the budget)
// computes what the resident mode does, on real text.
func TestExactJaccardBlocks(t *testing.T) {
	t.Parallel()
	d := loadDemo(t)
	spec, err := lsh.ParseSpec("level=char size=4 k=64")
	if err != nil {
		t.Fatal(err)
	}
	sigs, err := spec.Signatures(d.texts[:400])
	if err != nil {
		t.Fatal(err)
	}
	cands, err := lsh.Candidates(sigs, lsh.Shape{Bands: 16, Rows: 4})
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]uint64, len(cands))
	for i, c := range cands {
		keys[i] = pairKey(int32(c.A), int32(c.B))
	}
	if len(keys) < 100 {
		t.Fatalf("%d candidates among 400 demo documents; the test wants a few hundred", len(keys))
	}
	text := func(i int) string { return d.texts[i] }
	resident, err := newExactJaccard(shingleKey(spec), 400, text, DefaultSetBudget, DefaultMemoPairs)
	if err != nil {
		t.Fatal(err)
	}
	blocks, _ := newExactJaccard(shingleKey(spec), 400, text, 64<<10, DefaultMemoPairs) // 64 KiB: a few documents at a time
	want, err := resident.of(t.Context(), keys)
	if err != nil {
		t.Fatal(err)
	}
	got, err := blocks.of(t.Context(), keys)
	if err != nil {
		t.Fatal(err)
	}
	if resident.block || resident.sets32 != nil || !blocks.block {
		t.Fatalf("modes: resident.block=%v, resident numbered %v, blocks.block=%v; want false, false, true", resident.block, resident.sets32 != nil, blocks.block)
	}
	// A budget the sets of hashes pass and numbered sets fit: numbered, the same values
	// to the bit, from of and from pair (for a document with a resident set and for one
	// without).
	// They name most documents (numbering is tried when the sets of every document,
	// numbered, would fit); pair then meets documents with no resident set too.
	all := slices.Clone(keys)
	for i := range int32(380) {
		all = append(all, pairKey(i, i+1))
	}
	slices.Sort(all)
	all = slices.Compact(all)
	hashes, _ := newExactJaccard(shingleKey(spec), 400, text, DefaultSetBudget, DefaultMemoPairs)
	wantAll, err := hashes.of(t.Context(), all)
	if err != nil {
		t.Fatal(err)
	}
	numbered, _ := newExactJaccard(shingleKey(spec), 400, text, hashedBytes(t, spec, d.texts[:400])*7/10, DefaultMemoPairs)
	if byID, err := numbered.of(t.Context(), all); err != nil || !slices.Equal(byID, wantAll) {
		t.Fatalf("numbered sets: %v; want the resident hashes' values (err %v)", firstDifferent(byID, wantAll), err)
	}
	if numbered.block || numbered.sets32 == nil {
		t.Fatalf("numbered: block mode %v, numbered %v; want false, true", numbered.block, numbered.sets32 != nil)
	}
	for i, k := range all {
		if a, b := unpair(k); numbered.pair(int(a), int(b)) != wantAll[i] {
			t.Fatalf("pair(%d, %d) over numbered sets = %v; of gave %v", a, b, numbered.pair(int(a), int(b)), wantAll[i])
		}
	}
	without := 0
	for a := 0; a < 400; a += 7 {
		for b := 380; b < 400; b++ {
			if numbered.sets32[a] == nil || numbered.sets32[b] == nil {
				without++
			}
			got, want := numbered.pair(a, b), hashes.pair(a, b)
			if got != want {
				t.Fatalf("pair(%d, %d) over numbered sets = %v, over hashes %v", a, b, got, want)
			}
		}
	}
	if without == 0 {
		t.Fatal("every pair compared had resident sets: the documents without one went untested")
	}
	for i := range keys {
		if got[i] != want[i] {
			a, b := unpair(keys[i])
			t.Fatalf("pair (%d, %d): block mode %v; resident %v", a, b, got[i], want[i])
		}
	}
	// pair, as the clusterings ask it from several goroutines, agrees in block mode (its
	// cache of recent sets within half the budget, and used: a second round shingles
	// fewer documents) with the resident sets.
	pairs := func() {
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := w; i < len(keys); i += 4 {
					a, b := unpair(keys[i])
					if got := blocks.pair(int(a), int(b)); got != want[i] && !(got < blocks.floor && want[i] < blocks.floor) {
						t.Errorf("pair(%d, %d) in block mode = %v; resident %v", a, b, got, want[i])
					}
				}
			})
		}
		wg.Wait()
	}
	pairs()
	if used := blocks.recent.used.Load(); used <= 0 || used > blocks.budget/2 {
		t.Errorf("the cache of recent sets holds %d bytes; want some, at most %d", used, blocks.budget/2)
	}
	pairs()
	// And the memo answers the second time without computing.
	again, _ := resident.of(t.Context(), keys)
	for i := range keys {
		if again[i] != want[i] {
			t.Fatalf("memo: pair %d = %v; want %v", i, again[i], want[i])
		}
	}
	if len(resident.memo.keys) != len(keys) {
		t.Errorf("memo holds %d pairs; want %d", len(resident.memo.keys), len(keys))
	}
	// A memo too small for them all keeps the most similar pairs, and answers stay the same.
	small, _ := newExactJaccard(shingleKey(spec), 400, text, DefaultSetBudget, 50)
	got, _ = small.of(t.Context(), keys)
	again, _ = small.of(t.Context(), keys)
	if len(small.memo.keys) != 50 || !slices.IsSorted(small.memo.keys) {
		t.Fatalf("small memo holds %d pairs (sorted %v); want 50", len(small.memo.keys), slices.IsSorted(small.memo.keys))
	}
	least := slices.Min(small.memo.vals)
	above := 0
	for i := range keys {
		if got[i] != want[i] || again[i] != want[i] {
			t.Fatalf("small memo: pair %d = %v then %v; want %v", i, got[i], again[i], want[i])
		}
		if want[i] > least {
			above++
		}
	}
	if above > 50 {
		t.Errorf("the memo kept a pair of similarity %v while %d pairs are more similar", least, above)
	}
}

func TestObservedOptima(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	sims := make([]float64, 300)
	for i := range sims {
		switch i % 3 {
		case 0:
			sims[i] = rng.Float64() * 0.3
		case 1:
			sims[i] = 0.6 + 0.4*rng.Float64()
		default:
			sims[i] = float64(rng.IntN(11)) / 10 // ties, and 0 and 1
		}
	}
	ths := []float64{0.3, 0.5, 0.75, 0.9}
	for _, k := range []int{16, 64, 128} {
		got := observedOptima(sims, k, lsh.EqualWeights, ths)
		for j, th := range ths {
			want, err := lsh.OptimalShapeObserved(th, k, lsh.EqualWeights, sims)
			if err != nil {
				t.Fatal(err)
			}
			// The sums run in another order, so a near-tie may resolve differently; the
			// error mass must agree all the same.
			if got[j].Shape != want.Shape && math.Abs(got[j].Error-want.Error) > 1e-12 {
				t.Errorf("observedOptima(k=%d, t=%v) = %v (error %v); lsh.OptimalShapeObserved = %v (error %v)",
					k, th, got[j].Shape, got[j].Error, want.Shape, want.Error)
			}
			if math.Abs(got[j].FP-want.FP) > 1e-9 && got[j].Shape == want.Shape {
				t.Errorf("k=%d t=%v: FP = %v; want %v", k, th, got[j].FP, want.FP)
			}
		}
	}
	if observedOptima(nil, 128, lsh.EqualWeights, ths) != nil {
		t.Error("observedOptima(no sims) != nil")
	}
}

func TestIndexSizes(t *testing.T) {
	t.Parallel()
	got := IndexSizes(lsh.Shape{Bands: 25, Rows: 5}, 128)
	want := IndexSize{Docs: 1_000_000_000, BandBytes: 1_000_000_000 * 25 * 16, SignatureBytes: 1_000_000_000 * 512}
	if len(got) != 3 || got[2] != want || got[0].Docs != 1_000_000 {
		t.Errorf("IndexSizes(25x5, 128) = %+v; want 1M, 100M, 1B with %+v last", got, want)
	}
}

func TestQuantileSelect(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 9))
	for n := 1; n < 300; n += 7 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(rng.IntN(50)) // ties
		}
		sorted := append([]float64(nil), xs...)
		slices.Sort(sorted)
		for _, q := range []float64{0, 0.025, 0.5, 0.975, 1} {
			work := append([]float64(nil), xs...)
			if got, want := quantileSelect(work, q), quantile(sorted, q); got != want {
				t.Fatalf("quantileSelect(n=%d, %v) = %v; want %v", n, q, got, want)
			}
		}
	}
}

// TestObservedOptimaAsTheTable: observedOptima gives, to the bit, what it gave when it
// kept a table of log(1 - s^r) for every r and pair (tableOptima, its former self), on
// similarities with ties, zeros, ones and thresholds among them.
func TestObservedOptimaAsTheTable(t *testing.T) {
	t.Parallel()
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 9))
		sims := make([]float64, 50+rng.IntN(400))
		for i := range sims {
			switch rng.IntN(4) {
			case 0:
				sims[i] = rng.Float64() * 0.2
			case 1:
				sims[i] = rng.Float64()
			case 2:
				sims[i] = float64(rng.IntN(21)) / 20
			default:
				sims[i] = 0
			}
		}
		ths := []float64{0.3, 0.5, 0.55, 0.75, 0.9, 1}
		for _, k := range []int{1, 16, 64, 128} {
			got, want := observedOptima(sims, k, lsh.EqualWeights, ths), tableOptima(sims, k, lsh.EqualWeights, ths)
			for j := range ths {
				if got[j] != want[j] {
					t.Errorf("seed %d k=%d t=%v: %+v; the table gives %+v", seed, k, ths[j], got[j], want[j])
				}
			}
		}
	}
}

// tableOptima is observedOptima as it was, with its table of k rows.
func tableOptima(sims []float64, k int, w lsh.Weights, thresholds []float64) []lsh.ShapeChoice {
	n := len(sims)
	s := slices.Clone(sims)
	slices.Sort(s)
	below := make([]int, len(thresholds))
	for j, t := range thresholds {
		below[j] = sort.SearchFloat64s(s, t)
	}
	logq := make([][]float64, k)
	for r := 1; r <= k; r++ {
		row := make([]float64, n)
		for i, x := range s {
			row[i] = math.Log1p(-math.Pow(x, float64(r)))
		}
		logq[r-1] = row
	}
	best := make([]lsh.ShapeChoice, len(thresholds))
	for j := range best {
		best[j].Error = math.Inf(1)
	}
	cum := make([]float64, n+1)
	nf := float64(n)
	for b := 1; b <= k; b++ {
		for r := 1; r <= k/b; r++ {
			row := logq[r-1]
			for i, l := range row {
				cum[i+1] = cum[i] + (1 - math.Exp(float64(b)*l))
			}
			for j, m := range below {
				fp := cum[m] / nf
				fn := (float64(n-m) - (cum[n] - cum[m])) / nf
				if e := w.FP*fp + w.FN*fn; e < best[j].Error {
					best[j] = lsh.ShapeChoice{Shape: lsh.Shape{Bands: b, Rows: r}, FP: fp, FN: fn, Error: e}
				}
			}
		}
	}
	for j := range best {
		best[j].Threshold = lsh.ThresholdApprox(best[j].Shape)
	}
	return best
}

// A document's resident set is made once per representation: a second batch of pairs
// shingles only the documents the first did not name, numbered or not.
func TestExactJaccardShinglesOnce(t *testing.T) {
	t.Parallel()
	d := loadDemo(t)
	spec, err := lsh.ParseSpec("level=char size=3 k=64")
	if err != nil {
		t.Fatal(err)
	}
	for _, numbered := range []bool{true, false} {
		var calls sync.Map
		text := func(i int) string {
			n, _ := calls.LoadOrStore(i, new(atomic.Int32))
			n.(*atomic.Int32).Add(1)
			return d.texts[i]
		}
		budget := int64(DefaultSetBudget)
		if numbered {
			// Less than the sets of hashes take, more than numbered sets do.
			budget = hashedBytes(t, spec, d.texts[:300]) * 7 / 10
		}
		x, err := newExactJaccard(shingleKey(spec), 300, text, budget, DefaultMemoPairs)
		if err != nil {
			t.Fatal(err)
		}
		var first, second []uint64
		for a := range int32(150) {
			first = append(first, pairKey(a, a+1))
			second = append(second, pairKey(a, a+150))
		}
		for _, keys := range [][]uint64{first, second} {
			if _, err := x.of(t.Context(), keys); err != nil {
				t.Fatal(err)
			}
		}
		docs := 0
		calls.Range(func(k, v any) bool {
			docs++
			if n := v.(*atomic.Int32).Load(); n != 1 {
				t.Errorf("numbered %v: document %v shingled %d times", numbered, k, n)
			}
			return true
		})
		if docs != 300 || x.block || (x.sets32 != nil) != numbered {
			t.Fatalf("numbered %v: %d documents shingled, block mode %v, numbered sets %v; want 300, false, %v", numbered, docs, x.block, x.sets32 != nil, numbered)
		}
	}
}
