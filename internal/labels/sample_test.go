package labels

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/frame"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// family returns texts in near-duplicate families of various edit sizes over a
// vocabulary, with a few exact copies: every similarity range is represented.
func family(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, seed))
	vocab := make([]string, 3000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%d", i)
	}
	doc := func() []string {
		ws := make([]string, 40)
		for i := range ws {
			ws[i] = vocab[rng.IntN(len(vocab))]
		}
		return ws
	}
	var texts []string
	for i := 0; len(texts) < n; i++ {
		base := doc()
		texts = append(texts, strings.Join(base, " "))
		if i%10 == 0 {
			for _, edits := range []int{0, 1, 3, 8, 15} {
				c := slices.Clone(base)
				for range edits {
					c[rng.IntN(len(c))] = vocab[rng.IntN(len(vocab))]
				}
				texts = append(texts, strings.Join(c, " "))
			}
		}
	}
	return texts[:n]
}

func frameOf(tb testing.TB, texts []string, spec lsh.Spec) (*frame.Frame, []lsh.Signature) {
	tb.Helper()
	sets, err := frame.NewSets(context.Background(), len(texts), func(i int) string { return texts[i] }, spec, 0)
	if err != nil {
		tb.Fatal(err)
	}
	sigs, err := spec.Signatures(texts)
	if err != nil {
		tb.Fatal(err)
	}
	f, err := frame.Build(context.Background(), sigs, sets, frame.Default, frame.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return f, sigs
}

// TestDrawStratifiesByExactJaccard: every bin pair lies in the bin its stratum names (by
// exact Jaccard, computed here again), records the bin's listed size as its frame, and
// the draw reaches the whole similarity range; identical texts are never drawn.
func TestDrawStratifiesByExactJaccard(t *testing.T) {
	t.Parallel()
	texts := family(1500, 3)
	spec, _ := lsh.ParseSpec("size=2 k=64")
	f, sigs := frameOf(t, texts, spec)
	drawn, err := Draw(f, sigs, Plan{PerBin: 5, TargetBin: -1, Random: 5, Boundary: 4, Threshold: 0.5, Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := lsh.NewHasher(spec)
	bins := map[string]int{}
	norm := spec.Norm
	for _, d := range drawn {
		if norm.Normalize(texts[d.A]) == norm.Normalize(texts[d.B]) {
			t.Errorf("drew identical texts %d and %d", d.A, d.B)
		}
		a, b := h.ShingleSet(texts[d.A]), h.ShingleSet(texts[d.B])
		inter := lsh.Intersection(a, b)
		j := float64(inter) / float64(len(a)+len(b)-inter)
		if math.Abs(j-d.Similarity) > 1e-12 {
			t.Errorf("pair %d-%d: similarity %v; exact %v", d.A, d.B, d.Similarity, j)
		}
		if d.Design != DrawDesign(f) {
			t.Errorf("pair %d-%d: design %q; want %q", d.A, d.B, d.Design, DrawDesign(f))
		}
		if !strings.HasPrefix(d.Origin, "bin:") {
			continue
		}
		bin := f.Scheme.Bin(inter, len(a)+len(b)-inter)
		if want := f.Scheme.Label(bin); d.Stratum != want || d.Origin != fmt.Sprintf("bin:%d", bin) {
			t.Errorf("pair %d-%d (J=%.3f): stratum %q, origin %q; want %q", d.A, d.B, j, d.Stratum, d.Origin, want)
		}
		if bin > 0 && int64(d.FrameSize) != f.Listed[bin] {
			t.Errorf("pair %d-%d: frame size %d; the bin lists %d", d.A, d.B, d.FrameSize, f.Listed[bin])
		}
		bins[d.Stratum]++
	}
	if len(bins) < 12 || bins["j0"] == 0 || bins["j0.95-1"] == 0 {
		t.Errorf("drew from bins %v; want the whole range", bins)
	}
}

// TestSampleIsUniform: a bin's draw is a simple random sample of its listed pairs: over
// many seeds every pair of a small bin is drawn about equally often (chi-square against
// uniform, 0.1% level), including the pairs of classes of equal sets.
func TestSampleIsUniform(t *testing.T) {
	t.Parallel()
	texts := family(300, 5)
	spec, _ := lsh.ParseSpec("size=2 k=64")
	f, _ := frameOf(t, texts, spec)
	bin := -1
	for b := range f.Listed {
		if f.Listed[b] >= 8 && f.Listed[b] <= 60 {
			bin = b
			break
		}
	}
	if bin < 0 {
		t.Fatalf("no bin of 8-60 pairs: %v", f.Listed)
	}
	count := map[frame.Pair]int{}
	const rounds, n = 4000, 3
	for seed := range uint64(rounds) {
		for _, p := range f.Sample(bin, n, rand.New(rand.NewPCG(seed, 9)), nil) {
			count[p]++
		}
	}
	if int64(len(count)) != f.Listed[bin] {
		t.Fatalf("drew %d distinct pairs of a bin of %d", len(count), f.Listed[bin])
	}
	want := float64(rounds*n) / float64(f.Listed[bin])
	var chi float64
	for _, c := range count {
		chi += (float64(c) - want) * (float64(c) - want) / want
	}
	// chi-square with df = N-1; 0.1% upper critical value about df + 3.1*sqrt(2df) + 5.
	df := float64(f.Listed[bin] - 1)
	if crit := df + 3.1*math.Sqrt(2*df) + 5; chi > crit {
		t.Errorf("chi-square %.1f over %v pairs; critical %.1f: the sample is not uniform", chi, f.Listed[bin], crit)
	}
}

// TestPlanCounts: a labeling plan draws Counts[b] from bin b (as far as the bin has
// pairs), and nothing else but the boundary and random pairs asked for.
func TestPlanCounts(t *testing.T) {
	t.Parallel()
	texts := family(800, 7)
	spec, _ := lsh.ParseSpec("size=2 k=64")
	f, sigs := frameOf(t, texts, spec)
	counts := make([]int, f.Scheme.Bins())
	counts[20], counts[15], counts[3] = 6, 4, 2
	drawn, err := Draw(f, sigs, Plan{Counts: counts, Seed: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]int, len(counts))
	for _, d := range drawn {
		var b int
		fmt.Sscanf(d.Origin, "bin:%d", &b)
		got[b]++
	}
	for b := range counts {
		if want := min(int64(counts[b]), f.Listed[b]); int64(got[b]) != want {
			t.Errorf("bin %s: drew %d; want %d", f.Scheme.Label(b), got[b], want)
		}
	}
	if _, err := Draw(f, sigs, Plan{Counts: counts[:3]}, nil); err == nil {
		t.Error("a plan of 3 bins for a frame of 21 was accepted")
	}
}
