package sweep

import (
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/review"
)

// A sweep's configuration becomes a manifest's parameters (review.Params) when someone
// proposes it, and a manifest's parameters are scored as a sweep of one configuration:
// the two conversions live here, next to each other, rather than in each caller.

// Params is c as a manifest's parameters, with the keeper rule the manifest runs (a
// sweep scores several; the manifest keeps one). It fails, as review.Params.Validate
// does, on a policy that is not registered or a value a manifest cannot run.
func (c Config) Params(rule cluster.Rule) (review.Params, error) {
	p := review.Params{Spec: c.Spec, Shape: c.Shape, Threshold: c.Threshold, Verification: c.Verification, Policy: c.Policy, Rule: rule}
	if err := p.Validate(); err != nil {
		return review.Params{}, err
	}
	return p, nil
}

// ConfigOf is a manifest's parameters as a sweep's configuration; the keeper rule is
// the sweep's to score (Options.Rules).
func ConfigOf(p review.Params) Config {
	return Config{Spec: p.Spec, Shape: p.Shape, Threshold: p.Threshold, Verification: p.Verification, Policy: p.Policy}
}

// Grid is the grid of c alone.
func (c Config) Grid() Grid {
	return Grid{Specs: []lsh.Spec{c.Spec}, Shapes: []lsh.Shape{c.Shape}, Thresholds: []float64{c.Threshold},
		Verifications: []Verification{c.Verification}, Policies: []cluster.Policy{c.Policy}}
}
