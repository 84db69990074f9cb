package review

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestFisherExact(t *testing.T) {
	t.Parallel()
	// Reference values from R's fisher.test (two-sided).
	for _, tc := range []struct {
		a, b, c, d int
		want       float64
	}{
		{3, 1, 1, 3, 0.4857142857},   // the lady tasting tea
		{1, 9, 11, 3, 0.002759456},   // Wikipedia's dieting example
		{0, 10, 10, 0, 1.082509e-05}, // complete separation
		{5, 5, 5, 5, 1},
		{0, 0, 3, 4, 1},
	} {
		t.Run(fmt.Sprint(tc.a, tc.b, tc.c, tc.d), func(t *testing.T) {
			if got := FisherExact(tc.a, tc.b, tc.c, tc.d); !near(got, tc.want, 1e-6*max(1, tc.want)) {
				t.Errorf("FisherExact(%d, %d, %d, %d) = %.9g; want %.9g", tc.a, tc.b, tc.c, tc.d, got, tc.want)
			}
		})
	}
}

func TestHolm(t *testing.T) {
	t.Parallel()
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if !near(got[i], want[i], 1e-12) {
			t.Errorf("Holm(...)[%d] = %g; want %g", i, got[i], want[i])
		}
	}
	if got := Holm([]float64{0.5, 0.9}); got[0] != 1 || got[1] != 1 {
		t.Errorf("Holm(0.5, 0.9) = %v; want [1 1] (2×0.5 capped at 1, then monotone)", got)
	}
}

func TestWilsonAndRateRatio(t *testing.T) {
	t.Parallel()
	if lo, hi := Wilson(0, 10); lo != 0 || !near(hi, 0.27754, 1e-4) {
		t.Errorf("Wilson(0, 10) = %g, %g; want 0, 0.2775", lo, hi)
	}
	if lo, hi := Wilson(50, 100); !near(lo, 0.4038, 1e-4) || !near(hi, 0.5962, 1e-4) {
		t.Errorf("Wilson(50, 100) = %g, %g; want 0.4038, 0.5962", lo, hi)
	}
	r, lo, hi := RateRatio(10, 100, 5, 100)
	if r != 2 || !near(lo, 0.70895, 1e-4) || !near(hi, 5.64214, 1e-4) {
		t.Errorf("RateRatio(10/100 vs 5/100) = %g [%g, %g]; want 2 [0.70895, 5.64214]", r, lo, hi)
	}
	if r, lo, hi := RateRatio(0, 50, 10, 100); r != 0 || !(lo > 0 && hi > lo) {
		t.Errorf("RateRatio(0/50 vs 10/100) = %g [%g, %g]; want 0 with a corrected interval", r, lo, hi)
	}
	if r, _, _ := RateRatio(3, 10, 0, 0); !math.IsNaN(r) {
		t.Errorf("RateRatio against an empty rest = %g; want NaN", r)
	}
}

// A group removed far more often than the rest is flagged over; groups within chance are
// not, and the correction for the number of groups is applied.
func TestGroupsFlagsDisproportion(t *testing.T) {
	t.Parallel()
	imp := Groups([]GroupCount{
		{Key: "npm", Docs: 200, Removed: 120},
		{Key: "debian", Docs: 800, Removed: 80},
		{Key: "spdx", Docs: 100, Removed: 12},
	})
	if imp.Docs != 1100 || imp.Removed != 212 || imp.Tested != 3 {
		t.Fatalf("Groups totals = %d docs, %d removed, %d tested; want 1100, 212, 3", imp.Docs, imp.Removed, imp.Tested)
	}
	flags := map[string]Flag{}
	for _, g := range imp.Groups {
		flags[g.Key] = g.Flag
		if g.PAdjusted < g.P {
			t.Errorf("group %s: adjusted p %g below raw p %g", g.Key, g.PAdjusted, g.P)
		}
	}
	if flags["npm"] != Over || flags["debian"] != Under || flags["spdx"] != "" {
		t.Errorf("flags = %v; want npm over, debian under, spdx none", flags)
	}
}

// Under the null (every group removed at the same rate), Holm-corrected flags appear in
// well under 5% of datasets: the family-wise error rate is controlled.
func TestGroupsFamilyWiseErrorUnderNull(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	const trials, groups = 400, 10
	flagged := 0
	for range trials {
		counts := make([]GroupCount, groups)
		for g := range counts {
			counts[g].Docs = 50 + rng.IntN(200)
			for range counts[g].Docs {
				if rng.Float64() < 0.2 {
					counts[g].Removed++
				}
			}
		}
		for _, g := range Groups(counts).Groups {
			if g.Flag != "" {
				flagged++
				break
			}
		}
	}
	// Fisher's test is conservative, so the rate is below 5%; 0.08 leaves room for the
	// noise of 400 trials (binomial sd about 1.1%).
	if rate := float64(flagged) / trials; rate > 0.08 {
		t.Errorf("datasets with a flag under the null: %.3f; want at most 0.08 (alpha 0.05)", rate)
	}
}

