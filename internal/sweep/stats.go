package sweep

import (
	"encoding/json"
	"math"
)

// z95 is the standard normal quantile for a two-sided 95% interval.
const z95 = 1.959963984540054

// Interval is a point estimate with a 95% interval. Value is NaN when there is nothing to
// estimate from (no pairs); it is written as JSON null then, so results can be stored.
type Interval struct {
	Value, Lo, Hi float64
}

// Rate is a share of labeled pairs: Hits of Of, with a 95% Wilson interval.
type Rate struct {
	Hits, Of int
	Interval
}

// NewRate returns hits/of with its Wilson interval; Value is NaN and the interval [0, 1]
// when of is 0.
func NewRate(hits, of int) Rate {
	return Rate{Hits: hits, Of: of, Interval: Wilson(hits, of)}
}

// Wilson returns the share hits/n with its 95% Wilson score interval: the interval that
// keeps close to 95% coverage for small n and shares near 0 or 1, where the textbook
// p ± 1.96·sqrt(p(1-p)/n) collapses to a point.
func Wilson(hits, n int) Interval {
	if n <= 0 {
		return Interval{Value: math.NaN(), Lo: 0, Hi: 1}
	}
	p := float64(hits) / float64(n)
	nf := float64(n)
	z2 := z95 * z95
	den := 1 + z2/nf
	centre := (p + z2/(2*nf)) / den
	half := z95 / den * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return Interval{Value: p, Lo: math.Max(0, centre-half), Hi: math.Min(1, centre+half)}
}

// quantile returns the q-quantile of sorted xs by linear interpolation between order
// statistics (R's type 7, numpy's default).
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := q * float64(len(sorted)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}

// percentileInterval returns the 2.5% and 97.5% quantiles of xs (reordering xs): the
// percentile bootstrap interval. It selects the four order statistics it needs instead
// of sorting.
func percentileInterval(xs []float64) (lo, hi float64) {
	return quantileSelect(xs, 0.025), quantileSelect(xs, 0.975)
}

// quantileSelect is quantile on unsorted xs, which it reorders.
func quantileSelect(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	h := q * float64(len(xs)-1)
	i := int(math.Floor(h))
	lo := nth(xs, i)
	if i+1 >= len(xs) {
		return lo
	}
	// After nth, xs[i+1:] holds the larger values: the next order statistic is their least.
	next := xs[i+1]
	for _, x := range xs[i+2:] {
		if x < next || x != x { // min(next, x) (a NaN wins), without the builtin's cost
			next = x
		}
	}
	return lo + (h-float64(i))*(next-lo)
}

// nth reorders xs so that xs[k] is the k-th smallest, smaller values before it and
// larger after (Hoare's selection with the middle element as pivot).
func nth(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		p := xs[(lo+hi)/2]
		i, j := lo, hi
		for i <= j {
			for xs[i] < p {
				i++
			}
			for xs[j] > p {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}

type intervalJSON struct {
	Value, Lo, Hi *float64
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// MarshalJSON writes NaN and infinities as null (encoding/json refuses them).
func (iv Interval) MarshalJSON() ([]byte, error) {
	return json.Marshal(intervalJSON{finite(iv.Value), finite(iv.Lo), finite(iv.Hi)})
}

// UnmarshalJSON reads null back as NaN.
func (iv *Interval) UnmarshalJSON(b []byte) error {
	var j intervalJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*iv = Interval{orNaN(j.Value), orNaN(j.Lo), orNaN(j.Hi)}
	return nil
}

// orNaN reads a JSON null back as NaN.
func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

type rateJSON struct {
	Hits, Of int
	Value    *float64
	Lo, Hi   *float64
}

// MarshalJSON writes the counts and the interval, NaN as null. (Rate needs its own: the
// embedded Interval's method would otherwise drop the counts.)
func (r Rate) MarshalJSON() ([]byte, error) {
	return json.Marshal(rateJSON{r.Hits, r.Of, finite(r.Value), finite(r.Lo), finite(r.Hi)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Rate) UnmarshalJSON(b []byte) error {
	var j rateJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	// One pass: a stored sweep decodes thousands of results of ~20 rates each.
	*r = Rate{Hits: j.Hits, Of: j.Of, Interval: Interval{orNaN(j.Value), orNaN(j.Lo), orNaN(j.Hi)}}
	return nil
}
