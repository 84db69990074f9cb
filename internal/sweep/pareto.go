package sweep

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/percent"
)

// Basis says what a headline figure is computed over.
type Basis string

// Bases.
const (
	// DatasetBasis: estimated over the whole dataset from the design's pairs.
	DatasetBasis Basis = "dataset"
	// LabeledBasis: the labeled pairs as they are (no design): recall on labeled
	// duplicates and false merges among labeled non-duplicates.
	LabeledBasis Basis = "labeled pairs"
)

// Headline is the pair of figures the recall chart, the Pareto front and the
// recommendation use: recall (higher is better) and false-removal rate (lower is better),
// each with its interval.
type Headline struct {
	Basis            Basis
	Recall           Interval
	FalseRemovalRate Interval
}

// Headline returns the dataset estimates when there are any, else the labeled-pairs
// rates: Recall and FalseMerges.
func (s Scores) Headline() Headline {
	if s.Dataset != nil {
		return Headline{DatasetBasis, s.Dataset.Recall, s.Dataset.FalseRemovalRate}
	}
	h := Headline{LabeledBasis, s.Recall.Interval, s.FalseMerges.Interval}
	nan := Interval{math.NaN(), math.NaN(), math.NaN()}
	if s.Recall.Of == 0 {
		h.Recall = nan
	}
	if s.FalseMerges.Of == 0 {
		h.FalseRemovalRate = nan
	}
	return h
}

// Headlines returns each result's Headline.
func Headlines(rs []Result) []Headline {
	out := make([]Headline, len(rs))
	for i, r := range rs {
		out[i] = r.Headline()
	}
	return out
}

// Front marks the points on the Pareto front: a point is on it unless another has at
// least its recall and at most its false-removal rate, one of them strictly. Identical
// points are all on the front; points with an undefined figure are not.
func Front(points []Headline) []bool {
	on := make([]bool, len(points))
	var idx []int
	for i, p := range points {
		if !math.IsNaN(p.Recall.Value) && !math.IsNaN(p.FalseRemovalRate.Value) {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		pa, pb := points[a], points[b]
		return cmp.Or(cmp.Compare(pa.FalseRemovalRate.Value, pb.FalseRemovalRate.Value),
			cmp.Compare(pb.Recall.Value, pa.Recall.Value))
	})
	best := math.Inf(-1) // the highest recall at a strictly lower false-removal rate
	for g := 0; g < len(idx); {
		frr := points[idx[g]].FalseRemovalRate.Value
		top := points[idx[g]].Recall.Value
		h := g
		for h < len(idx) && points[idx[h]].FalseRemovalRate.Value == frr {
			on[idx[h]] = points[idx[h]].Recall.Value == top && top > best
			h++
		}
		best = max(best, top)
		g = h
	}
	return on
}

// Target is what the recommendation aims for.
type Target struct {
	// MaxFalseRemovalRate is the most false removals per removal (dataset basis) or
	// false merges per labeled non-duplicate (labeled basis) to accept.
	MaxFalseRemovalRate float64
	// PointEstimate compares the point estimate with the maximum instead of the upper
	// end of the 95% interval.
	PointEstimate bool
}

// DefaultTarget is false removals <= 1% at the upper end of the interval.
var DefaultTarget = Target{MaxFalseRemovalRate: 0.01}

// Recommendation is the configuration to start from and why.
type Recommendation struct {
	Index  int // into the results given
	Config Config
	// Met is false when no configuration met the target and this is the fallback: the
	// lowest false-removal rate.
	Met    bool
	Reason string
}

// ErrNothingToRecommend is returned when no result has both figures defined (no labeled
// duplicates, or no results).
var ErrNothingToRecommend = errkind.New(errkind.NotFound, "sweep: no configuration has a recall and a false-removal rate to compare")

