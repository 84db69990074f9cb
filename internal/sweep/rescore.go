package sweep

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/unionfind"
)

// State is one configuration's candidates with their similarities, kept so that the
// threshold can move without generating them again: the live threshold slider calls
// Rescore. It holds 10 bytes per candidate pair (16 with exact Jaccard) plus the counted pairs, and is safe for
// concurrent use.
type State struct {
	e      *engine
	config Config
	cs     *shapeCands
	sims   similarities
	base   Result
}

// Prepare builds the State of configuration c over in (c.Threshold is where it
// starts; Config returns it).
func Prepare(ctx context.Context, in Input, c Config, opt Options) (*State, error) {
	opt = opt.withDefaults()
	e, err := newEngine(in, opt)
	if err != nil {
		return nil, err
	}
	g := c.Grid()
	if err := g.Validate(e.policyNames()...); err != nil {
		return nil, err
	}
	if c.Shape.Bands*c.Shape.Rows > c.Spec.Hashes {
		return nil, &GridError{Axis: "shapes", Index: 0, Msg: fmt.Sprintf("shape %v needs k >= %d; the spec has %d", c.Shape, c.Shape.Bands*c.Shape.Rows, c.Spec.Hashes)}
	}
	if err := e.buildModel(ctx); err != nil {
		return nil, err
	}
	sigs, err := e.signatures(ctx, c.Spec)
	if err != nil {
		return nil, err
	}
	if err := e.useRepresentation(ctx, c.Spec); err != nil {
		return nil, err
	}
	cs, err := e.candidates(ctx, sigs, c.Shape, c.Verification == ExactJaccard)
	if err != nil {
		return nil, err
	}
	sims := similarities{exact: cs.jac}
	if c.Verification == MinHashEstimate {
		start := time.Now()
		if sims, err = cs.estimates(ctx, sigs, c.Spec.Hashes); err != nil {
			return nil, err
		}
		cs.time += time.Since(start)
	}
	if c.Verification == MinHashEstimate {
		cs.jac = nil // sims holds what the verification compares
	}
	st := &State{e: e, config: c, cs: cs, sims: sims, base: e.shapeResult(c.Spec, c.Shape, cs)}
	st.base.CandidateTime = cs.time
	return st, nil
}

// Config returns the configuration the State was prepared for.
func (s *State) Config() Config { return s.config }

// Rescore scores the configuration at another threshold: one clustering of the kept
// candidates, no signatures, no shingling. Optimal and Observed are left zero (Optima
// computes them; the datasketch one can take 100 ms the first time for a threshold).
func (s *State) Rescore(ctx context.Context, threshold float64) (Result, error) {
	if !(threshold > 0 && threshold <= 1) {
		return Result{}, &GridError{Axis: "thresholds", Index: 0, Msg: fmt.Sprintf("threshold %v outside (0, 1]", threshold)}
	}
	start := time.Now()
	o, rules, err := s.e.one(ctx, s.cs, s.sims, threshold, s.config.Policy)
	if err != nil {
		return Result{}, err
	}
	r := s.base
	r.Config = s.config
	r.Config.Threshold = threshold
	var prof *Profile
	if s.e.bin != nil {
		bins, err := s.e.modelBins(ctx, s.cs)
		if err != nil {
			return Result{}, err
		}
		nb := s.e.bin.bins()
		acc := make([]int64, nb+1)
		for i := range s.sims.len() {
			if s.sims.at(i) >= threshold {
				acc[bins[i]]++
			}
		}
		prof = &Profile{Accepted: acc[:nb], AcceptedIdentical: acc[nb], Rules: rules}
	}
	r.Scores = s.e.scores(o.acc, o.merged, o.removals, o.multi, o.largest, prof)
	r.Accepted = o.edges
	r.ScoreTime = time.Since(start)
	return r, nil
}

