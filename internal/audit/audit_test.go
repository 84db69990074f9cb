package audit

import (
	"math"
	"slices"
	"testing"
)

// bruteAtMost is P_K(X <= x), each term from math.Lgamma (not the package's table).
func bruteAtMost(N, K, n, x int) float64 {
	lg := func(v int) float64 { r, _ := math.Lgamma(float64(v + 1)); return r }
	lc := func(a, b int) float64 { return lg(a) - lg(b) - lg(a-b) }
	var total float64
	for k := 0; k <= x; k++ {
		if k > K || n-k > N-K || k < 0 {
			continue
		}
		total += math.Exp(lc(K, k) + lc(N-K, n-k) - lc(N, n))
	}
	return total
}

// TestUpperBoundIsTheHypergeometricOne: the bound equals a brute-force search over
// every K with the hypergeometric probabilities computed by products.
func TestUpperBoundIsTheHypergeometricOne(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ N, n, x int }{{300, 300, 0}, {1000, 300, 0}, {1000, 300, 2}, {450, 300, 1}, {60, 10, 0}, {5000, 300, 4}, {20, 19, 3}} {
		want := c.x
		for K := c.x; K <= c.N-(c.n-c.x); K++ {
			if bruteAtMost(c.N, K, c.n, c.x) >= 0.05-1e-12 {
				want = K
			}
		}
		if got := UpperBound(c.N, c.n, c.x, 0.05); got != want {
			t.Errorf("UpperBound(%d, %d, %d) = %d; brute force %d", c.N, c.n, c.x, got, want)
		}
	}
	// Zero in 300 of a large stratum: about 3/300 of it.
	if got := UpperBound(100000, 300, 0, 0.05); math.Abs(float64(got)/100000-0.00994) > 0.0002 {
		t.Errorf("zero in 300 of 100,000: %d; want about 994", got)
	}
}

// TestCoverage: the bound holds the true number of mistakes with probability at least
// 95%, computed exactly over every possible sample count.
func TestCoverage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ N, K, n int }{{1000, 3, 300}, {1000, 0, 300}, {2000, 40, 300}, {500, 250, 100}} {
		var cover float64
		for x := 0; x <= c.n; x++ {
			p := bruteAtMost(c.N, c.K, c.n, x) - bruteAtMost(c.N, c.K, c.n, x-1)
			if x == 0 {
				p = bruteAtMost(c.N, c.K, c.n, 0)
			}
			if p > 0 && UpperBound(c.N, c.n, x, 0.05) >= c.K {
				cover += p
			}
		}
		if cover < 0.95-1e-9 {
			t.Errorf("%+v: coverage %.4f; want >= 0.95", c, cover)
		}
	}
}

func TestEstimate(t *testing.T) {
	t.Parallel()
	r, err := Estimate(1000, 600, 300, 0)
	if err != nil {
		t.Fatal(err)
	}
	// 400 uncertain, 300 labeled, none a mistake: at most 2 (0.2% of removals).
	if r.Uncertain != 400 || r.Upper != 2 || r.UpperRate != 0.002 || r.Point != 0 {
		t.Errorf("Estimate = %+v", r)
	}
	if r, _ := Estimate(10, 10, 0, 0); r.Upper != 0 || r.UpperRate != 0 {
		t.Errorf("all certain: %+v; want a bound of 0", r)
	}
	if r, _ := Estimate(50, 0, 0, 0); r.Upper != 50 || !math.IsNaN(r.Point) {
		t.Errorf("no label yet: %+v; want every removal", r)
	}
	for _, bad := range [][4]int{{10, 11, 0, 0}, {10, 0, 11, 0}, {10, 0, 5, 6}} {
		if _, err := Estimate(bad[0], bad[1], bad[2], bad[3]); err == nil {
			t.Errorf("Estimate%v = nil error", bad)
		}
	}
}

func TestChoose(t *testing.T) {
	t.Parallel()
	got := Choose(1000, 300, 7)
	if len(got) != 300 || !slices.Equal(got, Choose(1000, 300, 7)) {
		t.Fatalf("Choose: %d indexes, not repeatable", len(got))
	}
	seen := map[int]bool{}
	for _, i := range got {
		if i < 0 || i >= 1000 || seen[i] {
			t.Fatalf("Choose gave %d twice or out of range", i)
		}
		seen[i] = true
	}
	// Uniform: over many seeds every index is chosen about 300/1000 of the time.
	count := make([]int, 50)
	for seed := range uint64(4000) {
		for _, i := range Choose(50, 10, seed) {
			count[i]++
		}
	}
	for i, c := range count {
		if c < 650 || c > 950 { // mean 800, sd about 25
			t.Errorf("index %d chosen %d times in 4000 draws of 10 of 50; want about 800", i, c)
		}
	}
	if all := Choose(5, 10, 1); !slices.Equal(all, []int{0, 1, 2, 3, 4}) {
		t.Errorf("Choose(5, 10) = %v", all)
	}
}
