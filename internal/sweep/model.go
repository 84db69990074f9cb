package sweep

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/dedupstudio/dedupstudio/internal/frame"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"gonum.org/v1/gonum/mathext"
)

// Cell is one group of a bin's pairs whose labels estimate its share of
// non-duplicates: a stratum of a design whose strata split the bins further (the demo's
// category × bin), or the whole bin when the labels' selection depended on nothing but
// similarity (the studio's draws, which stratify by bin).
type Cell struct {
	Name string
	// Size is the cell's pairs in the dataset (pairs with identical normalized text
	// left out), Labeled its counted labeled pairs (identical ones left out), NonDup how
	// many of those are not duplicates.
	Size            float64
	Labeled, NonDup int
	// Frame is what the labels were drawn from without replacement (0: unknown or
	// too large to matter): labeling a large share of it narrows the cell's interval by
	// the finite-population correction, and labeling all of it leaves no uncertainty.
	Frame int64 `json:",omitempty"`
}

// Rate returns NonDup/Labeled (NaN without labels).
func (c Cell) Rate() float64 {
	if c.Labeled == 0 {
		return math.NaN()
	}
	return float64(c.NonDup) / float64(c.Labeled)
}

// ModelBin is one bin of exact Jaccard similarity of the model: how many pairs of the
// dataset it holds and what its labels say.
type ModelBin struct {
	Bin    int
	Label  string
	Lo, Hi float64
	// Size is the bin's pairs in the dataset, identical texts left out (the frame's
	// estimate for the studio's draws, the design's frame sizes for the demo's);
	// Drawable how many of them a draw can choose from.
	Size     float64
	Drawable int64
	// Cells are the strata of a design that splits the bin further (the demo's
	// category × bin), each standing for its share of the bin; Pooled the labeled pairs
	// whose selection depended on similarity alone (the studio's draws, audits), a
	// sample of the whole bin. With both, the bin's share is their average weighted by
	// their (effective) numbers of labels.
	Cells  []Cell
	Pooled Cell
	// Labeled and NonDup sum the cells' and the pooled pairs'.
	Labeled, NonDup int
	// Rate is the estimated share of the bin's pairs that are not duplicates;
	// meaningful only with labels (without, the half a plan or estimate assumes).
	Rate float64
}

// Model is what the labels say about each bin of exact Jaccard similarity, and how
// sure they are: the part of every dataset estimate that depends on labels. Pairs whose
// normalized texts are identical are certain duplicates, outside every bin.
type Model struct {
	// Basis names where the bins' labels come from: a design name (the demo's), "studio
	// draws", or "labels without a design".
	Basis  string
	Scheme frame.Scheme
	Rep    lsh.Spec
	Bins   []ModelBin
	// Identical counts the dataset's pairs with identical normalized text.
	Identical int64
	// Floor is the lowest bin with a labeled duplicate: recall's point estimate counts
	// the duplicates from there up, and its interval also those of the guard bin just
	// below (Model.Guard); bins below the guard are only bounded (Estimate.BelowFloor).
	// -1 when no non-identical labeled pair is a duplicate.
	Floor int
	// Pairs counts the labeled pairs the model uses; Unused those it leaves to the
	// labeled-pairs basis (another design, a representation that differs).
	Pairs, Unused int
	// Gone counts the labeled pairs among Pairs that name a document no longer live
	// (LabelSet.Gone); GoneUnused those naming one that the model cannot use either (no
	// recorded draw): they count nowhere, as the labeled-pairs basis counts live pairs.
	Gone       int `json:",omitempty"`
	GoneUnused int `json:",omitempty"`
	// Replicates are the Monte Carlo draws behind every interval.
	Replicates int
	Notes      []string

	// Per bin and replicate, the bin's non-duplicate share drawn from the lower and
	// the upper confidence distribution of its cells (Clopper-Pearson's beta
	// distributions, comonotone: the same uniform for both), and standard normal
	// deviates for the sampling of the bin's pairs themselves.
	pLo, pHi   [][]float64
	zF, zA, zM [][]float64
	// uF = Φ(zF) reads the false removals' exact (hypergeometric) draws at the same
	// rank as the normal one; vF rounds a bin's share to a count of its pairs at random
	// (drawn from a stream of their own, so the replicates above are what they were).
	uF, vF [][]float64
	point  []float64 // per bin: the point estimate of the share of non-duplicates
	// guardQ are the guard bin's replicates of its share of duplicates from the upper
	// confidence distribution, capped by the floor bin's (comonotone: rank for rank);
	// nil without a guard.
	guardQ        []float64
	unlabeledBins []int // bins with pairs and no label
	// zero bounds the bins whose labels saw no non-duplicate together (zero.go).
	zero zeroGroup

	seed    uint64 // of the replicates
	mu      sync.Mutex
	recalls map[string][4]Interval // recallOf's memory
	falses  map[string]falseSum    // falseSum's
	exact   map[[2]int64]*exactVec // exactDraws'
}

