package lsh

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
)

// Probability returns P(s; b, r) = 1-(1-s^r)^b: the chance that two documents of Jaccard
// similarity s share at least one of b bands of r rows.
func Probability(s float64, sh Shape) float64 {
	return 1 - math.Pow(1-math.Pow(s, float64(sh.Rows)), float64(sh.Bands))
}

// ThresholdApprox returns (1/b)^(1/r), where the S-curve is steepest: roughly the
// similarity at which a pair becomes a candidate.
func ThresholdApprox(sh Shape) float64 {
	return math.Pow(1/float64(sh.Bands), 1/float64(sh.Rows))
}

// FalsePositiveArea is the integral of P(s) over [0, t]: the weight of pairs below the
// threshold that still become candidates, under a uniform distribution of similarities.
func FalsePositiveArea(t float64, sh Shape) float64 {
	return integrate(func(s float64) float64 { return Probability(s, sh) }, 0, t)
}

// FalseNegativeArea is the integral of 1-P(s) over [t, 1]: the weight of pairs at or
// above the threshold that are missed.
func FalseNegativeArea(t float64, sh Shape) float64 {
	return integrate(func(s float64) float64 { return 1 - Probability(s, sh) }, t, 1)
}

// integrate is adaptive Simpson quadrature to about 1e-12, ample for ranking shapes
// (datasketch uses scipy's quad for the same integrals).
func integrate(f func(float64) float64, a, b float64) float64 {
	if b <= a {
		return 0
	}
	fa, fm, fb := f(a), f((a+b)/2), f(b)
	whole := (b - a) / 6 * (fa + 4*fm + fb)
	return adaptiveSimpson(f, a, b, fa, fm, fb, whole, 1e-12, 40)
}

func adaptiveSimpson(f func(float64) float64, a, b, fa, fm, fb, whole, eps float64, depth int) float64 {
	m := (a + b) / 2
	lm, rm := (a+m)/2, (m+b)/2
	flm, frm := f(lm), f(rm)
	left := (m - a) / 6 * (fa + 4*flm + fm)
	right := (b - m) / 6 * (fm + 4*frm + fb)
	if depth <= 0 || math.Abs(left+right-whole) <= 15*eps {
		return left + right + (left+right-whole)/15
	}
	return adaptiveSimpson(f, a, m, fa, flm, fm, left, eps/2, depth-1) +
		adaptiveSimpson(f, m, b, fm, frm, fb, right, eps/2, depth-1)
}

// Weights balance the two kinds of error in shape choice.
type Weights struct {
	FP, FN float64
}

// EqualWeights is datasketch's default (0.5, 0.5).
var EqualWeights = Weights{FP: 0.5, FN: 0.5}

// ShapeChoice is an optimizer's answer with the numbers behind it.
type ShapeChoice struct {
	Shape     Shape
	Threshold float64 // ThresholdApprox of Shape
	FP, FN    float64 // the error masses the choice minimized
	Error     float64 // w.FP*FP + w.FN*FN
}

func checkOptimizerArgs(t float64, k int, w Weights) error {
	if !(t >= 0 && t <= 1) {
		return fmt.Errorf("threshold %v outside [0, 1]", t)
	}
	if k < 1 || k > MaxHashes {
		return fmt.Errorf("number of hashes %d out of range 1..%d", k, MaxHashes)
	}
	if w.FP < 0 || w.FN < 0 || w.FP+w.FN == 0 || math.IsNaN(w.FP+w.FN) {
		return fmt.Errorf("weights of false positives %g and of false negatives %g: want both at least 0 and not both 0", w.FP, w.FN)
	}
	return nil
}

// OptimalShape searches b in 1..k and r in 1..floor(k/b) for the least weighted sum of
// the false-positive and false-negative areas at threshold t, as datasketch's MinHashLSH
// does (same search order, first strict minimum wins, so ties resolve alike).
func OptimalShape(t float64, k int, w Weights) (ShapeChoice, error) {
	if err := checkOptimizerArgs(t, k, w); err != nil {
		return ShapeChoice{}, err
	}
	key := shapeKey{t, k, w}
	if c, ok := shapeCache.Load(key); ok {
		return c.(ShapeChoice), nil
	}
	c := searchShapes(k, w, func(sh Shape) (float64, float64) {
		return FalsePositiveArea(t, sh), FalseNegativeArea(t, sh)
	})
	if shapeCacheSize.Add(1) <= 4096 { // the search is deterministic: remember a few thousand answers
		shapeCache.Store(key, c)
	}
	return c, nil
}

type shapeKey struct {
	t float64
	k int
	w Weights
}

var (
	shapeCache     sync.Map
	shapeCacheSize atomic.Int64
)

// OptimalShapeObserved is OptimalShape against an observed distribution of pair
// similarities (e.g. the labeled pairs of a sample) instead of the uniform one: FP is the
// mean of P(s) over pairs below t, FN the mean of 1-P(s) over pairs at or above t, both
// divided by the number of pairs, so the weights mean what they mean in OptimalShape.
func OptimalShapeObserved(t float64, k int, w Weights, sims []float64) (ShapeChoice, error) {
	if err := checkOptimizerArgs(t, k, w); err != nil {
		return ShapeChoice{}, err
	}
	if len(sims) == 0 {
		return ShapeChoice{}, fmt.Errorf("no observed similarities")
	}
	for i, s := range sims {
		if !(s >= 0 && s <= 1) {
			return ShapeChoice{}, fmt.Errorf("observed similarity %d is %v, outside [0, 1]", i, s)
		}
	}
	n := float64(len(sims))
	return searchShapes(k, w, func(sh Shape) (float64, float64) {
		var fp, fn float64
		for _, s := range sims {
			p := Probability(s, sh)
			if s < t {
				fp += p
			} else {
				fn += 1 - p
			}
		}
		return fp / n, fn / n
	}), nil
}

func searchShapes(k int, w Weights, errs func(Shape) (fp, fn float64)) ShapeChoice {
	best := ShapeChoice{Error: math.Inf(1)}
	for b := 1; b <= k; b++ {
		for r := 1; r <= k/b; r++ {
			sh := Shape{Bands: b, Rows: r}
			fp, fn := errs(sh)
			if e := w.FP*fp + w.FN*fn; e < best.Error {
				best = ShapeChoice{Shape: sh, FP: fp, FN: fn, Error: e}
			}
		}
	}
	best.Threshold = ThresholdApprox(best.Shape)
	return best
}
