package sweep

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func point(recall, frr float64) Headline {
	return Headline{Basis: DatasetBasis, Recall: Interval{Value: recall}, FalseRemovalRate: Interval{Value: frr}}
}

func TestFront(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		points []Headline
		want   []bool
	}{
		{"staircase", []Headline{point(0.5, 0.01), point(0.7, 0.02), point(0.9, 0.05), point(0.6, 0.03), point(0.95, 0.2)},
			[]bool{true, true, true, false, true}},
		{"same rate, lower recall is dominated", []Headline{point(0.8, 0.02), point(0.7, 0.02)}, []bool{true, false}},
		{"same recall, higher rate is dominated", []Headline{point(0.8, 0.03), point(0.8, 0.02)}, []bool{false, true}},
		{"identical points are both on it", []Headline{point(0.8, 0.02), point(0.8, 0.02), point(0.5, 0.5)}, []bool{true, true, false}},
		{"undefined figures are not", []Headline{point(math.NaN(), 0.01), point(0.5, math.NaN()), point(0.4, 0.1)}, []bool{false, false, true}},
		{"zero rate", []Headline{point(0.3, 0), point(0.3, 0.001), point(0.9, 0.001)}, []bool{true, false, true}},
		{"empty", nil, []bool{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Front(c.points); !slices.Equal(got, c.want) {
				t.Errorf("Front = %v; want %v", got, c.want)
			}
		})
	}
}

func TestTargetMeets(t *testing.T) {
	t.Parallel()
	rate := func(v, hi float64) Headline {
		return Headline{Basis: DatasetBasis, Recall: Interval{0.9, 0.8, 0.95}, FalseRemovalRate: Interval{v, v / 2, hi}}
	}
	upper, point := Target{MaxFalseRemovalRate: 0.01}, Target{MaxFalseRemovalRate: 0.01, PointEstimate: true}
	cases := []struct {
		name string
		t    Target
		h    Headline
		want bool
	}{
		{"upper end under", upper, rate(0.005, 0.009), true},
		{"upper end at the maximum", upper, rate(0.005, 0.01), true},
		{"upper end over", upper, rate(0.005, 0.02), false},
		{"point estimate over, upper end ignored", point, rate(0.005, 0.5), true},
		{"point estimate over", point, rate(0.02, 0.03), false},
		{"undefined upper end", upper, rate(0.005, math.NaN()), false},
		{"undefined rate", point, rate(math.NaN(), math.NaN()), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.t.Meets(c.h); got != c.want {
				t.Errorf("%+v.Meets(%v) = %v; want %v", c.t, c.h.FalseRemovalRate, got, c.want)
			}
		})
	}
}

func result(recall, lo, hi, frr, frrHi float64) Result {
	var r Result
	r.Removals = 100
	r.Dataset = &Estimate{Recall: Interval{recall, lo, hi}, Removals: 100, Unit: FalseRemovalUnit,
		Rules: []RuleEstimate{{Rule: "earliest", Removals: 100, FalseRemovalRate: Interval{frr, frr / 2, frrHi},
			FalseRemovals: Interval{100 * frr, 50 * frr, 100 * frrHi}}}}
	return r
}