// betaQuantile returns the p-quantile of Beta(a, b); a <= 0 is a point mass at 0 and
// b <= 0 one at 1 (the degenerate ends of Clopper-Pearson's limits).
func betaQuantile(a, b, p float64) float64 {
	switch {
	case a <= 0:
		return 0
	case b <= 0:
		return 1
	}
	return mathext.InvRegIncBeta(a, b, p)
}

// newModel draws the replicates of a model whose bins are filled.
func newModel(m *Model, reps int, seed uint64) {
	m.Replicates, m.seed = reps, seed
	rng := rand.New(rand.NewPCG(seed, 0x3ea1))
	nb := len(m.Bins)
	m.pLo, m.pHi = make([][]float64, nb), make([][]float64, nb)
	m.zF, m.zA, m.zM = make([][]float64, nb), make([][]float64, nb), make([][]float64, nb)
	m.uF, m.vF = make([][]float64, nb), make([][]float64, nb)
	rngV := rand.New(rand.NewPCG(seed, 0x3ea2))
	m.point = make([]float64, nb)
	m.Floor = -1
	for b := range m.Bins {
		mb := &m.Bins[b]
		mb.Labeled, mb.NonDup = mb.Pooled.Labeled, mb.Pooled.NonDup
		var size float64
		for _, c := range mb.Cells {
			mb.Labeled += c.Labeled
			mb.NonDup += c.NonDup
			size += c.Size
		}
		if mb.Size == 0 {
			mb.Size = size
		}
		pooledRate := math.NaN()
		if mb.Labeled > 0 {
			pooledRate = float64(mb.NonDup) / float64(mb.Labeled)
		}
		// The stratified cells' share and its replicates.
		cLo, cHi := make([]float64, reps), make([]float64, reps)
		var cPoint, effDen float64
		cellLabels := 0
		for _, c := range mb.Cells {
			w := 0.0
			if size > 0 {
				w = c.Size / size
			}
			cd := newConfidence(c.NonDup, c.Labeled, c.Frame)
			r := c.Rate()
			if math.IsNaN(r) {
				r = pooledRate // a cell without labels takes its bin's rate
				if math.IsNaN(r) {
					r = 0.5
				}
			}
			cPoint += w * r
			cellLabels += c.Labeled
			if c.Labeled > 0 {
				effDen += w * w / float64(c.Labeled)
			} else {
				effDen += w * w * 4 // a cell without labels counts as a quarter of one
			}
			for i := range reps {
				u := rng.Float64()
				cLo[i] += w * cd.lo(u)
				cHi[i] += w * cd.hi(u)
			}
		}
		// Kish's effective number of labels of the stratified cells: 1/Σ w_c²/n_c.
		nCells := 0.0
		if len(mb.Cells) > 0 && cellLabels > 0 && effDen > 0 {
			nCells = 1 / effDen
		}
		nPool := float64(mb.Pooled.Labeled)
		lo, hi := make([]float64, reps), make([]float64, reps)
		var point float64
		switch {
		case nCells == 0 && nPool == 0:
			point = 0.5
			if len(mb.Cells) > 0 {
				point = cPoint
			}
			for i := range hi {
				hi[i] = 1
			}
		default:
			wc, wp := nCells/(nCells+nPool), nPool/(nCells+nPool)
			cd := newConfidence(mb.Pooled.NonDup, mb.Pooled.Labeled, mb.Pooled.Frame)
			point = wc * cPoint
			if nPool > 0 {
				point += wp * float64(mb.Pooled.NonDup) / nPool
			}
			for i := range reps {
				u := rng.Float64()
				lo[i] = wc * cLo[i]
				hi[i] = wc * cHi[i]
				if nPool > 0 {
					lo[i] += wp * cd.lo(u)
					hi[i] += wp * cd.hi(u)
				}
			}
		}
		if mb.Labeled == 0 && mb.Size > 0 {
			m.unlabeledBins = append(m.unlabeledBins, b)
		}
		mb.Rate = point
		if mb.Labeled > mb.NonDup && m.Floor < 0 {
			m.Floor = b
		}
		m.point[b], m.pLo[b], m.pHi[b] = point, lo, hi
		m.zF[b], m.zA[b], m.zM[b] = normals(rng, reps), normals(rng, reps), normals(rng, reps)
		m.uF[b], m.vF[b] = make([]float64, reps), make([]float64, reps)
		for i, z := range m.zF[b] {
			m.uF[b][i], m.vF[b][i] = stdNormalCDF(z), rngV.Float64()
		}
	}
	m.zero = newZeroGroup(m, reps, seed)
	m.guardQ = nil
	if g := m.Guard(); g >= 0 {
		m.guardQ = guardShares(m.pLo[g], m.pLo[m.Floor])
	}
}

