package sweep

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// DefaultReplicates is the number of bootstrap replicates when Options leaves it 0.
const DefaultReplicates = 1000

// Stratum is one stratum of the design a sweep estimates from.
type Stratum struct {
	Name       string
	FrameSize  int // N_h: pairs in the stratum's frame
	Labeled    int // n_h: counted pairs drawn from it
	Duplicates int // of those, labeled duplicates
	// Unseen is the most pairs of the stratum that can be false merges, at 97.5%
	// confidence, for a configuration none of whose n_h labeled pairs is one: the exact
	// (hypergeometric, Clopper-Pearson style) one-sided bound for zero events in n_h
	// draws without replacement from N_h. 0 when every pair of the stratum is labeled.
	Unseen int
	// Bin is the stratum's similarity bin when its name says one a sweep can compute
	// without labels (ParseStratum); the zero-event bounds of the strata of one bin are
	// then capped by the clustering's pairs in that bin. -1 when it names none.
	Bin int
}

// Design describes the sampling design behind a sweep's dataset-level estimates.
type Design struct {
	// Name is the design used, "" when no counted pair carries design information (then
	// every result is on the labeled-pairs basis only).
	Name string
	// Pairs counts the counted pairs of the design the estimates use; LabeledOnly the
	// counted pairs they cannot use (no inclusion probability, or another design), which
	// count in the labeled-pairs rates only.
	Pairs, LabeledOnly int
	Strata             []Stratum
	// Duplicates estimates the duplicate pairs in the sampling frame (D in the package
	// documentation).
	Duplicates Interval
	Replicates int
	Seed       uint64
	// Notes say what the estimates cannot see or had to assume.
	Notes []string
	// CapRep is the representation whose exact Jaccard the strata's bins are taken over,
	// when their zero-event bounds can be capped by the clustering (Stratum.Bin); nil
	// when they cannot.
	CapRep *lsh.Spec `json:",omitempty"`
}

// FalseRemovalUnit is Estimate.Unit for false removals counted in documents (see
// FalseRemovalDefinition). Results stored before it have no unit: their false removals
// counted falsely merged pairs, which can exceed the removals.
const FalseRemovalUnit = "documents"

// FalseRemovalDefinition says what a false removal is, for pages and the README.
const FalseRemovalDefinition = "A false removal is a removed document that is not a duplicate of the document kept in its place. " +
	"In a cluster of m documents one is kept and m−1 are removed; the keeper rule is chosen later, when a manifest is proposed, " +
	"so the sweep counts the expected number over a keeper drawn uniformly from the cluster: each non-duplicate pair inside a " +
	"cluster of m documents (merged directly or through a chain) accounts for 2/m false removals (exactly 1 in a cluster of two). " +
	"A cluster's false removals never exceed its m−1 removals, so false removals per removal is a rate between 0 and 100%."

// Estimate is a configuration's figures over the whole dataset, from the design's
// pairs.
type Estimate struct {
	// Recall is the estimated share of the frame's duplicate pairs the configuration
	// accepts, A/D, with a stratified bootstrap percentile interval.
	Recall Interval
	// FalseRemovals estimates the false removals in documents (FalseRemovalDefinition):
	// Σ_h w_h·Σ 2/m over the labeled non-duplicates of stratum h that end in one cluster
	// of m documents. Its upper end adds, for every stratum where no labeled pair is a
	// false merge, that stratum's Unseen bound (a bootstrap cannot show a spread the
	// sample never saw); value and interval are capped at Removals.
	FalseRemovals Interval
	// FalseRemovalRate is FalseRemovals per removed document (Removals), the x axis of
	// the recall chart: between 0 and 1.
	FalseRemovalRate Interval
	// Removals is counted, not estimated: the sweep clusters every document.
	Removals int
	// Unit is FalseRemovalUnit; empty in results stored before false removals were
	// counted in documents.
	Unit string `json:",omitempty"`
	// Sampled is the bootstrap's upper end of FalseRemovals, from the strata where a
	// labeled pair is a false merge; Unseen the part the strata without one add. The
	// upper end is min(Removals, Sampled+Unseen).
	Sampled, Unseen float64
	// Seen lists the strata (indexes into Design.Strata) where some labeled pair is a
	// false merge: the others contribute to Unseen.
	Seen []int `json:",omitempty"`
	// Capped is how much the clustering took off the strata's zero-event bounds (Unseen
	// is after it): for the strata of one similarity bin, their bounds' sum is capped by
	// Σ 2/m over the pairs of that bin inside one cluster of m documents, which no count
	// of false removals in them can exceed. 0 when the cap did not apply.
	Capped float64 `json:",omitempty"`
	// CappedBins counts the bins whose bounds the cap lowered; Caps says, per such bin,
	// its cap and the strata whose bounds it replaced.
	CappedBins int      `json:",omitempty"`
	Caps       []BinCap `json:",omitempty"`
}

