package sweep

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// The bins whose labels saw no non-duplicate are bounded together.
//
// Drawn bin by bin, each such bin's share of non-duplicates comes from its own
// zero-event distribution (0 in n labels: up to 1-0.025^(1/n) at the 97.5% point), and
// a configuration whose removals spread over ten such bins sums ten independent upper
// tails: about 4.6 times the bound the same labels give the sum itself. The labels of
// those bins together are one observation, "no mistake in any of them", whose
// probability under shares p_u is Π_u (1-p_u)^{n_u}; the shares it leaves possible at
// confidence u are those with Σ_u -n_u·log(1-p_u) <= -log(1-u), and the largest number
// of mistakes among a configuration's s_u removal pairs they allow, max Σ_u s_u·p_u, has
// a closed form (water-filling: 1-p_u = λ·n_u/s_u on the units whose s_u/n_u exceeds λ).
// A replicate reads that maximum at its own uniform, so the group's 97.5% point is the
// exact joint zero-event bound, and a single bin's is Clopper-Pearson's, as before. One
// unit is a bin whose labels were drawn from it as a whole, or a stratum (cell) of a
// design; a bin with an unlabeled cell stays with the bin-by-bin draws.
//
// On top of the shares, the configuration's removal pairs are a random part of their
// bins (as in addExactDraws): the group's count is its mean plus a Poisson deviate whose
// variance Σ_u s_u·p_u·f_u (f the finite-population correction) is at least the
// hypergeometric one, read at a uniform of its own.

// zeroUnit is one part of a bin whose labels saw no non-duplicate.
type zeroUnit struct {
	bin int
	// w is the unit's share of the bin's pairs, n its labels; c <= 1 turns its share
	// of the frame's pairs into the binomial one: n labels drawn without replacement
	// from a frame of N see none with probability at most (1-p/c)^n,
	// c = 1-(n-1)/(2N) (log(1-p·N/(N-i)) is concave in i), so the binomial bound on p/c
	// is a bound on p.
	w, n, c float64
}

// zeroGroup is the model's bins bounded together, and their replicates' uniforms.
type zeroGroup struct {
	in    []bool // per bin: bounded in the group (its share is 0 in every draw of its own)
	units []zeroUnit
	// u is each replicate's confidence level for the shares, r its uniform for the
	// removal pairs' sampling; order lists the replicates by u, ascending.
	u, r  []float64
	order []int
}

// newZeroGroup chooses the group's units among the model's bins (their labels filled)
// and draws its uniforms from a stream of its own, so every other replicate is what it
// was.
func newZeroGroup(m *Model, reps int, seed uint64) zeroGroup {
	g := zeroGroup{in: make([]bool, len(m.Bins))}
	for b := range m.Bins {
		units, ok := zeroUnits(b, &m.Bins[b])
		if !ok {
			continue
		}
		g.in[b] = true
		g.units = append(g.units, units...)
	}
	rng := rand.New(rand.NewPCG(seed, 0x3ea3))
	g.u, g.r = make([]float64, reps), make([]float64, reps)
	for i := range reps {
		g.u[i], g.r[i] = rng.Float64(), rng.Float64()
	}
	g.order = make([]int, reps)
	for i := range g.order {
		g.order[i] = i
	}
	slices.SortFunc(g.order, func(a, b int) int { return cmp.Compare(g.u[a], g.u[b]) })
	return g
}

// zeroUnits returns bin b's units when its labels saw no non-duplicate and every part
// of it that holds pairs has labels. A design's cells are the units when they hold at
// least as many labels as the pooled draws (the pooled labels are then left out, which
// only widens the bound), the bin as a whole otherwise; which one depends on the
// numbers of labels alone, never on what they say. A unit whose frame is labeled
// whole is known to hold no non-duplicate and needs no unit.
func zeroUnits(b int, mb *ModelBin) ([]zeroUnit, bool) {
	if mb.Labeled == 0 || mb.NonDup != 0 {
		return nil, false
	}
	var size float64
	cellLabels := 0
	for _, c := range mb.Cells {
		size += c.Size
		cellLabels += c.Labeled
	}
	unit := func(w float64, n int, frame int64) []zeroUnit {
		c := 1.0
		if frame > 0 {
			if int64(n) >= frame {
				return nil // every pair of the frame is labeled: none is a mistake
			}
			c = 1 - float64(n-1)/(2*float64(frame))
		}
		return []zeroUnit{{bin: b, w: w, n: float64(n), c: c}}
	}
	if cellLabels == 0 || mb.Pooled.Labeled >= cellLabels {
		return unit(1, mb.Pooled.Labeled, mb.Pooled.Frame), true
	}
	var out []zeroUnit
	for _, c := range mb.Cells {
		if c.Size <= 0 {
			continue
		}
		if c.Labeled == 0 || size <= 0 {
			return nil, false
		}
		out = append(out, unit(c.Size/size, c.Labeled, c.Frame)...)
	}
	return out, true
}