// Guard returns the guard bin, the bin just below the floor that holds pairs (-1 when
// there is none): its labels saw no duplicate, but a handful of labels in a bin whose
// share of duplicates is small see none by chance (10 labels miss a share of 8% two
// times in five), and then the floor lands one bin too high. Recall's interval counts
// the duplicates the guard's labels cannot rule out; its point estimate does not.
func (m *Model) Guard() int {
	for b := m.Floor - 1; b >= 0; b-- {
		if m.Bins[b].Size > 0 || m.Bins[b].Labeled > 0 {
			return b
		}
	}
	return -1
}

// guardShares returns the guard bin's replicates of its share of duplicates, 1-pLo per
// replicate (its upper confidence distribution: 0 duplicates in n labels give the
// zero-event bound at the 97.5% point), each capped by the floor bin's draw of the same
// rank. The cap is the assumption that a bin's share of duplicates does not fall as
// similarity rises, so the guard's share is at most the floor's; it matters once the
// floor bin's labels are many (one duplicate in 100 bounds both bins at about 5.5%).
// Pairing the two draws rank for rank makes the cap's quantiles the lesser of the two
// distributions' quantiles; the guard's replicates keep their own order, so they stay
// independent of every other bin's in the Monte Carlo sums.
func guardShares(guardLo, floorLo []float64) []float64 {
	n := len(guardLo)
	if n == 0 || len(floorLo) != n {
		return nil
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	// Ranks of the guard's upper draws 1-guardLo, ascending.
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(guardLo[b], guardLo[a]) })
	capQ := make([]float64, n)
	for i, v := range floorLo {
		capQ[i] = 1 - v
	}
	slices.Sort(capQ)
	out := make([]float64, n)
	for r, i := range order {
		out[i] = min(1-guardLo[i], capQ[r])
	}
	return out
}

// Restore returns a copy of a model read back from storage (its bins and labels, without
// the replicates, which are not stored) with its replicates drawn again: the same seed
// gives the same replicates, so a stored profile is estimated as the sweep did.
func (m *Model) Restore(seed uint64) *Model {
	c := Model{Basis: m.Basis, Scheme: m.Scheme, Rep: m.Rep, Identical: m.Identical, Floor: m.Floor, Pairs: m.Pairs,
		Unused: m.Unused, Gone: m.Gone, GoneUnused: m.GoneUnused, Replicates: m.Replicates}
	c.Bins = slices.Clone(m.Bins)
	c.Notes = slices.Clone(m.Notes)
	c.unlabeledBins = nil
	reps := c.Replicates
	if reps <= 0 {
		reps = DefaultReplicates
	}
	newModel(&c, reps, seed)
	return &c
}

