package sweep

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
)

// Bootstrap defaults.
const (
	DefaultReplicates = 1000
	DefaultSeed       = 1
)

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
type design struct {
	Design
	pairs  []int     // indexes into the counted pairs
	weight []float64 // per design pair
	// repWeight is the weight of one bootstrap draw of the pair: w_h·n_h/(n_h-1) (the
	// rescaled bootstrap of Rao and Wu draws n_h-1 pairs per stratum, which makes the
	// bootstrap variance match the stratified variance estimator instead of falling
	// short of it by (n_h-1)/n_h); w_h for a stratum of one pair.
	repWeight []float64
	reps      int
	// count[i*reps+r] is how many times replicate r drew design pair i.
	count []uint16
	// dupReps[r] is replicate r's D.
	dupReps []float64
	dup     float64
	mu      sync.Mutex // guards memo: a State may be rescored from several requests
	memo    map[string][2]Interval
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
	d := &design{Design: Design{Replicates: reps, Seed: seed}, reps: reps, memo: map[string][2]Interval{}}
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
	d.repWeight = make([]float64, len(d.pairs))
	for _, s := range strata {
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
		for _, m := range s.members {
			d.weight[m], d.repWeight[m] = w, rw
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
	d.dup, d.dupReps = d.total(isDup)
	lo, hi := percentileInterval(slices.Clone(d.dupReps))
	d.Duplicates = Interval{d.dup, lo, hi}
	return d, nil
}

// total returns Σ w_i over the design pairs with on[i], and the same sum in every
// bootstrap replicate.
func (d *design) total(on []bool) (float64, []float64) {
	reps := make([]float64, d.reps)
	var sum float64
	for i, ok := range on {
		if !ok {
			continue
		}
		sum += d.weight[i]
		w := d.repWeight[i]
		cs := d.count[i*d.reps : (i+1)*d.reps]
		for r, c := range cs {
			reps[r] += w * float64(c)
		}
	}
	return sum, reps
}

// estimate returns the dataset-level figures of a configuration: acc[i] says design
// pair i is a duplicate the configuration accepts, fm[i] a non-duplicate it merges.
func (d *design) estimate(acc, fm []bool, removals int) Estimate {
	est := Estimate{Removals: removals}
	// Configurations that treat every design pair alike share their intervals.
	key := make([]byte, 0, (2*len(acc)+7)/8)
	var b byte
	for i := range acc {
		b = b<<2 | boolBit(acc[i])<<1 | boolBit(fm[i])
		if i%4 == 3 {
			key = append(key, b)
			b = 0
		}
	}
	key = append(key, b)
	d.mu.Lock()
	defer d.mu.Unlock()
	ivs, ok := d.memo[string(key)]
	if !ok {
		a, aReps := d.total(acc)
		f, fReps := d.total(fm)
		ratio := make([]float64, 0, d.reps)
		for r, ar := range aReps {
			if d.dupReps[r] > 0 {
				ratio = append(ratio, ar/d.dupReps[r])
			}
		}
		recall := Interval{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
		if d.dup > 0 {
			recall.Value = a / d.dup
			recall.Lo, recall.Hi = percentileInterval(ratio)
		}
		flo, fhi := percentileInterval(fReps)
		ivs = [2]Interval{recall, {f, flo, fhi}}
		if len(d.memo) < 1<<16 {
			d.memo[string(key)] = ivs
		}
	}
	est.Recall, est.FalseRemovals = ivs[0], ivs[1]
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

func boolBit(b bool) byte {
	if b {
		return 1
	}
	return 0
}
