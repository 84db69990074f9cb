package sweep

import "math"

// exactVariance is the variance of a bin's count above which a replicate's false
// removals are drawn from the normal approximation: there the hypergeometric's skewness
// is under 1/8 and moves its 97.5% point by less than half a pair, while below it the
// normal's thin tails under-state how many of a handful of removals can be mistakes.
const exactVariance = 64

// hyperQuantile returns the u-quantile of the hypergeometric distribution of the
// non-duplicates among n pairs drawn without replacement from a bin of size pairs of
// which k are non-duplicates: the least x with P(X <= x) >= u.
//
// It walks the probability mass from the bottom of the support, in whichever of the
// distribution's mirror images (non-duplicates or duplicates; the n pairs drawn or the
// size-n left) has the least mean, so the walk is short wherever the variance is small
// (the only place it is used).
func hyperQuantile(size, k, n int64, u float64) int64 {
	if n <= 0 || k <= 0 {
		return 0
	}
	if k >= size {
		return n
	}
	// X and its images: X = n - X' with X' ~ HG(size, size-k, n) (duplicates among the n),
	// X = k - X'' with X'' ~ HG(size, k, size-n) (non-duplicates left out), and both at
	// once X = n + k - size + X''' with X''' ~ HG(size, size-k, size-n) (duplicates left
	// out). A mirror that falls as X rises reads the quantile from its other tail.
	flipK, flipN := 2*k > size, 2*n > size
	kk, nn := k, n
	if flipK {
		kk = size - k
	}
	if flipN {
		nn = size - n
	}
	y := func(t float64) int64 { return hyperWalk(size, kk, nn, t) }
	switch {
	case !flipK && !flipN:
		return y(u)
	case flipK && flipN:
		return n + k - size + y(u) // X rises with X'''
	case flipK:
		return n - upperQuantile(y, u) // X = n - X'
	default:
		return k - upperQuantile(y, u) // X = k - X''
	}
}

// upperQuantile returns, for a quantile function q of Y, the least t with
// P(Y <= t) > 1-u: for X = c - Y, the least x with P(X <= x) >= u is c - t.
func upperQuantile(q func(float64) int64, u float64) int64 {
	// The least y with P(Y <= y) > 1-u is the quantile at the next representable
	// value above 1-u.
	return q(math.Nextafter(1-u, 2))
}

// hyperWalk is hyperQuantile for k, n <= size/2: its support starts at 0.
func hyperWalk(size, k, n int64, u float64) int64 {
	top := min(k, n)
	if u <= 0 {
		return 0
	}
	// P(X = 0) = C(size-k, n)/C(size, n).
	lp := lgam(size-k+1) - lgam(size-k-n+1) - lgam(size+1) + lgam(size-n+1)
	p := math.Exp(lp)
	cdf := p
	x := int64(0)
	for cdf < u && x < top {
		// P(x+1)/P(x) = (k-x)(n-x) / ((x+1)(size-k-n+x+1)).
		p *= float64(k-x) * float64(n-x) / (float64(x+1) * float64(size-k-n+x+1))
		cdf += p
		x++
	}
	return x
}

func lgam(x int64) float64 {
	v, _ := math.Lgamma(float64(x))
	return v
}

// stdNormalCDF is Φ(z).
func stdNormalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// addExactDraws adds to acc[i], for every replicate i, how many of n removal pairs of a
// bin of size pairs are non-duplicates when the bin's share of them is p[i]: the bin's
// count of non-duplicates is p[i]·size rounded at random (v[i], so its mean stays
// p[i]·size), and the removal pairs a random part of the bin, hypergeometric, read at
// the quantile u[i] = Φ(z[i]) (one uniform per bin and replicate for every configuration,
// so configurations are compared on the same draws). Where the count's variance exceeds
// exactVariance the normal approximation (addDraws' arithmetic) stands in.
func addExactDraws(acc []float64, n, size float64, p, z, u, v []float64) {
	if n <= 0 {
		return
	}
	if size < n {
		size = n
	}
	f := fpc(n, size)
	ni, si := int64(math.Round(n)), int64(math.Round(size))
	p, z, u, v = p[:len(acc)], z[:len(acc)], u[:len(acc)], v[:len(acc)]
	for i := range acc {
		pi := p[i]
		va := n * pi * (1 - pi) * f
		if va > exactVariance {
			acc[i] += clampDraw(n*pi+z[i]*math.Sqrt(va), n)
			continue
		}
		k := int64(math.Floor(pi*size + v[i]))
		k = min(max(k, 0), si)
		acc[i] += float64(hyperQuantile(si, k, ni, u[i]))
	}
}