func normals(rng *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = rng.NormFloat64()
	}
	return out
}

// draw returns n·p plus the sampling deviation z·sqrt(n·p·(1-p)·f), within [0, n]: how
// many of n pairs of a bin of size pairs, whose share is p, a replicate puts on one side.
// f = (size-n)/(size-1) is the finite-population correction: n pairs taken from a bin
// of size (the model treats them as a random part of it) vary less the more of the bin
// they are, and not at all when they are all of it.
func draw(n, size, p, z float64) float64 {
	if n <= 0 {
		return 0
	}
	f := fpc(n, size)
	v := n*p + z*math.Sqrt(n*p*(1-p)*f)
	return clampDraw(v, n)
}

// clampDraw is min(max(v, 0), n) for n > 0, with comparisons: about four times faster
// in the replicate loops than the builtins, whose handling of NaN and signed zeros
// costs more than the draw. The result is the same for every v: a NaN stays NaN (no
// comparison holds), and v is never -0 (n·p >= +0, and +0 plus a signed zero is +0).
func clampDraw(v, n float64) float64 {
	if v < 0 {
		return 0
	}
	if v > n {
		return n
	}
	return v
}

// fpc is draw's finite-population correction for n pairs of a bin of size pairs.
func fpc(n, size float64) float64 {
	f := 1.0
	if size > n && size > 1 {
		f = (size - n) / (size - 1)
	} else if size > 0 && size <= n {
		f = 0
	}
	return f
}

// addDraws adds draw(n, size, p[i], z[i]) to acc[i] for every replicate i: the same
// arithmetic, with what depends on n and size alone taken out of the loop.
func addDraws(acc []float64, n, size float64, p, z []float64) {
	if n <= 0 {
		return
	}
	f := fpc(n, size)
	p, z = p[:len(acc)], z[:len(acc)]
	for i := range acc {
		pi := p[i]
		v := n*pi + z[i]*math.Sqrt(n*pi*(1-pi)*f)
		acc[i] += clampDraw(v, n)
	}
}

// draws writes draw(n, size, p[i], z[i]) to out[i] for every replicate i.
func draws(out []float64, n, size float64, p, z []float64) {
	if n <= 0 {
		clear(out)
		return
	}
	f := fpc(n, size)
	p, z = p[:len(out)], z[:len(out)]
	for i := range out {
		pi := p[i]
		v := n*pi + z[i]*math.Sqrt(n*pi*(1-pi)*f)
		out[i] = clampDraw(v, n)
	}
}

// Profile is what a configuration does to the dataset's pairs, counted exactly and
// needing no label: its accepted pairs and, per keeper rule, its (removed document,
// keeper) pairs, by bin of exact Jaccard under the model's representation. With a Model
// it gives the dataset estimates (Model.Estimate); a stored profile is re-estimated
// when the labels change without clustering again.
type Profile struct {
	// Accepted counts accepted candidate pairs per bin, AcceptedIdentical the accepted
	// pairs with identical normalized text.
	Accepted          []int64
	AcceptedIdentical int64
	Rules             []RuleProfile
}

// RuleProfile is a configuration's removals under one keeper rule.
type RuleProfile struct {
	// Rule is the keeper rule (cluster.Rule's text form).
	Rule string
	// Removals, Clusters and Largest describe the clustering the rule's keepers remove
	// from (the same for every rule but keeper-star's, whose clusters depend on keepers).
	Removals, Clusters, Largest int
	// Pairs counts the (removed, keeper) pairs per bin, Identical those with identical
	// normalized text (certain duplicates).
	Pairs     []int64
	Identical int
	// Chained counts the removed documents whose similarity to their keeper (under the
	// model's representation) is below the configuration's threshold.
	Chained int
}

