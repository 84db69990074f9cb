package calib

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/audit"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// TestAuditsHandMade audits two manifests by hand: one whose every uncertain removal
// fits in the audit (the bound is exact), and one of 1,000 removals, 100 certain, with 3
// mistakes, whose exact shares are computed here from the hypergeometric distribution
// independently of exactAudit.
func TestAuditsHandMade(t *testing.T) {
	t.Parallel()
	cfg := Config{Spec: Word5(), Shape: lsh.Shape{Bands: 25, Rows: 5}, Threshold: 0.8, Verification: Exact}
	small := make([]Removal, 50)
	for i := range small {
		small[i] = Removal{Doc: int32(i + 1), Keeper: 0, Inter: 9, Union: 10}
	}
	big := make([]Removal, 1000)
	for i := range big {
		big[i] = Removal{Doc: int32(i + 100), Keeper: 1, Inter: 9, Union: 10, Identical: i < 100}
		if i >= 100 && i < 103 {
			big[i].Inter = 1 // J = 0.1: a false removal
		}
	}
	outs := []Outcome{{Config: cfg, Clusterings: []Clustering{
		{Policy: cluster.Components, Rule: cluster.Earliest, Removals: small},
		{Policy: cluster.KeeperStar, Rule: cluster.Earliest, Removals: big},
		{Policy: cluster.CompleteLink, Rule: cluster.Earliest, Removals: append(slices.Clone(big[:100]), Removal{Doc: 5, Inter: 1, Union: 10})},
	}}}
	rows, err := Audits(outs, []LabelRule{Cut(0.5)}, 2000, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d manifests audited; want 2 (the third's rate 1/101 is over %.1f%%)", len(rows), 100*AuditRate)
	}
	s := rows[0]
	if s.Labels != 50 || s.Covered != 2000 || s.Tight != 2000 || s.ExactCover != 1 || s.ExactTight != 1 {
		t.Errorf("a manifest audited whole: %+v; want 50 labels, every audit covered and tight", s)
	}
	b := rows[1]
	if b.Removals != 1000 || b.Certain != 100 || b.Uncertain != 900 || b.Truth != 3 || b.Labels != AuditLabels {
		t.Fatalf("the big manifest: %+v", b)
	}
	// P(X = x) for X ~ Hypergeometric(900 removals, 3 false, 300 drawn), by hand.
	p := func(x int) float64 {
		c := func(n, k int) float64 {
			lg, _ := math.Lgamma(float64(n + 1))
			a, _ := math.Lgamma(float64(k + 1))
			d, _ := math.Lgamma(float64(n - k + 1))
			return lg - a - d
		}
		return math.Exp(c(3, x) + c(897, 300-x) - c(900, 300))
	}
	var cover, tight float64
	for x := 0; x <= 3; x++ {
		ub := audit.UpperBound(900, 300, x, 0.05)
		if ub >= 3 {
			cover += p(x)
		}
		if float64(ub) <= 15 { // 1.5% of 1,000 removals
			tight += p(x)
		}
	}
	if math.Abs(b.ExactCover-cover) > 1e-12 || math.Abs(b.ExactTight-tight) > 1e-12 {
		t.Errorf("exact cover %v, tight %v; want %v, %v", b.ExactCover, b.ExactTight, cover, tight)
	}
	// 2,000 audits: the simulated shares within 4 standard errors of the exact ones.
	for _, c := range []struct {
		name       string
		got, exact float64
	}{{"cover", float64(b.Covered) / 2000, cover}, {"tight", float64(b.Tight) / 2000, tight}} {
		if se := math.Sqrt(c.exact * (1 - c.exact) / 2000); math.Abs(c.got-c.exact) > 4*se+1e-9 {
			t.Errorf("%s: simulated %.4f, exact %.4f (standard error %.4f)", c.name, c.got, c.exact, se)
		}
	}
	if ub := audit.UpperBound(900, 300, b.MaxTight, 0.05); float64(ub) > 15 || float64(audit.UpperBound(900, 300, b.MaxTight+1, 0.05)) <= 15 {
		t.Errorf("most mistakes %d: bounds %d and %d at it and one more; want the last at or under 15", b.MaxTight, ub, audit.UpperBound(900, 300, b.MaxTight+1, 0.05))
	}
	tab := &Table{Audits: rows}
	var md strings.Builder
	tab.auditMarkdown(&md)
	if !strings.Contains(md.String(), "| 0.50 | word5 k128 25x5 >=0.80 exact | keeper-star (earliest) | 1000 | 100 | 3 | 0.0030 |") {
		t.Errorf("the audit table lacks the big manifest:\n%s", md.String())
	}
}

// TestAuditsFastGrid audits the manifests of FastGrid at both taus: the bars of point 6
// hold for every manifest, or Failures explains why not.
func TestAuditsFastGrid(t *testing.T) {
	t.Parallel()
	pop := testPopulation(t)
	outs, err := NewEngine(pop).EvaluateAll(context.Background(), FastGrid().Configs(), cluster.Policies(), Rules)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Audits(outs, DefaultTaus, 200, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("no manifest of FastGrid has a true rate <= 0.3%")
	}
	tab := &Table{Audits: rows}
	for _, f := range tab.Failures(IssueBars) {
		t.Log(f)
	}
	for _, r := range rows {
		if r.ExactCover < 0.95 {
			t.Errorf("%s %s %s/%s: exact coverage %.4f < 0.95: the audit's bound is not a 95%% bound", r.Tau, r.Config, r.Policy, r.Rule, r.ExactCover)
		}
	}
}
