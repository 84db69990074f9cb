package sweep

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
)

// passLevels scores a policy cluster.Levels follows (keeper-star, complete-link) at every
// threshold of ths from the highest down, as pass does for connected components: one
// cluster.Levels per keeper rule whose clusters depend on the rule (keeper-star's; one
// for complete link, whose clusters do not), each clustering again only the components
// that can change from one threshold to the next. Every figure is what one (Graph.Cluster
// at each threshold and rule) gives; what a component contributes to the counts is kept
// until it changes.
//
// step(j) readies threshold j's accepted pairs (those of the counted pairs it returns,
// and the accepted pairs per bin profileOf adds to the rules' profiles).
func (e *engine) passLevels(ctx context.Context, cs *shapeCands, sims similarities, ths []float64, pol cluster.Policy,
	step func(j int) []bool, profileOf func(rules []RuleProfile) *Profile) ([]Scores, error) {
	if err := pol.Validate(); err != nil {
		return nil, err
	}
	g, err := e.graphFor(cs, sims)
	if err != nil {
		return nil, err
	}
	rules := len(e.opt.Rules)
	if e.bin == nil {
		rules = 1 // without a model only the first rule's clustering is read
	}
	// A follower is one Levels and the rules whose removals it counts.
	var fs []*follower
	if info, _ := cluster.PolicyOf(pol); !info.KeeperDependent {
		f, err := e.newFollower(g, pol, 0, rules)
		if err != nil {
			return nil, err
		}
		fs = append(fs, f)
	} else {
		for r := range rules {
			f, err := e.newFollower(g, pol, r, r+1)
			if err != nil {
				return nil, err
			}
			fs = append(fs, f)
		}
	}
	first := fs[0] // its clusters are the labeled-pairs figures'
	first.docs = make([]int32, e.n)
	for d := range first.docs {
		first.docs[d] = -1
	}
	m := len(ths)
	scores := make([]Scores, m)
	merged := make([]int32, len(e.keys))
	for j := m - 1; j >= 0; j-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := lowerAll(fs, ths[j]); err != nil {
			return nil, err
		}
		var profs []RuleProfile
		if e.bin != nil {
			for _, f := range fs {
				profs = append(profs, f.profiles()...)
			}
		}
		for i, k := range e.keys {
			a, b := unpair(k)
			merged[i] = 0
			if c := first.docs[a]; c >= 0 && c == first.docs[b] {
				merged[i] = first.sizes[c]
			}
		}
		largest := first.largest()
		if largest == 0 {
			largest = min(e.n, 1)
		}
		acc := step(j)
		scores[j] = e.scores(acc, merged, first.removals, first.clusters, largest, profileOf(profs))
	}
	return scores, nil
}

// follower follows one Levels and keeps the counts of its clusters per component: the
// removal pairs by bin under rules [lo, hi) (keeper-star's own rule; every rule for
// complete link, each keeping the least member by its order), and for the first
// follower each document's cluster.
type follower struct {
	e      *engine
	l      *cluster.Levels
	lo, hi int
	comps  map[int32]*compCounts
	// Totals over the components.
	removals, clusters int
	pairs              [][]int64 // per rule lo..hi-1, per bin (identical last)
	// docs, when kept, is each document's cluster (an index into sizes) or -1.
	docs  []int32
	sizes []int32
	// bySize counts the components by their largest cluster; top is at least the
	// largest size with a count (largest lowers it to that).
	bySize []int32
	top    int
	// spare holds the counts of dropped components for add to reuse: a sweep adds
	// millions of components, each with a count per rule and bin.
	spare []*compCounts
}

// compCounts is what one component's clusters add to the totals.
type compCounts struct {
	removals, clusters, largest int
	pairs                       [][]int64 // per rule, per bin
	docs                        []int32   // its clustered documents, when docs are kept
}

func (e *engine) newFollower(g *cluster.Graph, pol cluster.Policy, lo, hi int) (*follower, error) {
	l, err := g.Levels(cluster.Config{Policy: pol, Rule: e.opt.Rules[lo], Order: e.orders[lo], Lean: true, ConcurrentSim: true})
	if err != nil {
		return nil, err
	}
	f := &follower{e: e, l: l, lo: lo, hi: hi, comps: map[int32]*compCounts{}}
	if e.bin != nil {
		f.pairs = make([][]int64, hi-lo)
		for r := range f.pairs {
			f.pairs[r] = make([]int64, e.bin.bins()+1)
		}
	}
	return f, nil
}

