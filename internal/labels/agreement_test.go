package labels

import (
	"math"
	"testing"
)

// Krippendorff's own worked example ("Computing Krippendorff's Alpha-Reliability",
// 2011, section C: nominal data, 4 observers, 12 units, missing values): alpha = 0.743.
func TestKrippendorffPublishedExample(t *testing.T) {
	t.Parallel()
	table := [][]string{ // rows: observers A-D; columns: units 1-12; "" = missing
		{"1", "2", "3", "3", "2", "1", "4", "1", "2", "", "", ""},
		{"1", "2", "3", "3", "2", "2", "4", "1", "2", "5", "", "3"},
		{"", "3", "3", "3", "2", "3", "4", "2", "2", "5", "1", ""},
		{"1", "2", "3", "3", "2", "4", "4", "1", "2", "5", "1", ""},
	}
	observers := []string{"A", "B", "C", "D"}
	var units []Unit
	for u := range 12 {
		unit := Unit{}
		for o, row := range table {
			if row[u] != "" {
				unit[observers[o]] = row[u]
			}
		}
		units = append(units, unit)
	}
	a := Measure(units)
	if math.Abs(a.Alpha-0.743) > 0.0005 {
		t.Errorf("alpha = %.4f; want 0.743", a.Alpha)
	}
	// Unit 12 has one value: not pairable. 11 units with 40 values remain.
	if a.Units != 11 || a.Values != 40 {
		t.Errorf("units %d, values %d; want 11, 40", a.Units, a.Values)
	}
	if len(a.Pairs) != 6 {
		t.Errorf("%d annotator pairs; want 6", len(a.Pairs))
	}
	// The confusion matrix is symmetric and counts each ordered pair of values once.
	total := 0
	for i := range a.Confusion {
		for j := range a.Confusion {
			if a.Confusion[i][j] != a.Confusion[j][i] {
				t.Fatalf("confusion not symmetric at %d,%d", i, j)
			}
			total += a.Confusion[i][j]
		}
	}
	// sum over units of m(m-1): units of 3, 4 (x8: 2,3,4,5,6,7,8,9), 3 (10), 2 (11), 3 (1)
	if total != 3*2+8*4*3+3*2+2*1 {
		t.Errorf("confusion total %d", total)
	}
}

// The textbook Cohen's kappa example (Cohen 1960 style, as on Wikipedia): of 50 items,
// both said yes to 20, both no to 15, A yes/B no 5, A no/B yes 10: p_o = 0.7,
// p_e = 0.5, kappa = 0.4.
func TestCohenKappaTextbook(t *testing.T) {
	t.Parallel()
	var r [][2]string
	add := func(n int, a, b string) {
		for range n {
			r = append(r, [2]string{a, b})
		}
	}
	add(20, "yes", "yes")
	add(15, "no", "no")
	add(5, "yes", "no")
	add(10, "no", "yes")
	po, k := CohenKappa(r)
	if math.Abs(po-0.7) > 1e-12 || math.Abs(k-0.4) > 1e-12 {
		t.Errorf("observed %.3f kappa %.3f; want 0.7, 0.4", po, k)
	}
	// The same table as running counts (what a campaign's tally keeps).
	counts := map[[2]string]int{{"yes", "yes"}: 20, {"no", "no"}: 15, {"yes", "no"}: 5, {"no", "yes"}: 10}
	if n, po, k := CohenKappaCounts(counts); n != 50 || math.Abs(po-0.7) > 1e-12 || math.Abs(k-0.4) > 1e-12 {
		t.Errorf("CohenKappaCounts = %d, %.3f, %.3f; want 50, 0.7, 0.4", n, po, k)
	}
	if n, po, k := CohenKappaCounts(nil); n != 0 || !math.IsNaN(po) || !math.IsNaN(k) {
		t.Errorf("CohenKappaCounts(nil) = %d, %v, %v; want 0, NaN, NaN", n, po, k)
	}
	if po, k := CohenKappa(nil); !math.IsNaN(po) || !math.IsNaN(k) {
		t.Errorf("CohenKappa(nil) = %v, %v; want NaN, NaN", po, k)
	}
}

func TestAgreementEdges(t *testing.T) {
	t.Parallel()
	perfect := Measure([]Unit{{"a": "x", "b": "x"}, {"a": "y", "b": "y"}})
	if perfect.Alpha != 1 || perfect.PercentAgreement != 1 {
		t.Errorf("perfect agreement: alpha %.3f, percent %.3f", perfect.Alpha, perfect.PercentAgreement)
	}
	if one := Measure([]Unit{{"a": "x", "b": "x"}}); !math.IsNaN(one.Alpha) {
		t.Errorf("one category only: alpha %v; want NaN", one.Alpha)
	}
	if none := Measure([]Unit{{"a": "x"}}); none.Units != 0 || !math.IsNaN(none.Alpha) {
		t.Errorf("no pairable unit: %+v", none)
	}
	// Systematic disagreement gives a negative alpha.
	if neg := Measure([]Unit{{"a": "x", "b": "y"}, {"a": "y", "b": "x"}}); neg.Alpha >= 0 {
		t.Errorf("systematic disagreement: alpha %.3f; want < 0", neg.Alpha)
	}
}
