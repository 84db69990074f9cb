package sweep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/par"
	"github.com/dedupstudio/dedupstudio/internal/percent"
	"github.com/dedupstudio/dedupstudio/internal/words"
)

// Documents is the dataset a sweep runs over.
type Documents struct {
	Count int
	// ContentHash is each document's hash after normalization, for the exact-hash
	// baseline; nil leaves the baseline out.
	ContentHash []uint64
	// Text returns document i's text, for exact Jaccard. It is called from several
	// goroutines at once.
	Text func(i int) string
	// Keep is what keeper rules read of each document (length, date, source,
	// language); nil takes the length of the text and no date (import order).
	Keep []cluster.Doc
}

// GoneDocuments are documents that labeled pairs name and that are no longer in the
// live dataset (an export's manifest tombstoned them); their stored text is still at
// hand. Document i of them is index Documents.Count+i in LabeledPair.A and B.
type GoneDocuments struct {
	Count int
	// Text returns gone document i's text; it is asked only for the documents counted
	// pairs name, from one goroutine.
	Text func(i int) string
}

// SignatureFunc returns the signatures of every document under spec, in document
// order. The store's signature cache sits behind it; a sweep asks for each of
// Requests(grid.Specs) once and takes prefixes for the smaller k (CanPrefix).
type SignatureFunc func(ctx context.Context, spec lsh.Spec) ([]lsh.Signature, error)

// Input is everything a sweep reads.
type Input struct {
	Docs       Documents
	Signatures SignatureFunc
	Pairs      []LabeledPair
	// Gone are the documents no longer live that Pairs name: a label stays evidence about
	// its bin of similarity, so such pairs count for the model's bins (LabelSet.Gone);
	// the dataset the sweep counts is Docs alone.
	Gone       GoneDocuments
	Categories []labels.Category
	// Rep is the campaign's representation: the studio's draws bin pairs by exact
	// Jaccard under it, and so do the estimates over the dataset. Zero means
	// lsh.DefaultSpec.
	Rep lsh.Spec
	// Policies are cluster policies beyond the registered ones (cluster.Policies), by
	// name: a Clusterer the caller brings.
	Policies map[cluster.Policy]Clusterer
}

// DefaultMaxBucket bounds the pairs one band bucket contributes (see
// lsh.CandidatesBounded): a bucket of more documents than this contributes the pairs of
// its first DefaultMaxBucket, and the result counts what was left out. It is
// lsh.MaxBucket, the bound of every run.
const DefaultMaxBucket = lsh.MaxBucket

// Options tune a sweep; the zero value is usable.
type Options struct {
	// Replicates of the Monte Carlo behind the intervals (DefaultReplicates when 0) and
	// its seed.
	Replicates int
	Seed       uint64
	// Rules are the keeper rules scored (DefaultRules when empty); the first is the one
	// Removals and the labeled-pairs figures of keeper-star follow.
	Rules []cluster.Rule
	// FrameSetBudget bounds the shingle sets the dataset estimates hold (every
	// document's, once per class of equal sets; frame.DefaultSetBudget when 0).
	FrameSetBudget int64
	// MaxBucket bounds band buckets (DefaultMaxBucket when 0, no bound when negative).
	MaxBucket int
	// SetBudget bounds the bytes of shingle sets held at once (DefaultSetBudget when 0);
	// MemoPairs the exact similarities remembered per representation (DefaultMemoPairs).
	SetBudget int64
	MemoPairs int
	// CandidateShare bounds the share of all pairs one shape may propose
	// (DefaultCandidateShare when 0, no bound when negative); a shape may always propose
	// MinCandidateLimit. A shape over it is declined (Report.Declined).
	CandidateShare float64
	// Progress is called after each configuration with the number scored and the total
	// (declined configurations count as done);
	// OnResult with each result as it completes, in Report.Results order. Both are
	// called from the goroutine running the sweep.
	Progress func(done, total int)
	OnResult func(Result)
	// OnDeclined is called with each shape declined (Report.Declined), before Progress
	// counts its configurations, from the goroutine running the sweep.
	OnDeclined func(Declined)
}