func testParams(t *testing.T) Params {
	t.Helper()
	rule, err := cluster.ParseRule("longest")
	if err != nil {
		t.Fatal(err)
	}
	return Params{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 16, Rows: 8}, Threshold: 0.7, Verification: Exact,
		Policy: cluster.KeeperStar, Rule: rule, CodeVersion: "test"}
}

func TestManifestHashCoversRowsAndParams(t *testing.T) {
	t.Parallel()
	p := testParams(t)
	ds := Dataset{ID: 1, Name: "d", Version: 1, ContentHash: "abc"}
	rows := []Row{
		{ExtID: "a", KeeperExtID: "k", Cluster: 1, Reason: cluster.Near, Estimate: 0.8, Exact: 0.75, ContentHash: "h1", Decision: Proposed},
		{ExtID: "b", KeeperExtID: "k", Cluster: 1, Reason: cluster.Exact, Estimate: 1, Exact: 1, ContentHash: "h2", Decision: Approved},
	}
	base := ManifestHash(ds, p, rows)
	if !strings.HasPrefix(base, "m") || len(base) != 65 {
		t.Fatalf("ManifestHash = %q; want m and 64 hex digits", base)
	}
	if again := ManifestHash(ds, p, rows); again != base {
		t.Fatal("ManifestHash is not deterministic")
	}
	changed := func(name string, ds Dataset, p Params, rows []Row) {
		t.Helper()
		if ManifestHash(ds, p, rows) == base {
			t.Errorf("changing %s left the content hash unchanged", name)
		}
	}
	mod := func(f func(r *Row)) []Row {
		c := append([]Row(nil), rows...)
		f(&c[0])
		return c
	}
	changed("a decision", ds, p, mod(func(r *Row) { r.Decision = Excluded }))
	changed("a keeper", ds, p, mod(func(r *Row) { r.KeeperExtID = "k2" }))
	changed("a similarity", ds, p, mod(func(r *Row) { r.Exact = 0.7500001 }))
	changed("a cluster", ds, p, mod(func(r *Row) { r.Cluster = 2 }))
	changed("a content hash", ds, p, mod(func(r *Row) { r.ContentHash = "h9" }))
	changed("the row order", ds, p, []Row{rows[1], rows[0]})
	changed("a row removed", ds, p, rows[:1])
	q := p
	q.Threshold = 0.71
	changed("the threshold", ds, q, rows)
	q = p
	q.Policy = cluster.Components
	changed("the policy", ds, q, rows)
	ds2 := ds
	ds2.Version = 2
	changed("the dataset", ds2, p, rows)
}

func TestParamsJSONRoundTrip(t *testing.T) {
	t.Parallel()
	p := testParams(t)
	p.Rule, _ = cluster.ParseRule("source(debian,spdx)>longest")
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q Params
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	if q.canonical() != p.canonical() {
		t.Errorf("params after a JSON round trip:\n%s\nwant\n%s", q.canonical(), p.canonical())
	}
	if err := p.Validate(); err != nil {
		t.Errorf("Validate(%s) = %v", b, err)
	}
	bad := p
	bad.Shape = lsh.Shape{Bands: 64, Rows: 4}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "bands × rows") {
		t.Errorf("Validate with 64x4 over k=128 = %v; want a bands × rows error", err)
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	a := []Row{{ExtID: "x", KeeperExtID: "k"}, {ExtID: "y", KeeperExtID: "k"}, {ExtID: "z", KeeperExtID: "k", Decision: Excluded},
		{ExtID: "w", KeeperExtID: "k"}}
	b := []Row{{ExtID: "y", KeeperExtID: "k"}, {ExtID: "z", KeeperExtID: "k"}, {ExtID: "w", KeeperExtID: "j"}}
	d := Diff(a, b)
	ids := func(cs []Change) string {
		var s []string
		for _, c := range cs {
			s = append(s, c.ExtID)
		}
		return strings.Join(s, ",")
	}
	if got := ids(d.Entered); got != "z" {
		t.Errorf("entered = %s; want z (excluded in A, removed in B)", got)
	}
	if got := ids(d.Left); got != "x" {
		t.Errorf("left = %s; want x", got)
	}
	if got := ids(d.Rekept); got != "w" || d.Both != 2 {
		t.Errorf("rekept = %s, both = %d; want w, 2", got, d.Both)
	}
}

