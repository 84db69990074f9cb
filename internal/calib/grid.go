package calib

import (
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// GridPart is one representation's share of a grid: every shape at every threshold
// under every verification.
type GridPart struct {
	Spec          lsh.Spec
	Shapes        []lsh.Shape
	Thresholds    []float64
	Verifications []Verification
}

// Grid is the fixed set of configurations a check scores, part by part.
type Grid []GridPart

// Configs lists the grid's configurations: parts in order, then shapes, thresholds and
// verifications.
func (g Grid) Configs() []Config {
	var out []Config
	for _, p := range g {
		for _, sh := range p.Shapes {
			for _, t := range p.Thresholds {
				for _, v := range p.Verifications {
					out = append(out, Config{Spec: p.Spec, Shape: sh, Threshold: t, Verification: v})
				}
			}
		}
	}
	return out
}

// Word5 is the campaign's representation, lsh.DefaultSpec (NFKC, lowercase, collapsed
// white space, word 5-shingles, k = 128): the one the rule labels and the exact bins use.
func Word5() lsh.Spec { return lsh.DefaultSpec() }

// Char5 is the grid's char-level representation: Word5's normalization with char
// 5-shingles, k = 128.
func Char5() lsh.Spec {
	s := lsh.DefaultSpec()
	s.Level, s.Size = lsh.Char, 5
	return s
}

// DefaultGrid is the grid of the full check: word 5-shingles at k = 128 under the
// shapes 42x3, 32x4, 25x5 and 16x8 and the thresholds 0.5, 0.6, 0.7 and 0.8, and char
// 5-shingles under 32x4 and 25x5 at 0.5, 0.7 and 0.9, each verified by the MinHash
// estimate and by exact Jaccard: 44 configurations. On the population (TruthTable; go
// run ./cmd/calibcheck -truth) it holds configurations with true recall >= 0.995 at
// tau = 0.5 (42x3 at 0.5, exact: 0.9999) and at tau = 0.7 (42x3, 32x4 and 25x5 at 0.5 and
// 0.6, and at 0.7 under exact verification), and configurations whose true false-removal
// rate is at most 1%: at tau = 0.5 every word configuration at 0.7 and 0.8 under every
// policy and keeper rule, and char at 0.9; at tau = 0.7 every word configuration at 0.8
// but connected components with the longest keeper under the estimate (14%), and
// keeper-star and complete-link at 0.7 under exact verification.
func DefaultGrid() Grid {
	both := []Verification{Estimate, Exact}
	return Grid{
		{Spec: Word5(), Shapes: []lsh.Shape{{Bands: 42, Rows: 3}, {Bands: 32, Rows: 4}, {Bands: 25, Rows: 5}, {Bands: 16, Rows: 8}},
			Thresholds: []float64{0.5, 0.6, 0.7, 0.8}, Verifications: both},
		{Spec: Char5(), Shapes: []lsh.Shape{{Bands: 32, Rows: 4}, {Bands: 25, Rows: 5}},
			Thresholds: []float64{0.5, 0.7, 0.9}, Verifications: both},
	}
}

// FastGrid is the grid of the check that runs in `go test ./...`: word 5-shingles under
// 42x3 and 25x5 at 0.5 and 0.8 with both verifications, 8 configurations, among them
// true recall >= 0.995 at both taus (42x3 at 0.5, exact) and false-removal rates of at
// most 1% at both (0.8, connected components, but the longest keeper under the estimate
// at tau = 0.7).
func FastGrid() Grid {
	return Grid{
		{Spec: Word5(), Shapes: []lsh.Shape{{Bands: 42, Rows: 3}, {Bands: 25, Rows: 5}},
			Thresholds: []float64{0.5, 0.8}, Verifications: []Verification{Estimate, Exact}},
	}
}