// Recommend picks the highest recall whose false-removal rate meets t (ties: the lower
// rate, then fewer candidates per document, then the earlier result). When none meets
// it, it falls back to the lowest false-removal rate (ties: the higher recall) and says
// so.
func Recommend(rs []Result, t Target) (Recommendation, error) {
	bound := func(h Headline) float64 {
		if t.PointEstimate {
			return h.FalseRemovalRate.Value
		}
		return h.FalseRemovalRate.Hi
	}
	hs := Headlines(rs)
	removes := slices.ContainsFunc(rs, func(r Result) bool { return r.Removals > 0 })
	best, fallback, met := -1, -1, 0
	for i, h := range hs {
		if math.IsNaN(h.Recall.Value) || math.IsNaN(bound(h)) {
			continue
		}
		if removes && rs[i].Removals == 0 {
			continue // removes nothing: no false removal, and no use
		}
		if fallback < 0 || bound(h) < bound(hs[fallback]) ||
			bound(h) == bound(hs[fallback]) && h.Recall.Value > hs[fallback].Recall.Value {
			fallback = i
		}
		if bound(h) > t.MaxFalseRemovalRate || rs[i].Removals == 0 {
			continue // a configuration that removes nothing meets any target and helps nobody
		}
		met++
		if best < 0 {
			best = i
			continue
		}
		b := hs[best]
		if c := cmp.Or(cmp.Compare(h.Recall.Value, b.Recall.Value), cmp.Compare(bound(b), bound(h)),
			cmp.Compare(rs[best].CandidatesPerDoc, rs[i].CandidatesPerDoc)); c > 0 {
			best = i
		}
	}
	if fallback < 0 {
		return Recommendation{}, ErrNothingToRecommend
	}
	where := "at the upper end of its 95% interval"
	if t.PointEstimate {
		where = "as a point estimate"
	}
	h := hs[fallback]
	recallName, rateName := "estimated recall", "estimated false removals per removal"
	if h.Basis == LabeledBasis {
		recallName, rateName = "recall on labeled duplicates", "false merges among labeled non-duplicates"
	}
	if best < 0 {
		lead := "no configuration keeps"
		if !t.PointEstimate && h.Basis == DatasetBasis {
			lead = "not enough labels to bound false removals at " + percent.Format(t.MaxFalseRemovalRate, 'g', 3) + ": no configuration keeps"
		}
		return Recommendation{Index: fallback, Config: rs[fallback].Config, Reason: fmt.Sprintf(
			"%s %s at or below %s %s; this one has the lowest (%s), with %s %s",
			lead, rateName, percent.Format(t.MaxFalseRemovalRate, 'g', 3), where, percent.Format(bound(h), 'g', 3), recallName, describe(h.Recall))}, nil
	}
	h = hs[best]
	return Recommendation{Index: best, Config: rs[best].Config, Met: true, Reason: fmt.Sprintf(
		"highest %s (%s) among the %d configurations whose %s stays at or below %s %s (%s)",
		recallName, describe(h.Recall), met, rateName, percent.Format(t.MaxFalseRemovalRate, 'g', 3), where, percent.Format(bound(h), 'g', 3))}, nil
}

func describe(iv Interval) string {
	return fmt.Sprintf("%.3f, 95%% interval %.3f–%.3f", iv.Value, iv.Lo, iv.Hi)
}

// StratumNeed is how many more labels one stratum needs.
type StratumNeed struct {
	Stratum            string
	FrameSize, Labeled int
	// More is the labels to add; when Labeled+More reaches FrameSize, the whole stratum.
	More int
}

