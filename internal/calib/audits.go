package calib

import (
	"fmt"
	"math"

	"github.com/dedupstudio/dedupstudio/internal/audit"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
)

// The bars for a manifest's own audit: a manifest whose true false-removal rate
// is at most AuditRate, audited with AuditLabels labels, must be bounded at or under
// AuditBound in at least AuditBars.Tight of audits, and the audit's interval must hold
// the truth in at least AuditBars.Cover of them.
const (
	AuditRate   = 0.003
	AuditBound  = 0.015
	AuditLabels = audit.DefaultSize
)

// AuditBars are the shares for the audit.
var AuditBars = struct{ Cover, Tight float64 }{Cover: 0.95, Tight: 0.8}

// AuditRow is the audits of one manifest: a configuration's removals under a policy
// and keeper rule, with the truth of each (removed, keeper) pair under a label rule.
type AuditRow struct {
	Tau    LabelRule
	Config Config
	Policy cluster.Policy
	Rule   cluster.Criterion
	// Removals splits into Certain (identical normalized text: never a mistake, no
	// label) and Uncertain, the stratum audited; Truth counts the false removals, all
	// of them uncertain.
	Removals, Certain, Uncertain, Truth int
	// Labels is the audit's size (AuditLabels, or every uncertain removal when fewer);
	// Audits the audits simulated, Covered those whose one-sided 95% upper bound held the
	// truth, Tight those whose upper bound was at most AuditBound of the removals.
	Labels, Audits, Covered, Tight int
	// ExactCover and ExactTight are the same shares computed exactly over the
	// hypergeometric distribution of the mistakes an audit sees; MaxTight is the most
	// mistakes an audit may see and still bound the rate at AuditBound (-1: none).
	ExactCover, ExactTight float64
	MaxTight               int
}

// Rate is the manifest's true false-removal rate.
func (r AuditRow) Rate() float64 { return float64(r.Truth) / float64(max(1, r.Removals)) }

// Audits simulates the manifest audit (internal/audit) of every clustering in outs whose
// true false-removal rate under a rule of taus is at most AuditRate: per manifest,
// audits times, audit.Choose draws AuditLabels of its uncertain removals, the truth labels
// them, and audit.Estimate bounds the mistakes; the row counts how often the bound held
// the truth and how often it was at most AuditBound of the removals, and the exact
// probabilities of both. Seeded: audit a of manifest m draws with seed+a.
func Audits(outs []Outcome, taus []LabelRule, audits int, seed uint64) ([]AuditRow, error) {
	var rows []AuditRow
	bounds := map[[3]int]int{} // audit.UpperBound by (uncertain, labels, mistakes)
	upper := func(u, n, x int) int {
		k := [3]int{u, n, x}
		b, ok := bounds[k]
		if !ok {
			b = audit.UpperBound(u, n, x, 1-audit.Level)
			bounds[k] = b
		}
		return b
	}
	for _, tau := range taus {
		for i := range outs {
			o := &outs[i]
			for j := range o.Clusterings {
				cl := &o.Clusterings[j]
				r := AuditRow{Tau: tau, Config: o.Config, Policy: cl.Policy, Rule: cl.Rule, Removals: len(cl.Removals), Audits: audits}
				var wrong []bool // per uncertain removal
				for _, rm := range cl.Removals {
					if rm.Identical {
						r.Certain++
						continue
					}
					f := !tau.Duplicate(rm.Doc, rm.Keeper, int(rm.Inter), int(rm.Union), false)
					wrong = append(wrong, f)
					if f {
						r.Truth++
					}
				}
				r.Uncertain = len(wrong)
				if r.Removals == 0 || r.Rate() > AuditRate {
					continue
				}
				r.Labels = min(AuditLabels, r.Uncertain)
				for a := range audits {
					x := 0
					for _, k := range audit.Choose(r.Uncertain, r.Labels, seed+uint64(a)) {
						if wrong[k] {
							x++
						}
					}
					res, err := audit.Estimate(r.Removals, r.Certain, r.Labels, x)
					if err != nil {
						return nil, fmt.Errorf("audit of %s, %s/%s: %w", o.Config, cl.Policy, cl.Rule, err)
					}
					if res.Upper >= float64(r.Truth) {
						r.Covered++
					}
					if res.UpperRate <= AuditBound {
						r.Tight++
					}
				}
				r.ExactCover, r.ExactTight, r.MaxTight = exactAudit(r, upper)
				rows = append(rows, r)
			}
		}
	}
	return rows, nil
}

// exactAudit returns the probabilities that an audit of r's manifest covers its truth
// and bounds it at AuditBound, over the hypergeometric distribution of the mistakes
// among r.Labels of r.Uncertain removals holding r.Truth, and the most mistakes that
// still bound it there.
func exactAudit(r AuditRow, upper func(u, n, x int) int) (cover, tight float64, maxTight int) {
	u, n, k := r.Uncertain, r.Labels, r.Truth
	maxTight = -1
	lf := make([]float64, u+1)
	for i := 2; i <= u; i++ {
		lf[i] = lf[i-1] + math.Log(float64(i))
	}
	lc := func(a, b int) float64 { return lf[a] - lf[b] - lf[a-b] }
	for x := max(0, n-(u-k)); x <= min(n, k); x++ {
		p := math.Exp(lc(k, x) + lc(u-k, n-x) - lc(u, n))
		b := upper(u, n, x)
		if b >= k {
			cover += p
		}
		if float64(b) <= AuditBound*float64(r.Removals) {
			tight += p
		}
	}
	for x := 0; x <= n; x++ {
		if float64(upper(u, n, x)) > AuditBound*float64(r.Removals) {
			break
		}
		maxTight = x
	}
	return cover, tight, maxTight
}