// BinCap is one similarity bin whose strata's zero-event bounds the clustering capped.
type BinCap struct {
	Bin int
	// Cap is Σ 2/m over the configuration's within-cluster pairs of the bin (what the
	// bin adds to Estimate.Unseen); Bound the sum of its strata's bounds it replaced.
	Cap, Bound float64
	Strata     []int // indexes into Design.Strata
}

// design is the estimator: the design's pairs with their stratum weights w_h = N_h/n_h
// and the bootstrap resampling counts, drawn once so every configuration is judged on
// the same replicates (their differences are then not bootstrap noise).
//
// A configuration's replicate totals are Σ_h rw_h·c_hr, where c_hr counts the draws of
// replicate r that fell on stratum h's pairs the configuration accepts (or merges).
// The c_hr are integers kept from the previous configuration and updated by the pairs
// whose outcome changed, so scoring thresholds in order costs the changes, not the
// pairs, and the result does not depend on the order configurations come in.
type design struct {
	Design
	pairs   []int // indexes into the counted pairs
	stratum []int // per design pair
	weight  []float64
	// repWeight[h] is the weight of one bootstrap draw in stratum h: w_h·n_h/(n_h-1)
	// (the rescaled bootstrap of Rao and Wu draws n_h-1 pairs per stratum, which makes
	// the bootstrap variance match the stratified variance estimator instead of falling
	// short of it by (n_h-1)/n_h); w_h for a stratum of one pair.
	repWeight []float64
	reps      int
	// count[i*reps+r] is how many times replicate r drew design pair i.
	count []uint16
	// dupReps[r] is replicate r's D.
	dupReps []float64
	dup     float64

	mu sync.Mutex // guards the state below: a State may be rescored from several requests
	// The previous configuration's outcomes and per-stratum replicate counts; false
	// merges carry their share of a false removal (2/m) in fixed point.
	accOn []bool
	fmOn  []int64
	accC  [][]int32 // [stratum][replicate]
	fmC   [][]int64 // [stratum][replicate], fixed point
	buf   []float64
}

// fixedOne is 1 in the fixed point of false-removal shares: 2/m is kept as an integer
// number of 2^-24ths so replicate totals are exact sums, whatever order configurations
// come in (2^24 is fine enough: a share's rounding error is under 6e-8).
const fixedOne = 1 << 24

// Share returns the share of a false removal one non-duplicate pair inside a cluster of
// m documents accounts for, 2/m (FalseRemovalDefinition), in fixed point; 0 for m < 2.
func share(m int) int64 {
	if m < 2 {
		return 0
	}
	return (2*fixedOne + int64(m)/2) / int64(m)
}

// unseenAlpha is the one-sided level of the zero-event bound: the upper end of a
// two-sided 95% interval.
const unseenAlpha = 0.025

