package cluster

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/dedupstudio/dedupstudio/internal/unionfind"
)

// Levels follows one clustering (a policy and a keeper rule) down a falling list of
// thresholds, as a sweep scores them, and at each threshold clusters again only the
// connected components whose clusters can differ from those at the threshold before.
//
// As the threshold falls from t to t' < t, edges are only accepted, never dropped, so
// components only merge. A component that no edge accepted in [t', t) touches has the
// same nodes and the same accepted edges at t' as at t. Its policy then walks it the
// same way and makes the same tests, unless one of them changes its answer: a test is
// a similarity compared with the threshold, from an edge (an edge inside the component
// whose similarity is in [t', t) would have been accepted in between, so none is) or
// from a Sim call. Levels remembers, per component, the largest Sim value its clustering
// found under the threshold; when it is under t' too, every test has the same answer
// and the component's clusters are the same. The others are clustered again, exactly as
// Graph.Cluster clusters them at t': at every threshold the clusters of the components
// as last reported are those of Graph.Cluster (checked on random graphs against it).
//
// A Levels is not safe for concurrent use; Sim may be called concurrently by the Levels
// of other policies and rules of the same Graph.
type Levels struct {
	r       *run
	comp    *unionfind.Forest // components of the accepted edges, over nodes
	next    []int32           // each component's nodes as a list from its root along next (-1 ends it)
	tail    []int32           // per root: the last node of its list
	added   int               // edges of g.sortedEdges() accepted so far
	below   []float64         // per root: the largest Sim value under the threshold its clustering compared (complete link: the failing pairs of its merge attempts, recorded or checked)
	touched []int32           // per root: the Lower call whose accepted edges touched it
	calls   int32
	live    []int32 // roots of the components worth clustering: two nodes or more, or an exact group
	ks      keeperStar
	cl      completeLink
	started bool

	// Complete link's record of each edge (by its place in g.sortedEdges) as the last
	// clustering of its component took it; see completeLink.
	prevAdded int       // added before the current Lower
	clCheck   []float64 // the merge attempt's first failing similarity, +Inf if all passed, -Inf if none was made
	clMerged  []bool    // whether the edge merged two clusters
	clDirty   []int32   // per cluster root: the Lower call in which it stopped being a cluster of the record

	// What Lower returns, kept for the next call's reuse.
	level Level
	roots []int32
	nodes []int32
	ranks []int32
	edges []cedge
	spare []int32 // sortRanks' scratch
	// Lower's scratch: the new roots, and the other buffer of live.
	fresh, spareLive []int32
	members          []int32
}

// Level is what changed at one threshold of Levels: the components clustered anew and
// those merged into them. A component's ID is its root node, stable until it changes
// again; a component not listed keeps the clusters it was last reported with. Slices
// are valid until the next Lower.
type Level struct {
	Threshold float64
	Changed   []Component
	// Gone are the IDs of components reported before that are now part of a changed one.
	Gone []int32
}

// Component is the clusters of one connected component of the accepted edges: every
// cluster of two documents or more (a component can be one exact group alone).
type Component struct {
	ID       int32
	Clusters []LevelCluster
}

// LevelCluster is one cluster: its documents (ascending, the keeper included) and the
// one it keeps. The others are removed, as Graph.Cluster's Cluster.Removed lists them.
type LevelCluster struct {
	Keeper  int
	Members []int32
}

// FollowsLevels reports whether Levels clusters policy p: the policies of this package.
// A policy registered from elsewhere is clustered at each threshold by Graph.Cluster.
func FollowsLevels(p Policy) bool {
	return p == Components || p == KeeperStar || p == CompleteLink
}

// Levels returns the clustering of g under cfg's policy, rule and budget (its Threshold
// is not used: Lower sets it), before any edge is accepted.
func (g *Graph) Levels(cfg Config) (*Levels, error) {
	cfg.Threshold = 1
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if !FollowsLevels(cfg.Policy) {
		return nil, &InputError{Field: "policy", Msg: "Levels does not follow policy " + strconv.Quote(string(cfg.Policy))}
	}
	cfg.Lean = true
	nn := g.nodes()
	r := g.newRun(cfg, math.Inf(1))
	l := &Levels{r: r, comp: unionfind.New(nn), next: make([]int32, nn), tail: make([]int32, nn),
		below: make([]float64, nn), touched: make([]int32, nn)}
	if cfg.Policy == KeeperStar {
		l.ks.byRank, l.ks.accepted = g.rankAdjacency(), make([]int32, nn)
	}
	if cfg.Policy == CompleteLink {
		r.memo = make(map[uint64]float64)
		ne := len(g.sortedEdges())
		l.clCheck, l.clMerged, l.clDirty = make([]float64, ne), make([]bool, ne), make([]int32, nn)
		for i := range l.clCheck {
			l.clCheck[i] = math.Inf(-1)
		}
	}
	for u := range int32(nn) {
		l.next[u], l.tail[u] = -1, u
		l.below[u] = math.Inf(1) // never clustered
		if len(g.group(u)) > 1 {
			l.live = append(l.live, u)
		}
	}
	return l, nil
}