func (o Options) withDefaults() Options {
	if o.Replicates <= 0 {
		o.Replicates = DefaultReplicates
	}
	if o.MaxBucket == 0 {
		o.MaxBucket = DefaultMaxBucket
	}
	if o.SetBudget <= 0 {
		o.SetBudget = DefaultSetBudget
	}
	if o.MemoPairs <= 0 {
		o.MemoPairs = DefaultMemoPairs
	}
	if len(o.Rules) == 0 {
		o.Rules = DefaultRules()
	}
	return o
}

// DefaultCandidateShare is the share of all pairs a shape may propose before a sweep
// declines it: one pair in a thousand. A shape that makes more of a sample's pairs
// candidates would compare every document of a 1M-document corpus with about a thousand
// others and of a 100M-document one with about 100,000: no engine at scale runs it, and
// scoring it costs a sweep more than all its other shapes (on real text, a flat shape
// over character 3-shingles makes 15% of all pairs candidates). MinCandidateLimit keeps
// a small sample, where a few clusters take a large share of the pairs, from declining
// shapes for them.
const (
	DefaultCandidateShare = 0.001
	MinCandidateLimit     = 250_000
)

// Declined is a shape a sweep did not score for one representation: it proposed more
// than Limit candidate pairs (Options.CandidateShare), Share of all pairs. Configs are
// its configurations left unscored.
type Declined struct {
	Spec    lsh.Spec
	Shape   lsh.Shape
	Limit   int
	Share   float64
	Configs int
}

// Reason says why d was declined: "proposes more than 250,000 candidate pairs, 11% of
// all pairs".
func (d Declined) Reason() string {
	return "proposes more than " + words.Thousands(d.Limit) + " candidate pairs, " + percent.Short(d.Share) + " of all pairs"
}

// allPairs is the number of pairs of n documents.
func allPairs(n int) float64 { return float64(n) * float64(n-1) / 2 }

// candidateLimit is the most pairs a shape may propose among n documents (0: any).
func (o Options) candidateLimit(n int) int {
	if o.CandidateShare < 0 {
		return 0
	}
	share := o.CandidateShare
	if share == 0 {
		share = DefaultCandidateShare
	}
	return max(MinCandidateLimit, int(share*allPairs(n)))
}

// Scores are the figures of one way of removing duplicates (a configuration, or the
// exact-hash baseline) against the counted pairs.
type Scores struct {
	// Recall: labeled duplicates accepted (candidate and similarity >= threshold).
	Recall Rate
	// ClusterRecall: labeled duplicates that end in one cluster, directly or through a
	// chain.
	ClusterRecall Rate
	// FalseMerges: labeled non-duplicates that end in one cluster, chains included;
	// these become false removals.
	FalseMerges Rate
	// Precision: accepted labeled pairs that are duplicates (the verifier's precision;
	// FalseMerges judges the clusters).
	Precision Rate
	// Categories has one entry per campaign category, in campaign order, then any other
	// category the labels use.
	Categories []CategoryScore
	// Removals are the documents removed over the whole dataset: the sum over clusters
	// of size-1. Clusters counts clusters of two or more documents.
	Removals, Clusters, LargestCluster int
	// Dataset holds the estimates over the whole dataset; nil without labels to build a
	// model from. Profile is what they were computed from (exact counts, no labels).
	Dataset *Estimate
	Profile *Profile `json:",omitempty"`
}

// CategoryScore is Recall and FalseMerges restricted to one category's counted pairs.
type CategoryScore struct {
	Category    string
	Recall      Rate // of its duplicates
	FalseMerges Rate // of its non-duplicates
}

