package calib

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/frame"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// Verification says which similarity of a candidate is compared with the threshold:
// the MinHash estimate of the signatures or the exact Jaccard similarity under the
// configuration's own representation. The values are the sweep's.
type Verification string

// Verifications.
const (
	Estimate Verification = "estimate"
	Exact    Verification = "exact"
)

// Config is a configuration whose truth the engine computes: a representation with its
// k, a banding shape, a threshold and a verification. Cluster policies and keeper
// rules are evaluated together (Outcome.Clusterings).
type Config struct {
	Spec         lsh.Spec
	Shape        lsh.Shape
	Threshold    float64
	Verification Verification
}

// String names the configuration briefly, e.g. "word5 k128 25x5 >=0.50 exact".
func (c Config) String() string {
	return fmt.Sprintf("%s%d k%d %s >=%.2f %s", c.Spec.Level, c.Spec.Size, c.Spec.Hashes, c.Shape, c.Threshold, c.Verification)
}

// Rules are the keeper rules the truth is computed under: earliest (with no dates,
// import order), longest and shortest text in bytes, as the manifest offers them.
var Rules = []cluster.Criterion{cluster.Earliest, cluster.Longest, cluster.Shortest}

// Removal is a removed document and the document kept in its place, with their shared
// and total shingles under the population's representation and whether their
// normalized texts are identical.
type Removal struct {
	Doc, Keeper  int32
	Inter, Union int32
	Identical    bool
}

// Clustering is what one cluster policy and keeper rule remove under a configuration.
type Clustering struct {
	Policy cluster.Policy
	Rule   cluster.Criterion
	// Removals lists every (removed, keeper) pair, by removed document.
	Removals []Removal
	// Bins counts the removal pairs per frame.J21 bin of their Jaccard under the
	// population's representation; pairs of identical normalized texts are counted in
	// Identical instead.
	Bins      []int64
	Identical int64
	// Limited counts the components where the policy ran out of its check budget
	// (cluster.Result.Limited).
	Limited int
}

// FalseRemovals counts the removals whose document is not a duplicate of its keeper
// under rule.
func (c *Clustering) FalseRemovals(rule LabelRule) int {
	n := 0
	for _, r := range c.Removals {
		if !rule.Duplicate(r.Doc, r.Keeper, int(r.Inter), int(r.Union), r.Identical) {
			n++
		}
	}
	return n
}

// FalseRate is FalseRemovals per removal (0 without removals).
func (c *Clustering) FalseRate(rule LabelRule) float64 {
	if len(c.Removals) == 0 {
		return 0
	}
	return float64(c.FalseRemovals(rule)) / float64(len(c.Removals))
}

// Outcome is the exact truth of one configuration on a population.
type Outcome struct {
	Config Config
	// Candidates are the pairs colliding in a band (lsh.CandidatesBounded with
	// lsh.MaxBucket), BucketSkipped the collisions the bound left out; Accepted the
	// candidates whose similarity reaches the threshold.
	Candidates, BucketSkipped, Accepted int
	// Bins counts the accepted pairs per frame.J21 bin of their Jaccard under the
	// population's representation; identical normalized texts in Identical instead.
	Bins      []int64
	Identical int64
	// Clusterings has one entry per policy and keeper rule evaluated, policies outer.
	Clusterings []Clustering

	accepted []Pair // with their shingles under the population's representation
}

// AcceptedDuplicates counts the accepted pairs that are duplicates under rule.
func (o *Outcome) AcceptedDuplicates(rule LabelRule) int64 { return duplicates(o.accepted, rule) }

// Recall is the share of the population's duplicate pairs under rule that the configuration
// accepts (pair level, over all pairs: the truth the sweep's recall estimates).
func (o *Outcome) Recall(p *Population, rule LabelRule) float64 {
	d := p.Duplicates(rule)
	if d == 0 {
		return 0
	}
	return float64(o.AcceptedDuplicates(rule)) / float64(d)
}

