package sweeprun

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// Analysis is what a sweep's results say together, under one target and keeper rule:
// every result's headline figures, the Pareto front, the recommendation and, when no
// configuration meets the target, the labeling plan for the closest. One call computes
// it; pages and the command line read it instead of assembling it again.
type Analysis struct {
	Sweep   Sweep
	Results []Result
	// Scored is each result's sweep.Result, in the order of Results: what sweep's
	// functions and the charts take.
	Scored []sweep.Result
	// Rules are the keeper rules the results were scored under, the first the
	// default; Rule the one the figures are under.
	Rules []string
	Rule  string
	// Target is what the recommendation aims for.
	Target    sweep.Target
	Headlines []sweep.Headline // per result
	Front     []bool           // per result
	// Meets says per result whether it meets Target (sweep.Target.Meets) and removes
	// something: the configurations the recommendation chooses among.
	Meets []bool
	// Rec is the recommendation (RecErr when there is nothing to recommend); Plan the
	// labeling plan for its configuration when it does not meet the target (nil
	// otherwise, or without a model).
	Rec    sweep.Recommendation
	RecErr error
	// RecTies are the other cluster policies under which Rec's configuration has the
	// same headline figures (recall and false-removal rate, intervals included): the
	// recommendation ties across them.
	RecTies []cluster.Policy
	Plan    *sweep.LabelPlan
	// Guard is the advice for recall's guard bin when its labels leave recall's lower
	// end more than sweep.DefaultGuardShare lower than they need to (nil otherwise).
	Guard *sweep.GuardAdvice
	// Model is what the dataset estimates rest on (nil without one).
	Model *sweep.Model
}

// Recommended is the index of the recommended configuration when it meets the target,
// else -1: a closest configuration is never marked recommended.
func (a *Analysis) Recommended() int {
	if a.RecErr != nil || !a.Rec.Met {
		return -1
	}
	return a.Rec.Index
}

// analysisKey names an analysis: the sweep's results as they stand and the question.
type analysisKey struct {
	id     int64
	done   int
	state  State
	target sweep.Target
}

type analysisEntry struct {
	once sync.Once
	a    *Analysis
	err  error
	// callers counts the Analyze calls that asked for it (guarded by the cache's mu).
	callers int
}

// analysesKept bounds the analyses remembered (a few sweeps, a few targets and rules).
const analysesKept = 8

type analysisCache struct {
	mu    sync.Mutex
	order []analysisKey
	byKey map[analysisKey]*analysisEntry
	// computed counts the analyses computed; computing, when set (tests), is called
	// as one starts.
	computed  atomic.Int64
	computing func()
}

// Analyze returns the analysis of sweep id under target (its Rule "" for the first rule
// scored). It is computed once per sweep state, result count and target, and concurrent
// callers wait for the one computing it; callers must not modify it.
func (s *Service) Analyze(ctx context.Context, id int64, target sweep.Target) (*Analysis, error) {
	sw, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	key := analysisKey{id: id, done: sw.Done, state: sw.State, target: target}
	c := &s.analyses
	c.mu.Lock()
	if c.byKey == nil {
		c.byKey = map[analysisKey]*analysisEntry{}
	}
	e, ok := c.byKey[key]
	if !ok {
		e = &analysisEntry{}
		c.byKey[key] = e
		c.order = append(c.order, key)
		for len(c.order) > analysesKept {
			delete(c.byKey, c.order[0])
			c.order = c.order[1:]
		}
	}
	e.callers++
	c.mu.Unlock()
	// Computed for everyone waiting: a caller that goes away does not cancel it.
	e.once.Do(func() { e.a, e.err = s.analyze(context.WithoutCancel(ctx), sw, target) })
	if e.err != nil {
		c.mu.Lock()
		if c.byKey[key] == e {
			delete(c.byKey, key)
		}
		c.mu.Unlock()
	}
	return e.a, e.err
}

func (s *Service) analyze(ctx context.Context, sw Sweep, target sweep.Target) (*Analysis, error) {
	s.analyses.computed.Add(1)
	if s.analyses.computing != nil {
		s.analyses.computing()
	}
	results, err := s.Results(ctx, sw.ID)
	if err != nil {
		return nil, err
	}
	a := &Analysis{Sweep: sw, Results: results, Target: target}
	rs := make([]sweep.Result, len(results))
	a.Scored = rs
	for i, r := range results {
		rs[i] = r.Result
		if r.Dataset != nil && a.Rules == nil {
			for _, re := range r.Dataset.Rules {
				a.Rules = append(a.Rules, re.Rule)
			}
		}
	}
	if !slices.Contains(a.Rules, target.Rule) {
		a.Target.Rule = ""
		if len(a.Rules) > 0 {
			a.Target.Rule = a.Rules[0]
		}
	}
	a.Rule = a.Target.Rule
	a.Headlines = sweep.HeadlinesFor(rs, a.Rule)
	a.Front = sweep.Front(a.Headlines)
	a.Meets = make([]bool, len(rs))
	for i, h := range a.Headlines {
		a.Meets[i] = a.Target.Meets(h) && rs[i].Removals > 0
	}
	var baseline *sweep.Scores
	if sw.Summary != nil {
		baseline = sw.Summary.Baseline
		if m := sw.Summary.Model; m != nil {
			a.Model = m.Restore(Seed)
		}
	}
	if a.Model != nil {
		a.Guard = a.Model.GuardAdvice(sweep.DefaultGuardShare)
	}
	a.Rec, a.RecErr = sweep.Recommend(rs, baseline, a.Target)
	if a.RecErr == nil {
		i := a.Rec.Index
		for j, r := range rs {
			other := r.Config
			other.Policy = rs[i].Config.Policy
			if j != i && other == rs[i].Config && a.Headlines[j] == a.Headlines[i] {
				a.RecTies = append(a.RecTies, r.Config.Policy)
			}
		}
	}
	if a.RecErr == nil && !a.Rec.Met && a.Model != nil {
		if p := rs[a.Rec.Index].Profile; p != nil {
			plan := a.Model.Plan(*p, a.Rule, a.Target.MaxFalseRemovalRate)
			a.Plan = &plan
		}
	}
	return a, nil
}
