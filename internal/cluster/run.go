package cluster

import (
	"math"
	"slices"

	"github.com/dedupstudio/dedupstudio/internal/unionfind"
)

// Cluster clusters g under cfg. Bad configuration is an *InputError.
func (g *Graph) Cluster(cfg Config) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	return g.run(cfg, -1), nil
}

// run is one clustering of a Graph: the per-call state, so that a Graph can be clustered
// concurrently.
type run struct {
	g     *Graph
	cfg   Config
	t     float64
	order *order
	// forced is the node whose representative is a keeper chosen by hand, or -1.
	forced int32
	// rep is each node's representative: the document of its exact group that the rule
	// keeps (or the forced keeper). Sim is called on representatives.
	rep []int32

	// The known similarities of one node (see load): known[v] is valid when stamp[v] == cur.
	stamp []int32
	known []float64
	cur   int32
	// mark is a second, independent set of nodes: mark[v] == markCur.
	mark    []int32
	markCur int32
	// memo holds the Sim results of complete-link, keyed by node pair.
	memo map[uint64]float64

	simCalls, limited int
	// below is the largest Sim value under the threshold since it was last reset (-1:
	// none): what Levels needs to know whether a lower threshold changes an answer.
	below float64

	// Proposed clusters of nodes: protos[i] is pnodes/psims[off:end], each node with its
	// similarity to the keeper node.
	protos []proto
	pnodes []int32
	psims  []float64

	uf    *unionfind.Forest
	queue []int32
	diag  diagScratch
}

type proto struct {
	keeper   int32
	off, end int
}

func (g *Graph) run(cfg Config, forcedDoc int) Result {
	nn := g.nodes()
	r := &run{
		g: g, cfg: cfg, t: cfg.Threshold, order: newOrder(cfg.Rule, g.in.Docs), forced: -1,
		rep:   make([]int32, nn),
		stamp: make([]int32, nn), known: make([]float64, nn),
		mark: make([]int32, nn),
		uf:   unionfind.New(nn),
	}
	for u := range int32(nn) {
		grp := g.group(u)
		best := grp[0]
		for _, d := range grp[1:] {
			if r.order.less(int(d), int(best)) {
				best = d
			}
		}
		r.rep[u] = best
	}
	if forcedDoc >= 0 {
		r.forced = g.nodeOf[forcedDoc]
		r.rep[r.forced] = int32(forcedDoc)
	}

	// Connected components of the accepted edges.
	for u := range int32(nn) {
		for _, x := range g.neighbours(u) {
			if x.v > u && x.s >= r.t {
				r.union(u, x.v)
			}
		}
	}
	// Components worth a look: two nodes or more, or one exact group. compOf numbers them
	// by root; compNodes[compOff[c]:compOff[c+1]] lists each one's nodes in ascending order.
	compOf := make([]int32, nn)
	ncomp := int32(0)
	for u := range int32(nn) {
		root := r.find(u)
		if root == u && (r.uf.Size(u) > 1 || len(g.group(u)) > 1) {
			compOf[u] = ncomp
			ncomp++
		} else if root == u {
			compOf[u] = -1
		}
	}
	compOff := make([]int32, ncomp+1)
	for u := range int32(nn) {
		if c := compOf[r.find(u)]; c >= 0 {
			compOff[c+1]++
		}
	}
	for c := range ncomp {
		compOff[c+1] += compOff[c]
	}
	compNodes := make([]int32, compOff[ncomp])
	fill := slices.Clone(compOff[:ncomp])
	for u := range int32(nn) {
		if c := compOf[r.find(u)]; c >= 0 {
			compNodes[fill[c]] = u
			fill[c]++
		}
	}

	var ks keeperStar
	var cl completeLink
	var edgeOff []int32
	var edges []cedge
	if cfg.Policy == CompleteLink {
		r.memo = make(map[uint64]float64)
		edgeOff, edges = r.componentEdges(compOf, ncomp)
	}
	for c := range ncomp {
		nodes := compNodes[compOff[c]:compOff[c+1]]
		switch cfg.Policy {
		case Components:
			r.addProto(r.pick(nodes), nodes)
		case KeeperStar:
			ks.component(r, nodes)
		case CompleteLink:
			cl.component(r, nodes, edges[edgeOff[c]:edgeOff[c+1]])
		}
	}
	return r.result()
}

// componentEdges returns each component's accepted edges in complete-link's order,
// edges[off[c]:off[c+1]] for component c: the graph's edges sorted once by similarity
// (Graph.sortedEdges), cut at the threshold and distributed by a stable counting sort.
func (r *run) componentEdges(compOf []int32, ncomp int32) (off []int32, edges []cedge) {
	all := r.g.sortedEdges()
	n, _ := slices.BinarySearchFunc(all, r.t, func(e cedge, t float64) int {
		if e.s >= t {
			return -1
		}
		return 1
	})
	accepted := all[:n]
	off = make([]int32, ncomp+1)
	for _, e := range accepted {
		off[compOf[r.find(e.u)]+1]++
	}
	for c := range ncomp {
		off[c+1] += off[c]
	}
	edges = make([]cedge, n)
	fill := slices.Clone(off[:ncomp])
	for _, e := range accepted {
		c := compOf[r.find(e.u)]
		edges[fill[c]] = e
		fill[c]++
	}
	return off, edges
}

