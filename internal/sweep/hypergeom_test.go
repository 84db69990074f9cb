package sweep

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// hyperCDFs returns P(X <= x) for x = 0..n of HG(size, k, n), computed from exact
// binomial coefficients.
func hyperCDFs(size, k, n int64) []float64 {
	total := new(big.Int).Binomial(size, n)
	out := make([]float64, n+1)
	acc := new(big.Rat)
	for x := int64(0); x <= n; x++ {
		if x <= k && n-x <= size-k {
			num := new(big.Int).Mul(new(big.Int).Binomial(k, x), new(big.Int).Binomial(size-k, n-x))
			acc.Add(acc, new(big.Rat).SetFrac(num, total))
		}
		out[x], _ = acc.Float64()
	}
	return out
}

// TestHyperQuantileIsTheBruteForceOne holds hyperQuantile to the least x whose exact
// cumulative probability reaches u, for every bin of up to 30 pairs, every count of
// non-duplicates and every number drawn, at quantiles in both tails and the middle
// (each mirror image of the walk is taken by some of them).
func TestHyperQuantileIsTheBruteForceOne(t *testing.T) {
	us := []float64{1e-6, 0.0125, 0.025, 0.1, 0.3, 0.5, 0.7, 0.9, 0.975, 0.9875, 1 - 1e-6}
	for size := int64(1); size <= 30; size++ {
		for k := int64(0); k <= size; k++ {
			for n := int64(0); n <= size; n++ {
				cdf := hyperCDFs(size, k, n)
				for _, u := range us {
					want := int64(0)
					for want < n && cdf[want] < u*(1-1e-12) {
						want++
					}
					got := hyperQuantile(size, k, n, u)
					if got != want {
						// Accept a neighbour only where the cdf sits on u within rounding.
						if x := min(got, want); math.Abs(cdf[x]-u) > 1e-9 {
							t.Fatalf("hyperQuantile(%d, %d, %d, %g) = %d, want %d (cdf %v)", size, k, n, u, got, want, cdf)
						}
					}
				}
			}
		}
	}
}

// TestExactDrawsHaveTheHypergeometricMean checks addExactDraws over many uniforms: a
// bin of 200 pairs with share 0.013 (2.6 non-duplicates, rounded at random), 40 of them
// removed: mean 0.52 and the upper tail of the exact distribution, where the normal
// approximation's 97.5% point (0.52 + 1.96·0.64 = 1.77) under-states it (exact: 2).
func TestExactDrawsHaveTheHypergeometricMean(t *testing.T) {
	const reps = 200000
	p, z, u, v := make([]float64, reps), make([]float64, reps), make([]float64, reps), make([]float64, reps)
	for i := range reps {
		p[i] = 0.013
		u[i] = (float64(i) + 0.5) / reps
		z[i] = math.Sqrt2 * math.Erfinv(2*u[i]-1)
		v[i] = math.Mod(float64(i)*0.6180339887498949, 1)
	}
	acc := make([]float64, reps)
	addExactDraws(acc, 40, 200, p, z, u, v)
	var sum float64
	for _, x := range acc {
		sum += x
	}
	if mean := sum / reps; math.Abs(mean-0.52) > 0.01 {
		t.Errorf("mean of the exact draws = %.4f, want 0.52", mean)
	}
	if q := quantileSelect(append([]float64(nil), acc...), 0.975); q < 2 {
		t.Errorf("97.5%% point of the exact draws = %v, want at least 2", q)
	}
	normal := make([]float64, reps)
	addDraws(normal, 40, 200, p, z)
	if q := quantileSelect(normal, 0.975); q >= 2 {
		t.Errorf("the normal approximation's 97.5%% point = %v: this test no longer shows why the exact draw is needed", q)
	}
}

// TestFalseSumDrawsExactlyAndRemembers sums a few removal pairs of mixed ramp bins: each
// bin's replicates are drawn exactly (whole numbers, so the interval's ends are too),
// match addExactDraws computed afresh, and a model whose memories are emptied gives the
// same interval again.
func TestFalseSumDrawsExactlyAndRemembers(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	order, per := map[int][]int{}, map[int]int{}
	for _, rb := range rampBins {
		order[rb.bin] = rng.Perm(rb.size)
		per[rb.bin] = 40
	}
	m := rampModel(order, per, 11)
	pairs := make([]int64, len(m.Bins))
	pairs[12], pairs[13], pairs[14] = 9, 14, 30
	first := m.falseSum(pairs)
	if first.hi != math.Trunc(first.hi) || first.lo != math.Trunc(first.lo) || first.hi <= first.point {
		t.Fatalf("false removals %+v: want whole-number ends around the point", first)
	}
	for _, b := range []int{12, 13, 14} {
		e := m.exactDraws(b, pairs[b])
		if e == nil {
			t.Fatalf("bin %d, %d pairs: no exact draws", b, pairs[b])
		}
		want := make([]float64, m.Replicates)
		addExactDraws(want, float64(pairs[b]), m.Bins[b].Size, m.pHi[b], m.zF[b], m.uF[b], m.vF[b])
		for i := range want {
			if float64(e.hi[i]) != want[i] {
				t.Fatalf("bin %d replicate %d: remembered %v, drawn %v", b, i, e.hi[i], want[i])
			}
		}
	}
	m.mu.Lock()
	m.exact, m.falses = nil, nil
	m.mu.Unlock()
	if again := m.falseSum(pairs); again != first {
		t.Errorf("after emptying the memories: %+v, before %+v", again, first)
	}
}
