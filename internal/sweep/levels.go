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
	defer e.spare.put(fs)
	first := fs[0] // its clusters are the labeled-pairs figures'
	first.docs = grown(first.spareDocs, e.n)
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
		scores[j] = e.scores(acc, merged, first.removalsAll, first.clustersAll, largest, profileOf(profs))
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
	// Per component (by its ID, a graph node): its slot in the counts below, -1 for
	// none. A sweep adds millions of components; slots of dropped ones are reused
	// (free), instead of a map of counts allocated one by one.
	slot []int32
	free []int32
	// Per slot: what the component's clusters add to the totals, its pairs per rule
	// and bin (nb a rule: the bins, identical last) and its clustered documents when
	// docs are kept.
	removals, clusters, largestOf []int32
	pairsOf                       []int32
	docsOf                        [][]int32
	nb                            int
	// Totals over the components.
	removalsAll, clustersAll int
	pairs                    [][]int64 // per rule lo..hi-1, per bin (identical last)
	// docs, when kept, is each document's cluster (an index into sizes) or -1;
	// spareDocs an array for it from an earlier pass (spareFollowers).
	docs      []int32
	sizes     []int32
	spareDocs []int32
	// bySize counts the components by their largest cluster; top is at least the
	// largest size with a count (largest lowers it to that).
	bySize []int32
	top    int
}

func (e *engine) newFollower(g *cluster.Graph, pol cluster.Policy, lo, hi int) (*follower, error) {
	l, err := g.Levels(cluster.Config{Policy: pol, Rule: e.opt.Rules[lo], Order: e.orders[lo], Lean: true, ConcurrentSim: true})
	if err != nil {
		return nil, err
	}
	// Component IDs are graph nodes, one per document or exact group: below e.n.
	f := e.spare.take()
	f.e, f.l, f.lo, f.hi = e, l, lo, hi
	f.slot = grown(f.slot, e.n)
	for i := range f.slot {
		f.slot[i] = -1
	}
	if e.bin != nil {
		f.nb = e.bin.bins() + 1
		f.pairs = make([][]int64, hi-lo)
		for r := range f.pairs {
			f.pairs[r] = make([]int64, f.nb)
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

// countsOf returns slot s's pair counts under rule r (of lo..hi-1).
func (f *follower) countsOf(s int32, r int) []int32 {
	at := (int(s)*(f.hi-f.lo) + r) * f.nb
	return f.pairsOf[at : at+f.nb]
}

func (f *follower) drop(id int32) {
	s := f.slot[id]
	if s < 0 {
		return
	}
	f.removalsAll -= int(f.removals[s])
	f.clustersAll -= int(f.clusters[s])
	f.bySize[f.largestOf[s]]--
	for r := range f.pairs {
		for b, n := range f.countsOf(s, r) {
			f.pairs[r][b] -= int64(n)
		}
	}
	for _, d := range f.docsOf[s] {
		f.docs[d] = -1
	}
	f.slot[id] = -1
	f.free = append(f.free, s)
}

func (f *follower) add(c cluster.Component) {
	e := f.e
	var s int32
	if n := len(f.free); n > 0 {
		s, f.free = f.free[n-1], f.free[:n-1]
		if f.nb > 0 {
			clear(f.pairsOf[int(s)*(f.hi-f.lo)*f.nb : int(s+1)*(f.hi-f.lo)*f.nb])
		}
		f.removals[s], f.clusters[s], f.largestOf[s], f.docsOf[s] = 0, 0, 0, f.docsOf[s][:0]
	} else {
		s = int32(len(f.removals))
		f.removals, f.clusters, f.largestOf = append(f.removals, 0), append(f.clusters, 0), append(f.largestOf, 0)
		if n := len(f.docsOf); n < cap(f.docsOf) { // a spare's: its lists' arrays are kept
			f.docsOf = f.docsOf[:n+1]
			f.docsOf[n] = f.docsOf[n][:0]
		} else {
			f.docsOf = append(f.docsOf, nil)
		}
		f.pairsOf = append(f.pairsOf, make([]int32, (f.hi-f.lo)*f.nb)...)
	}
	f.slot[c.ID] = s
	for _, cl := range c.Clusters {
		f.removals[s] += int32(len(cl.Members) - 1)
		f.clusters[s]++
		f.largestOf[s] = max(f.largestOf[s], int32(len(cl.Members)))
		if f.docs != nil {
			id := int32(len(f.sizes))
			f.sizes = append(f.sizes, int32(len(cl.Members)))
			for _, d := range cl.Members {
				f.docs[d] = id
			}
			f.docsOf[s] = append(f.docsOf[s], cl.Members...)
		}
		if e.bin == nil {
			continue
		}
		for r := range f.hi - f.lo {
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
			ps := f.countsOf(s, r)
			for _, d := range cl.Members {
				if d != k {
					ps[e.bin.keptBin(len(e.orders), f.lo+r, d, k)]++
				}
			}
		}
	}
	f.removalsAll += int(f.removals[s])
	f.clustersAll += int(f.clusters[s])
	for r := range f.pairs {
		for b, n := range f.countsOf(s, r) {
			f.pairs[r][b] += int64(n)
		}
	}
	largest := int(f.largestOf[s])
	if largest >= len(f.bySize) {
		f.bySize = append(f.bySize, make([]int32, largest+1-len(f.bySize))...)
	}
	f.bySize[largest]++
	f.top = max(f.top, largest)
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
		out[r] = RuleProfile{Rule: f.e.ruleNames[f.lo+r], Removals: f.removalsAll, Clusters: f.clustersAll, Largest: largest,
			Pairs: slices.Clone(ps[:nb]), Identical: int(ps[nb])}
	}
	return out
}

// spareFollowers are the followers of passes that ended, for the next passes to reuse
// their arrays: at 100,000 documents a follower's pair counts grow to tens of MB, and
// growing them from nothing in every pass (copying and clearing) took 2% of a sweep's
// CPU time. Safe for concurrent use (policies pass at once).
type spareFollowers struct {
	mu sync.Mutex
	fs []*follower
}

// maxSpareFollowers bounds the followers kept: as many as passes run at once (the
// policies, keeper-star's one per rule).
const maxSpareFollowers = 8

// take returns a spare follower emptied, its arrays' capacity kept, or a new one.
func (sp *spareFollowers) take() *follower {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	n := len(sp.fs)
	if n == 0 {
		return &follower{}
	}
	f := sp.fs[n-1]
	sp.fs = sp.fs[:n-1]
	*f = follower{slot: f.slot, free: f.free[:0], removals: f.removals[:0], clusters: f.clusters[:0],
		largestOf: f.largestOf[:0], pairsOf: f.pairsOf[:0], docsOf: f.docsOf[:0], sizes: f.sizes[:0], bySize: f.bySize[:0],
		spareDocs: f.spareDocs}
	return f
}

// put keeps fs, whose pass has ended, for later passes (the clustering each followed
// is let go).
func (sp *spareFollowers) put(fs []*follower) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	for _, f := range fs {
		if len(sp.fs) == maxSpareFollowers {
			return
		}
		if f.docs != nil {
			f.spareDocs = f.docs
		}
		f.e, f.l, f.pairs, f.docs = nil, nil, nil, nil
		sp.fs = append(sp.fs, f)
	}
}

// grown returns s with length n, on its own array when that is large enough (what it
// holds is then left as it was).
func grown(s []int32, n int) []int32 {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]int32, n)
}