// Lower moves the clustering to threshold t, at most the threshold of the call before,
// and returns what changed.
func (l *Levels) Lower(t float64) (*Level, error) {
	r := l.r
	if !(t >= 0 && t <= 1) {
		return nil, &InputError{Field: "threshold", Msg: fmt.Sprintf("%v is not in [0, 1]", t)}
	}
	if l.started && t > r.t {
		return nil, &InputError{Field: "threshold", Msg: fmt.Sprintf("%v is above the threshold before, %v: Levels only lowers it", t, r.t)}
	}
	l.started = true
	r.t = t
	l.calls++
	lv := &l.level
	lv.Threshold, lv.Changed, lv.Gone = t, lv.Changed[:0], lv.Gone[:0]
	l.members = l.members[:0]

	// Accept the edges that reach t and merge their components.
	all := r.g.sortedEdges()
	roots := l.roots[:0]
	l.prevAdded = l.added
	for ; l.added < len(all) && all[l.added].s >= t; l.added++ {
		e := all[l.added]
		if l.ks.accepted != nil {
			l.ks.accepted[e.u]++
			l.ks.accepted[e.v]++
		}
		ru, rv := l.comp.Find(e.u), l.comp.Find(e.v)
		l.touched[ru], l.touched[rv] = l.calls, l.calls
		if ru == rv {
			continue
		}
		keep, gone, _ := l.comp.Union(ru, rv)
		l.next[l.tail[keep]] = gone
		l.tail[keep] = l.tail[gone]
		l.touched[keep] = l.calls
		roots = append(roots, keep)
	}
	// The components now: those before that are still roots, and the new ones.
	live := l.live[:0]
	for _, u := range l.live {
		if l.comp.Find(u) == u {
			live = append(live, u)
		} else if !math.IsInf(l.below[u], 1) {
			lv.Gone = append(lv.Gone, u) // reported before, merged now
		}
	}
	// The new roots, sorted, merged into the old ones still live (sorted already: a
	// sweep's graphs have tens of thousands of components, and sorting them all at
	// every threshold of every clustering took 10 of the 390 CPU seconds of the default
	// grid on 100,000 documents).
	fresh := l.fresh[:0]
	for _, u := range roots {
		if l.comp.Find(u) == u {
			fresh = append(fresh, u)
		}
	}
	slices.Sort(fresh)
	fresh = slices.Compact(fresh)
	l.fresh = fresh
	if len(fresh) > 0 {
		merged := mergeUnique(l.spareLive[:0], live, fresh)
		l.spareLive, live = live, merged
	}
	l.live, l.roots = live, roots

	for _, root := range live {
		if l.touched[root] != l.calls && l.below[root] < t {
			continue // same nodes, same accepted edges, every test on the same side
		}
		nodes := l.nodes[:0]
		for u := root; u >= 0; u = l.next[u] {
			nodes = append(nodes, u)
		}
		slices.Sort(nodes)
		l.nodes = nodes
		r.below = -1
		r.protos, r.pnodes, r.psims = r.protos[:0], r.pnodes[:0], r.psims[:0]
		switch r.cfg.Policy {
		case Components:
			r.addProto(r.pick(nodes), nodes)
		case KeeperStar:
			l.ks.component(r, nodes)
		case CompleteLink:
			l.completeLink(nodes, l.componentEdges(nodes))
		}
		l.below[root] = r.below
		lv.Changed = append(lv.Changed, Component{ID: root, Clusters: l.clusters()})
	}
	return lv, nil
}

