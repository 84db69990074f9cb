package sweep

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
)

// DefaultReplicates is the number of bootstrap replicates when Options leaves it 0.
const DefaultReplicates = 1000

// Stratum is one stratum of the design a sweep estimates from.
type Stratum struct {
	Name       string
	FrameSize  int // N_h: pairs in the stratum's frame
	Labeled    int // n_h: counted pairs drawn from it
	Duplicates int // of those, labeled duplicates
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
}

// Estimate is a configuration's figures over the whole dataset, from the design's
// pairs.
type Estimate struct {
	// Recall is the estimated share of the frame's duplicate pairs the configuration
	// accepts, A/D, with a stratified bootstrap percentile interval.
	Recall Interval
	// FalseRemovals estimates the non-duplicate pairs of the frame that end in one
	// cluster: each stands for a document removed that should have been kept.
	FalseRemovals Interval
	// FalseRemovalRate is FalseRemovals per removed document (Removals), the x axis of
	// the recall chart; it exceeds 1 when chains merge unrelated documents wholesale.
	FalseRemovalRate Interval
	// Removals is counted, not estimated: the sweep clusters every document.
	Removals int
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
	// The previous configuration's outcomes and per-stratum replicate counts.
	accOn, fmOn []bool
	accC, fmC   [][]int32 // [stratum][replicate]
	buf         []float64
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
	d.accOn, d.fmOn = make([]bool, len(d.pairs)), make([]bool, len(d.pairs))
	d.accC, d.fmC = d.zeroCounts(), d.zeroCounts()
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
// pair i is a duplicate the configuration accepts, fm[i] a non-duplicate it merges.
func (d *design) estimate(acc, fm []bool, removals int) Estimate {
	d.mu.Lock()
	defer d.mu.Unlock()
	a := d.update(acc, d.accOn, d.accC)
	f := d.update(fm, d.fmOn, d.fmC)
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
	reps = d.replicates(d.fmC, reps)
	flo, fhi := percentileInterval(reps)
	d.buf = reps
	est := Estimate{Recall: recall, FalseRemovals: Interval{f, flo, fhi}, Removals: removals}
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