// Result is one configuration's scores and costs.
type Result struct {
	Config Config
	Scores
	// CandidateRecall: labeled duplicates that collide in at least one band.
	CandidateRecall Rate
	// ExpectedCandidateRecall is the S-curve's prediction of CandidateRecall: the mean
	// of 1-(1-J^r)^b over the labeled duplicates' exact Jaccard J (0 without any).
	ExpectedCandidateRecall float64
	// Candidates are the shape's candidate pairs over the dataset; BucketSkipped the
	// (pair, band) collisions the bucket bound left out; Accepted the candidates whose
	// similarity reached the threshold (the edges clustered).
	Candidates       int
	CandidatesPerDoc float64
	BucketSkipped    int
	Accepted         int
	// Optimal is datasketch's optimal shape for the threshold and k; Observed the
	// optimum fitted to the counted pairs' exact similarities (nil without pairs).
	Optimal  lsh.ShapeChoice
	Observed *lsh.ShapeChoice
	// Index is the memory this shape would need at 1M, 100M and 1B documents.
	Index []IndexSize
	// CandidateTime is the time to generate the shape's candidates and their
	// similarities (shared by every configuration of the shape); ScoreTime the time to
	// cluster and score this configuration.
	CandidateTime, ScoreTime time.Duration
}

// Report is a sweep's outcome.
type Report struct {
	Labels LabelSet
	// Model is what the dataset estimates rest on; nil when there are none, and
	// ModelNote then says why.
	Model     *Model
	ModelNote string  `json:",omitempty"`
	Baseline  *Scores // exact-hash dedup alone; nil without content hashes
	Results   []Result
	// Declined are the shapes not scored for proposing too many pairs, in the order met.
	Declined []Declined `json:",omitempty"`
	// Configs is the number of configurations planned; len(Results) is smaller by the
	// declined shapes' configurations and when the sweep was cancelled.
	Configs int
}

// Run scores every configuration of g on in's labeled pairs. Results are emitted as they
// complete; when ctx ends, Run returns promptly with the results completed so far (each
// whole) and ctx.Err(). Signatures are asked for once per Requests(g.Specs);
// candidates are generated once per (signatures, shape) and every threshold,
// verification and policy is scored from them.
func Run(ctx context.Context, in Input, g Grid, opt Options) (*Report, error) {
	opt = opt.withDefaults()
	e, err := newEngine(in, opt)
	if err != nil {
		return nil, err
	}
	if err := g.Validate(e.policyNames()...); err != nil {
		return nil, err
	}
	plan, err := g.plan()
	if err != nil {
		return nil, err
	}
	total, _ := g.count()
	if err := e.buildModel(ctx); err != nil {
		if ctx.Err() != nil {
			return &Report{Labels: e.ls, Configs: total}, ctx.Err()
		}
		return nil, err
	}
	rep := &Report{Labels: e.ls, Model: e.model, ModelNote: e.modelNote, Configs: total}
	if in.Docs.ContentHash != nil {
		b := e.baseline()
		rep.Baseline = &b
	}
	ths := sortedThresholds(g.Thresholds)
	e.floor = ths[0]
	done := 0
	// emit reports a result; a cancel takes effect at the next (a pass's results are
	// reported one by one, and whoever receives them may take a while).
	emit := func(r Result) error {
		rep.Results = append(rep.Results, r)
		done++
		if opt.OnResult != nil {
			opt.OnResult(r)
		}
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
		return ctx.Err()
	}
	needExact := slices.Contains(g.Verifications, ExactJaccard)
	// The goroutine proposing the current representation's pairs ahead (proposeAhead).
	stopAhead := func() {}
	defer func() { stopAhead() }()
	needEstimate := slices.Contains(g.Verifications, MinHashEstimate)
	for _, grp := range plan {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		sigs, err := e.signatures(ctx, grp.long)
		if err != nil {
			return rep, err
		}
		if err := e.useRepresentation(ctx, grp.long); err != nil {
			return rep, err
		}
		optima := map[int][]lsh.ShapeChoice{} // observed optima by k
		for _, s := range grp.specs {
			optima[s.Hashes] = observedOptima(e.labJ, s.Hashes, lsh.EqualWeights, ths)
		}
		stopAhead()
		next := e.proposeAhead(ctx, sigs, grp.shapes)
		stopAhead = next.stop
		for _, ps := range grp.shapes {
			cs, err := e.candidatesOf(ctx, ps.shape, next.next(ctx), needExact)
			if de := (*DeclinedError)(nil); errors.As(err, &de) {
				per := len(ths) * len(g.Verifications) * len(g.Policies)
				for _, s := range ps.specs {
					d := Declined{Spec: s, Shape: ps.shape, Limit: de.Limit, Share: de.share(), Configs: per}
					rep.Declined = append(rep.Declined, d)
					if opt.OnDeclined != nil {
						opt.OnDeclined(d)
					}
					done += per
					if opt.Progress != nil {
						opt.Progress(done, total)
					}
				}
				continue
			}
			if err != nil {
				return rep, err
			}
			for _, s := range ps.specs {
				start := time.Now()
				var est similarities
				if needEstimate {
					if est, err = cs.estimates(ctx, sigs, s.Hashes); err != nil {
						return rep, err
					}
				}
				candTime := cs.time + time.Since(start)
				base := e.shapeResult(s, ps.shape, cs)
				for _, v := range g.Verifications {
					sims := est
					if v == ExactJaccard {
						sims = similarities{exact: cs.jac}
					}
					// The policies cluster the same candidates independently, all at once (the
					// cheap ones run while the first to need the cluster graph builds it, and
					// keeper-star's followers fill the cores), emitted in the grid's order.
					type passOut struct {
						scores   []Scores
						accepted []int
						per      time.Duration
						err      error
					}
					outs := make([]passOut, len(g.Policies))
					var wg sync.WaitGroup
					for i, pol := range g.Policies {
						wg.Go(func() {
							start := time.Now()
							o := &outs[i]
							o.scores, o.accepted, o.err = e.pass(ctx, cs, sims, ths, pol)
							o.per = time.Since(start) / time.Duration(len(ths))
						})
					}
					wg.Wait()
					// The graph the policies shared is not needed again: one at a time is held.
					cs.dropGraphs()
					for i, pol := range g.Policies {
						scores, accepted, per, err := outs[i].scores, outs[i].accepted, outs[i].per, outs[i].err
						if err != nil {
							return rep, err
						}
						for j, t := range ths {
							r := base
							r.Config = Config{Spec: s, Shape: ps.shape, Threshold: t, Verification: v, Policy: pol}
							r.Scores = scores[j]
							r.Accepted = accepted[j]
							r.Optimal, err = lsh.OptimalShape(t, s.Hashes, lsh.EqualWeights)
							if err != nil {
								return rep, err
							}
							if o := optima[s.Hashes]; o != nil {
								c := o[j]
								r.Observed = &c
							}
							r.CandidateTime, r.ScoreTime = candTime, per
							if err := emit(r); err != nil {
								return rep, err
							}
						}
					}
				}
			}
		}
	}
	return rep, nil
}