func (r *run) find(x int32) int32 { return r.uf.Find(x) }

// union joins the sets of a and b and returns the new root.
func (r *run) union(a, b int32) int32 {
	root, _, _ := r.uf.Union(a, b)
	return root
}

// lessNode orders nodes by the rule applied to their representatives.
func (r *run) lessNode(u, v int32) bool { return r.order.less(int(r.rep[u]), int(r.rep[v])) }

// pick returns the keeper node of nodes: the forced one if it is there, else the rule's.
func (r *run) pick(nodes []int32) int32 {
	if r.forced >= 0 && slices.Contains(nodes, r.forced) {
		return r.forced
	}
	best := nodes[0]
	for _, u := range nodes[1:] {
		if r.lessNode(u, best) {
			best = u
		}
	}
	return best
}

// load makes the similarities the edges give for node k known.
func (r *run) load(k int32) {
	r.cur++
	for _, x := range r.g.neighbours(k) {
		r.stamp[x.v] = r.cur
		r.known[x.v] = x.s
	}
}

// sim calls Input.Sim on the representatives of u and v. A NaN counts as 0: a pair
// whose similarity cannot be told is not a duplicate.
func (r *run) sim(u, v int32) float64 {
	r.simCalls++
	s := r.g.in.Sim(int(r.rep[u]), int(r.rep[v]))
	if math.IsNaN(s) {
		s = 0
	}
	if s < r.t && s > r.below {
		r.below = s
	}
	return s
}

func pairKey(u, v int32) uint64 {
	if u > v {
		u, v = v, u
	}
	return uint64(u)<<32 | uint64(uint32(v))
}

// addProto proposes nodes as a cluster kept by k, finding each node's similarity to k
// from the edges, the memo, or a Sim call, in that order.
func (r *run) addProto(k int32, nodes []int32) {
	r.load(k)
	off := len(r.pnodes)
	for _, u := range nodes {
		var s float64
		switch {
		case u == k:
			s = 1
		case r.stamp[u] == r.cur:
			s = r.known[u]
		default:
			var ok bool
			if s, ok = r.memo[pairKey(k, u)]; !ok {
				s = r.sim(k, u)
			}
		}
		r.pnodes = append(r.pnodes, u)
		r.psims = append(r.psims, s)
	}
	r.protos = append(r.protos, proto{keeper: k, off: off, end: len(r.pnodes)})
}

// keeperStar is the keeper-star policy, one connected component at a time.
//
// The component's nodes are visited in the rule's order (a forced keeper first). The
// first node not yet in a cluster becomes a keeper; the nodes still free and connected to
// it over accepted edges through free nodes (its component once earlier clusters are
// taken out) are each tested against it, and those whose direct similarity passes join
// its cluster. The others stay free for the keepers after it. This is the recursive
// definition (keep the best, split the rest into components, repeat in each) computed
// without building the components: a free node is only ever connected to free nodes of
// its own part, and the best free node of a part is the first of it in rule order.
//
// Each test is an edge lookup or one Sim call; a pair is tested at most once, since a node
// is a keeper at most once. A component of s nodes gets Budget×s tests; when they are
// spent, each later keeper takes only the free nodes an accepted edge links it to.
type keeperStar struct {
	order []int32
	owner []int32 // each node's keeper node, or free
}