// lower moves the follower to threshold t and updates the totals with the components
// that changed.
func (f *follower) lower(t float64) error {
	lv, err := f.l.Lower(t)
	if err != nil {
		return err
	}
	for _, id := range lv.Gone {
		f.drop(id)
	}
	for _, c := range lv.Changed {
		f.drop(c.ID)
		f.add(c)
	}
	return nil
}

func (f *follower) drop(id int32) {
	cc := f.comps[id]
	if cc == nil {
		return
	}
	f.removals -= cc.removals
	f.clusters -= cc.clusters
	f.bySize[cc.largest]--
	for r, ps := range cc.pairs {
		for b, n := range ps {
			f.pairs[r][b] -= n
		}
	}
	for _, d := range cc.docs {
		f.docs[d] = -1
	}
	delete(f.comps, id)
	f.spare = append(f.spare, cc)
}

func (f *follower) add(c cluster.Component) {
	e := f.e
	var cc *compCounts
	if n := len(f.spare); n > 0 {
		cc, f.spare = f.spare[n-1], f.spare[:n-1]
		for _, ps := range cc.pairs {
			clear(ps)
		}
		cc.removals, cc.clusters, cc.largest, cc.docs = 0, 0, 0, cc.docs[:0]
	} else {
		cc = &compCounts{}
		if e.bin != nil {
			cc.pairs = make([][]int64, f.hi-f.lo)
			for r := range cc.pairs {
				cc.pairs[r] = make([]int64, e.bin.bins()+1)
			}
		}
	}
	for _, cl := range c.Clusters {
		cc.removals += len(cl.Members) - 1
		cc.clusters++
		cc.largest = max(cc.largest, len(cl.Members))
		if f.docs != nil {
			id := int32(len(f.sizes))
			f.sizes = append(f.sizes, int32(len(cl.Members)))
			for _, d := range cl.Members {
				f.docs[d] = id
			}
			cc.docs = append(cc.docs, cl.Members...)
		}
		if e.bin == nil {
			continue
		}
		for r := range cc.pairs {
			k := int32(cl.Keeper)
			if f.lo+r > 0 && f.hi-f.lo > 1 {
				// Complete link's other rules keep the least member by their order.
				o := e.orders[f.lo+r]
				k = cl.Members[0]
				for _, d := range cl.Members[1:] {
					if o.Less(int(d), int(k)) {
						k = d
					}
				}
			}
			ps := cc.pairs[r]
			for _, d := range cl.Members {
				if d != k {
					ps[e.bin.keptBin(len(e.orders), f.lo+r, d, k)]++
				}
			}
		}
	}
	f.removals += cc.removals
	f.clusters += cc.clusters
	for r, ps := range cc.pairs {
		for b, n := range ps {
			f.pairs[r][b] += n
		}
	}
	f.comps[c.ID] = cc
	if cc.largest >= len(f.bySize) {
		f.bySize = append(f.bySize, make([]int32, cc.largest+1-len(f.bySize))...)
	}
	f.bySize[cc.largest]++
	f.top = max(f.top, cc.largest)
}

// largest is the largest cluster over the components. It reads the count of components
// by largest cluster from the top down instead of every component: a sweep asks at
// every threshold, and a large sample has tens of thousands of components.
func (f *follower) largest() int {
	for f.top > 0 && f.bySize[f.top] == 0 {
		f.top--
	}
	return f.top
}

// lowerAll moves the followers to threshold t, each on its own goroutine: they share
// only the graph (whose Sim is safe for concurrent use) and the binner, and keeper-star's
// followers (one per rule) are the longest part of a sweep, which would otherwise leave a
// core idle while they run one after the other.
func lowerAll(fs []*follower, t float64) error {
	if len(fs) == 1 {
		return fs[0].lower(t)
	}
	errs := make([]error, len(fs))
	var wg sync.WaitGroup
	for i, f := range fs {
		wg.Go(func() { errs[i] = f.lower(t) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// profiles returns the totals as rule profiles.
func (f *follower) profiles() []RuleProfile {
	nb := f.e.bin.bins()
	largest := f.largest()
	out := make([]RuleProfile, len(f.pairs))
	for r, ps := range f.pairs {
		out[r] = RuleProfile{Rule: f.e.ruleNames[f.lo+r], Removals: f.removals, Clusters: f.clusters, Largest: largest,
			Pairs: slices.Clone(ps[:nb]), Identical: int(ps[nb])}
	}
	return out
}
