package calib

import (
	"context"
	"slices"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// TestTruthMatchesSweepCounts checks the truth engine and internal/sweep against each
// other where both count exactly, on the real population: candidates, bucket
// collisions left out, accepted pairs, and the profile the estimates rest on (accepted
// pairs and, under every policy and keeper rule, the removals and (removed, keeper)
// pairs per bin of exact Jaccard under the campaign's representation) of every
// configuration of a small grid with both verifications and a char-level
// representation. The sweep bins pairs only with a model, so it is given a few rule
// labels that record a draw.
func TestTruthMatchesSweepCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pop := testPopulation(t)
	eng := NewEngine(pop)
	grid := Grid{
		{Spec: Word5(), Shapes: []lsh.Shape{{Bands: 42, Rows: 3}, {Bands: 16, Rows: 8}}, Thresholds: []float64{0.5, 0.8},
			Verifications: []Verification{Estimate, Exact}},
		{Spec: Char5(), Shapes: []lsh.Shape{{Bands: 25, Rows: 5}}, Thresholds: []float64{0.7}, Verifications: []Verification{Exact}},
	}
	policies := cluster.Policies()
	outs, err := eng.EvaluateAll(ctx, grid.Configs(), policies, Rules)
	if err != nil {
		t.Fatal(err)
	}
	tab := &Table{Taus: []LabelRule{Cut(0.5)}}
	tab.addRows(pop, outs, policies)
	texts := pop.Texts()
	var pairs []sweep.LabeledPair
	for i := 0; i < len(pop.Pairs); i += 100 {
		p := pop.Pairs[i]
		dup := Cut(0.5).Duplicate(p.A, p.B, int(p.Inter), int(p.Union), p.Identical)
		cat := "no"
		if dup {
			cat = "yes"
		}
		pairs = append(pairs, sweep.LabeledPair{ID: int64(i + 1), A: int(p.A), B: int(p.B), Origin: "random",
			Labels: []sweep.Label{{Annotator: RuleAnnotator(Cut(0.5)), Kind: string(labels.KindLabel), Category: cat, Duplicate: dup, Rule: true}}})
	}
	checked := 0
	for _, part := range grid {
		sigs, err := eng.Signatures(part.Spec)
		if err != nil {
			t.Fatal(err)
		}
		var verifs []sweep.Verification
		for _, v := range part.Verifications {
			verifs = append(verifs, sweep.Verification(v))
		}
		in := sweep.Input{
			Docs:       sweep.Documents{Count: len(texts), Text: func(i int) string { return texts[i] }, Keep: eng.docs},
			Signatures: func(context.Context, lsh.Spec) ([]lsh.Signature, error) { return sigs, nil },
			Pairs:      pairs, Categories: []labels.Category{{Key: "yes", Duplicate: labels.Yes}, {Key: "no", Duplicate: labels.No}},
			Rep: Word5(),
		}
		rep, err := sweep.Run(ctx, in, sweep.Grid{Specs: []lsh.Spec{part.Spec}, Shapes: part.Shapes, Thresholds: part.Thresholds,
			Verifications: verifs, Policies: policies}, sweep.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Model == nil {
			t.Fatalf("no model from %d drawn pairs: %v", len(pairs), rep.Labels)
		}
		for _, r := range rep.Results {
			cfg := configOf(r)
			o := &outs[tab.truthAt[cfg]]
			if r.Candidates != o.Candidates || r.BucketSkipped != o.BucketSkipped || r.Accepted != o.Accepted {
				t.Errorf("%s: sweep candidates %d, skipped %d, accepted %d; truth %d, %d, %d", cfg, r.Candidates, r.BucketSkipped,
					r.Accepted, o.Candidates, o.BucketSkipped, o.Accepted)
			}
			if r.Profile == nil || len(r.Profile.Rules) != len(Rules) {
				t.Fatalf("%s, %s: profile %+v; want one with every keeper rule", cfg, r.Config.Policy, r.Profile)
			}
			before := tab.MismatchCount
			tab.checkProfile(cfg, cluster.Policy(r.Config.Policy), r)
			if tab.MismatchCount != before {
				t.Errorf("the sweep's exact counts differ from the truth's: %s", tab.Mismatches[len(tab.Mismatches)-1])
			}
			checked++
		}
	}
	if want := len(grid.Configs()) * len(policies); checked != want || tab.Profiles != want {
		t.Errorf("%d results checked, %d profiles; want %d", checked, tab.Profiles, want)
	}
	// The removals of components do not depend on the keeper rule; keeper-star's do.
	differ := false
	for _, o := range outs {
		e, l := o.Clustering(cluster.Components, cluster.Earliest), o.Clustering(cluster.Components, cluster.Longest)
		if len(e.Removals) != len(l.Removals) {
			t.Errorf("%s: components remove %d under earliest, %d under longest", o.Config, len(e.Removals), len(l.Removals))
		}
		ks, kl := o.Clustering(cluster.KeeperStar, cluster.Earliest), o.Clustering(cluster.KeeperStar, cluster.Longest)
		differ = differ || len(ks.Removals) != len(kl.Removals) || !slices.Equal(ks.Bins, kl.Bins)
	}
	if !differ {
		t.Error("keeper-star removes the same pairs under earliest and longest in every configuration: the rules are not exercised")
	}
}