// Clustering returns the clustering of policy and rule, nil when it was not evaluated.
func (o *Outcome) Clustering(policy cluster.Policy, rule cluster.Criterion) *Clustering {
	for i := range o.Clusterings {
		if c := &o.Clusterings[i]; c.Policy == policy && c.Rule == rule {
			return c
		}
	}
	return nil
}

// Engine computes the truth of configurations on a population. It is written apart
// from internal/sweep, on purpose: it makes candidates with lsh.CandidatesBounded,
// verifies them one by one and clusters with internal/cluster exactly as a studio run
// (internal/manifests) does, so its counts check the sweep's. Signatures, shingle sets and
// exact groups are computed once per representation and kept. It is safe for
// concurrent use.
type Engine struct {
	pop   *Population
	texts []string
	docs  []cluster.Doc

	mu    sync.Mutex
	sigs  map[lsh.Spec]func() ([]lsh.Signature, error)
	sets  map[lsh.Spec]func() (*frame.Sets, error)
	exact map[lsh.Norm][][]int
}

// once returns m[k]'s value, computed by f the first time k is asked for (callers
// asking meanwhile wait for it) and kept; mu guards m.
func once[K comparable, V any](mu *sync.Mutex, m map[K]func() (V, error), k K, f func() (V, error)) (V, error) {
	mu.Lock()
	get, ok := m[k]
	if !ok {
		get = sync.OnceValues(f)
		m[k] = get
	}
	mu.Unlock()
	return get()
}

// NewEngine returns an engine over p.
func NewEngine(p *Population) *Engine {
	e := &Engine{pop: p, texts: p.Texts(), sigs: map[lsh.Spec]func() ([]lsh.Signature, error){},
		sets: map[lsh.Spec]func() (*frame.Sets, error){}, exact: map[lsh.Norm][][]int{}}
	e.docs = make([]cluster.Doc, len(p.Docs))
	for i, d := range p.Docs {
		e.docs[i] = cluster.Doc{Len: len(d.Text), Source: d.Source, Lang: d.Lang}
	}
	return e
}

// Population returns the engine's population.
func (e *Engine) Population() *Population { return e.pop }

// Signatures returns the documents' signatures under spec, computed once.
func (e *Engine) Signatures(spec lsh.Spec) ([]lsh.Signature, error) {
	return once(&e.mu, e.sigs, spec, func() ([]lsh.Signature, error) { return spec.Signatures(e.texts) })
}

// shingleKey is what a representation's shingle sets depend on: everything but k.
func shingleKey(s lsh.Spec) lsh.Spec {
	s.Hashes = 0
	return s
}

// setsOf returns the shingle sets under spec's representation: the population's own
// when they are the same.
func (e *Engine) setsOf(ctx context.Context, spec lsh.Spec) (*frame.Sets, error) {
	key := shingleKey(spec)
	if key == shingleKey(e.pop.Rep) {
		return e.pop.Sets, nil
	}
	return once(&e.mu, e.sets, key, func() (*frame.Sets, error) {
		return frame.NewSets(ctx, len(e.texts), func(i int) string { return e.texts[i] }, spec, 0)
	})
}

// exactGroups returns the groups of identical normalized texts under n, as a run makes
// them (cluster.ExactGroups).
func (e *Engine) exactGroups(n lsh.Norm) [][]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	g, ok := e.exact[n]
	if !ok {
		g = cluster.ExactGroups(e.texts, n)
		e.exact[n] = g
	}
	return g
}

