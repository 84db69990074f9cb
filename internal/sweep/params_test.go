package sweep

import (
	"reflect"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/errkind"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// TestParams: a sweep configuration of every registered policy and both verifications
// becomes a manifest's parameters and back unchanged, in the manifest's vocabulary (the
// verifications are review's); a configuration a manifest cannot run is refused as
// invalid input; the grid of one configuration holds it alone.
func TestParams(t *testing.T) {
	t.Parallel()
	rule := cluster.Rule{By: []cluster.Criterion{cluster.Longest}}
	for _, pol := range cluster.Policies() {
		for _, v := range []Verification{MinHashEstimate, ExactJaccard} {
			c := Config{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 16, Rows: 8}, Threshold: 0.7, Verification: v, Policy: pol}
			t.Run(c.Label(), func(t *testing.T) {
				p, err := c.Params(rule)
				if err != nil {
					t.Fatal(err)
				}
				want := review.Params{Spec: c.Spec, Shape: c.Shape, Threshold: 0.7, Verification: review.Verification(v), Policy: cluster.Policy(pol), Rule: rule}
				if !reflect.DeepEqual(p, want) {
					t.Errorf("Params = %+v; want %+v", p, want)
				}
				if back := ConfigOf(p); back != c {
					t.Errorf("ConfigOf(Params) = %v; want %v", back, c)
				}
				if cs, err := c.Grid().Configs(); err != nil || len(cs) != 1 || cs[0] != c {
					t.Errorf("Grid().Configs() = %v, %v; want [%v]", cs, err, c)
				}
			})
		}
	}
	if MinHashEstimate != review.Estimate || ExactJaccard != review.Exact {
		t.Errorf("verifications %q, %q; want review's %q, %q", MinHashEstimate, ExactJaccard, review.Estimate, review.Exact)
	}
	good := Config{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 16, Rows: 8}, Threshold: 0.7, Verification: ExactJaccard, Policy: cluster.Components}
	for name, c := range map[string]Config{
		"unknown policy": func() Config { c := good; c.Policy = "nope"; return c }(),
		"threshold 0":    func() Config { c := good; c.Threshold = 0; return c }(),
		"no keeper rule": good,
	} {
		r := rule
		if name == "no keeper rule" {
			r = cluster.Rule{}
		}
		if _, err := c.Params(r); errkind.Of(err) != errkind.Invalid {
			t.Errorf("%s: Params() = %v; want an invalid-input error", name, err)
		}
	}
}