// zeroPart is one unit's part in a configuration's group: a = s·c (s the unit's removal
// pairs), n its labels, r = a/n, f the finite-population correction of its removal pairs.
type zeroPart struct{ a, n, r, f float64 }

// addZeroDraws adds to hi[i], for every replicate, the group's count of non-duplicates
// among the removal pairs (pairs per bin).
func (m *Model) addZeroDraws(hi []float64, pairs []int64) {
	g := &m.zero
	var parts []zeroPart
	for _, u := range g.units {
		if u.bin >= len(pairs) || pairs[u.bin] == 0 {
			continue
		}
		s := float64(pairs[u.bin]) * u.w
		if s <= 0 {
			continue
		}
		size := m.Bins[u.bin].Size
		a := s * u.c
		parts = append(parts, zeroPart{a: a, n: u.n, r: a / u.n, f: fpc(float64(pairs[u.bin]), max(size, float64(pairs[u.bin])))})
	}
	if len(parts) == 0 {
		return
	}
	w := newWaterFill(parts)
	for _, i := range g.order {
		if i >= len(hi) {
			continue
		}
		L := -math.Log1p(-g.u[i])
		if L <= 0 {
			continue
		}
		mean, v := w.at(L)
		hi[i] += mean - v + poissonQuantile(v, g.r[i])
	}
}

// waterFill is max Σ a·p over the shares with Σ -n·log(1-p) <= L, read at rising L: the
// parts are taken by r = a/n, largest first, and part k enters once λ falls to its r.
// With the first k parts active, log λ = (Σ n·log r - L)/Σ n, the maximum is
// Σ a - λ·Σ n, and the sampling variance on top Σ a·f - λ·Σ n·f.
type waterFill struct {
	parts                              []zeroPart
	k                                  int
	sumN, sumNLogR, sumA, sumAF, sumNF float64
}

func newWaterFill(parts []zeroPart) *waterFill {
	slices.SortFunc(parts, func(x, y zeroPart) int { return cmp.Compare(y.r, x.r) })
	w := &waterFill{parts: parts}
	w.enter()
	return w
}

func (w *waterFill) enter() {
	p := w.parts[w.k]
	w.sumN += p.n
	w.sumNLogR += p.n * math.Log(p.r)
	w.sumA += p.a
	w.sumAF += p.a * p.f
	w.sumNF += p.n * p.f
	w.k++
}

// at returns the maximum and its sampling variance at L > 0; L never falls between calls.
func (w *waterFill) at(L float64) (mean, v float64) {
	for w.k < len(w.parts) && w.sumNLogR-w.sumN*math.Log(w.parts[w.k].r) < L {
		w.enter()
	}
	lambda := math.Exp((w.sumNLogR - L) / w.sumN)
	mean = max(w.sumA-lambda*w.sumN, 0)
	return mean, min(max(w.sumAF-lambda*w.sumNF, 0), mean)
}

// poissonQuantile returns the u-quantile of a Poisson distribution of mean v (the least
// k with P(X <= k) >= u); above a variance of exactVariance the normal stands in.
func poissonQuantile(v, u float64) float64 {
	if v <= 0 || u <= 0 {
		return 0
	}
	if v > exactVariance {
		return max(v+math.Sqrt2*math.Erfinv(2*u-1)*math.Sqrt(v), 0)
	}
	p := math.Exp(-v)
	cdf := p
	k := 0.0
	for cdf < u && k < 10*exactVariance {
		k++
		p *= v / k
		cdf += p
	}
	return k
}

// zeroBound returns max Σ a_u·p_u over the shares with Σ -n_u·log(1-p_u) <= L (units
// with n_u > 0): the group's draw at level 1-e^{-L}, without the sampling on top.
func zeroBound(a, n []float64, L float64) float64 {
	parts := make([]zeroPart, 0, len(a))
	for u := range a {
		if a[u] > 0 && n[u] > 0 {
			parts = append(parts, zeroPart{a: a[u], n: n[u], r: a[u] / n[u]})
		}
	}
	if len(parts) == 0 || L <= 0 {
		return 0
	}
	mean, _ := newWaterFill(parts).at(L)
	return mean
}