// Shortfall says what to do when no configuration meets a target at the upper end of
// its interval on the dataset basis: which configuration to aim for, how many more
// labels in which strata would bound it, and the tightest target the labels meet now.
type Shortfall struct {
	// Index is the configuration the advice is for: the highest estimated recall whose
	// point estimate meets the target and whose sampled strata leave room under it for
	// the others' bounds; else the highest whose point estimate meets it; else the one
	// with the lowest upper end.
	Index int
	// Reachable is false when the strata where labeled pairs are false merges (with the
	// caps of the bins the clustering capped) already put the upper end above the
	// target: more labels elsewhere cannot bound it (more labels there may narrow it, or
	// the configuration is too loose).
	Reachable bool
	// Needs lists the strata without a false merge that hold the upper end up, the
	// most labels first: if that many more labels are drawn from each and none is a
	// false merge, the upper end falls to about the target (a square-root allocation,
	// which needs the fewest labels in all for the binomial bound N_h·3.7/n_h).
	Needs []StratumNeed
	// Lowest is the lowest upper end any configuration that removes something reaches:
	// the tightest target the labels meet now; LowestIndex that configuration.
	Lowest      float64
	LowestIndex int
}

// Advise returns the Shortfall of rs against t, or false when it does not apply: some
// configuration meets t, t compares point estimates, or the results have no dataset
// estimates.
func Advise(rs []Result, d Design, t Target) (Shortfall, bool) {
	if t.PointEstimate {
		return Shortfall{}, false
	}
	sf := Shortfall{Index: -1, LowestIndex: -1, Lowest: math.Inf(1)}
	reachable, under := -1, -1 // the highest recall whose point estimate meets t: with labels able to bound it, and at all
	better := func(i, than int) bool { return than < 0 || rs[i].Dataset.Recall.Value > rs[than].Dataset.Recall.Value }
	for i, r := range rs {
		if r.Dataset == nil || r.Removals == 0 || math.IsNaN(r.Dataset.Recall.Value) {
			continue
		}
		e := r.Dataset
		if e.FalseRemovalRate.Hi <= t.MaxFalseRemovalRate {
			return Shortfall{}, false
		}
		if e.FalseRemovalRate.Hi < sf.Lowest {
			sf.Lowest, sf.LowestIndex = e.FalseRemovalRate.Hi, i
		}
		if e.FalseRemovalRate.Value > t.MaxFalseRemovalRate {
			continue
		}
		if better(i, under) {
			under = i
		}
		if e.Sampled < t.MaxFalseRemovalRate*float64(e.Removals) && better(i, reachable) {
			reachable = i
		}
	}
	if sf.LowestIndex < 0 {
		return Shortfall{}, false
	}
	sf.Index = cmp.Or(reachable+1, under+1, sf.LowestIndex+1) - 1
	e := rs[sf.Index].Dataset
	budget := t.MaxFalseRemovalRate*float64(e.Removals) - e.Sampled
	if budget <= 0 || e.Unit != FalseRemovalUnit {
		return sf, true
	}
	sf.Reachable = true
	seen := make(map[int]bool, len(e.Seen))
	for _, h := range e.Seen {
		seen[h] = true
	}
	// A bin the clustering capped at a small part of the target (a tenth) keeps its cap
	// whatever the labels say: its strata need no labels, and its cap comes off the
	// budget. A bin capped higher (the configuration's own merges are in it) is left to
	// labels like the others.
	for _, c := range e.Caps {
		if c.Cap <= budget/10 {
			budget -= c.Cap
			for _, h := range c.Strata {
				seen[h] = true
			}
		}
	}
	c := -math.Log(unseenAlpha) // zero events in n draws bound a share by about c/n at the zero-event bound's level (zeroEventBound)
	var sumRoot float64
	for h, s := range d.Strata {
		if !seen[h] && s.Unseen > 0 {
			sumRoot += math.Sqrt(float64(s.FrameSize))
		}
	}
	for h, s := range d.Strata {
		if seen[h] || s.Unseen == 0 {
			continue
		}
		n := int(math.Ceil(c * math.Sqrt(float64(s.FrameSize)) * sumRoot / budget))
		n = min(n, s.FrameSize)
		if n > s.Labeled {
			sf.Needs = append(sf.Needs, StratumNeed{Stratum: s.Name, FrameSize: s.FrameSize, Labeled: s.Labeled, More: n - s.Labeled})
		}
	}
	slices.SortStableFunc(sf.Needs, func(a, b StratumNeed) int { return cmp.Compare(b.More, a.More) })
	return sf, true
}
