package sweep

import (
	"math"
	"sort"
)

// confidence draws a cell's share of non-duplicates from Clopper-Pearson's lower and
// upper confidence distributions, given x non-duplicates among n labeled pairs drawn
// without replacement from a frame of N (0: a frame too large to matter). At u their
// draws are the CP bounds at level u: lo(0.025) and hi(0.975) are the exact two-sided
// 95% limits, and a cell whose labels show no non-duplicate has lo = 0 while hi is the
// zero-event bound. With a frame, the limits are hypergeometric (labeling the whole
// frame leaves no uncertainty); without, beta (binomial).
type confidence struct {
	x, n, N int
	// The hypergeometric tables, per K (non-duplicates in the frame): le[K] = P_K(X <= x),
	// ge[K] = P_K(X >= x); nil for the beta form.
	le, ge []float64
}

// maxHyperWork bounds the work of the hypergeometric tables, N·(x+1) terms: larger
// frames take the beta form (their sampling fraction is small, and so is the
// correction).
const maxHyperWork = 8 << 20

func newConfidence(x, n int, frame int64) confidence {
	c := confidence{x: x, n: n}
	if n <= 0 {
		return c
	}
	frame = max(frame, 0)
	if frame > 0 && frame < int64(n) {
		frame = int64(n) // more labels than the frame held: it changed since; all of it is labeled
	}
	N := int(frame)
	if frame <= 0 || frame > 1<<30 || float64(n)/float64(N) < 0.02 || int64(N)*int64(x+1) > maxHyperWork {
		return c
	}
	c.N = N
	c.le, c.ge = make([]float64, N+1), make([]float64, N+1)
	lf := make([]float64, N+1) // log k!
	for k := 2; k <= N; k++ {
		lf[k] = lf[k-1] + math.Log(float64(k))
	}
	lchoose := func(a, b int) float64 { return lf[a] - lf[b] - lf[a-b] }
	lgN := lchoose(N, n)
	for K := 0; K <= N; K++ {
		// P_K(X = k) = C(K,k) C(N-K, n-k) / C(N, n), k from max(0, n-(N-K)) to min(n, K).
		lo, hi := max(0, n-(N-K)), min(n, K)
		var le, lt float64 // P(X <= x), P(X <= x-1)
		for k := lo; k <= min(hi, x); k++ {
			p := math.Exp(lchoose(K, k) + lchoose(N-K, n-k) - lgN)
			le += p
			if k < x {
				lt += p
			}
		}
		c.le[K], c.ge[K] = min(le, 1), max(0, 1-lt)
	}
	return c
}

// lo returns the lower confidence distribution's draw at u: the share whose CP lower
// bound at level u it is.
func (c confidence) lo(u float64) float64 {
	if c.n == 0 || c.x == 0 {
		return 0
	}
	if c.le == nil {
		return betaQuantile(float64(c.x), float64(c.n-c.x+1), u)
	}
	// The least K with P_K(X >= x) >= u (ge grows with K).
	K := sort.Search(c.N+1, func(K int) bool { return c.ge[K] >= u })
	return float64(min(K, c.N)) / float64(c.N)
}

// hi returns the upper confidence distribution's draw at u.
func (c confidence) hi(u float64) float64 {
	if c.n == 0 {
		return 1
	}
	if c.x == c.n && c.le == nil {
		return 1
	}
	if c.le == nil {
		return betaQuantile(float64(c.x+1), float64(c.n-c.x), u)
	}
	// The greatest K with P_K(X <= x) >= 1-u (le falls with K).
	K := sort.Search(c.N+1, func(K int) bool { return c.le[K] < 1-u }) - 1
	return float64(max(K, 0)) / float64(c.N)
}
