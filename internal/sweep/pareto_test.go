package sweep

import (
	"errors"
	"math"
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

func result(recall, lo, hi, frr, frrHi float64) Result {
	var r Result
	r.Dataset = &Estimate{Recall: Interval{recall, lo, hi}, FalseRemovalRate: Interval{frr, frr / 2, frrHi}}
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
	rec, err := Recommend(rs, DefaultTarget)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Index != 2 || !rec.Met {
		t.Errorf("Recommend = %d (met %v); want 2, met", rec.Index, rec.Met)
	}
	if !strings.Contains(rec.Reason, "highest estimated recall") || !strings.Contains(rec.Reason, "upper end") {
		t.Errorf("Reason = %q", rec.Reason)
	}
	rec, _ = Recommend(rs, Target{MaxFalseRemovalRate: 0.01, PointEstimate: true})
	if rec.Index != 0 {
		t.Errorf("Recommend on point estimates = %d; want 0", rec.Index)
	}
	// Nothing qualifies: the fallback is the lowest upper end, and the reason says so.
	rec, _ = Recommend(rs, Target{MaxFalseRemovalRate: 0.001})
	if rec.Index != 3 || rec.Met || !strings.Contains(rec.Reason, "no configuration") {
		t.Errorf("Recommend(0.1%%) = %+v; want the fallback 3, not met, said so", rec)
	}
	// Ties on recall go to the lower rate, then fewer candidates.
	tie := []Result{result(0.9, 0.8, 0.95, 0.005, 0.008), result(0.9, 0.8, 0.95, 0.005, 0.006), result(0.9, 0.8, 0.95, 0.005, 0.006)}
	tie[1].CandidatesPerDoc, tie[2].CandidatesPerDoc = 20, 10
	if rec, _ := Recommend(tie, DefaultTarget); rec.Index != 2 {
		t.Errorf("Recommend(ties) = %d; want 2", rec.Index)
	}
	// Labeled basis wording.
	var lab Result
	lab.Recall, lab.FalseMerges = NewRate(9, 10), NewRate(0, 500)
	if rec, _ := Recommend([]Result{lab}, DefaultTarget); !rec.Met || !strings.Contains(rec.Reason, "labeled") {
		t.Errorf("Recommend(labeled) = %+v", rec)
	}
	if _, err := Recommend([]Result{{}}, DefaultTarget); !errors.Is(err, ErrNothingToRecommend) {
		t.Errorf("Recommend(no labels) = %v; want ErrNothingToRecommend", err)
	}
}