// zeroEventBound returns the largest K such that a simple random sample of n of N pairs,
// K of which are events, holds no event with probability at least alpha:
// C(N-K, n)/C(N, n) = Π_{i<n} (N-K-i)/(N-i) >= alpha. It is the exact one-sided upper
// confidence bound on K after observing zero events (the hypergeometric counterpart of
// Clopper-Pearson's 1-alpha^(1/n)); 0 when n >= N.
func zeroEventBound(N, n int, alpha float64) int {
	if n >= N {
		return 0
	}
	if n <= 0 {
		return N
	}
	la := math.Log(alpha)
	ok := func(k int) bool { // P(no event | K = k) >= alpha
		var l float64
		for i := range n {
			if N-k-i <= 0 {
				return false
			}
			l += math.Log(float64(N-k-i)) - math.Log(float64(N-i))
			if l < la {
				return false
			}
		}
		return true
	}
	lo, hi := 0, N-n // ok(lo); the answer is in [lo, hi]
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// designPair is what newDesign needs of a counted pair.
type designPair struct {
	design, stratum string
	frameSize       int
	duplicate       bool
}

// newDesign picks the design (name, or the one with the most counted pairs, ties to the
// smaller name) and draws the bootstrap replicates.
func newDesign(ps []designPair, name string, reps int, seed uint64) (*design, error) {
	if reps <= 0 {
		reps = DefaultReplicates
	}
	d := &design{Design: Design{Replicates: reps, Seed: seed}, reps: reps}
	byDesign := map[string]int{}
	for _, p := range ps {
		if p.design != "" && p.stratum != "" && p.frameSize > 0 {
			byDesign[p.design]++
		}
	}
	if name == "" {
		for n, c := range byDesign {
			if name == "" || c > byDesign[name] || c == byDesign[name] && n < name {
				name = n
			}
		}
	} else if byDesign[name] == 0 {
		return nil, &InputError{Field: "design", Index: -1, Msg: fmt.Sprintf("no counted pair carries design %q", name)}
	}
	if name == "" {
		d.LabeledOnly = len(ps)
		d.Notes = append(d.Notes, "no labeled pair records the draw that chose it (design, stratum and frame size): "+
			"figures are on the labeled pairs only, which over-represent whatever was over-sampled")
		d.Duplicates = Interval{math.NaN(), math.NaN(), math.NaN()}
		return d, nil
	}
	d.Name = name
	if others := len(byDesign) - 1; others > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%d other design(s) left to the labeled-pairs basis: one design's inclusion probabilities at a time", others))
	}
	type stratum struct {
		Stratum
		members []int // design pair positions
		frames  map[int]int
	}
	var strata []*stratum
	index := map[string]*stratum{}
	for i, p := range ps {
		if p.design != name || p.stratum == "" || p.frameSize <= 0 {
			d.LabeledOnly++
			continue
		}
		s := index[p.stratum]
		if s == nil {
			s = &stratum{Stratum: Stratum{Name: p.stratum}, frames: map[int]int{}}
			index[p.stratum] = s
			strata = append(strata, s)
		}
		s.members = append(s.members, len(d.pairs))
		d.stratum = append(d.stratum, len(strata)-1)
		s.frames[p.frameSize]++
		s.Labeled++
		if p.duplicate {
			s.Duplicates++
		}
		d.pairs = append(d.pairs, i)
	}
	d.Pairs = len(d.pairs)
	slices.SortFunc(strata, func(a, b *stratum) int { return cmp.Compare(a.Name, b.Name) })
	d.weight = make([]float64, len(d.pairs))
	d.repWeight = make([]float64, len(strata))
	estimateNoted := false
	for h, s := range strata {
		// Every draw of a stratum should record the same N_h; if they differ, the frame
		// changed between draws and the largest is the nearest to the frame now.
		for n := range s.frames {
			s.FrameSize = max(s.FrameSize, n)
		}
		if len(s.frames) > 1 {
			d.Notes = append(d.Notes, fmt.Sprintf("stratum %s: its pairs record %d different frame sizes; using the largest, %d", s.Name, len(s.frames), s.FrameSize))
		}
		if s.FrameSize < s.Labeled {
			d.Notes = append(d.Notes, fmt.Sprintf("stratum %s: frame size %d is below its %d labeled pairs; using %d", s.Name, s.FrameSize, s.Labeled, s.Labeled))
			s.FrameSize = s.Labeled
		}
		if s.Labeled == 1 {
			d.Notes = append(d.Notes, fmt.Sprintf("stratum %s has one labeled pair: it adds no spread to the intervals, which are too narrow", s.Name))
		}
		w := float64(s.FrameSize) / float64(s.Labeled)
		rw := w
		if s.Labeled > 1 {
			rw = w * float64(s.Labeled) / float64(s.Labeled-1)
		}
		d.repWeight[h] = rw
		s.Unseen = zeroEventBound(s.FrameSize, s.Labeled, unseenAlpha)
		s.Bin = -1
		switch k := ParseStratum(name, s.Name); k.Measure {
		case JaccardMeasure:
			if k.Scheme == DemoBins && (d.CapRep == nil || *d.CapRep == k.Rep) {
				rep := k.Rep
				d.CapRep, s.Bin = &rep, k.Bin
			}
		case EstimateMeasure:
			if !estimateNoted {
				estimateNoted = true
				d.Notes = append(d.Notes, "the strata are bins of the MinHash estimate under the draw's representation: "+
					"their zero-event bounds are not capped by the clustering (only exact-Jaccard bins are)")
			}
		}
		for _, m := range s.members {
			d.weight[m], d.stratum[m] = w, h
		}
		d.Strata = append(d.Strata, s.Stratum)
	}
	d.Notes = append(d.Notes, "duplicates outside the sampling frame (pairs the sampler could not draw) are invisible to these estimates",
		"unlabeled, skipped and flagged pairs are assumed missing at random within their stratum")

	// Bootstrap: within each stratum, draw n_h-1 of its pairs with replacement (one
	// for a stratum of one).
	d.count = make([]uint16, len(d.pairs)*reps)
	rng := rand.New(rand.NewPCG(seed, 0xb007))
	for r := range reps {
		for _, s := range strata {
			for range max(len(s.members)-1, 1) {
				m := s.members[rng.IntN(len(s.members))]
				d.count[m*reps+r]++
			}
		}
	}
	isDup := make([]bool, len(d.pairs))
	for i, p := range d.pairs {
		isDup[i] = ps[p].duplicate
	}
	d.accOn, d.fmOn = make([]bool, len(d.pairs)), make([]int64, len(d.pairs))
	d.accC, d.fmC = d.zeroCounts(), make([][]int64, len(d.repWeight))
	for h := range d.fmC {
		d.fmC[h] = make([]int64, reps)
	}
	dupC := d.zeroCounts()
	d.dup = d.update(isDup, make([]bool, len(d.pairs)), dupC)
	d.dupReps = d.replicates(dupC, nil)
	lo, hi := percentileInterval(slices.Clone(d.dupReps))
	d.Duplicates = Interval{d.dup, lo, hi}
	return d, nil
}

