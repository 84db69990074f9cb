package calib

import (
	"context"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// TestTruthMatchesSweepCounts checks the truth engine and internal/sweep against each
// other where both count exactly, on the real population: candidates, bucket
// collisions left out, accepted pairs and removals (connected components, and
// keeper-star under each keeper rule given to the sweep as a clusterer) of every
// configuration of a small grid with both verifications and a char-level
// representation.
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
	policies := []cluster.Policy{cluster.Components, cluster.KeeperStar}
	outs, err := eng.EvaluateAll(ctx, grid.Configs(), policies, Rules)
	if err != nil {
		t.Fatal(err)
	}
	truth := map[Config]*Outcome{}
	for i := range outs {
		truth[outs[i].Config] = &outs[i]
	}
	texts := pop.Texts()
	checked := 0
	for _, part := range grid {
		sigs, err := eng.Signatures(part.Spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range part.Verifications {
			var clusterErr error
			names, cls := sweepPolicies(policies, func(p cluster.Policy, r cluster.Criterion) sweep.Clusterer {
				return clustererOf(ctx, eng, sigs, part.Spec, v, p, r, &clusterErr)
			})
			in := sweep.Input{
				Docs:       sweep.Documents{Count: len(texts), Text: func(i int) string { return texts[i] }},
				Signatures: func(context.Context, lsh.Spec) ([]lsh.Signature, error) { return sigs, nil },
				Policies:   cls,
			}
			rep, err := sweep.Run(ctx, in, sweep.Grid{Specs: []lsh.Spec{part.Spec}, Shapes: part.Shapes, Thresholds: part.Thresholds,
				Verifications: []sweep.Verification{sweep.Verification(v)}, Policies: names}, sweep.Options{Seed: 1})
			if err == nil {
				err = clusterErr
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Results {
				cfg := Config{Spec: r.Config.Spec, Shape: r.Config.Shape, Threshold: r.Config.Threshold, Verification: Verification(r.Config.Verification)}
				o := truth[cfg]
				if o == nil {
					t.Fatalf("the sweep scored %s, which the grid does not hold", cfg)
				}
				if r.Candidates != o.Candidates || r.BucketSkipped != o.BucketSkipped || r.Accepted != o.Accepted {
					t.Errorf("%s: sweep candidates %d, skipped %d, accepted %d; truth %d, %d, %d", cfg, r.Candidates, r.BucketSkipped,
						r.Accepted, o.Candidates, o.BucketSkipped, o.Accepted)
				}
				pol, rule, err := policyOf(r.Config.Policy)
				if err != nil {
					t.Fatal(err)
				}
				if rule == "" {
					rule = cluster.Earliest // components: the same removals under every rule
				}
				if c := o.Clustering(pol, rule); r.Removals != len(c.Removals) {
					t.Errorf("%s, %s: sweep removes %d; truth %d", cfg, r.Config.Policy, r.Removals, len(c.Removals))
				}
				checked++
			}
		}
	}
	if want := len(grid.Configs()) * (1 + len(Rules)); checked != want {
		t.Errorf("%d results checked; want %d", checked, want)
	}
	// The removals of components do not depend on the keeper rule; keeper-star's do.
	for _, o := range outs {
		e, l := o.Clustering(cluster.Components, cluster.Earliest), o.Clustering(cluster.Components, cluster.Longest)
		if len(e.Removals) != len(l.Removals) {
			t.Errorf("%s: components remove %d under earliest, %d under longest", o.Config, len(e.Removals), len(l.Removals))
		}
	}
}
