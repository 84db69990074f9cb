package sweep

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

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

// Headline returns the figures under the first keeper rule scored (earliest, unless
// Options.Rules said otherwise): HeadlineFor("").
func (s Scores) Headline() Headline { return s.HeadlineFor("") }

// HeadlineFor returns the dataset estimates under keeper rule (the first scored when
// rule is "" or was not scored) when there are any, else the labeled-pairs rates:
// Recall and FalseMerges.
func (s Scores) HeadlineFor(rule string) Headline {
	if s.Dataset != nil && len(s.Dataset.Rules) > 0 {
		re, ok := s.Dataset.Rule(rule)
		if !ok {
			re = s.Dataset.Rules[0]
		}
		return Headline{DatasetBasis, s.Dataset.Recall, re.FalseRemovalRate}
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
func Headlines(rs []Result) []Headline { return HeadlinesFor(rs, "") }

// HeadlinesFor returns each result's HeadlineFor(rule).
func HeadlinesFor(rs []Result, rule string) []Headline {
	out := make([]Headline, len(rs))
	for i, r := range rs {
		out[i] = r.HeadlineFor(rule)
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
	// Rule is the keeper rule the manifest will run ("" for the first scored).
	Rule string
}

// Meets says whether h's false-removal rate meets t: its upper end (or its point
// estimate, with PointEstimate) and its point estimate at most MaxFalseRemovalRate. An
// undefined rate meets nothing.
func (t Target) Meets(h Headline) bool {
	v := h.FalseRemovalRate.Hi
	if t.PointEstimate {
		v = h.FalseRemovalRate.Value
	}
	return !math.IsNaN(v) && v <= t.MaxFalseRemovalRate && h.FalseRemovalRate.Value <= t.MaxFalseRemovalRate
}

// DefaultTarget is false removals <= 1% at the upper end of the interval, under the
// first keeper rule scored.
var DefaultTarget = Target{MaxFalseRemovalRate: 0.01}

// Recommendation is the configuration to start from and why.
type Recommendation struct {
	Index  int // into the results given; -1 when there is none to show
	Config Config
	// Met: the configuration's false-removal rate meets the target (at the upper end of
	// its interval, unless the target compares point estimates). When none meets it,
	// Index is the closest (Closest): the lowest upper end among the configurations
	// that beat exact-hash dedup's recall.
	Met, Closest bool
	// Preselect says whether a page may select it for the user: never when its point
	// estimate breaks the target.
	Preselect bool
	Reason    string
}

// ErrNothingToRecommend is returned when no result has both figures defined (no labeled
// duplicates, or no results).
var ErrNothingToRecommend = errkind.New(errkind.NotFound, "sweep: no configuration has a recall and a false-removal rate to compare")

// Recommend picks the highest recall whose false-removal rate meets t (ties: the lower
// rate, then fewer candidates per document, then the earlier result). A configuration
// that removes nothing helps nobody and is never picked. When none meets it, it names
// the closest: the lowest upper end among those whose recall beats baseline's (exact-hash
// dedup; nil when unknown), and says so first; the closest is preselected only when its
// point estimate meets the target. A configuration that meets the target with a recall no
// higher than the baseline's is never recommended either: it finds nothing exact-hash
// dedup would not (after an export, a configuration removing one document did).
func Recommend(rs []Result, baseline *Scores, t Target) (Recommendation, error) {
	bound := func(h Headline) float64 {
		if t.PointEstimate {
			return h.FalseRemovalRate.Value
		}
		return h.FalseRemovalRate.Hi
	}
	hs := HeadlinesFor(rs, t.Rule)
	floor := math.Inf(-1) // the recall to beat
	if baseline != nil {
		if b := baseline.HeadlineFor(t.Rule).Recall.Value; !math.IsNaN(b) {
			floor = b
		}
	}
	best, closest, closestAny, met, metBelow := -1, -1, -1, 0, 0
	for i, h := range hs {
		if math.IsNaN(h.Recall.Value) || math.IsNaN(bound(h)) || rs[i].Removals == 0 {
			continue
		}
		better := func(than int) bool {
			return than < 0 || bound(h) < bound(hs[than]) || bound(h) == bound(hs[than]) && h.Recall.Value > hs[than].Recall.Value
		}
		if better(closestAny) {
			closestAny = i
		}
		if h.Recall.Value > floor && better(closest) {
			closest = i
		}
		if !t.Meets(h) {
			continue
		}
		if h.Recall.Value <= floor {
			metBelow++ // meets the target by finding no more than exact-hash dedup does
			continue
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
	if closestAny < 0 {
		return Recommendation{Index: -1}, ErrNothingToRecommend
	}
	where := "at the upper end of its 95% interval"
	if t.PointEstimate {
		where = "as a point estimate"
	}
	recallName, rateName := "estimated recall", "estimated false removals per removal"
	if hs[closestAny].Basis == LabeledBasis {
		recallName, rateName = "recall on labeled duplicates", "false merges among labeled non-duplicates"
	}
	if best >= 0 {
		h := hs[best]
		return Recommendation{Index: best, Config: rs[best].Config, Met: true, Preselect: true, Reason: fmt.Sprintf(
			"Highest %s (%s) among the %d configurations whose %s stays at or below %s %s (%s).",
			recallName, describe(h.Recall), met, rateName, percent.Format(t.MaxFalseRemovalRate, 'g', 3), where, percent.Format(bound(h), 'g', 3))}, nil
	}
	i, why := closest, "beat exact-hash dedup's recall"
	if i < 0 {
		i, why = closestAny, "remove something (none beats exact-hash dedup's recall)"
	}
	h := hs[i]
	pre := h.FalseRemovalRate.Value <= t.MaxFalseRemovalRate
	tail := ""
	if !pre {
		tail = "; its point estimate alone breaks the target, so it is not selected for you"
	}
	qual, note := "", ""
	if metBelow > 0 && baseline != nil {
		qual = fmt.Sprintf(" that beats exact-hash dedup's recall (%s)", percent.Format(floor, 'f', 1))
		note = fmt.Sprintf(" (%s it without finding more than exact-hash dedup)", plural(metBelow, "configuration meets", "configurations meet"))
	}
	return Recommendation{Index: i, Config: rs[i].Config, Closest: true, Preselect: pre, Reason: fmt.Sprintf(
		"No configuration%s keeps %s at or below %s %s%s. This one has the lowest upper end (%s) among the configurations that %s, with %s %s%s.",
		qual, rateName, percent.Format(t.MaxFalseRemovalRate, 'g', 3), where, note, percent.Format(bound(h), 'g', 3), why, recallName, describe(h.Recall), tail)}, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// describe writes a recall with its interval as the pages' tables do: "54.0%, 95%
// interval 4.4–59.1%".
func describe(iv Interval) string {
	return fmt.Sprintf("%s, 95%% interval %s–%s", percent.Format(iv.Value, 'f', 1),
		strings.TrimSuffix(percent.Format(iv.Lo, 'f', 1), "%"), percent.Format(iv.Hi, 'f', 1))
}
