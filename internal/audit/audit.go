// Package audit is the statistics of a removal manifest's own audit: a simple random
// sample of its removals, labeled blind by people other than its author, and the exact
// bound the labels put on how many of its removals are mistakes.
//
// A manifest removes R documents, each in favour of its keeper. C of those (removed,
// keeper) pairs have identical normalized text: certain duplicates, never a mistake,
// needing no label (the certain stratum). The other U = R-C form the uncertain stratum;
// Choose draws n of them without replacement. When people have labeled m of the n and
// found x mistakes (pairs that are not duplicates), the number K of mistakes among the U
// is bounded exactly: the one-sided 95% upper bound is the largest K for which a sample
// of m from U holding K mistakes shows x or fewer with probability at least 5%
// (hypergeometric, Clopper-Pearson's construction without its binomial approximation).
// Zero mistakes in m labels bound the rate by about 3/m of the uncertain stratum, and
// the certain stratum lowers the rate over all removals further.
//
// The bound assumes the labels are right and that the m labeled pairs are a random part
// of the n drawn (people label them in the order the queue serves them, whatever their
// content). It assumes nothing about similarity bins: it is design-based, the check on
// the sweep's model-based estimate.
package audit

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Level is the confidence of Result.Upper: one-sided 95%.
const Level = 0.95

// DefaultSize is the labels an audit asks for: zero mistakes in 300 bound the uncertain
// stratum's rate at about 1%.
const DefaultSize = 300

// Choose returns n distinct indexes of [0, uncertain) drawn uniformly without
// replacement (all of them, in order, when n >= uncertain), seeded.
func Choose(uncertain, n int, seed uint64) []int {
	if n >= uncertain {
		out := make([]int, uncertain)
		for i := range out {
			out[i] = i
		}
		return out
	}
	rng := rand.New(rand.NewPCG(seed, 0xa0d17))
	// Floyd's algorithm: n draws, no array of size uncertain.
	chosen := make(map[int]bool, n)
	out := make([]int, 0, n)
	for j := uncertain - n; j < uncertain; j++ {
		t := rng.IntN(j + 1)
		if chosen[t] {
			t = j
		}
		chosen[t] = true
		out = append(out, t)
	}
	return out
}

// Result is what an audit's labels say about a manifest's mistakes.
type Result struct {
	// Removals, Certain and Uncertain describe the manifest; Labeled and Mistakes the
	// labels so far.
	Removals, Certain, Uncertain, Labeled, Mistakes int
	// Point is Mistakes/Labeled·Uncertain; Upper the one-sided 95% upper bound on the
	// mistakes (Uncertain with no label yet). Rates are per removal.
	Point, Upper         float64
	PointRate, UpperRate float64
}

// Estimate returns the bound on a manifest's mistakes from an audit's labels.
func Estimate(removals, certain, labeled, mistakes int) (Result, error) {
	u := removals - certain
	switch {
	case removals < 0 || certain < 0 || u < 0:
		return Result{}, fmt.Errorf("audit: %d removals, %d certain", removals, certain)
	case labeled < 0 || labeled > u || mistakes < 0 || mistakes > labeled:
		return Result{}, fmt.Errorf("audit: %d mistakes in %d labels of %d uncertain removals", mistakes, labeled, u)
	}
	r := Result{Removals: removals, Certain: certain, Uncertain: u, Labeled: labeled, Mistakes: mistakes}
	if labeled == 0 {
		r.Point, r.Upper = math.NaN(), float64(u)
	} else {
		r.Point = float64(mistakes) / float64(labeled) * float64(u)
		r.Upper = float64(UpperBound(u, labeled, mistakes, 1-Level))
	}
	if removals > 0 {
		r.PointRate, r.UpperRate = r.Point/float64(removals), r.Upper/float64(removals)
	}
	return r, nil
}

// UpperBound returns the largest K in [x, N-(n-x)] such that a simple random sample of n
// from N with K events shows at most x with probability at least alpha.
func UpperBound(N, n, x int, alpha float64) int {
	if n >= N {
		return x
	}
	lf := make([]float64, N+1) // log k!
	for k := 2; k <= N; k++ {
		lf[k] = lf[k-1] + math.Log(float64(k))
	}
	lc := func(a, b int) float64 { return lf[a] - lf[b] - lf[a-b] }
	atMost := func(K int) float64 { // P_K(X <= x)
		var p float64
		for k := max(0, n-(N-K)); k <= min(x, K); k++ {
			p += math.Exp(lc(K, k) + lc(N-K, n-k) - lc(N, n))
		}
		return p
	}
	// atMost falls as K grows: the last K where it is still >= alpha.
	lo, hi := x, N-(n-x)
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if atMost(mid) >= alpha {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}
