package sweep

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// TestDemoProfilesAndEstimates runs a small grid over the demo sample with its design and
// checks what must hold exactly: every rule's (removed, keeper) pairs are its removals
// (bins plus identical texts), every accepted pair is in a bin or identical, intervals
// hold their point and stay within [0, removals], exact-hash dedup removes only
// identical texts (false removals 0, interval 0-0), and the recommendation never has a
// point estimate over the target.
func TestDemoProfilesAndEstimates(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo sample: -short skips it")
	}
	t.Parallel()
	d := loadDemo(t)
	g := Grid{Specs: []lsh.Spec{lsh.DefaultSpec()}, Shapes: []lsh.Shape{{Bands: 25, Rows: 5}, {Bands: 9, Rows: 13}},
		Thresholds: []float64{0.3, 0.6, 0.9}, Verifications: []Verification{MinHashEstimate, ExactJaccard}, Policies: cluster.Policies()}
	in := textInput(d.texts, d.design, precompute(t, d.texts, g.Specs))
	rep, err := Run(context.Background(), in, g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Model == nil || rep.Model.Floor < 0 || rep.Model.Identical == 0 {
		t.Fatalf("model %+v; want one with a floor and identical pairs", rep.Model)
	}
	check := func(name string, s Scores, accepted int) {
		t.Helper()
		if s.Dataset == nil || s.Profile == nil {
			t.Fatalf("%s: no dataset estimate", name)
		}
		var acc int64 = s.Profile.AcceptedIdentical
		for _, a := range s.Profile.Accepted {
			acc += a
		}
		if accepted >= 0 && acc != int64(accepted) {
			t.Errorf("%s: %d accepted pairs binned; %d accepted", name, acc, accepted)
		}
		if len(s.Dataset.Rules) != len(DefaultRules()) {
			t.Fatalf("%s: %d rules", name, len(s.Dataset.Rules))
		}
		for i, rp := range s.Profile.Rules {
			n := int64(rp.Identical)
			for _, p := range rp.Pairs {
				n += p
			}
			if n != int64(rp.Removals) {
				t.Errorf("%s, %s: %d removal pairs binned; %d removals", name, rp.Rule, n, rp.Removals)
			}
			e := s.Dataset.Rules[i]
			f := e.FalseRemovals
			if !(f.Lo <= f.Value && f.Value <= f.Hi && f.Lo >= 0 && f.Hi <= float64(e.Removals)) {
				t.Errorf("%s, %s: false removals %+v of %d removals", name, e.Rule, f, e.Removals)
			}
		}
		r := s.Dataset.Recall
		if !(r.Lo <= r.Value && r.Value <= r.Hi && r.Lo >= 0 && r.Hi <= 1) {
			t.Errorf("%s: recall %+v", name, r)
		}
	}
	b := rep.Baseline
	check("baseline", *b, -1)
	for _, e := range b.Dataset.Rules {
		if e.FalseRemovals != (Interval{}) || e.Certain != b.Removals {
			t.Errorf("exact-hash dedup, %s: false removals %+v, %d certain of %d; want 0, 0-0, all certain", e.Rule, e.FalseRemovals, e.Certain, b.Removals)
		}
	}
	for _, r := range rep.Results {
		check(r.Config.Label(), r.Scores, r.Accepted)
	}
	for _, target := range []float64{0.01, 0.05, 0.2} {
		for _, rule := range []string{"", "longest"} {
			rec, err := Recommend(rep.Results, rep.Baseline, Target{MaxFalseRemovalRate: target, Rule: rule})
			if err != nil {
				t.Fatal(err)
			}
			h := rep.Results[rec.Index].HeadlineFor(rule)
			if (rec.Met || rec.Preselect) && h.FalseRemovalRate.Value > target {
				t.Errorf("target %v, rule %q: %s (met %v, preselect %v) has point estimate %v", target, rule, rec.Config.Label(), rec.Met, rec.Preselect, h.FalseRemovalRate.Value)
			}
			if rec.Met && h.FalseRemovalRate.Hi > target {
				t.Errorf("target %v: met with upper end %v", target, h.FalseRemovalRate.Hi)
			}
			if !rec.Met && rec.Closest && rep.Baseline != nil && !(h.Recall.Value > rep.Baseline.HeadlineFor(rule).Recall.Value) && !math.IsNaN(h.Recall.Value) {
				t.Logf("target %v: the closest does not beat exact-hash recall (none does)", target)
			}
		}
	}
}

// TestModelRestoreEstimatesAsTheSweep: a model stored as JSON and restored with the
// sweep's seed gives every stored profile the estimate the sweep gave it.
func TestModelRestoreEstimatesAsTheSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo sample: -short skips it")
	}
	t.Parallel()
	d := loadDemo(t)
	g := Grid{Specs: []lsh.Spec{lsh.DefaultSpec()}, Shapes: []lsh.Shape{{Bands: 3, Rows: 42}, {Bands: 25, Rows: 5}},
		Thresholds: []float64{0.5, 0.95}, Verifications: []Verification{ExactJaccard}, Policies: []cluster.Policy{cluster.Components}}
	in := textInput(d.texts, d.design, precompute(t, d.texts, g.Specs))
	rep, err := Run(context.Background(), in, g, Options{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rep.Model)
	if err != nil {
		t.Fatal(err)
	}
	var stored Model
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	m := stored.Restore(7)
	for _, r := range rep.Results {
		got := m.Estimate(*r.Profile)
		if !reflect.DeepEqual(got.Rules, r.Dataset.Rules) || got.Recall != r.Dataset.Recall {
			t.Errorf("%s: restored %+v; the sweep gave %+v", r.Config.Label(), got.Rules[0].FalseRemovals, r.Dataset.Rules[0].FalseRemovals)
		}
		if p := m.Plan(*r.Profile, "", 0.001); p.Now != r.Dataset.Rules[0].FalseRemovalRate.Hi {
			t.Errorf("%s: the plan starts from %v; the estimate's upper end is %v", r.Config.Label(), p.Now, r.Dataset.Rules[0].FalseRemovalRate.Hi)
		}
	}
}