func (d *design) zeroCounts() [][]int32 {
	c := make([][]int32, len(d.repWeight))
	for h := range c {
		c[h] = make([]int32, d.reps)
	}
	return c
}

// update moves the replicate counts c from the outcomes prev to on (prev is updated)
// and returns Σ w_i over the pairs on.
func (d *design) update(on, prev []bool, c [][]int32) float64 {
	var sum float64
	for i, o := range on {
		if o {
			sum += d.weight[i]
		}
		if o == prev[i] {
			continue
		}
		prev[i] = o
		row := c[d.stratum[i]]
		cs := d.count[i*d.reps : (i+1)*d.reps]
		if o {
			for r, n := range cs {
				row[r] += int32(n)
			}
		} else {
			for r, n := range cs {
				row[r] -= int32(n)
			}
		}
	}
	return sum
}

// updateShares is update for false-merge shares (fixed point): it moves the replicate
// totals c from the shares prev to v (prev is updated) and returns Σ w_i·v_i.
func (d *design) updateShares(v, prev []int64, c [][]int64) float64 {
	var sum float64
	for i, x := range v {
		if x != 0 {
			sum += d.weight[i] * float64(x) / fixedOne
		}
		if x == prev[i] {
			continue
		}
		delta := x - prev[i]
		prev[i] = x
		row := c[d.stratum[i]]
		for r, n := range d.count[i*d.reps : (i+1)*d.reps] {
			row[r] += delta * int64(n)
		}
	}
	return sum
}

