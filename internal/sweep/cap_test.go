package sweep

import (
	"context"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// TestDemoCap runs the default grid on the demo sample with its own design
// (demo-strata-v6). Stratum different|j0 holds 2,129,947 pairs of which 65 are labeled,
// so its zero-event bound (~117,700) alone used to hold every configuration's upper end
// of false removals at 100% of removals. A false merge is a pair inside one cluster,
// and the clustering shows how few of those share no shingle at all. With the default
// work bound every configuration whose clusters are not one giant component has that
// bound capped; with a larger one (2M class comparisons per clustering, Options.CapWork)
// the giant components are capped too and some upper ends fall under 100%. The strata
// of the top bin (minor|j0.9-1: 16 labeled of 2,476) hold the strict configurations at
// 100%: their within-cluster pairs are the configuration's own merges.
func TestDemoCap(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the default grid twice")
	}
	d := loadDemo(t)
	g := DefaultGrid()
	in := textInput(d.texts, d.design, precompute(t, d.texts, g.Specs))
	for _, work := range []int{0, 2_000_000} {
		rep, err := Run(context.Background(), in, g, Options{CapWork: work})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Design.Name != "demo-strata-v6" || rep.Design.CapRep == nil || *rep.Design.CapRep != DemoRep {
			t.Fatalf("design %q, cap representation %v; want demo-strata-v6 capped over DemoRep", rep.Design.Name, rep.Design.CapRep)
		}
		var under, onePct, j0, uncapped int
		for _, r := range rep.Results {
			e := r.Dataset
			if e == nil {
				t.Fatalf("%v: no dataset estimate", r.Config)
			}
			if e.Capped > 100_000 {
				j0++ // different|j0's bound is capped
			} else if e.Capped == 0 {
				uncapped++
			}
			if e.Removals > 0 && e.FalseRemovalRate.Hi < 1 {
				under++
				t.Logf("work %d: %s: upper end %.3f of %d removals (largest cluster %d)", work, r.Config.Label(), e.FalseRemovalRate.Hi, e.Removals, r.LargestCluster)
			}
			if e.Removals > 0 && e.FalseRemovalRate.Hi <= 0.01 {
				onePct++
			}
		}
		t.Logf("work bound %d: %d configurations, %d with different|j0 capped, %d not capped; upper end under 100%%: %d; at most 1%%: %d",
			work, len(rep.Results), j0, uncapped, under, onePct)
		if j0 < len(rep.Results)/2 {
			t.Errorf("work bound %d: different|j0 capped in %d of %d configurations; want most", work, j0, len(rep.Results))
		}
		if work > 0 && under == 0 {
			t.Errorf("work bound %d: no configuration of the default grid has an upper end of false removals under 100%%", work)
		}
	}
}

// TestParseStratum: the one place stratum names are read, for the two designs the
// studio knows, and what it must refuse.
func TestParseStratum(t *testing.T) {
	id := DemoRep.ID()
	for _, c := range []struct {
		design, stratum string
		want            StratumKey
	}{
		{"demo-strata-v6", "different|j0", StratumKey{Measure: JaccardMeasure, Rep: DemoRep, Scheme: DemoBins, Bins: 12, Bin: 0, Category: "different"}},
		{"demo-strata-v6", "minor|j0.9-1", StratumKey{Measure: JaccardMeasure, Rep: DemoRep, Scheme: DemoBins, Bins: 12, Bin: 11, Category: "minor"}},
		{"demo-strata-v6", "translation|j0.05-0.1", StratumKey{Measure: JaccardMeasure, Rep: DemoRep, Scheme: DemoBins, Bins: 12, Bin: 2, Category: "translation"}},
		{"demo-strata-v6", "partial|j0.4-0.5", StratumKey{Measure: JaccardMeasure, Rep: DemoRep, Scheme: DemoBins, Bins: 12, Bin: 6, Category: "partial"}},
		{"draw-" + id + "-bins10", "bin:3", StratumKey{Measure: EstimateMeasure, RepID: id, Scheme: EqualBins, Bins: 10, Bin: 3}},
		{"draw-" + id + "-bins10-seed7", "bin:9", StratumKey{Measure: EstimateMeasure, RepID: id, Scheme: EqualBins, Bins: 10, Bin: 9}},
		{"draw-" + id + "-bins10", "bin:10", StratumKey{}},
		{"draw-" + id + "-bins10", "boundary", StratumKey{}},
		{"draw-" + id + "-bins010", "bin:1", StratumKey{}},
		{"draw-xyz-bins10", "bin:1", StratumKey{}},
		{"demo-strata-v6", "different|j0.95-1", StratumKey{}},
		{"demo-strata-v6", "j0", StratumKey{}},
		{"imported", "bin:3", StratumKey{}},
		{"bench", "bin3", StratumKey{}},
	} {
		got := ParseStratum(c.design, c.stratum)
		if got != c.want {
			t.Errorf("ParseStratum(%q, %q) = %+v; want %+v", c.design, c.stratum, got, c.want)
		}
		if got.Computable() != (c.want.Measure != NoMeasure) {
			t.Errorf("ParseStratum(%q, %q).Computable() = %v", c.design, c.stratum, got.Computable())
		}
	}
	for b := range 12 {
		if k := ParseStratum("demo-strata-v6", "x|"+DemoBinLabel(b)); k.Bin != b {
			t.Errorf("bin %d (%s) parses as %d", b, DemoBinLabel(b), k.Bin)
		}
	}
}