// RuleEstimate is a configuration's false removals under one keeper rule.
type RuleEstimate struct {
	Rule string
	// Removals is counted; Certain is how many of them have the keeper's normalized
	// text (never a mistake).
	Removals, Certain int
	// FalseRemovals are removed documents that are not duplicates of their keeper, an
	// estimate with its 95% interval; FalseRemovalRate the same per removal.
	FalseRemovals    Interval
	FalseRemovalRate Interval
	// Unlabeled counts the removals in bins without a single label: their share is
	// unknown (the point estimate takes a half).
	Unlabeled int64
}

// Estimate holds a configuration's estimates over the whole dataset.
type Estimate struct {
	// Recall is the share of the dataset's duplicate pairs from the model's floor up
	// that the configuration accepts (identical texts included); Duplicates that
	// number of duplicate pairs, Accepted how many it accepts.
	Recall, Duplicates, Accepted Interval
	// BelowFloor is the duplicate pairs under the guard bin (Model.Guard), which recall
	// leaves out: the labels there found none, and the upper end is how many they cannot
	// rule out.
	BelowFloor Interval
	// Removals is the documents removed (the same under every rule but keeper-star's:
	// the first rule's).
	Removals int
	Rules    []RuleEstimate
	// Unit is FalseRemovalUnit.
	Unit string `json:",omitempty"`
}

// Rule returns the estimate under keeper rule name; false when it was not scored.
func (e *Estimate) Rule(name string) (RuleEstimate, bool) {
	for _, r := range e.Rules {
		if r.Rule == name {
			return r, true
		}
	}
	return RuleEstimate{}, false
}

// Estimate returns the dataset estimates of a configuration's profile. It is safe for
// concurrent use.
func (m *Model) Estimate(p Profile) Estimate {
	e := Estimate{Unit: FalseRemovalUnit}
	e.Recall, e.Duplicates, e.Accepted, e.BelowFloor = m.recallOf(p)
	for i, r := range p.Rules {
		if i == 0 {
			e.Removals = r.Removals
		}
		e.Rules = append(e.Rules, m.falseRemovals(r))
	}
	return e
}

// falseRemovals estimates how many of a rule's removal pairs are not duplicates: Σ_b s_b·p_b
// with each bin's share p_b from its labels. The lower end takes every bin's share from
// the lower confidence distribution and the upper end from the upper one (with the
// sampling of the bin's own pairs on top), summed over bins by Monte Carlo, not bound by
// bound (Fay and Feuer's construction for weighted sums of rates, with beta in place of
// gamma distributions). The bins whose labels show no mistake add what they cannot rule
// out together, as one joint zero-event bound (addZeroDraws).
func (m *Model) falseRemovals(r RuleProfile) RuleEstimate {
	out := RuleEstimate{Rule: r.Rule, Removals: r.Removals, Certain: r.Identical}
	f := m.falseSum(r.Pairs)
	out.Unlabeled = f.unlabeled
	point := f.point
	l, h := f.lo, f.hi
	if m.Replicates == 0 {
		l, h = point, point
	}
	total := float64(r.Removals)
	iv := Interval{Value: point, Lo: min(l, point), Hi: max(h, point)}
	iv.Hi = min(iv.Hi, total)
	out.FalseRemovals = iv
	out.FalseRemovalRate = perRemoval(iv, r.Removals)
	return out
}

// falseSum is what falseRemovals computes from a rule's pairs per bin alone: the point
// estimate Σ_b s_b·p_b, the 2.5% quantile of the replicates drawn from the lower
// confidence distributions, the 97.5% quantile of those from the upper ones, and the
// pairs in bins without a label.
type falseSum struct {
	point, lo, hi float64
	unlabeled     int64
}

// scratch holds the replicate arrays of falseSum between calls (it runs tens of
// thousands of times a sweep).
var scratch = sync.Pool{New: func() any { return new([]float64) }}