// Evaluate computes the truth of c under every policy and rule given.
func (e *Engine) Evaluate(ctx context.Context, c Config, policies []cluster.Policy, rules []cluster.Criterion) (Outcome, error) {
	sigs, err := e.Signatures(c.Spec)
	if err != nil {
		return Outcome{}, fmt.Errorf("truth of %s: %w", c, err)
	}
	cands, skipped, err := lsh.CandidatesBounded(sigs, c.Shape, lsh.MaxBucket)
	if err != nil {
		return Outcome{}, fmt.Errorf("truth of %s: %w", c, err)
	}
	var sim func(a, b int) float64
	switch c.Verification {
	case Estimate:
		sim = func(a, b int) float64 { return lsh.Estimate(sigs[a], sigs[b]) }
	case Exact:
		sets, err := e.setsOf(ctx, c.Spec)
		if err != nil {
			return Outcome{}, fmt.Errorf("truth of %s: %w", c, err)
		}
		sim = sets.Jaccard
	default:
		return Outcome{}, fmt.Errorf("truth of %s: unknown verification %q", c, c.Verification)
	}
	edges := make([]cluster.Edge, len(cands))
	for i, cd := range cands {
		edges[i] = cluster.Edge{A: cd.A, B: cd.B, Sim: sim(cd.A, cd.B)}
	}
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	o, err := outcomeOf(truthInput{docs: e.docs, exact: e.exactGroups(c.Spec.Norm), edges: edges, sim: sim,
		counts: e.pop.Counts, threshold: c.Threshold}, policies, rules)
	if err != nil {
		return Outcome{}, fmt.Errorf("truth of %s: %w", c, err)
	}
	o.Config, o.Candidates, o.BucketSkipped = c, len(cands), skipped
	return o, nil
}

// EvaluateAll evaluates every configuration on all cores, in order.
func (e *Engine) EvaluateAll(ctx context.Context, cs []Config, policies []cluster.Policy, rules []cluster.Criterion) ([]Outcome, error) {
	out := make([]Outcome, len(cs))
	errs := make([]error, len(cs))
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				out[i], errs[i] = e.Evaluate(ctx, cs[i], policies, rules)
			}
		})
	}
	for i := range cs {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// truthInput is what the truth of one configuration is computed from, apart from how
// its candidates were found: the documents as the keeper rules see them, the exact
// groups, every candidate with its similarity under the verification, the verification
// for any other pair, the population's counts of any pair, and the threshold.
type truthInput struct {
	docs      []cluster.Doc
	exact     [][]int
	edges     []cluster.Edge
	sim       func(a, b int) float64
	counts    func(a, b int) (inter, union int, identical bool)
	threshold float64
}

// outcomeOf accepts the candidates that reach the threshold, bins them, and clusters
// under every policy and rule with internal/cluster, as a run does.
func outcomeOf(in truthInput, policies []cluster.Policy, rules []cluster.Criterion) (Outcome, error) {
	bins := frame.J21.Bins()
	o := Outcome{Bins: make([]int64, bins)}
	for _, ed := range in.edges {
		if ed.Sim < in.threshold {
			continue
		}
		o.Accepted++
		inter, union, same := in.counts(ed.A, ed.B)
		o.accepted = append(o.accepted, Pair{int32(ed.A), int32(ed.B), int32(inter), int32(union), same})
		if same {
			o.Identical++
		} else {
			o.Bins[frame.J21.Bin(inter, union)]++
		}
	}
	g, err := cluster.NewGraph(cluster.Input{Docs: in.docs, Exact: in.exact, Edges: in.edges, Sim: in.sim})
	if err != nil {
		return Outcome{}, err
	}
	for _, pol := range policies {
		for _, rule := range rules {
			res, err := g.Cluster(cluster.Config{Threshold: in.threshold, Policy: pol, Rule: cluster.Rule{By: []cluster.Criterion{rule}}})
			if err != nil {
				return Outcome{}, err
			}
			cl := Clustering{Policy: pol, Rule: rule, Bins: make([]int64, bins), Limited: res.Limited}
			for _, c := range res.Clusters {
				for _, r := range c.Removed {
					inter, union, same := in.counts(r.Doc, c.Keeper)
					cl.Removals = append(cl.Removals, Removal{Doc: int32(r.Doc), Keeper: int32(c.Keeper), Inter: int32(inter),
						Union: int32(union), Identical: same})
					if same {
						cl.Identical++
					} else {
						cl.Bins[frame.J21.Bin(inter, union)]++
					}
				}
			}
			slices.SortFunc(cl.Removals, func(a, b Removal) int { return int(a.Doc - b.Doc) })
			o.Clusterings = append(o.Clusterings, cl)
		}
	}
	return o, nil
}