// shareReplicates is replicates for fixed-point share totals.
func (d *design) shareReplicates(c [][]int64, buf []float64) []float64 {
	out := slices.Grow(buf[:0], d.reps)[:d.reps]
	clear(out)
	for h, row := range c {
		w := d.repWeight[h] / fixedOne
		for r, n := range row {
			out[r] += w * float64(n)
		}
	}
	return out
}

// replicates returns Σ_h rw_h·c[h][r] for every replicate r, into buf if it has room.
func (d *design) replicates(c [][]int32, buf []float64) []float64 {
	out := slices.Grow(buf[:0], d.reps)[:d.reps]
	clear(out)
	for h, row := range c {
		w := d.repWeight[h]
		for r, n := range row {
			out[r] += w * float64(n)
		}
	}
	return out
}

// estimate returns the dataset-level figures of a configuration: acc[i] says design
// pair i is a duplicate the configuration accepts; fm[i] is, for a non-duplicate the
// configuration puts in one cluster, that cluster's size m (0 otherwise). caps, when not
// nil, holds per bin Σ 2/m over the configuration's within-cluster pairs of that bin
// (fixed point, binTracker).
func (d *design) estimate(acc []bool, fm []int32, removals int, caps []int64) Estimate {
	shares := make([]int64, len(fm))
	seen := make([]bool, len(d.Strata))
	for i, m := range fm {
		if shares[i] = share(int(m)); shares[i] != 0 {
			seen[d.stratum[i]] = true
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	a := d.update(acc, d.accOn, d.accC)
	f := d.updateShares(shares, d.fmOn, d.fmC)
	reps := d.replicates(d.accC, d.buf)
	recall := Interval{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	if d.dup > 0 {
		ratio := reps[:0]
		for r, ar := range reps {
			if d.dupReps[r] > 0 {
				ratio = append(ratio, ar/d.dupReps[r])
			}
		}
		recall.Value = a / d.dup
		recall.Lo, recall.Hi = percentileInterval(ratio)
	}
	reps = d.shareReplicates(d.fmC, reps)
	flo, fhi := percentileInterval(reps)
	d.buf = reps
	est := Estimate{Recall: recall, Removals: removals, Unit: FalseRemovalUnit, Sampled: fhi}
	var byBin []float64 // unseen bounds per bin, for the cap
	for h, s := range d.Strata {
		switch {
		case seen[h]:
			est.Seen = append(est.Seen, h)
		case s.Bin >= 0 && s.Bin < len(caps):
			if byBin == nil {
				byBin = make([]float64, len(caps))
			}
			byBin[s.Bin] += float64(s.Unseen)
		default:
			est.Unseen += float64(s.Unseen)
		}
	}
	for b, u := range byBin {
		// The pairs of bin b inside one cluster bound every false removal the strata of
		// bin b can hold, whatever the sample says: take the smaller bound.
		if c := float64(caps[b]) / fixedOne; c < u {
			est.Unseen += c
			est.Capped += u - c
			est.CappedBins++
			bc := BinCap{Bin: b, Cap: c, Bound: u}
			for h, s := range d.Strata {
				if s.Bin == b && !seen[h] {
					bc.Strata = append(bc.Strata, h)
				}
			}
			est.Caps = append(est.Caps, bc)
		} else {
			est.Unseen += u
		}
	}
	// A cluster's false removals never exceed its removals, so neither do their total
	// and its bounds.
	r := float64(removals)
	est.FalseRemovals = Interval{min(f, r), min(flo, r), min(fhi+est.Unseen, r)}
	est.FalseRemovalRate = perRemoval(est.FalseRemovals, removals)
	return est
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