// falseSum returns the sums of pairs, remembered: configurations that differ in
// threshold, policy or keeper rule often remove the same pairs.
func (m *Model) falseSum(pairs []int64) falseSum {
	key := make([]byte, 0, 8*len(pairs))
	for _, s := range pairs {
		key = binary.LittleEndian.AppendUint64(key, uint64(s))
	}
	m.mu.Lock()
	if f, ok := m.falses[string(key)]; ok {
		m.mu.Unlock()
		return f
	}
	m.mu.Unlock()
	var f falseSum
	for b, s := range pairs {
		if s > 0 && b < len(m.point) {
			f.point += float64(s) * m.point[b]
			if m.Bins[b].Labeled == 0 {
				f.unlabeled += s
			}
		}
	}
	buf := scratch.Get().(*[]float64)
	if cap(*buf) < 2*m.Replicates {
		*buf = make([]float64, 2*m.Replicates)
	}
	lo, hi := (*buf)[:m.Replicates], (*buf)[m.Replicates:2*m.Replicates]
	clear(lo)
	clear(hi)
	for b, s := range pairs {
		if s == 0 || b >= len(m.pLo) || m.zero.in[b] {
			continue // the group's bins add nothing to the lower end, and together to the upper
		}
		if e := m.exactDraws(b, s); e != nil {
			for i, v := range e.lo {
				lo[i] += float64(v)
			}
			for i, v := range e.hi {
				hi[i] += float64(v)
			}
			continue
		}
		sf, size := float64(s), m.Bins[b].Size
		addDraws(lo, sf, size, m.pLo[b], m.zF[b])
		addDraws(hi, sf, size, m.pHi[b], m.zF[b])
	}
	m.addZeroDraws(hi, pairs)
	f.lo, f.hi = quantileSelect(lo, 0.025), quantileSelect(hi, 0.975)
	scratch.Put(buf)
	m.mu.Lock()
	if m.falses == nil || len(m.falses) > 1<<16 {
		m.falses = map[string]falseSum{}
	}
	m.falses[string(key)] = f
	m.mu.Unlock()
	return f
}

// exactVec is a bin's replicates of the non-duplicates among a number of its pairs,
// from the lower and the upper confidence distribution. They are whole numbers wherever
// a draw is exact, so float32 holds them without loss.
type exactVec struct{ lo, hi []float32 }

// exactDraws returns the replicates of the non-duplicates among s removal pairs of bin
// b where some replicate's count is small enough to be drawn exactly (addExactDraws),
// or nil where every replicate is the normal approximation (addDraws). Both answers are
// remembered by (bin, s), so the scan for a small replicate runs once too: a sweep asks
// for a few thousand distinct ones a hundred times each.
func (m *Model) exactDraws(b int, s int64) *exactVec {
	key := [2]int64{int64(b), s}
	m.mu.Lock()
	e, ok := m.exact[key]
	m.mu.Unlock()
	if ok {
		return e // nil too: no replicate of (b, s) is small
	}
	n, size := float64(s), m.Bins[b].Size
	f := fpc(n, max(size, n))
	small := false
	for _, p := range [2][]float64{m.pLo[b], m.pHi[b]} {
		for _, pi := range p {
			if n*pi*(1-pi)*f <= exactVariance {
				small = true
				break
			}
		}
	}
	if small {
		acc := make([]float64, m.Replicates)
		e = &exactVec{lo: make([]float32, m.Replicates), hi: make([]float32, m.Replicates)}
		for j, p := range [2][]float64{m.pLo[b], m.pHi[b]} {
			clear(acc)
			addExactDraws(acc, n, size, p, m.zF[b], m.uF[b], m.vF[b])
			out := e.lo
			if j == 1 {
				out = e.hi
			}
			for i, v := range acc {
				out[i] = float32(v)
			}
		}
	}
	m.mu.Lock()
	if m.exact == nil || len(m.exact) >= 4096 { // at most 32 MB at 1,000 replicates
		m.exact = map[[2]int64]*exactVec{}
	}
	m.exact[key] = e
	m.mu.Unlock()
	return e
}