// Optima returns datasketch's optimal shape for threshold at the configuration's k and
// the optimum fitted to the counted pairs' exact similarities (nil without pairs).
func (s *State) Optima(threshold float64) (lsh.ShapeChoice, *lsh.ShapeChoice, error) {
	c, err := lsh.OptimalShape(threshold, s.config.Spec.Hashes, lsh.EqualWeights)
	if err != nil {
		return lsh.ShapeChoice{}, nil, err
	}
	o := observedOptima(s.e.labJ, s.config.Spec.Hashes, lsh.EqualWeights, []float64{threshold})
	if o == nil {
		return c, nil, nil
	}
	return c, &o[0], nil
}

// Outcome is what a configuration did with one counted pair.
type Outcome struct {
	Pair      int64 // LabeledPair.ID
	A, B      int
	Category  string
	Duplicate bool
	// Jaccard is the pair's exact similarity under the representation.
	Jaccard float64
	// Candidate: the pair collides in a band. Similarity is what the verification
	// compared with the threshold (0 when not a candidate).
	Candidate  bool
	Similarity float64
	Accepted   bool
	// Merged: the two documents end in one cluster (directly or through a chain).
	Merged bool
}

// Missed reports a duplicate the configuration does not accept.
func (o Outcome) Missed() bool { return o.Duplicate && !o.Accepted }

// FalseMerge reports a non-duplicate that ends in one cluster: a false removal.
func (o Outcome) FalseMerge() bool { return !o.Duplicate && o.Merged }

// Outcomes returns every counted pair's outcome at threshold: false merges first, the
// least similar first (exact Jaccard ascending: a pair that shares little and is merged
// anyway is a chain's doing, the worst kind); then misses, the most similar first
// (exact Jaccard descending: the duplicates the configuration came closest to and still
// lost); then the rest in pair order. Ties go to the pair order.
func (s *State) Outcomes(ctx context.Context, threshold float64) ([]Outcome, error) {
	o, _, err := s.e.one(ctx, s.cs, s.sims, threshold, s.config.Policy)
	if err != nil {
		return nil, err
	}
	out := make([]Outcome, len(s.e.keys))
	for i, p := range s.e.ls.Pairs {
		oc := Outcome{Pair: p.ID, A: p.A, B: p.B, Category: p.Category, Duplicate: p.Duplicate,
			Jaccard: s.e.labJ[i], Accepted: o.acc[i], Merged: o.merged[i] > 0}
		if c := s.cs.labCand[i]; c >= 0 {
			oc.Candidate, oc.Similarity = true, s.sims.at(int(c))
		}
		out[i] = oc
	}
	rank := func(o Outcome) int {
		switch {
		case o.FalseMerge():
			return 0
		case o.Missed():
			return 1
		}
		return 2
	}
	slices.SortStableFunc(out, func(a, b Outcome) int {
		ra, rb := rank(a), rank(b)
		switch {
		case ra != rb:
			return ra - rb
		case ra == 0:
			return cmp.Compare(a.Jaccard, b.Jaccard)
		case ra == 1:
			return cmp.Compare(b.Jaccard, a.Jaccard)
		}
		return 0
	})
	return out, nil
}

// BinRate is the share of labeled pairs in a similarity bin [Lo, Hi) that are
// candidates: the measured collision rate drawn on the S-curve.
type BinRate struct {
	Lo, Hi float64
	Rate
}

// CollisionRates bins outcomes by exact Jaccard into bins equal bins of [0, 1] (the last
// includes 1) and returns each bin's candidate rate with its Wilson interval.
func CollisionRates(outs []Outcome, bins int) []BinRate {
	if bins < 1 {
		return nil
	}
	hits := make([]int, bins)
	of := make([]int, bins)
	for _, o := range outs {
		b := labels.Bin(o.Jaccard, bins)
		of[b]++
		if o.Candidate {
			hits[b]++
		}
	}
	out := make([]BinRate, bins)
	for b := range out {
		out[b] = BinRate{Lo: float64(b) / float64(bins), Hi: float64(b+1) / float64(bins), Rate: NewRate(hits[b], of[b])}
	}
	return out
}

// single is one clustering of a configuration at one threshold.
type single struct {
	acc                             []bool  // per counted pair
	merged                          []int32 // per counted pair: the size of the cluster holding it, 0 if apart
	removals, multi, largest, edges int
	ids                             []int32 // per document: its cluster id (the policies internal/cluster runs)
}