func textDocs(texts []string) Documents {
	return Documents{Count: len(texts), Text: func(i int) string { return texts[i] }}
}

// TestCap: the cap of one hand-made clustering, pair by pair, and what it does to the
// zero-event bounds of a design.
func TestCap(t *testing.T) {
	texts := []string{
		"a b c d e f",           // 0: shingles abcde, bcdef
		"A  b c D e f",          // 1: the same set as 0 (lowercase, white space): one class
		"u v w x y z",           // 2: nothing in common with the others
		"a b c d e g",           // 3: abcde, bcdeg: J = 1/3 with 0 and 1
		"p q r s t",             // 4: alone
		"a b c d e f g h i j k", // 5: shares 2 of 7 shingles with 0: J = 2/7
	}
	b, err := newBinner(context.Background(), textDocs(texts), DemoRep, 12, 1<<20)
	if err != nil || b == nil {
		t.Fatalf("newBinner: %v, %v", b, err)
	}
	if b.class[0] != b.class[1] || len(b.sets) != 5 {
		t.Fatalf("classes %v; want documents 0 and 1 in one class, 5 classes", b.class)
	}
	// One cluster of four (0, 1, 2, 3), 4 and 5 alone: pairs 01 (J = 1), 02, 12, 23
	// (J = 0), 03, 13 (J = 1/3), each 2/4 of a false removal.
	caps := b.capsOf([]int32{0, 0, 0, 0, 4, 5}, 1000)
	want := make([]float64, 12)
	want[0], want[5], want[11] = 1.5, 1, 0.5
	for i, c := range caps {
		if got := float64(c) / fixedOne; math.Abs(got-want[i]) > 1e-6 || got < want[i] {
			t.Errorf("bin %s: cap %v; want %v (never below)", DemoBinLabel(i), got, want[i])
		}
	}
	// The same clustering built by merges in another order gives the same caps.
	tr := b.tracker(1000)
	tr.merge(3, 2)
	tr.merge(1, 0)
	tr.merge(3, 1)
	if got := tr.caps(); !slices.Equal(got, caps) {
		t.Errorf("merged in another order: %v; want %v", got, caps)
	}
	// Past the work bound there is no cap.
	if got := b.capsOf([]int32{0, 0, 0, 0, 4, 5}, 2); got != nil {
		t.Errorf("work bound 2: caps %v; want none", got)
	}
	// Cluster {0, 5}: J = 2/7 is bin j0.2-0.3, one pair in a cluster of 2.
	if got := b.capsOf([]int32{0, 1, 2, 3, 4, 0}, 1000); got[4] != fixedOne {
		t.Errorf("cluster {0, 5}: caps %v; want one whole pair in bin %s", got, DemoBinLabel(4))
	}

	// A design: different|j0 of 100,000 pairs with 10 labeled, none a false merge;
	// partial|j0.3-0.4 of 50 pairs with 10 labeled; minor|j0.9-1 with its one labeled
	// pair merged. Unseen bounds: the j0 stratum's is capped at 1.5, the j0.3-0.4 one at 1.
	var ps []designPair
	for range 10 {
		ps = append(ps, designPair{design: "demo-strata-v6", stratum: "different|j0", frameSize: 100000})
		ps = append(ps, designPair{design: "demo-strata-v6", stratum: "partial|j0.3-0.4", frameSize: 50})
	}
	ps = append(ps, designPair{design: "demo-strata-v6", stratum: "minor|j0.9-1", frameSize: 5})
	d, err := newDesign(ps, "", 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d.CapRep == nil || *d.CapRep != DemoRep {
		t.Fatalf("design cap representation %v; want DemoRep", d.CapRep)
	}
	fm := make([]int32, len(ps))
	fm[len(ps)-1] = 4
	plain := d.estimate(make([]bool, len(ps)), fm, 3, nil)
	capped := d.estimate(make([]bool, len(ps)), fm, 3, caps)
	u0, u5 := float64(d.Strata[0].Unseen), float64(d.Strata[2].Unseen)
	if d.Strata[0].Name != "different|j0" || d.Strata[2].Name != "partial|j0.3-0.4" {
		t.Fatalf("strata %+v", d.Strata)
	}
	if plain.Unseen != u0+u5 || plain.Capped != 0 {
		t.Errorf("without caps: unseen %v, capped %v; want %v, 0", plain.Unseen, plain.Capped, u0+u5)
	}
	if math.Abs(capped.Unseen-2.5) > 1e-6 || math.Abs(capped.Capped-(u0+u5-2.5)) > 1e-6 || capped.CappedBins != 2 {
		t.Errorf("with caps: unseen %v, capped %v over %d bins; want 2.5, %v over 2", capped.Unseen, capped.Capped, capped.CappedBins, u0+u5-2.5)
	}
	if capped.FalseRemovals.Hi > plain.FalseRemovals.Hi || capped.FalseRemovals.Hi < capped.Sampled {
		t.Errorf("capped upper end %v; plain %v, sampled %v", capped.FalseRemovals.Hi, plain.FalseRemovals.Hi, capped.Sampled)
	}
	// A design whose names say nothing keeps its bounds.
	for i := range ps {
		ps[i].design = "imported"
	}
	if d, _ := newDesign(ps, "", 100, 1); d.CapRep != nil || d.estimate(make([]bool, len(ps)), fm, 3, caps).Capped != 0 {
		t.Error("an imported design's bounds were capped")
	}
}

// TestCappedBoundCoverage: a population of real texts, every pair of them in strata of
// rule category × demo bin, and one clustering with chains that put unrelated texts
// (J = 0) together. Over many stratified draws the capped upper end of false removals
// covers the truth as often as the plain one, never less (whenever the plain one
// covers, so does the capped one: the cap is never below the truth of its strata), and
// it is much lower.
func TestCappedBoundCoverage(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(31, 31))
	vocab := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega one two three four five six seven eight nine ten")
	var texts []string
	family := []int{}
	for f := range 40 {
		base := make([]string, 30)
		for i := range base {
			base[i] = vocab[rng.IntN(len(vocab))]
		}
		for range 3 + rng.IntN(6) {
			w := slices.Clone(base)
			for range rng.IntN(3) {
				w[rng.IntN(len(w))] = vocab[rng.IntN(len(vocab))]
			}
			texts = append(texts, strings.Join(w, " "))
			family = append(family, f)
		}
	}
	n := len(texts)
	// The clustering: families, and every eighth family chained to the next.
	ids := make([]int32, n)
	for i := range ids {
		f := family[i]
		if f%8 == 1 {
			f--
		}
		ids[i] = int32(f)
	}
	size := map[int32]int{}
	for _, id := range ids {
		size[id]++
	}
	removals := n - len(size)
	b, err := newBinner(context.Background(), textDocs(texts), DemoRep, 12, 1<<24)
	if err != nil {
		t.Fatal(err)
	}
	caps := b.capsOf(ids, 1<<30)
	h, _ := lsh.NewHasher(DemoRep)
	sets := make([][]uint64, n)
	for i, s := range texts {
		sets[i] = h.ShingleSet(s)
	}
	// Every pair: same family and J >= 0.3 is a duplicate; the stratum is its rule
	// category (same family or not) and bin.
	type pair struct {
		dup bool
		fm  int32
	}
	var pairs []pair
	strata := map[string][]int{}
	var truth float64
	for a := range n {
		for c := a + 1; c < n; c++ {
			inter := lsh.Intersection(sets[a], sets[c])
			union := len(sets[a]) + len(sets[c]) - inter
			bin := DemoJaccardBin(inter, union)
			cat := "different"
			if family[a] == family[c] {
				cat = "family"
			}
			p := pair{dup: cat == "family" && 10*inter >= 3*union}
			if !p.dup && ids[a] == ids[c] {
				p.fm = int32(size[ids[a]])
				truth += 2 / float64(p.fm)
			}
			k := cat + "|" + DemoBinLabel(bin)
			strata[k] = append(strata[k], len(pairs))
			pairs = append(pairs, p)
		}
	}
	keys := slices.Sorted(maps.Keys(strata))
	const draws = 200
	coveredPlain, coveredCapped, capApplied := 0, 0, 0
	var sumPlain, sumCapped float64
	for draw := range draws {
		var ps []designPair
		var fm []int32
		for _, k := range keys {
			m := strata[k]
			for _, j := range rng.Perm(len(m))[:min(len(m), 60)] {
				p := pairs[m[j]]
				ps = append(ps, designPair{design: "demo-strata-v6", stratum: k, frameSize: len(m), duplicate: p.dup})
				fm = append(fm, p.fm)
			}
		}
		d, err := newDesign(ps, "", 300, uint64(draw))
		if err != nil {
			t.Fatal(err)
		}
		plain := d.estimate(make([]bool, len(ps)), fm, removals, nil)
		capped := d.estimate(make([]bool, len(ps)), fm, removals, caps)
		if plain.FalseRemovals.Hi >= truth {
			coveredPlain++
			if capped.FalseRemovals.Hi < truth {
				t.Errorf("draw %d: the plain upper end %.2f covers the truth %.2f, the capped one %.2f does not", draw, plain.FalseRemovals.Hi, truth, capped.FalseRemovals.Hi)
			}
		}
		if capped.FalseRemovals.Hi >= truth {
			coveredCapped++
		}
		if capped.FalseRemovals.Hi > plain.FalseRemovals.Hi {
			t.Errorf("draw %d: capped upper end %.2f above the plain %.2f", draw, capped.FalseRemovals.Hi, plain.FalseRemovals.Hi)
		}
		if capped.Capped > 0 {
			capApplied++
		}
		sumPlain += plain.FalseRemovals.Hi
		sumCapped += capped.FalseRemovals.Hi
	}
	t.Logf("%d documents, %d pairs in %d strata, %d removals, %.2f false removals; upper end covers the truth: plain %d/%d, capped %d/%d; mean upper end: plain %.1f, capped %.1f; cap applied in %d draws",
		n, len(pairs), len(keys), removals, truth, coveredPlain, draws, coveredCapped, draws, sumPlain/draws, sumCapped/draws, capApplied)
	if truth <= 0 || capApplied < draws/2 {
		t.Fatalf("truth %.2f, cap applied in %d draws: the population does not test the cap", truth, capApplied)
	}
	if share := float64(coveredCapped) / draws; share < 0.95 {
		t.Errorf("the capped upper end covered the truth in %.3f of draws; want >= 0.95 (one-sided 97.5%% bounds)", share)
	}
	if sumCapped/draws > float64(removals)/2 || sumCapped >= sumPlain {
		t.Errorf("the cap did not lower the upper end: mean %.1f vs %.1f (%d removals)", sumCapped/draws, sumPlain/draws, removals)
	}
}

// TestIntersect: the branch-free merge counts what lsh.Intersection counts.
func TestIntersect(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for range 2000 {
		gen := func() []uint64 {
			s := make([]uint64, rng.IntN(40))
			for i := range s {
				s[i] = uint64(rng.IntN(60))
			}
			slices.Sort(s)
			return slices.Compact(s)
		}
		a, b := gen(), gen()
		if got, want := intersect(a, b), lsh.Intersection(a, b); got != want {
			t.Fatalf("intersect(%v, %v) = %d; want %d", a, b, got, want)
		}
	}
}