// recallOf is recall, remembered by the accepted pairs per bin: every cluster policy of
// a configuration accepts the same pairs, and so do thresholds between two bins' edges.
func (m *Model) recallOf(p Profile) (recall, dups, acc, below Interval) {
	key := make([]byte, 0, 8*(len(p.Accepted)+1))
	key = binary.LittleEndian.AppendUint64(key, uint64(p.AcceptedIdentical))
	for _, a := range p.Accepted {
		key = binary.LittleEndian.AppendUint64(key, uint64(a))
	}
	m.mu.Lock()
	if r, ok := m.recalls[string(key)]; ok {
		m.mu.Unlock()
		return r[0], r[1], r[2], r[3]
	}
	m.mu.Unlock()
	recall, dups, acc, below = m.recall(p)
	m.mu.Lock()
	if m.recalls == nil || len(m.recalls) > 1<<16 {
		m.recalls = map[string][4]Interval{}
	}
	m.recalls[string(key)] = [4]Interval{recall, dups, acc, below}
	m.mu.Unlock()
	return recall, dups, acc, below
}

// recall estimates A/D over the bins from the floor up: A = Σ_b a_b·q_b plus the
// accepted identical pairs, D = Σ_b N_b·q_b plus every identical pair, q_b = 1-p_b the
// share of duplicates. Its lower end takes, in each bin, the confidence distribution
// that lowers recall (the lower one where the configuration accepts more of the bin
// than of the whole, the upper one where less), the upper end the other. The interval's
// sums also hold the guard bin (Model.Guard), whose point share is 0 (its labels saw no
// duplicate) and whose upper confidence distribution is the zero-event one, capped by
// the floor bin's (guardShares): the duplicates a floor one bin too high would leave out
// widen the interval on the side they move recall, not the point.
func (m *Model) recall(p Profile) (recall, dups, acc, below Interval) {
	nan := Interval{math.NaN(), math.NaN(), math.NaN()}
	if m.Floor < 0 && m.Identical == 0 {
		return nan, nan, nan, nan
	}
	type bin struct{ a, miss float64 }
	bins := make([]bin, len(m.Bins))
	aI := float64(p.AcceptedIdentical)
	mI := math.Max(float64(m.Identical)-aI, 0)
	var aHat, mHat float64 = aI, mI
	// The interval's bins start at the guard, the point estimate's at the floor (the
	// guard's labels saw no duplicate: its point share is 0).
	start, guard := m.Floor, m.Guard()
	if guard >= 0 {
		start = guard
	}
	for b := range m.Bins {
		if start < 0 || b < start {
			continue
		}
		var a float64
		if b < len(p.Accepted) {
			a = float64(p.Accepted[b])
		}
		miss := math.Max(m.Bins[b].Size-a, 0)
		bins[b] = bin{a, miss}
		if b < m.Floor {
			continue
		}
		q := 1 - m.point[b]
		aHat += a * q
		mHat += miss * q
	}
	rHat := math.NaN()
	if aHat+mHat > 0 {
		rHat = aHat / (aHat + mHat)
	}
	reps := m.Replicates
	// Per replicate, the sums over the bins from the floor up, bin by bin (the order of
	// every sum is the bins' order).
	aL, mL, aH, mH := fill(reps, aI), fill(reps, mI), fill(reps, aI), fill(reps, mI)
	dLo, dHi := fill(reps, aI+mI), fill(reps, aI+mI)
	aLo, aHi := fill(reps, aI), fill(reps, aI)
	qLo, qHi := make([]float64, reps), make([]float64, reps)
	aDrawLo, aDrawHi := make([]float64, reps), make([]float64, reps)
	mDrawLo, mDrawHi := make([]float64, reps), make([]float64, reps)
	for b := range m.Bins {
		if start < 0 || b < start {
			continue
		}
		x := bins[b]
		for i := range reps {
			qLo[i], qHi[i] = 1-m.pHi[b][i], 1-m.pLo[b][i] // lower and upper shares of duplicates
		}
		if b == guard && len(m.guardQ) == reps {
			copy(qHi, m.guardQ)
		}
		size := m.Bins[b].Size
		draws(aDrawLo, x.a, size, qLo, m.zA[b])
		draws(aDrawHi, x.a, size, qHi, m.zA[b])
		draws(mDrawLo, x.miss, size, qLo, m.zM[b])
		draws(mDrawHi, x.miss, size, qHi, m.zM[b])
		share := 0.0
		if n := x.a + x.miss; n > 0 {
			share = x.a / n
		}
		// What lowers recall: more duplicates where it accepts less.
		aDown, mDown, aUp, mUp := aDrawHi, mDrawHi, aDrawLo, mDrawLo
		if share >= rHat {
			aDown, mDown, aUp, mUp = aDrawLo, mDrawLo, aDrawHi, mDrawHi
		}
		for i := range reps {
			aL[i] += aDown[i]
			mL[i] += mDown[i]
			aH[i] += aUp[i]
			mH[i] += mUp[i]
			dLo[i] += aDrawLo[i] + mDrawLo[i]
			dHi[i] += aDrawHi[i] + mDrawHi[i]
			aLo[i] += aDrawLo[i]
			aHi[i] += aDrawHi[i]
		}
	}
	lo, hi := make([]float64, reps), make([]float64, reps)
	for i := range reps {
		lo[i], hi[i] = ratio(aL[i], aL[i]+mL[i]), ratio(aH[i], aH[i]+mH[i])
	}
	recall = interval(rHat, lo, hi, reps)
	dups = interval(aHat+mHat, dLo, dHi, reps)
	acc = interval(aHat, aLo, aHi, reps)
	// Below the guard: the labels found no duplicate there; how many could there be?
	below = Interval{}
	if start > 0 {
		bh := make([]float64, reps)
		for b := range start {
			n := m.Bins[b].Size
			for i := range reps {
				qHi[i] = 1 - m.pLo[b][i]
			}
			addDraws(bh, n, n, qHi, m.zM[b])
		}
		below.Hi = quantileSelect(bh, 0.975)
	}
	return recall, dups, acc, below
}