// one clusters the candidates accepted at threshold t under policy and returns, with a
// model, each keeper rule's profile of removals. The labeled-pairs figures follow the
// clustering of the first rule (the only one for every policy but keeper-star).
func (e *engine) one(ctx context.Context, cs *shapeCands, sims similarities, t float64, policy cluster.Policy) (single, []RuleProfile, error) {
	if err := ctx.Err(); err != nil {
		return single{}, nil, err
	}
	var o single
	o.acc = make([]bool, len(e.keys))
	for i, c := range cs.labCand {
		o.acc[i] = c >= 0 && sims.at(int(c)) >= t
	}
	for i := range sims.len() {
		if sims.at(i) >= t {
			o.edges++
		}
	}
	if policy == cluster.Components {
		uf := unionfind.New(e.n)
		var kt *keeperTracker
		if e.bin != nil {
			kt = newKeeperTracker(e.bin, e.orders, e.n)
		}
		for i := range sims.len() {
			if sims.at(i) >= t {
				a, b := unpair(cs.keys[i])
				if keep, gone, ok := uf.Union(a, b); ok && kt != nil {
					kt.merge(keep, gone)
				}
			}
		}
		o.merged = make([]int32, len(e.keys))
		mergedSizesOf(uf, e.keys, o.merged)
		o.removals, o.multi, o.largest = e.n-uf.Sets(), uf.Multi(), uf.Largest()
		var rules []RuleProfile
		if kt != nil {
			rules = kt.rules(e.ruleNames, o.removals, o.multi, o.largest)
		}
		return o, rules, nil
	}
	if clusterer, ok := e.policies[policy]; ok {
		var edges []Edge
		for i := range sims.len() {
			if s := sims.at(i); s >= t {
				a, b := unpair(cs.keys[i])
				edges = append(edges, Edge{A: a, B: b, Similarity: s})
			}
		}
		ids := clusterer(e.n, edges, t)
		if len(ids) != e.n {
			return single{}, nil, fmt.Errorf("policy %s returned %d cluster ids for %d documents", policy, len(ids), e.n)
		}
		o.merged = mergedSizes(e.keys, ids)
		sets, multi, largest := clusterStats(ids)
		o.removals, o.multi, o.largest = e.n-sets, multi, largest
		var rules []RuleProfile
		if e.bin != nil {
			rules = e.bin.profileOfIDs(ids, e.orders, e.ruleNames)
		}
		return o, rules, nil
	}
	if err := policy.Validate(); err != nil {
		return single{}, nil, err
	}
	g, err := e.graphFor(cs, sims)
	if err != nil {
		return single{}, nil, err
	}
	var rules []RuleProfile
	for r, rule := range e.opt.Rules {
		if r > 0 && e.bin == nil {
			break
		}
		if info, _ := cluster.PolicyOf(policy); r > 0 && !info.KeeperDependent {
			// A policy whose clusters do not depend on the keeper rule (complete link
			// picks the keeper afterwards) clusters once: the other rules keep the
			// lesser of each cluster's members, all counted in one pass.
			rules = append(rules, e.bin.profileOfIDs(o.ids, e.orders[r:], e.ruleNames[r:])...)
			break
		}
		res, err := g.Cluster(cluster.Config{Threshold: t, Policy: policy, Rule: rule, Lean: true})
		if err != nil {
			return single{}, nil, err
		}
		if r == 0 {
			ids := make([]int32, e.n)
			for d, a := range res.Assign {
				ids[d] = int32(d)
				if a >= 0 {
					ids[d] = int32(e.n + a)
				}
			}
			o.ids = ids
			o.merged = mergedSizes(e.keys, ids)
			o.removals, o.multi = res.Removed, len(res.Clusters)
			for _, c := range res.Clusters {
				o.largest = max(o.largest, len(c.Members))
			}
			if o.largest == 0 {
				o.largest = min(e.n, 1)
			}
		}
		if e.bin != nil {
			rules = append(rules, e.bin.profileOfClusters(e.ruleNames[r], res))
		}
	}
	return o, rules, nil
}