// completeLink clusters one component under complete link as completeLink.component
// does, with what the component's parts (the components that made it up at the last
// threshold each was clustered at) decided then: edges before the current Lower were all
// taken then, in the same order, by clusterings that differ from this one only in the
// threshold (and, for a part, in the budget's limit, which is only ever larger now and
// is checked again here).
//
// So, edge by edge in order, as long as the two clusters an edge joins are clusters the
// record had at that edge (not dirty), the merge attempt checks the same pairs as the
// record's: when it passed then it passes now, and when it failed at a similarity under
// this threshold too it fails now at the same pair. Those answers are taken from the
// record instead of checking up to a×b pairs again; every other attempt is checked. A
// cluster becomes dirty when a decision differs from the record's (a merge made or not
// made, by a check or by the budget), and a merge with a dirty cluster is dirty. The
// clusters are thus those completeLink.component makes at this threshold.
//
// The largest failing similarity of the attempts (recorded or checked) is what Lower's
// below keeps: when it is under the next threshold, every attempt has the same answer.
func (l *Levels) completeLink(nodes []int32, edges []cedge) {
	r, cl := l.r, &l.cl
	cl.start(r, nodes)
	// Sim results are kept from one threshold to the next (a merge attempted again at
	// a lower threshold asks for the same pairs), up to a bound on their memory. A
	// remembered failing similarity is as good a witness of a failed attempt as a new
	// one: the attempts' answers do not depend on which pair is found first.
	if len(r.memo) > levelsMemo {
		clear(r.memo)
	}
	limit := r.cfg.budget() * len(nodes)
	used, limited := 0, false
	below := -1.0
	for i, e := range edges {
		rk := l.ranks[i]
		old := int(rk) < l.prevAdded
		ru, rv := r.find(e.u), r.find(e.v)
		check := math.Inf(-1)
		switch {
		case ru == rv || cl.failed[pairKey(ru, rv)]:
		case used+int(r.uf.Size(ru))*int(r.uf.Size(rv)) > limit:
			limited = true
		default:
			used += int(r.uf.Size(ru)) * int(r.uf.Size(rv))
			rec := l.clCheck[rk]
			if old && l.clDirty[ru] != l.calls && l.clDirty[rv] != l.calls && !math.IsInf(rec, -1) && (math.IsInf(rec, 1) || rec < r.t) {
				check = rec
			} else {
				check = cl.firstFail(r, ru, rv)
			}
			if check < r.t {
				below = max(below, check)
				cl.failed[pairKey(ru, rv)] = true
			}
		}
		recMerged := old && l.clMerged[rk]
		merge := check >= r.t
		l.clCheck[rk], l.clMerged[rk] = check, merge
		if !merge {
			if recMerged {
				l.clDirty[ru], l.clDirty[rv] = l.calls, l.calls
			}
			continue
		}
		dirty := !recMerged || l.clDirty[ru] == l.calls || l.clDirty[rv] == l.calls
		h, t := cl.head[ru], cl.tail[rv]
		cl.next[cl.tail[ru]] = cl.head[rv]
		root := r.union(ru, rv)
		cl.head[root], cl.tail[root] = h, t
		if dirty {
			l.clDirty[root] = l.calls
		}
	}
	r.below = below
	cl.finish(r, nodes, limited)
}

// levelsMemo bounds the Sim results Levels keeps for complete link across thresholds
// (about 20 bytes each).
const levelsMemo = 1 << 21

// componentEdges returns the accepted edges between nodes (a whole component) in
// complete-link's order, the order of g.sortedEdges: an edge is accepted when its place
// there is under added, and the places sort as integers.
func (l *Levels) componentEdges(nodes []int32) []cedge {
	g := l.r.g
	all := g.sortedEdges()
	ranks := l.ranks[:0]
	for _, u := range nodes {
		off := int(g.adjOff[u])
		for i, x := range g.neighbours(u) {
			if rk := g.rank[off+i]; x.v > u && int(rk) < l.added {
				ranks = append(ranks, rk)
			}
		}
	}
	ranks, l.spare = sortRanks(ranks, l.spare)
	edges := l.edges[:0]
	for _, rk := range ranks {
		edges = append(edges, all[rk])
	}
	l.ranks, l.edges = ranks, edges
	return edges
}

// clusters turns the protos of one component into its clusters of two documents or more
// (as result does).
func (l *Levels) clusters() []LevelCluster {
	r, g := l.r, l.r.g
	var out []LevelCluster
	for _, p := range r.protos {
		off := len(l.members)
		for _, u := range r.pnodes[p.off:p.end] {
			l.members = append(l.members, g.group(u)...)
		}
		if len(l.members)-off < 2 {
			l.members = l.members[:off]
			continue
		}
		ms := l.members[off:len(l.members):len(l.members)]
		slices.Sort(ms)
		out = append(out, LevelCluster{Keeper: int(r.rep[p.keeper]), Members: ms})
	}
	return out
}

// sortRanks sorts ranks (places in g.sortedEdges, so below 2^31) and returns them and
// the spare buffer: a least-significant-digit radix sort of 11-bit digits, up to the
// largest rank's top bit, for long lists (a large component's edges, sorted again at
// every threshold that changes it, took most of a large sweep's complete-link time
// under slices.Sort).
func sortRanks(ranks, spare []int32) (sorted, buf []int32) {
	if len(ranks) < 256 {
		slices.Sort(ranks)
		return ranks, spare
	}
	hi := slices.Max(ranks)
	if cap(spare) < len(ranks) {
		spare = make([]int32, len(ranks), cap(ranks))
	}
	src, dst := ranks, spare[:len(ranks)]
	const bits = 11
	var count [1 << bits]int
	for shift := 0; shift < 31 && hi>>shift != 0; shift += bits {
		clear(count[:])
		for _, v := range src {
			count[v>>shift&(1<<bits-1)]++
		}
		at := 0
		for d, c := range count {
			count[d] = at
			at += c
		}
		for _, v := range src {
			d := v >> shift & (1<<bits - 1)
			dst[count[d]] = v
			count[d]++
		}
		src, dst = dst, src
	}
	return src, dst
}

// mergeUnique appends to dst the union of a and b (each sorted, without repeats), sorted,
// each value once.
func mergeUnique(dst, a, b []int32) []int32 {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			dst = append(dst, a[i])
			i++
		case a[i] > b[j]:
			dst = append(dst, b[j])
			j++
		default:
			dst = append(dst, a[i])
			i++
			j++
		}
	}
	dst = append(dst, a[i:]...)
	return append(dst, b[j:]...)
}