func TestRecommend(t *testing.T) {
	t.Parallel()
	rs := []Result{
		result(0.95, 0.9, 0.97, 0.008, 0.02), // best recall, but the upper end is 2%
		result(0.90, 0.85, 0.93, 0.004, 0.009),
		result(0.92, 0.88, 0.95, 0.005, 0.0099),
		result(0.80, 0.7, 0.85, 0.001, 0.002),
	}
	rec, err := Recommend(rs, nil, DefaultTarget)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Index != 2 || !rec.Met || !rec.Preselect || rec.Closest {
		t.Errorf("Recommend = %+v; want 2, met, preselected", rec)
	}
	if !strings.HasPrefix(rec.Reason, "Highest estimated recall") || !strings.Contains(rec.Reason, "upper end") || !strings.HasSuffix(rec.Reason, ").") {
		t.Errorf("Reason = %q", rec.Reason)
	}
	rec, _ = Recommend(rs, nil, Target{MaxFalseRemovalRate: 0.01, PointEstimate: true})
	if rec.Index != 0 {
		t.Errorf("Recommend on point estimates = %d; want 0", rec.Index)
	}
	// Nothing meets 0.1%: the closest is the lowest upper end, said first; its point
	// estimate (0.1%) meets the target, so it may be preselected.
	rec, _ = Recommend(rs, nil, Target{MaxFalseRemovalRate: 0.001})
	if rec.Index != 3 || rec.Met || !rec.Closest || !rec.Preselect || !strings.HasPrefix(rec.Reason, "No configuration") {
		t.Errorf("Recommend(0.1%%) = %+v; want the closest 3, not met, preselected, said first", rec)
	}
	// Exact-hash dedup's recall is 0.85: the closest must beat it, and one whose point
	// estimate breaks the target is never preselected.
	base := result(0.85, 0.8, 0.9, 0, 0).Scores
	rec, _ = Recommend(rs, &base, Target{MaxFalseRemovalRate: 0.001})
	if rec.Index != 1 || !rec.Closest || rec.Preselect || !strings.Contains(rec.Reason, "not selected for you") ||
		!strings.Contains(rec.Reason, "among the configurations that beat exact-hash dedup's recall,") {
		t.Errorf("Recommend(0.1%%, baseline 0.85) = %+v; want the closest beating the baseline, 1, not preselected", rec)
	}
	// A configuration that meets the target without beating exact-hash dedup's recall is
	// never recommended (after an export one removing a single document, recall 0, was):
	// here 1, 2 and 3 meet 1% and the baseline finds more than any of them.
	high := result(0.93, 0.9, 0.95, 0, 0).Scores
	rec, _ = Recommend(rs, &high, DefaultTarget)
	if rec.Index != 0 || rec.Met || !rec.Closest || !strings.Contains(rec.Reason, "that beats exact-hash dedup's recall (93.0%)") ||
		!strings.Contains(rec.Reason, "(3 configurations meet it without finding more than exact-hash dedup)") {
		t.Errorf("Recommend(1%%, baseline 0.93) = %+v; want 0 as the closest, none met, and why", rec)
	}
	// Ties on recall go to the lower rate, then fewer candidates.
	tie := []Result{result(0.9, 0.8, 0.95, 0.005, 0.008), result(0.9, 0.8, 0.95, 0.005, 0.006), result(0.9, 0.8, 0.95, 0.005, 0.006)}
	tie[1].CandidatesPerDoc, tie[2].CandidatesPerDoc = 20, 10
	if rec, _ := Recommend(tie, nil, DefaultTarget); rec.Index != 2 {
		t.Errorf("Recommend(ties) = %d; want 2", rec.Index)
	}
	// Labeled basis wording.
	var lab Result
	lab.Recall, lab.FalseMerges, lab.Removals = NewRate(9, 10), NewRate(0, 500), 12
	if rec, _ := Recommend([]Result{lab}, nil, DefaultTarget); !rec.Met || !strings.Contains(rec.Reason, "labeled") {
		t.Errorf("Recommend(labeled) = %+v", rec)
	}
	if _, err := Recommend([]Result{{}}, nil, DefaultTarget); !errors.Is(err, ErrNothingToRecommend) {
		t.Errorf("Recommend(no labels) = %v; want ErrNothingToRecommend", err)
	}
}

// TestRecommendNeverBreaksTarget: whatever the intervals, a recommended or preselected
// configuration never has a point estimate over the target.
func TestRecommendNeverBreaksTarget(t *testing.T) {
	t.Parallel()
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var rs []Result
		for range 1 + rng.IntN(12) {
			r, p := rng.Float64(), rng.Float64()*0.05
			rs = append(rs, result(r, r*0.9, min(1, r*1.1), p, p+rng.Float64()*0.05))
		}
		for _, target := range []float64{0.001, 0.01, 0.03} {
			rec, err := Recommend(rs, nil, Target{MaxFalseRemovalRate: target})
			if err != nil {
				t.Fatal(err)
			}
			v := rs[rec.Index].Headline().FalseRemovalRate
			if (rec.Met || rec.Preselect) && v.Value > target {
				t.Fatalf("seed %d target %v: %+v has point estimate %v", seed, target, rec, v.Value)
			}
			if rec.Met && v.Hi > target {
				t.Fatalf("seed %d target %v: met with upper end %v", seed, target, v.Hi)
			}
		}
	}
}

// TestRecommendNothingRemoved: a configuration that removes nothing has no false
// removals and is never the recommendation, nor the closest.
func TestRecommendNothingRemoved(t *testing.T) {
	t.Parallel()
	none := result(0, 0, 0, 0, 0)
	none.Removals, none.Dataset.Removals = 0, 0
	rs := []Result{none, result(0.9, 0.8, 0.95, 0.05, 0.2)}
	rec, err := Recommend(rs, nil, DefaultTarget)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Met || rec.Index != 1 || !rec.Closest || rec.Preselect {
		t.Errorf("Recommend = %+v; want not met, the closest configuration 1 (not the one removing nothing), not preselected", rec)
	}
}
