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
	// logq[r-1][i] = log(1 - s_i^r), so (1-s^r)^b = exp(b * logq).
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