// engine holds what every configuration of a run shares: the counted pairs, the design
// and the current representation's exact similarities.
type engine struct {
	in       Input
	opt      Options
	n        int
	ls       LabelSet
	cats     []string // category keys in report order
	catOf    []int    // per counted pair
	keys     []uint64 // per counted pair
	dup      []bool   // per counted pair
	policies map[cluster.Policy]Clusterer

	// The dataset estimates: the model of the labels, the bins of any pair under its
	// representation (nil without a model) and the keeper rules compiled over the
	// documents. The frame (studio draws) sizes the model's bins and is not kept.
	model        *Model
	noModel      bool
	modelNote    string
	outsideModel []bool // per counted pair: left to the labeled-pairs basis
	bin          *binner
	keep         []cluster.Doc
	orders       []cluster.Order
	ruleNames    []string

	// floor is the lowest threshold any configuration compares: candidates' exact
	// similarities below it are not computed in full (the counted pairs' always are).
	floor  float64
	jacKey lsh.Spec
	jac    *exactJaccard
	labJ   []float64 // exact J of each counted pair under jacKey
	// exact holds the exact groups under the normalization exactKey (exactGroups).
	exact    [][]int
	exactKey lsh.Norm
	// spare are followers of ended passes, whose arrays later passes reuse.
	spare spareFollowers
}

