package calib

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// TestCheckFast is the fast calibration check: 20 draws of at most 800 labels through
// the studio's draw path, FastGrid, connected components, both taus. It checks that the
// harness covers every row in every draw and that FastGrid holds what the bars are
// about, then holds the estimates to FastBars. The bars are asserted only against an
// estimator that gives each keeper rule its own false-removal figure: today's sweep
// gives one figure for all rules, and the test then asserts instead that the check
// catches it (upper ends at every removal), and skips the bars.
func TestCheckFast(t *testing.T) {
	pop := testPopulation(t)
	tab, err := Check(context.Background(), Options{Dir: t.TempDir(), Population: pop, Grid: FastGrid(),
		Policies: []cluster.Policy{cluster.Components}, Draws: 20, Seed: 1, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	if err := tab.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	checkCovered(t, tab, 20)
	if got, want := tab.Labels, 20*2*MaxLabels; got > want || got < want*9/10 {
		t.Errorf("%d labels in 20 draws at 2 taus; want at most %d and nearly all of it", got, want)
	}
	checkTargets(t, tab)
	t.Logf("time per draw (both taus): %v\n%s", tab.PerDraw(), md.String())
	failures := tab.Failures(FastBars)
	if !tab.PerRule {
		// The estimator before issue 23: its upper end of false removals is every removal,
		// so a configuration with a true rate under 1% never shows a useful upper end.
		caught := false
		for _, r := range tab.Removal {
			if r.Removals > 0 && r.Rate() <= LowRate && r.Tight == 0 {
				caught = true
			}
		}
		if !caught || len(failures) == 0 {
			t.Errorf("the check does not catch today's estimator: %d failures, a low-rate row with no useful upper end: %v", len(failures), caught)
		}
		t.Skipf("bars not asserted: the sweep gives one false-removal figure for every keeper rule (estimatesOf), the estimator "+
			"issue 23 replaces; it misses FastBars in %d ways, first: %s", len(failures), failures[0])
	}
	for _, f := range failures {
		t.Error(f)
	}
}

// checkTargets asserts that the grid holds what the bars are about: configurations
// with true recall >= 0.995 and with true false-removal rates <= 1%, at every tau.
func checkTargets(t *testing.T, tab *Table) {
	t.Helper()
	for _, tau := range tab.Taus {
		high, low := false, false
		for _, r := range tab.Recall {
			high = high || r.Tau == tau && r.Truth >= 0.995
		}
		for _, r := range tab.Removal {
			low = low || r.Tau == tau && r.Removals > 0 && r.Rate() <= LowRate
		}
		if !high || !low {
			t.Errorf("tau %.2f: the grid has a configuration with recall >= 0.995: %v, with a false-removal rate <= 1%%: %v", tau, high, low)
		}
	}
}

// checkCovered asserts that every row of tab got an estimate in each of draws draws.
func checkCovered(t *testing.T, tab *Table, draws int) {
	t.Helper()
	if len(tab.Recall) == 0 || len(tab.Removal) == 0 {
		t.Fatalf("%d recall rows, %d false-removal rows", len(tab.Recall), len(tab.Removal))
	}
	for _, r := range tab.Recall {
		if r.Draws != draws || r.Missing != 0 {
			t.Errorf("tau %.2f, %s: recall estimated in %d draws, missing in %d; want %d", r.Tau, r.Config, r.Draws, r.Missing, draws)
		}
	}
	for _, r := range tab.Removal {
		if r.Draws != draws || r.Missing != 0 {
			t.Errorf("tau %.2f, %s, %s/%s: false removals estimated in %d draws, missing in %d; want %d", r.Tau, r.Config, r.Policy,
				r.Rule, r.Draws, r.Missing, draws)
		}
	}
}

// TestCheckEveryPolicy runs one draw of one configuration under every cluster policy:
// each policy and keeper rule gets its row, with the truth's removals and an estimate.
func TestCheckEveryPolicy(t *testing.T) {
	pop := testPopulation(t)
	grid := Grid{{Spec: Word5(), Shapes: []lsh.Shape{{Bands: 25, Rows: 5}}, Thresholds: []float64{0.5}, Verifications: []Verification{Exact}}}
	tab, err := Check(context.Background(), Options{Dir: t.TempDir(), Population: pop, Grid: grid, Taus: []float64{0.7}, Draws: 1, Labels: 400})
	if err != nil {
		t.Fatal(err)
	}
	checkCovered(t, tab, 1)
	if got, want := len(tab.Removal), len(cluster.Policies())*len(Rules); got != want {
		t.Fatalf("%d false-removal rows; want %d", got, want)
	}
	eng := NewEngine(pop)
	o, err := eng.Evaluate(context.Background(), grid.Configs()[0], cluster.Policies(), Rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tab.Removal {
		c := o.Clustering(r.Policy, r.Rule)
		if r.Removals != len(c.Removals) || r.Truth != c.FalseRemovals(0.7) {
			t.Errorf("%s/%s: row says %d removals, %d false; truth %d, %d", r.Policy, r.Rule, r.Removals, r.Truth, len(c.Removals), c.FalseRemovals(0.7))
		}
	}
	if tab.Labels > 400 || tab.Labels < 300 {
		t.Errorf("%d labels; want at most 400, nearly all of it", tab.Labels)
	}
}

// TestCheckFull is the full check of issue 23: DefaultGrid, every policy and keeper rule,
// at least 200 draws (DEDUP_CALIB_DRAWS), held to IssueBars. It runs only when asked:
//
//	DEDUP_CALIB_FULL=1 go test ./internal/calib -run TestCheckFull -timeout 3h -v
//
// DEDUP_CALIB_OUT names a file for the Markdown table.
func TestCheckFull(t *testing.T) {
	if os.Getenv("DEDUP_CALIB_FULL") == "" {
		t.Skip("set DEDUP_CALIB_FULL=1 to run the full calibration check (about 10 s a draw on 2 cores)")
	}
	draws := 200
	if s := os.Getenv("DEDUP_CALIB_DRAWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 200 {
			t.Fatalf("DEDUP_CALIB_DRAWS=%q: want a whole number of at least 200", s)
		}
		draws = n
	}
	tab, err := Check(context.Background(), Options{Dir: t.TempDir(), Population: testPopulation(t), Draws: draws, Seed: 1, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	if err := tab.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("DEDUP_CALIB_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(md.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Log(md.String())
	checkCovered(t, tab, draws)
	checkTargets(t, tab)
	for _, f := range tab.Failures(IssueBars) {
		t.Error(f)
	}
}

func TestOptionsRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		opt  Options
		want string
	}{
		{"too many labels", Options{Labels: MaxLabels + 1}, "labels per draw 801"},
		{"negative draws", Options{Draws: -1}, "draws -1"},
		{"tau under the listed pairs", Options{Taus: []float64{0.1}}, "tau 0.1"},
		{"empty grid", Options{Grid: Grid{{Spec: Word5()}}}, "no configuration"},
		{"unknown policy", Options{Policies: []cluster.Policy{"single-link"}}, "unknown policy"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Check(context.Background(), tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check(%s) = %v; want an error saying %q", tc.name, err, tc.want)
			}
		})
	}
}

// TestTableAdd feeds the table sweep results by hand: coverage, means, widths, useful
// upper ends, and the rules today's one figure is set against.
func TestTableAdd(t *testing.T) {
	t.Parallel()
	cfg := Config{Spec: Word5(), Shape: lsh.Shape{Bands: 25, Rows: 5}, Threshold: 0.5, Verification: Exact}
	o := Outcome{Config: cfg, accepted: []counted{{9, 10, false}, {5, 10, false}, {1, 10, false}}}
	for _, rule := range Rules {
		o.Clusterings = append(o.Clusterings, Clustering{Policy: cluster.Components, Rule: rule,
			Removals: []Removal{{Doc: 1, Inter: 9, Union: 10}, {Doc: 2, Inter: 1, Union: 10}}})
	}
	pop := &Population{Pairs: []Pair{{A: 0, B: 1, Inter: 9, Union: 10}, {A: 0, B: 2, Inter: 5, Union: 10}, {A: 1, B: 2, Inter: 6, Union: 10}}}
	tab := &Table{Taus: []float64{0.5}}
	tab.addRows(pop, []Outcome{o}, []cluster.Policy{cluster.Components})
	// A keeper-star row by hand: 200 removals, none false.
	tab.removalAt[removalKey{0.5, cfg, cluster.KeeperStar, cluster.Longest}] = len(tab.Removal)
	tab.Removal = append(tab.Removal, RemovalRow{Tau: 0.5, Config: cfg, Policy: cluster.KeeperStar, Rule: cluster.Longest, Removals: 200})
	if got := tab.Recall[0].Truth; got != 2.0/3 {
		t.Fatalf("true recall %v; want 2/3 (two of three duplicates accepted)", got)
	}
	result := func(policy string, recall, fr sweep.Interval) sweep.Result {
		return sweep.Result{Config: sweep.Config{Spec: cfg.Spec, Shape: cfg.Shape, Threshold: cfg.Threshold, Verification: sweep.ExactJaccard, Policy: policy},
			Scores: sweep.Scores{Dataset: &sweep.Estimate{Recall: recall, FalseRemovals: fr}}}
	}
	draws := [][]sweep.Result{
		{result(sweep.ConnectedComponents, sweep.Interval{Value: 0.6, Lo: 0.5, Hi: 0.7}, sweep.Interval{Value: 1, Lo: 0, Hi: 2}),
			result("keeper-star/longest", sweep.Interval{Value: 0.6, Lo: 0.5, Hi: 0.7}, sweep.Interval{Value: 0, Lo: 0, Hi: 5})},
		{result(sweep.ConnectedComponents, sweep.Interval{Value: 0.7, Lo: 0.68, Hi: 0.8}, sweep.Interval{Value: 3, Lo: 2, Hi: 4}),
			result("keeper-star/longest", sweep.Interval{Value: 0.7, Lo: 0.68, Hi: 0.8}, sweep.Interval{Value: 1, Lo: 0, Hi: 7})},
		{{Config: sweep.Config{Spec: cfg.Spec, Shape: cfg.Shape, Threshold: cfg.Threshold, Verification: sweep.ExactJaccard,
			Policy: sweep.ConnectedComponents}}}, // no design: no estimate
	}
	for _, d := range draws {
		if err := tab.add(0.5, d); err != nil {
			t.Fatal(err)
		}
	}
	r := tab.Recall[0]
	if r.Draws != 2 || r.Missing != 1 || r.Covered != 1 || fmt.Sprintf("%.3f %.3f", r.Mean(), r.MeanWidth()) != "0.650 0.160" {
		t.Errorf("recall row %+v; want 2 draws, 1 missing, 1 covered, mean 0.65, mean width 0.16", r.Cover)
	}
	for _, row := range tab.Removal {
		switch {
		case row.Policy == cluster.Components:
			// Truth 1 of 2 removals under every rule: today's one figure covers it once.
			if row.Draws != 2 || row.Missing != 1 || row.Covered != 1 || row.Mean() != 2 || row.Truth != 1 {
				t.Errorf("%s/%s: %+v, truth %d; want 2 draws, 1 missing, 1 covered, mean 2, truth 1", row.Policy, row.Rule, row.Cover, row.Truth)
			}
		default:
			// Truth 0 of 200: both intervals cover it; only the first upper end (5 <= 6) is useful.
			if row.Draws != 2 || row.Covered != 2 || row.Tight != 1 || row.Truth != 0 {
				t.Errorf("%s/%s: %+v, truth %d; want 2 draws, 2 covered, 1 useful upper end", row.Policy, row.Rule, row.Cover, row.Truth)
			}
		}
	}
	if tab.PerRule {
		t.Error("PerRule is set; today's sweep gives one figure for every rule")
	}
	fails := strings.Join(tab.Failures(IssueBars), "\n")
	for _, want := range []string{"recall: an estimate in 2 of 3 draws", "components, keeper shortest: false removals: an estimate in 2 of 3 draws",
		"keeper-star, keeper longest: false removals: true rate 0.0000, upper end within 3% of the 200 removals in 0.500 of draws < 0.800"} {
		if !strings.Contains(fails, want) {
			t.Errorf("Failures lack %q; they are:\n%s", want, fails)
		}
	}
	var md strings.Builder
	if err := tab.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	// One row per policy; rules that agree are one figure.
	for _, want := range []string{"| 0.50 | word5 k128 25x5 >=0.50 exact | 0.6667 | 0.6500 | -0.0167 | 0.500 | 0.1600 | 2 |",
		"| 0.50 | word5 k128 25x5 >=0.50 exact | components | 2 | 1 | 0.5000 | 2.0 | 0.500 | 2.0 | - |",
		"| 0.50 | word5 k128 25x5 >=0.50 exact | keeper-star | 200 | 0 | 0.0000 | 0.5 | 1.000 | 6.0 | 0.500 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, md.String())
		}
	}
	other := result(sweep.ConnectedComponents, sweep.Interval{}, sweep.Interval{})
	other.Config.Threshold = 0.55
	if err := tab.add(0.5, []sweep.Result{other}); err == nil {
		t.Error("a result of a configuration outside the grid was taken")
	}
}