// fill returns n copies of v.
func fill(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func ratio(a, d float64) float64 {
	if d <= 0 {
		return math.NaN()
	}
	return a / d
}

// interval is (point, 2.5% quantile of lo, 97.5% quantile of hi), widened to hold the
// point.
func interval(point float64, lo, hi []float64, reps int) Interval {
	if reps == 0 || math.IsNaN(point) {
		return Interval{point, point, point}
	}
	lo = slices.DeleteFunc(lo, math.IsNaN)
	hi = slices.DeleteFunc(hi, math.IsNaN)
	l, h := quantileSelect(lo, 0.025), quantileSelect(hi, 0.975)
	return Interval{point, min(l, point), max(h, point)}
}

// perRemoval divides a count of false removals by the removals; with no removals there
// are no false ones, a rate of 0.
func perRemoval(f Interval, removals int) Interval {
	if removals == 0 {
		return Interval{}
	}
	r := float64(removals)
	return Interval{f.Value / r, f.Lo / r, f.Hi / r}
}

// Describe returns a sentence on the model for a page: where its labels come from, its
// bins and the assumption it adds.
func (m *Model) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Bins of exact Jaccard under %s (%s); labels: %s, %d pairs", m.Rep.String(), m.Scheme, m.Basis, m.Pairs)
	if m.Identical > 0 {
		fmt.Fprintf(&b, "; %d pairs with identical normalized text are duplicates without a label", m.Identical)
	}
	return b.String()
}

// UnlabeledBins returns the bins that hold pairs and no label.
func (m *Model) UnlabeledBins() []int { return slices.Clone(m.unlabeledBins) }

// sortCells orders a bin's cells by name.
func sortCells(cs []Cell) {
	slices.SortFunc(cs, func(a, b Cell) int { return cmp.Compare(a.Name, b.Name) })
}