func newEngine(in Input, opt Options) (*engine, error) {
	n := in.Docs.Count
	switch {
	case n < 0:
		return nil, &InputError{Field: "documents", Index: -1, Msg: fmt.Sprintf("count %d", n)}
	case n >= 1<<31:
		return nil, &InputError{Field: "documents", Index: -1, Msg: fmt.Sprintf("%d documents: at most 2^31-1", n)}
	case in.Docs.ContentHash != nil && len(in.Docs.ContentHash) != n:
		return nil, &InputError{Field: "content hashes", Index: -1, Msg: fmt.Sprintf("%d hashes for %d documents", len(in.Docs.ContentHash), n)}
	case in.Docs.Text == nil:
		return nil, &InputError{Field: "text", Index: -1, Msg: "no way to read document text (exact Jaccard needs it)"}
	case in.Signatures == nil:
		return nil, &InputError{Field: "signatures", Index: -1, Msg: "no signature provider"}
	case in.Gone.Count < 0 || in.Gone.Count > 0 && in.Gone.Text == nil:
		return nil, &InputError{Field: "gone documents", Index: -1, Msg: fmt.Sprintf("%d documents no longer live and no way to read their text", in.Gone.Count)}
	case int64(n)+int64(in.Gone.Count) >= 1<<31:
		return nil, &InputError{Field: "gone documents", Index: -1, Msg: fmt.Sprintf("%d live and %d gone documents: at most 2^31-1", n, in.Gone.Count)}
	}
	for name, c := range in.Policies {
		if _, ok := cluster.PolicyOf(name); ok {
			return nil, &InputError{Field: "policies", Index: -1, Msg: fmt.Sprintf("%q is a registered policy's name", name)}
		}
		if c == nil {
			return nil, &InputError{Field: "policies", Index: -1, Msg: fmt.Sprintf("policy %q has no clusterer", name)}
		}
	}
	ls, err := ResolveOver(in.Pairs, in.Categories, n, in.Gone.Count)
	if err != nil {
		return nil, err
	}
	// The pairs are read only here: a prepared State is kept for the live panel (sweeprun
	// keeps four), and at a million labeled pairs they are 112 MB beside e.ls.
	in.Pairs = nil
	e := &engine{in: in, opt: opt, n: n, ls: ls, policies: in.Policies}
	catIndex := map[string]int{}
	for _, c := range in.Categories {
		catIndex[c.Key] = len(e.cats)
		e.cats = append(e.cats, c.Key)
	}
	var extra []string
	for _, p := range ls.Pairs {
		if _, ok := catIndex[p.Category]; !ok && !slices.Contains(extra, p.Category) {
			extra = append(extra, p.Category)
		}
	}
	slices.Sort(extra)
	for _, c := range extra {
		catIndex[c] = len(e.cats)
		e.cats = append(e.cats, c)
	}
	for _, p := range ls.Pairs {
		e.catOf = append(e.catOf, catIndex[p.Category])
		e.keys = append(e.keys, pairKey(int32(p.A), int32(p.B)))
		e.dup = append(e.dup, p.Duplicate)
	}
	e.outsideModel = make([]bool, len(ls.Pairs))
	e.keep = in.Docs.Keep
	if e.keep == nil {
		e.keep = make([]cluster.Doc, n)
		for i := range n {
			e.keep[i].Len = len(in.Docs.Text(i))
		}
	} else if len(e.keep) != n {
		return nil, &InputError{Field: "keep", Index: -1, Msg: fmt.Sprintf("%d keeper facts for %d documents", len(e.keep), n)}
	}
	for i, r := range opt.Rules {
		if err := r.Validate(); err != nil {
			return nil, &InputError{Field: "rules", Index: i, Msg: err.Error()}
		}
		e.orders = append(e.orders, r.RankedOrder(e.keep))
		e.ruleNames = append(e.ruleNames, r.String())
	}
	return e, nil
}

