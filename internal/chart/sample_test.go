package chart

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// wilson is the 95% Wilson interval of k successes in n trials, as the sweep
// reports it; here it only makes the sample inputs look like real ones.
func wilson(k, n int) Estimate {
	if n == 0 {
		return Estimate{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	const z = 1.959964
	p := float64(k) / float64(n)
	nn := float64(n)
	d := 1 + z*z/nn
	c := (p + z*z/(2*nn)) / d
	h := z * math.Sqrt(p*(1-p)/nn+z*z/(4*nn*nn)) / d
	return Estimate{Value: p, Lo: math.Max(0, c-h), Hi: math.Min(1, c+h), N: n}
}

// sampleTradeoff is a sweep's worth of configurations: recall rises and false removals
// grow as the threshold falls, with some noise, the way a real grid looks.
func sampleTradeoff(n int) Tradeoff {
	r := rand.New(rand.NewPCG(1, 2))
	t := Tradeoff{Intervals: true, DimDominated: true}
	reps := []string{"word 3-shingles", "word 5-shingles", "char 5-shingles"}
	for i := range n {
		th := 0.3 + 0.65*r.Float64()
		q := 0.6 + 0.4*r.Float64()
		recallP := math.Min(1, math.Max(0, 1.05-0.5*th*th*q+0.05*r.NormFloat64()))
		frP := math.Max(0, 0.03*(1-th)*(1-th)/q+0.002*r.NormFloat64())
		nd, nn := 180, 400
		kd := int(math.Round(recallP * float64(nd)))
		kn := int(math.Round(frP * float64(nn)))
		t.Points = append(t.Points, TradeoffPoint{
			ID:           fmt.Sprint(i + 1),
			Label:        fmt.Sprintf("%s, k=128, 20 bands × 5 rows, threshold %.2f, exact Jaccard", reps[i%3], th),
			Recall:       wilson(kd, nd),
			FalseRemoval: wilson(kn, nn),
		})
	}
	t.Baseline = &TradeoffPoint{Label: "exact hash", Recall: wilson(70, 180), FalseRemoval: wilson(0, 400)}
	if n > 3 {
		t.Selected, t.Recommended = "3", "2"
	}
	return t
}

func sampleSCurves() SCurves {
	r := rand.New(rand.NewPCG(3, 4))
	s := SCurves{Threshold: 0.8}
	for _, sh := range []lsh.Shape{{Bands: 20, Rows: 5}, {Bands: 9, Rows: 13}} {
		sc := ShapeCurve{Shape: sh}
		for lo := 0.0; lo < 0.999; lo += 0.1 {
			n := 10 + r.IntN(60)
			at := lo + 0.02 + 0.06*r.Float64()
			k := 0
			for range n {
				if r.Float64() < lsh.Probability(at, sh) {
					k++
				}
			}
			sc.Measured = append(sc.Measured, BinRate{Lo: lo, Hi: math.Min(1, lo+0.1), At: at, Rate: wilson(k, n)})
		}
		s.Curves = append(s.Curves, sc)
	}
	return s
}

func sampleCategories() CategoryRecall {
	return CategoryRecall{Categories: []Category{
		{Name: "exact copy", Recall: wilson(120, 120)},
		{Name: "formatting change", Recall: wilson(81, 84)},
		{Name: "minor edits", Recall: wilson(58, 66)},
		{Name: "boilerplate-heavy", Recall: wilson(21, 40)},
		{Name: "partial overlap", Recall: wilson(4, 25)},
		{Name: "translation", Recall: wilson(0, 12)},
		{Name: "different", Recall: wilson(0, 0)},
	}}
}

func sampleHistogram() JaccardHistogram {
	r := rand.New(rand.NewPCG(5, 6))
	h := JaccardHistogram{Threshold: 0.8}
	for range 300 {
		h.Duplicates = append(h.Duplicates, math.Min(1, math.Max(0, 1-math.Abs(0.18*r.NormFloat64()))))
	}
	for range 900 {
		h.NonDuplicates = append(h.NonDuplicates, math.Min(1, math.Max(0, 0.15+0.15*r.NormFloat64())))
	}
	return h
}

func sampleHeatmap() ShapeHeatmap {
	hm := ShapeHeatmap{Value: "Recall", Percent: true}
	for _, b := range []int{4, 8, 16, 20, 32} {
		for _, rr := range []int{2, 4, 5, 8} {
			if b*rr > 128 {
				continue
			}
			v := lsh.Probability(0.85, lsh.Shape{Bands: b, Rows: rr})
			hm.Cells = append(hm.Cells, ShapeCell{Shape: lsh.Shape{Bands: b, Rows: rr}, Value: Estimate{Value: v, Lo: math.NaN(), Hi: math.NaN(), N: 180}})
		}
	}
	return hm
}

func sampleMatrix(n int) SimilarityMatrix {
	r := rand.New(rand.NewPCG(7, 8))
	m := SimilarityMatrix{Threshold: 0.7}
	for i := range n {
		m.Docs = append(m.Docs, MatrixDoc{ID: fmt.Sprint(100 + i), Label: fmt.Sprintf("licenses/MIT-%d.txt", i), Keeper: i == 0})
	}
	m.Similarity = make([][]float64, n)
	for i := range n {
		m.Similarity[i] = make([]float64, n)
	}
	for i := range n {
		m.Similarity[i][i] = 1
		for j := i + 1; j < n; j++ {
			v := math.Max(0, 0.98-0.12*float64(j-i)-0.05*r.Float64())
			m.Similarity[i][j], m.Similarity[j][i] = v, v
		}
	}
	return m
}

func sampleChain() Chain {
	return Chain{Threshold: 0.7, Nodes: []ChainNode{
		{ID: "12", Label: "LICENSE", Keeper: true, Next: 0.91, ToKeeper: 1},
		{ID: "40", Label: "vendor/LICENSE", Next: 0.78, ToKeeper: 0.91},
		{ID: "41", Label: "COPYING.txt", Next: 0.72, ToKeeper: 0.66, CutNext: true},
		{ID: "97", Label: "docs/license.md", ToKeeper: 0.44},
	}}
}

// sampleFigures is one of every chart with realistic inputs.
func sampleFigures(t testing.TB) map[string]*Figure {
	t.Helper()
	figs := map[string]*Figure{}
	add := func(name string, f *Figure, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		figs[name] = f
	}
	f, err := sampleTradeoff(60).Figure()
	add("tradeoff", f, err)
	f, err = sampleSCurves().Figure()
	add("scurves", f, err)
	f, err = sampleCategories().Figure()
	add("categories", f, err)
	f, err = sampleHistogram().Figure()
	add("histogram", f, err)
	f, err = sampleHeatmap().Figure()
	add("heatmap", f, err)
	f, err = sampleMatrix(6).Figure()
	add("matrix", f, err)
	f, err = sampleChain().Figure()
	add("chain", f, err)
	return figs
}

// TestWriteSamples writes every sample chart as SVG, PNG and CSV at 480 and 390 px
// into $DEDUP_CHART_DIR, for looking at them; without it the test does nothing.
func TestWriteSamples(t *testing.T) {
	dir := os.Getenv("DEDUP_CHART_DIR")
	if dir == "" {
		t.Skip("set DEDUP_CHART_DIR to write the sample charts there")
	}
	for name, f := range sampleFigures(t) {
		for _, w := range []float64{480, 390} {
			sz := Size{Width: w}
			svg, err := f.SVG(sz)
			if err != nil {
				t.Fatal(err)
			}
			png, err := f.PNG(sz)
			if err != nil {
				t.Fatal(err)
			}
			base := filepath.Join(dir, fmt.Sprintf("%s-%g", name, w))
			os.WriteFile(base+".svg", svg, 0o644)
			os.WriteFile(base+".png", png, 0o644)
		}
		os.WriteFile(filepath.Join(dir, name+".csv"), f.CSV(), 0o644)
	}
}
