package sweep

import (
	"math"
	"testing"
)

// hyperPMF is the hypergeometric probability of k non-duplicates in n drawn from N with K,
// by exact products (no logs), for the brute-force checks below.
func hyperPMF(N, K, n, k int) float64 {
	if k < 0 || k > n || k > K || n-k > N-K {
		return 0
	}
	p := 1.0
	// C(K,k) C(N-K,n-k) / C(N,n) as a product of ratios.
	for i := range k {
		p *= float64(K-i) / float64(k-i)
	}
	for i := range n - k {
		p *= float64(N-K-i) / float64(n-k-i)
	}
	for i := range n {
		p /= float64(N-i) / float64(n-i)
	}
	return p
}

// TestConfidenceMatchesBruteForce: the hypergeometric limits are the exact
// Clopper-Pearson limits a brute-force search over K finds: the upper at 97.5% is the
// largest K with P_K(X <= x) >= 2.5%, the lower at 2.5% the least K with P_K(X >= x) >=
// 2.5%.
func TestConfidenceMatchesBruteForce(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ N, n, x int }{{60, 20, 0}, {60, 20, 3}, {200, 50, 1}, {30, 30, 4}, {500, 40, 0}, {25, 24, 24}} {
		cd := newConfidence(c.x, c.n, int64(c.N))
		if cd.le == nil {
			t.Fatalf("%+v: no hypergeometric table", c)
		}
		up, lo := -1, -1
		for K := 0; K <= c.N; K++ {
			var le, ge float64
			for k := 0; k <= c.n; k++ {
				p := hyperPMF(c.N, K, c.n, k)
				if k <= c.x {
					le += p
				}
				if k >= c.x {
					ge += p
				}
			}
			if le >= 0.025-1e-12 {
				up = K
			}
			if lo < 0 && ge >= 0.025-1e-12 {
				lo = K
			}
		}
		if got := cd.hi(0.975) * float64(c.N); math.Abs(got-float64(up)) > 1e-9 {
			t.Errorf("%+v: upper limit %v; brute force %d", c, got, up)
		}
		wantLo := float64(lo)
		if c.x == 0 {
			wantLo = 0
		}
		if got := cd.lo(0.025) * float64(c.N); math.Abs(got-wantLo) > 1e-9 {
			t.Errorf("%+v: lower limit %v; brute force %v", c, got, wantLo)
		}
	}
	// A frame labeled whole leaves no uncertainty.
	if cd := newConfidence(3, 40, 40); cd.lo(0.01) != 3.0/40 || cd.hi(0.99) != 3.0/40 {
		t.Errorf("whole frame: lo %v hi %v; want 3/40", cd.lo(0.01), cd.hi(0.99))
	}
	// Without a frame the limits are Clopper-Pearson's beta ones: zero events in 100
	// bound the share by 1-0.025^(1/100).
	if cd, want := newConfidence(0, 100, 0), 1-math.Pow(0.025, 0.01); math.Abs(cd.hi(0.975)-want) > 1e-9 {
		t.Errorf("zero in 100: upper %v; want %v", cd.hi(0.975), want)
	}
}

// TestConfidenceCoverage: the CP limits at 2.5% and 97.5% contain the true share with
// probability at least 95% (computed exactly over every sample count x, not simulated),
// for shares near 0, in the middle and near 1, with and without the finite-population
// form: the property the estimates rest on.
func TestConfidenceCoverage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ N, K, n int }{{400, 0, 50}, {400, 3, 50}, {400, 200, 100}, {400, 397, 60}, {2000, 20, 300}, {900, 9, 30}} {
		for _, frame := range []int64{int64(c.N), 0} {
			var cover float64
			for x := 0; x <= c.n; x++ {
				p := hyperPMF(c.N, c.K, c.n, x)
				if p == 0 {
					continue
				}
				cd := newConfidence(x, c.n, frame)
				share := float64(c.K) / float64(c.N)
				if cd.lo(0.025) <= share+1e-12 && share <= cd.hi(0.975)+1e-12 {
					cover += p
				}
			}
			if cover < 0.95-1e-9 {
				t.Errorf("N=%d K=%d n=%d frame %d: coverage %.4f; want >= 0.95", c.N, c.K, c.n, frame, cover)
			}
		}
	}
}