func (e *engine) policyNames() []cluster.Policy {
	var out []cluster.Policy
	for name := range e.policies {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

func (e *engine) signatures(ctx context.Context, spec lsh.Spec) ([]lsh.Signature, error) {
	sigs, err := e.in.Signatures(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("signatures %s: %w", spec.ID(), err)
	}
	if len(sigs) != e.n {
		return nil, &InputError{Field: "signatures", Index: -1, Msg: fmt.Sprintf("%d signatures for %d documents (%s)", len(sigs), e.n, spec)}
	}
	for i, s := range sigs {
		if len(s) != spec.Hashes {
			return nil, &InputError{Field: "signatures", Index: i, Msg: fmt.Sprintf("%d values; %s has k=%d", len(s), spec.ID(), spec.Hashes)}
		}
	}
	return sigs, nil
}

// useRepresentation makes spec's shingle key the current one: a fresh exact-Jaccard
// engine (the previous one's sets are released) and the counted pairs' similarities.
func (e *engine) useRepresentation(ctx context.Context, spec lsh.Spec) error {
	key := shingleKey(spec)
	if e.jac != nil && e.jacKey == key {
		return nil
	}
	e.jac = nil
	x, err := newExactJaccard(key, e.n, e.in.Docs.Text, e.opt.SetBudget, e.opt.MemoPairs)
	if err != nil {
		return err
	}
	e.jac, e.jacKey = x, key
	// The counted pairs' similarities, through the same engine (their documents' sets
	// are then resident for the candidates too).
	uniq := slices.Clone(e.keys)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	sims, err := x.of(ctx, uniq)
	if err != nil {
		return err
	}
	x.floor = e.floor
	e.labJ = make([]float64, len(e.keys))
	for i, k := range e.keys {
		j, _ := slices.BinarySearch(uniq, k)
		e.labJ[i] = sims[j]
	}
	return nil
}

// shapeCands are one shape's candidate pairs with their similarities.
type shapeCands struct {
	shape   lsh.Shape
	keys    []uint64  // sorted pair keys
	jac     []float64 // exact Jaccard per candidate; nil when no configuration verifies with it
	skipped int
	labCand []int32 // per counted pair: its index in keys, or -1
	time    time.Duration
	// bins holds each candidate's model bin (engine.modelBins), graphs the cluster
	// graphs of the policies internal/cluster runs, by similarities (similarities.key).
	mu     sync.Mutex // guards bins and graphs: the policies of a shape run at once
	bins   []uint8
	graphs map[string]*cluster.Graph
}

func (e *engine) candidates(ctx context.Context, sigs []lsh.Signature, sh lsh.Shape, exact bool) (*shapeCands, error) {
	return e.candidatesOf(ctx, sh, e.propose(ctx, sigs, sh), exact)
}

// proposed are the pairs lsh proposes for one shape, and how long that took.
type proposed struct {
	keys    []uint64
	skipped int
	took    time.Duration
	err     error
}

func (e *engine) propose(ctx context.Context, sigs []lsh.Signature, sh lsh.Shape) proposed {
	start := time.Now()
	keys, skipped, err := lsh.CandidateKeysUpTo(ctx, sigs, sh, e.opt.MaxBucket, e.opt.candidateLimit(e.n))
	return proposed{keys: keys, skipped: skipped, took: time.Since(start), err: err}
}

// candidatesOf makes sh's candidates of what lsh proposed: their exact similarities when
// exact (a configuration verifies with them) and where the counted pairs are among them.
func (e *engine) candidatesOf(ctx context.Context, sh lsh.Shape, p proposed, exact bool) (*shapeCands, error) {
	start := time.Now()
	if errors.Is(p.err, lsh.ErrTooManyPairs) {
		return nil, &DeclinedError{Shape: sh, Docs: e.n, Limit: e.opt.candidateLimit(e.n)}
	}
	if p.err != nil {
		return nil, p.err
	}
	cs := &shapeCands{shape: sh, skipped: p.skipped, keys: p.keys}
	var err error
	if exact {
		if cs.jac, err = e.jac.of(ctx, cs.keys); err != nil {
			return nil, err
		}
	}
	cs.labCand = make([]int32, len(e.keys))
	for i, k := range e.keys {
		cs.labCand[i] = -1
		if j, ok := slices.BinarySearch(cs.keys, k); ok {
			cs.labCand[i] = int32(j)
		}
	}
	cs.time = p.took + time.Since(start)
	return cs, nil
}

// ahead proposes the pairs of a list of shapes on its own goroutine, one shape ahead of
// the sweep: lsh's work for the next shape fills the core the clustering of this one
// leaves idle (its last keeper rule or threshold runs alone). At most one shape's pairs
// wait to be taken.
type ahead struct {
	out    chan proposed
	cancel context.CancelFunc
	done   chan struct{}
}

func (e *engine) proposeAhead(ctx context.Context, sigs []lsh.Signature, shapes []planShape) *ahead {
	ctx, cancel := context.WithCancel(ctx)
	a := &ahead{out: make(chan proposed), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		w := newWidest(shapes)
		for _, ps := range shapes {
			p := w.propose(ctx, e, sigs, ps.shape)
			select {
			case a.out <- p:
			case <-ctx.Done():
				return
			}
		}
	}()
	return a
}

// widest proposes the pairs of shapes that share their rows from the widest of them
// (lsh.BandedKeys): a pair is proposed by a shape's first bands exactly when its first
// band is one of them, so 32x4, 61x4 and 64x4 are banded once, not three times (a
// third of the default grid's bands). The widest shape's keys are made at the first
// of its rows' shapes and dropped after the last: in the default grid, from a k=128
// shape to the k=256 shapes, so the widest keys of each shared rows (10 bytes a pair)
// are held across the shapes between.
type widest struct {
	wide map[int]lsh.Shape // by rows, when two shapes or more have them
	left map[int]int       // shapes of those rows still to propose
	keys map[int]bandedKeys
}

type bandedKeys struct {
	bk  *lsh.BandedKeys
	err error
}

func newWidest(shapes []planShape) *widest {
	w := &widest{wide: map[int]lsh.Shape{}, left: map[int]int{}, keys: map[int]bandedKeys{}}
	for _, ps := range shapes {
		r := ps.shape.Rows
		w.left[r]++
		if ps.shape.Bands > w.wide[r].Bands {
			w.wide[r] = ps.shape
		}
	}
	for r, n := range w.left {
		if n < 2 {
			delete(w.wide, r)
			delete(w.left, r)
		}
	}
	return w
}

func (w *widest) propose(ctx context.Context, e *engine, sigs []lsh.Signature, sh lsh.Shape) proposed {
	wide, ok := w.wide[sh.Rows]
	if !ok {
		return e.propose(ctx, sigs, sh)
	}
	w.left[sh.Rows]--
	defer func() {
		if w.left[sh.Rows] == 0 {
			delete(w.keys, sh.Rows) // its last shape: the keys go
		}
	}()
	limit := e.opt.candidateLimit(e.n)
	start := time.Now()
	bk, made := w.keys[sh.Rows]
	if !made {
		bk.bk, bk.err = lsh.CandidateBands(ctx, sigs, wide, e.opt.MaxBucket, limit)
		if ctx.Err() != nil {
			return proposed{err: ctx.Err()}
		}
		w.keys[sh.Rows] = bk
	}
	switch {
	case errors.Is(bk.err, lsh.ErrTooManyPairs) && sh != wide:
		// The widest shape proposes too many pairs; this one may not.
		return e.propose(ctx, sigs, sh)
	case bk.err != nil:
		return proposed{err: bk.err, took: time.Since(start)}
	}
	keys, skipped, err := bk.bk.Within(sh.Bands, limit)
	if err == nil && sh.Bands == wide.Bands && w.left[sh.Rows] > 0 {
		// Within returned the widest shape's keys themselves, which the shapes after
		// this one still read.
		keys = slices.Clone(keys)
	}
	// The first shape of its rows pays for banding the widest shape (start was before
	// it); the others for taking their pairs out.
	return proposed{keys: keys, skipped: skipped, took: time.Since(start), err: err}
}

// next returns the next shape's pairs.
func (a *ahead) next(ctx context.Context) proposed {
	select {
	case p := <-a.out:
		return p
	case <-ctx.Done():
		return proposed{err: ctx.Err()}
	}
}

// stop ends the goroutine, whether or not every shape was taken.
func (a *ahead) stop() {
	a.cancel()
	<-a.done
}

// estimates returns the MinHash estimates of every candidate from the first k values of
// the signatures, as agreement counts.
func (cs *shapeCands) estimates(ctx context.Context, sigs []lsh.Signature, k int) (similarities, error) {
	agree := make([]uint16, len(cs.keys))
	err := par.Chunks(ctx, len(cs.keys), 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			a, b := unpair(cs.keys[i])
			agree[i] = uint16(lsh.Agreement(sigs[a][:k], sigs[b][:k]))
		}
	})
	return similarities{agree: agree, k: float64(k), sigs: sigs}, err
}