func (ks *keeperStar) component(r *run, nodes []int32) {
	g := r.g
	ks.order = append(ks.order[:0], nodes...)
	slices.SortFunc(ks.order, func(u, v int32) int {
		switch {
		case u == v:
			return 0
		case u == r.forced:
			return -1
		case v == r.forced:
			return 1
		case r.lessNode(u, v):
			return -1
		}
		return 1
	})
	const free = -1
	if ks.owner == nil {
		ks.owner = make([]int32, r.g.nodes())
	}
	owner := ks.owner
	for _, u := range nodes {
		owner[u] = free
	}
	limit := r.cfg.budget() * len(nodes)
	used, limited := 0, false
	for _, k := range ks.order {
		if owner[k] != free {
			continue
		}
		owner[k] = k
		r.load(k)
		off := len(r.pnodes)
		r.pnodes = append(r.pnodes, k)
		r.psims = append(r.psims, 1)
		if !limited {
			// k's part: free nodes reachable from k over accepted edges through free nodes.
			r.markCur++
			r.mark[k] = r.markCur
			q := append(r.queue[:0], k)
			for i := 0; i < len(q); i++ {
				for _, x := range g.neighbours(q[i]) {
					if x.s >= r.t && owner[x.v] == free && r.mark[x.v] != r.markCur {
						r.mark[x.v] = r.markCur
						q = append(q, x.v)
					}
				}
			}
			r.queue = q
			for _, m := range q[1:] {
				if used >= limit {
					limited = true
					break
				}
				used++
				s := r.known[m]
				if r.stamp[m] != r.cur {
					s = r.sim(k, m)
				}
				if s >= r.t {
					owner[m] = k
					r.pnodes = append(r.pnodes, m)
					r.psims = append(r.psims, s)
				}
			}
		}
		if limited {
			for _, x := range g.neighbours(k) {
				if x.s >= r.t && owner[x.v] == free {
					owner[x.v] = k
					r.pnodes = append(r.pnodes, x.v)
					r.psims = append(r.psims, x.s)
				}
			}
		}
		r.protos = append(r.protos, proto{keeper: k, off: off, end: len(r.pnodes)})
	}
	if limited {
		r.limited++
	}
}

// completeLink is the complete-link policy, one connected component at a time: greedy
// agglomerative complete linkage. Every node starts alone; the component's accepted
// edges are taken in order of similarity (highest first, ties by node), and an edge
// merges the two clusters it joins only when every pair across them passes. So every pair
// inside a cluster passes, and a cluster's keeper, chosen by the rule afterwards, is
// directly similar to each member.
//
// A merge attempt first looks every cross pair up (edges, then earlier Sim results) and
// gives up at the first known failure, so Sim is only called, once per pair at most, for
// merges that nothing known forbids. Clusters only grow, so two clusters that failed once
// fail for good: the pair of their roots is remembered and not checked again. Any other
// attempt joining clusters of a and b nodes costs a×b checks; a component of s nodes gets
// Budget×s, and an attempt that would exceed what is left is refused (so bounded work
// never merges an unchecked pair).
type completeLink struct {
	// Each cluster's nodes as a linked list from head[root] along next to tail[root].
	head, tail, next []int32
	failed           map[uint64]bool // root pairs that failed a merge attempt
	pending          []uint64
	members          []int32
}

// component clusters the nodes of one component, given its accepted edges in order.
func (cl *completeLink) component(r *run, nodes []int32, edges []cedge) {
	if cl.head == nil {
		nn := r.g.nodes()
		cl.head, cl.tail, cl.next = make([]int32, nn), make([]int32, nn), make([]int32, nn)
		cl.failed = make(map[uint64]bool)
	}
	r.uf.Split(nodes)
	for _, u := range nodes {
		cl.head[u], cl.tail[u], cl.next[u] = u, u, -1
	}
	clear(cl.failed)
	clear(r.memo)
	limit := r.cfg.budget() * len(nodes)
	used, limited := 0, false
	for _, e := range edges {
		ru, rv := r.find(e.u), r.find(e.v)
		if ru == rv || cl.failed[pairKey(ru, rv)] {
			continue
		}
		if cost := int(r.uf.Size(ru)) * int(r.uf.Size(rv)); used+cost > limit {
			limited = true
			continue
		} else {
			used += cost
		}
		if !cl.allPass(r, ru, rv) {
			cl.failed[pairKey(ru, rv)] = true
			continue
		}
		h, t := cl.head[ru], cl.tail[rv]
		cl.next[cl.tail[ru]] = cl.head[rv]
		root := r.union(ru, rv)
		cl.head[root], cl.tail[root] = h, t
	}
	if limited {
		r.limited++
	}
	// One proto per final cluster, in order of its smallest node.
	for _, u := range nodes {
		if r.find(u) != u {
			continue
		}
		cl.members = cl.members[:0]
		for x := cl.head[u]; x >= 0; x = cl.next[x] {
			cl.members = append(cl.members, x)
		}
		slices.Sort(cl.members)
		r.addProto(r.pick(cl.members), cl.members)
	}
}

// allPass reports whether every pair across the clusters rooted at a and b passes the
// threshold.
func (cl *completeLink) allPass(r *run, a, b int32) bool {
	cl.pending = cl.pending[:0]
	for x := cl.head[a]; x >= 0; x = cl.next[x] {
		for y := cl.head[b]; y >= 0; y = cl.next[y] {
			if s, ok := r.g.edgeSim(x, y); ok {
				if s < r.t {
					return false
				}
				continue
			}
			key := pairKey(x, y)
			if s, ok := r.memo[key]; ok {
				if s < r.t {
					return false
				}
				continue
			}
			cl.pending = append(cl.pending, key)
		}
	}
	for _, key := range cl.pending {
		s := r.sim(int32(key>>32), int32(uint32(key)))
		r.memo[key] = s
		if s < r.t {
			return false
		}
	}
	return true
}
