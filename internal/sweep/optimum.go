package sweep

import (
	"math"
	"slices"
	"sort"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// observedOptima is lsh.OptimalShapeObserved(t, k, w, sims) for every t of thresholds at
// once (same search order, same first strict minimum): P(s) of each shape is computed
// once for all thresholds, and the error masses come from prefix sums over the sorted
// similarities. One call costs about as much as one call of the lsh function, not one
// per threshold. It returns nil without similarities.
//
// Its memory is the similarities' (not a table of k rows of them: 2 GB at a million
// labeled pairs and k = 256), and its exponentials are one per distinct similarity and
// shape: each prefix sum still adds every pair's term in order, so the figures are the
// table's to the bit (TestObservedOptimaAsTheTable).
func observedOptima(sims []float64, k int, w lsh.Weights, thresholds []float64) []lsh.ShapeChoice {
	n := len(sims)
	if n == 0 || k < 1 {
		return nil
	}
	s := slices.Clone(sims)
	slices.Sort(s)
	below := make([]int, len(thresholds)) // sims < t
	for j, t := range thresholds {
		below[j] = sort.SearchFloat64s(s, t)
	}
	// Runs of equal similarities; every threshold's boundary is a run's end.
	var vals []float64
	var ends []int // ends[v]: the sorted index after run v
	for i, x := range s {
		if i > 0 && x == s[i-1] {
			ends[len(ends)-1] = i + 1
			continue
		}
		vals, ends = append(vals, x), append(ends, i+1)
	}
	// cum[v] is the prefix sum after run v; at[j] the run that ends at below[j] (-1: none).
	at := make([]int, len(below))
	for j, m := range below {
		at[j], _ = slices.BinarySearch(ends, m)
		if m == 0 {
			at[j] = -1
		}
	}
	type cand struct {
		lsh.ShapeChoice
		b, r int
	}
	best := make([]cand, len(thresholds))
	for j := range best {
		best[j].Error = math.Inf(1)
	}
	logq := make([]float64, len(vals)) // log(1 - s^r) per distinct s, so (1-s^r)^b = exp(b * logq)
	cum := make([]float64, len(vals))
	nf := float64(n)
	for r := 1; r <= k; r++ {
		for v, x := range vals {
			logq[v] = math.Log1p(-math.Pow(x, float64(r)))
		}
		for b := 1; b <= k/r; b++ {
			acc, start := 0.0, 0
			for v, l := range logq {
				if term := 1 - math.Exp(float64(b)*l); term != 0 {
					for range ends[v] - start {
						acc += term
					}
				}
				cum[v], start = acc, ends[v]
			}
			total := cum[len(cum)-1]
			for j, m := range below {
				c := 0.0
				if at[j] >= 0 {
					c = cum[at[j]]
				}
				fp := c / nf
				fn := (float64(n-m) - (total - c)) / nf
				// The first strict minimum in lsh's order (bands, then rows).
				e := w.FP*fp + w.FN*fn
				if bj := &best[j]; e < bj.Error || e == bj.Error && (b < bj.b || b == bj.b && r < bj.r) {
					*bj = cand{lsh.ShapeChoice{Shape: lsh.Shape{Bands: b, Rows: r}, FP: fp, FN: fn, Error: e}, b, r}
				}
			}
		}
	}
	out := make([]lsh.ShapeChoice, len(thresholds))
	for j := range best {
		out[j] = best[j].ShapeChoice
		out[j].Threshold = lsh.ThresholdApprox(out[j].Shape)
	}
	return out
}