// similarities are one verification's similarities of a shape's candidates: exact
// Jaccard values, or MinHash agreement counts out of k, 2 bytes a pair instead of 8
// (count/k in float64 is exactly what lsh.Estimate returns).
type similarities struct {
	exact []float64
	agree []uint16
	k     float64
	sigs  []lsh.Signature // the estimates' signatures, for pairs that are not candidates
}

// key names the similarities: the verification, and for estimates the k they are out
// of (a shape's candidates are verified with the estimates of every k that shares it,
// each a different graph to cluster).
func (s similarities) key() string {
	if s.exact != nil {
		return string(ExactJaccard)
	}
	return fmt.Sprintf("%s/k=%v", MinHashEstimate, s.k)
}

func (s similarities) len() int {
	if s.exact != nil {
		return len(s.exact)
	}
	return len(s.agree)
}

func (s similarities) at(i int) float64 {
	if s.exact != nil {
		return s.exact[i]
	}
	return float64(s.agree[i]) / s.k
}

// shapeResult fills what every configuration of (spec, shape) shares.
func (e *engine) shapeResult(s lsh.Spec, sh lsh.Shape, cs *shapeCands) Result {
	r := Result{
		Candidates:    len(cs.keys),
		BucketSkipped: cs.skipped,
		Index:         IndexSizes(sh, s.Hashes),
	}
	if e.n > 0 {
		r.CandidatesPerDoc = float64(len(cs.keys)) / float64(e.n)
	}
	hits, dups := 0, 0
	var expected float64
	for i, d := range e.dup {
		if !d {
			continue
		}
		dups++
		if cs.labCand[i] >= 0 {
			hits++
		}
		expected += lsh.Probability(e.labJ[i], sh)
	}
	r.CandidateRecall = NewRate(hits, dups)
	if dups > 0 {
		r.ExpectedCandidateRecall = expected / float64(dups)
	}
	return r
}