// Cells a spreadsheet would run as formulas are neutralised, and the CSV reads back to
// the same rows once the apostrophes are dropped.
func TestCSVNeutralisesFormulasAndParsesBack(t *testing.T) {
	t.Parallel()
	p := testParams(t)
	h := ExportHeader{Manifest: 7, Dataset: Dataset{Name: "=cmd|' /C calc'!A0", Version: 3}, Params: p}
	hostile := []string{"=1+1", "+SUM(A1)", "-2+3", "@import", "\tlead tab", "\rlead cr", "plain, with \"quotes\"\nand a newline", "'already"}
	var rows []Row
	for i, id := range hostile {
		rows = append(rows, Row{ExtID: id, KeeperExtID: "=HYPERLINK(\"http://evil\")", Cluster: int64(i + 1), Reason: cluster.Near,
			Estimate: 0.5, Exact: 0.25, ContentHash: "h", Decision: Approved})
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, h, rows); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(rows)+1 || strings.Join(recs[0], ",") != strings.Join(CSVColumns, ",") {
		t.Fatalf("CSV has %d records, header %v", len(recs), recs[0])
	}
	unsafe := func(s string) bool { return s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) }
	restore := func(s string) string {
		if len(s) > 1 && s[0] == '\'' && unsafe(s[1:]) {
			return s[1:]
		}
		return s
	}
	for i, rec := range recs[1:] {
		for j, cell := range rec {
			if unsafe(cell) {
				t.Errorf("row %d column %s: %q would run as a formula", i+1, CSVColumns[j], cell)
			}
		}
		if got := restore(rec[3]); got != rows[i].ExtID {
			t.Errorf("row %d ext_id reads back %q; want %q", i+1, got, rows[i].ExtID)
		}
		if got := restore(rec[4]); got != rows[i].KeeperExtID {
			t.Errorf("row %d keeper reads back %q; want %q", i+1, got, rows[i].KeeperExtID)
		}
		if got := restore(rec[1]); got != h.Dataset.Name {
			t.Errorf("row %d dataset reads back %q; want %q", i+1, got, h.Dataset.Name)
		}
		if rec[7] != "0.5" || rec[8] != "0.25" || rec[17] != "approved" {
			t.Errorf("row %d similarities/decision = %s %s %s", i+1, rec[7], rec[8], rec[17])
		}
	}
}

func TestTallyAndRules(t *testing.T) {
	t.Parallel()
	const preparer = 1
	rs := []Review{
		{UserID: preparer, Verdict: Approve},           // the preparer's: never counts
		{UserID: 2, Verdict: Reject},                   // superseded by 2's approval
		{UserID: 2, Verdict: Approve},                  //
		{UserID: 3, Verdict: Approve, Dismissed: true}, // stale
		{UserID: 4, Verdict: Comment},
	}
	tal := TallyOf(rs, preparer)
	if len(tal.Approvals) != 1 || tal.Approvals[0].UserID != 2 || len(tal.Rejections) != 0 {
		t.Fatalf("TallyOf = %+v; want one approval by user 2", tal)
	}
	if !tal.SignsOff(1, 0) || tal.SignsOff(2, 0) || tal.SignsOff(1, 3) {
		t.Error("SignsOff: want true for 1 required and nothing undecided only")
	}
	tal = TallyOf(append(rs, Review{UserID: 5, Verdict: Reject}), preparer)
	if tal.SignsOff(1, 0) {
		t.Error("a standing rejection did not block sign-off")
	}
	if err := CanReview(InReview, Approve, preparer, preparer); err != ErrSelfApproval {
		t.Errorf("CanReview by the preparer = %v; want ErrSelfApproval", err)
	}
	if err := CanReview(Draft, Approve, preparer, 2); err == nil {
		t.Error("CanReview of a draft allowed an approval")
	}
	if err := CanReview(InReview, Approve, preparer, 2); err != nil {
		t.Errorf("CanReview in review by another = %v", err)
	}
	for _, s := range []State{Exported, Revoked} {
		if CanChange(s) == nil {
			t.Errorf("CanChange(%s) = nil; want refused", s)
		}
	}
	for n, want := range map[int]string{1: "1 removal has no decision yet", 2: "2 removals have no decision yet", 1234: "1,234 removals have no decision yet"} {
		if err := CanRequestSignOff(Draft, n); err == nil || !strings.HasPrefix(err.Error(), want+": approve or exclude every removal first") {
			t.Errorf("CanRequestSignOff with %d undecided = %v; want %q", n, err, want)
		}
	}
	if CanExport(InReview) == nil || CanExport(SignedOff) != nil {
		t.Error("CanExport: only a signed-off manifest is exported")
	}
}

func TestNumberJSON(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(Interval{Value: Number(math.NaN()), Lo: 0.25, Hi: Number(math.Inf(1)), N: 3})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"value":null,"lo":0.25,"hi":null,"n":3}` {
		t.Errorf("Interval JSON = %s", b)
	}
	var iv Interval
	if err := json.Unmarshal(b, &iv); err != nil || !math.IsNaN(float64(iv.Value)) || iv.Lo != 0.25 {
		t.Errorf("Interval read back = %+v, %v", iv, err)
	}
}
