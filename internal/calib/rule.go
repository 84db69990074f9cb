package calib

import (
	"fmt"
	"strconv"
	"strings"
)

// LabelRule says which pairs of the population are duplicates; it labels every drawn
// pair of the check, and the truth counts with it. A pair whose normalized texts are
// identical is always a duplicate. Otherwise, with J its Jaccard similarity under the
// campaign's representation:
//
//   - without a ramp (Ramp 0), it is a duplicate when J >= Tau: a hard cut. The
//     issue's rules, tau = 0.5 and 0.7, cut on edges of the studio's bins
//     (frame.J21's twentieths), so each bin is all duplicates or none: the model's
//     share of a bin is exact from its first label, the estimates equal the truth in
//     every draw, and only the widths of the intervals are put to the test;
//   - with a ramp, J below Tau-Ramp is never a duplicate, J at or over Tau+Ramp always
//     is, and in between a pair is a duplicate with probability rising linearly across
//     the ramp, decided once per pair by a hash of its two documents (so a pair has one
//     label, as a person would give it, and the truth counts those labels). The bins the
//     ramp crosses hold duplicates and non-duplicates mixed, as people's labels near a
//     cut do, so their shares are estimated from samples and the intervals' coverage is
//     put to the test; within a bin the chance still rises with J, so a configuration
//     whose clusters hold a bin's more similar pairs also tests the model's assumption
//     that a bin's labels speak for its pairs inside clusters.
//
// A ramp decides once per pair, so every draw of a check labels the same population
// and its truth is one realization: the sweep's false-removal interval is a prediction
// for the pairs it has no label of under the model that a bin's pairs are alike, and
// a row whose realization lies in that prediction's tail is then missed in most draws,
// as a correct 95% interval must miss it. Redraw ("0.6~0.15r") draws a new
// realization for every draw (Seed, set per draw by ForDraw): the coverage then
// counts over realizations and labels together, which is what the interval claims.
//
// Tau - Ramp must be at least MinJaccard: the population lists only those pairs.
type LabelRule struct {
	Tau, Ramp float64
	// Redraw makes each draw of a check its own realization of the ramp; Seed is the
	// realization (0: the fixed one).
	Redraw bool
	Seed   uint64
}

// ForDraw returns the rule a check's draw d labels with: r itself, or with Redraw its
// realization d+1.
func (r LabelRule) ForDraw(d int) LabelRule {
	if r.Redraw {
		r.Seed = uint64(d) + 1
	}
	return r
}

// Cut is the hard rule at tau.
func Cut(tau float64) LabelRule { return LabelRule{Tau: tau} }

// ParseLabelRule reads a rule as String writes it ("0.5", or "0.6~0.15" for a ramp of
// 0.15 either side of 0.6, "0.6~0.15r" for one realized again in every draw).
func ParseLabelRule(s string) (LabelRule, error) {
	t, r, ramp := strings.Cut(strings.TrimSpace(s), "~")
	var out LabelRule
	if ramp {
		r, out.Redraw = strings.CutSuffix(r, "r")
	}
	var err error
	if out.Tau, err = strconv.ParseFloat(t, 64); err != nil {
		return LabelRule{}, fmt.Errorf("label rule %q: %w", s, err)
	}
	if ramp {
		if out.Ramp, err = strconv.ParseFloat(r, 64); err != nil {
			return LabelRule{}, fmt.Errorf("label rule %q: %w", s, err)
		}
	}
	return out, out.check()
}

func (r LabelRule) check() error {
	if r.Redraw && r.Ramp == 0 {
		return fmt.Errorf("label rule %s: a cut has one realization; redraw needs a ramp", r)
	}
	if !(r.Ramp >= 0 && r.Tau-r.Ramp >= MinJaccard && r.Tau+r.Ramp <= 1) {
		return fmt.Errorf("label rule %s: want a cut from %v to 1 and a ramp that stays within it (the population lists the pairs from %v)",
			r, MinJaccard, MinJaccard)
	}
	return nil
}

// String names the rule: "0.50", or "0.60~0.15" for a ramp.
func (r LabelRule) String() string {
	if r.Ramp == 0 {
		return fmt.Sprintf("%.2f", r.Tau)
	}
	if r.Redraw {
		return fmt.Sprintf("%.2f~%.2fr", r.Tau, r.Ramp)
	}
	return fmt.Sprintf("%.2f~%.2f", r.Tau, r.Ramp)
}

// Describe says what the rule labels a duplicate, for tables.
func (r LabelRule) Describe() string {
	if r.Ramp == 0 {
		return fmt.Sprintf("duplicate = identical normalized text or word 5-shingle J >= %.2f", r.Tau)
	}
	fixed := "fixed per pair"
	if r.Redraw {
		fixed = "drawn again for every draw"
	}
	return fmt.Sprintf("duplicate = identical normalized text, or J >= %.2f, or J in [%.2f, %.2f) with probability rising linearly from 0 to 1 (%s)",
		r.Tau+r.Ramp, r.Tau-r.Ramp, r.Tau+r.Ramp, fixed)
}

// Duplicate reports whether documents a and b, which share inter of union shingles
// and whose normalized texts are identical or not, are duplicates under the rule.
func (r LabelRule) Duplicate(a, b int32, inter, union int, identical bool) bool {
	if identical {
		return true
	}
	j := jaccard(inter, union)
	if r.Ramp == 0 {
		return j >= r.Tau
	}
	lo, hi := r.Tau-r.Ramp, r.Tau+r.Ramp
	switch {
	case j < lo:
		return false
	case j >= hi:
		return true
	}
	return pairUniform(a, b, r.Seed) < (j-lo)/(hi-lo)
}

// pairUniform is a number in [0, 1) fixed for the pair {a, b} and the realization seed:
// splitmix64 of the two document indexes, smaller first (seed 0: the one realization
// the check had before it could redraw).
func pairUniform(a, b int32, seed uint64) float64 {
	x := uint64(uint32(min(a, b)))<<32 | uint64(uint32(max(a, b)))
	x += 0x9e3779b97f4a7c15 * (1 + 2*seed)
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}