// exactGroups returns the documents whose texts are equal after the current
// representation's normalization (cluster.ExactGroups), computed once per normalization
// (the groups depend on nothing else, and a grid's representations mostly share one):
// the cluster graphs treat each group as one node, as a manifest's run does.
func (e *engine) exactGroups() [][]int {
	if e.exact != nil && e.exactKey == e.jacKey.Norm {
		return e.exact
	}
	texts := make([]string, e.n)
	for i := range texts {
		texts[i] = e.in.Docs.Text(i)
	}
	e.exact, e.exactKey = cluster.ExactGroups(texts, e.jacKey.Norm), e.jacKey.Norm
	if e.exact == nil {
		e.exact = [][]int{} // none: remembered too
	}
	return e.exact
}

// simFunc returns the similarity of any two documents under a verification: the
// MinHash estimate of their signatures, or their exact Jaccard under the current
// representation. Keeper-star and complete-link ask it for pairs no candidate covers.
func (e *engine) simFunc(sims similarities) func(a, b int) float64 {
	if sims.exact == nil {
		sigs, k := sims.sigs, int(sims.k)
		return func(a, b int) float64 { return lsh.Estimate(sigs[a][:k], sigs[b][:k]) }
	}
	// Keeper-star and complete-link ask for the same pairs at every threshold, rule and
	// shape: remembered once per representation (exactJaccard.sims).
	x := e.jac
	return func(a, b int) float64 {
		key := pairKey(int32(min(a, b)), int32(max(a, b)))
		if v, ok := x.sims.get(key); ok {
			return v
		}
		v := x.pair(a, b)
		x.sims.put(key, v)
		return v
	}
}
