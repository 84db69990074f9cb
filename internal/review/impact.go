package review

import (
	"cmp"
	"math"
	"slices"
)

// GroupCount is one group of the dataset (a source, a language, a value of a metadata
// key): its documents and how many of them the manifest removes.
type GroupCount struct {
	Key     string
	Docs    int
	Removed int
}

// Flag marks a group removed disproportionately.
type Flag string

// Flags.
const (
	Over  Flag = "over"  // removed significantly more often than the rest of the dataset
	Under Flag = "under" // removed significantly less often
)

// GroupImpact is one group's removal rate against the rest of the dataset.
type GroupImpact struct {
	GroupCount
	// Rate is Removed/Docs with its 95% Wilson interval.
	Rate, RateLo, RateHi float64
	// Ratio is the rate ratio against the rest of the dataset, (Removed/Docs) /
	// (removed elsewhere / documents elsewhere), with its 95% interval by Katz's log
	// method (0.5 added to every cell when one is empty); NaN when the rest is empty or
	// removes nothing while the group does.
	Ratio, RatioLo, RatioHi float64
	// P is Fisher's exact test (two-sided) of the group's rate against the rest's;
	// PAdjusted is P adjusted by Holm's method for the number of groups tested.
	P, PAdjusted float64
	Flag         Flag
}

// Impact is the removal rate of a whole dataset and of each group of one grouping.
type Impact struct {
	Docs, Removed int
	Rate          float64
	Groups        []GroupImpact
	// Tested is the number of groups tested (the Holm correction's m).
	Tested int
}

// Significance is the level below which a Holm-adjusted p-value flags a group.
const Significance = 0.05

// z95 is the standard normal quantile of a two-sided 95% interval.
const z95 = 1.959963984540054

// Groups compares each group's removal rate with the rest of the dataset's. counts must
// partition the dataset (every document in exactly one group); groups are returned in
// the order given. A group holding every document, or none, is not tested.
func Groups(counts []GroupCount) Impact {
	var imp Impact
	for _, c := range counts {
		imp.Docs += c.Docs
		imp.Removed += c.Removed
	}
	imp.Rate = rate(imp.Removed, imp.Docs)
	imp.Groups = make([]GroupImpact, len(counts))
	var tested []int
	for i, c := range counts {
		g := GroupImpact{GroupCount: c, P: math.NaN(), PAdjusted: math.NaN()}
		g.Rate = rate(c.Removed, c.Docs)
		g.RateLo, g.RateHi = Wilson(c.Removed, c.Docs)
		g.Ratio, g.RatioLo, g.RatioHi = RateRatio(c.Removed, c.Docs, imp.Removed-c.Removed, imp.Docs-c.Docs)
		if c.Docs > 0 && c.Docs < imp.Docs {
			g.P = FisherExact(c.Removed, c.Docs-c.Removed, imp.Removed-c.Removed, imp.Docs-c.Docs-(imp.Removed-c.Removed))
			tested = append(tested, i)
		}
		imp.Groups[i] = g
	}
	imp.Tested = len(tested)
	ps := make([]float64, len(tested))
	for j, i := range tested {
		ps[j] = imp.Groups[i].P
	}
	for j, adj := range Holm(ps) {
		g := &imp.Groups[tested[j]]
		g.PAdjusted = adj
		if adj < Significance {
			rest := rate(imp.Removed-g.Removed, imp.Docs-g.Docs)
			if g.Rate > rest {
				g.Flag = Over
			} else {
				g.Flag = Under
			}
		}
	}
	return imp
}

func rate(k, n int) float64 {
	if n == 0 {
		return math.NaN()
	}
	return float64(k) / float64(n)
}

// Wilson returns the 95% Wilson score interval of k successes in n trials (NaN, NaN for
// n = 0).
func Wilson(k, n int) (lo, hi float64) {
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	p := float64(k) / float64(n)
	nf := float64(n)
	z2 := z95 * z95
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := z95 / den * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return max(0, center-half), min(1, center+half)
}

// RateRatio returns (a/n1)/(c/n2) with its 95% interval by Katz's log method; when a or c
// is 0, 0.5 is added to every cell for the interval (and for the ratio when c is 0).
// It is NaN when n1 or n2 is 0, or when both groups remove nothing.
func RateRatio(a, n1, c, n2 int) (ratio, lo, hi float64) {
	nan := math.NaN()
	if n1 == 0 || n2 == 0 || a == 0 && c == 0 {
		return nan, nan, nan
	}
	fa, fn1, fc, fn2 := float64(a), float64(n1), float64(c), float64(n2)
	if a == 0 || c == 0 {
		fa, fn1, fc, fn2 = fa+0.5, fn1+1, fc+0.5, fn2+1
	}
	ratio = (fa / fn1) / (fc / fn2)
	if a == 0 {
		ratio = 0
	}
	se := math.Sqrt(1/fa - 1/fn1 + 1/fc - 1/fn2)
	l := math.Log((fa / fn1) / (fc / fn2))
	return ratio, math.Exp(l - z95*se), math.Exp(l + z95*se)
}

// FisherExact returns the two-sided p-value of Fisher's exact test for the 2×2 table
// [[a, b], [c, d]]: the probability, with the margins fixed, of a table no more likely
// than the one observed (within a relative 1e-7, as R's fisher.test does).
func FisherExact(a, b, c, d int) float64 {
	row1, col1, n := a+b, a+c, a+b+c+d
	if n == 0 {
		return 1
	}
	lo, hi := max(0, row1+col1-n), min(row1, col1)
	logP := func(x int) float64 {
		return lchoose(col1, x) + lchoose(n-col1, row1-x) - lchoose(n, row1)
	}
	obs := logP(a)
	p := 0.0
	for x := lo; x <= hi; x++ {
		if lp := logP(x); lp <= obs+1e-7 {
			p += math.Exp(lp)
		}
	}
	return min(1, p)
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// Holm adjusts p-values for multiple comparisons by Holm's step-down method, which
// controls the family-wise error rate like Bonferroni but rejects more: the i-th
// smallest p is multiplied by m-i+1, and the adjusted values are made monotone.
// The result is in the input's order.
func Holm(ps []float64) []float64 {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(ps[x], ps[y]) })
	out := make([]float64, m)
	running := 0.0
	for rank, i := range idx {
		running = max(running, min(1, float64(m-rank)*ps[i]))
		out[i] = running
	}
	return out
}

// SizeBin names the bin of a cluster of n documents in the impact table.
func SizeBin(n int) string {
	switch {
	case n <= 2:
		return "2"
	case n <= 4:
		return "3-4"
	case n <= 9:
		return "5-9"
	case n <= 19:
		return "10-19"
	case n <= 49:
		return "20-49"
	}
	return "50+"
}

// SizeBins lists the bins of SizeBin in order.
var SizeBins = []string{"2", "3-4", "5-9", "10-19", "20-49", "50+"}
