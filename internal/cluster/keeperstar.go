package cluster

import (
	"math"
	"slices"
)

func init() {
	register(PolicyInfo{Name: KeeperStar, Title: "keeper-star", KeeperDependent: true,
		start: func(r *run, _ []int32, _ int32) componentClusterer { return &keeperStarRun{r: r} }})
}

type keeperStarRun struct {
	r  *run
	ks keeperStar
}

func (k *keeperStarRun) component(_ int32, nodes []int32) { k.ks.component(k.r, nodes) }

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
	// Under Levels: Graph.rankAdjacency, and per node how many of its edges are
	// accepted (the prefix of its list there). part then reads only accepted edges
	// instead of every edge a node has, accepted or not.
	byRank, accepted []int32
	// seen is each node's state in one array, which part reads once per edge: taken
	// (in a cluster), or free, and then seenCur when the search under way found it.
	seen    []int32
	seenCur int32
}

// taken marks a node in a cluster in keeperStar.seen; free nodes hold search marks,
// always below it.
const taken = math.MaxInt32

func (ks *keeperStar) component(r *run, nodes []int32) {
	g := r.g
	ks.order = append(ks.order[:0], nodes...)
	slices.SortFunc(ks.order, r.compareNodes)
	if ks.seen == nil {
		ks.seen = make([]int32, r.g.nodes())
	}
	seen := ks.seen
	for _, u := range nodes {
		seen[u] = 0 // free
	}
	ks.seenCur = 0
	free0 := len(nodes) // nodes still free
	limit := r.cfg.budget() * len(nodes)
	used, limited := 0, false
	for _, k := range ks.order {
		if seen[k] == taken {
			continue
		}
		seen[k] = taken
		free0--
		r.load(k)
		off := len(r.pnodes)
		r.pnodes = append(r.pnodes, k)
		r.psims = append(r.psims, 1)
		if !limited {
			q := ks.part(r, k, free0)
			tests := q[1:]
			if len(tests) > limit-used {
				// The budget runs out on this keeper: the tests it pays for, then no more.
				tests, limited = tests[:limit-used], true
			}
			pre := r.presim(k, tests)
			for i, m := range tests {
				used++
				s := r.known[m]
				if r.stamp[m] != r.cur {
					if pre != nil {
						s = r.took(pre[i])
					} else {
						s = r.sim(k, m)
					}
				}
				if s >= r.t {
					seen[m] = taken
					free0--
					r.pnodes = append(r.pnodes, m)
					r.psims = append(r.psims, s)
				}
			}
		}
		if limited {
			for _, x := range g.neighbours(k) {
				if x.s >= r.t && seen[x.v] != taken {
					seen[x.v] = taken
					free0--
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

// compareNodes orders nodes as keeper-star visits them: a forced keeper first, then by
// the rule (a total order on documents, so on representatives).
func (r *run) compareNodes(u, v int32) int {
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
}

// part returns k's part: k, then the free nodes reachable from k over accepted edges
// through free nodes, in the order a breadth-first search over each node's neighbours
// (ascending) finds them. Once every free node (free of them) is in the queue there is
// nothing left to find: a dense part would otherwise scan every member's neighbours for
// nothing.
func (ks *keeperStar) part(r *run, k int32, free int) []int32 {
	g, seen := r.g, ks.seen
	if ks.seenCur == taken-1 {
		// Start the marks again (a long Levels searches billions of times).
		for _, u := range ks.order {
			if seen[u] != taken {
				seen[u] = 0
			}
		}
		ks.seenCur = 0
	}
	ks.seenCur++
	cur := ks.seenCur
	q := append(r.queue[:0], k)
	for i := 0; i < len(q) && len(q)-1 < free; i++ {
		u := q[i]
		if ks.accepted != nil {
			// The same nodes as the loop below finds, in the same (ascending) order: the
			// accepted edges are the first accepted[u] of u's list by rank.
			from, off := len(q), g.adjOff[u]
			for _, v := range ks.byRank[off : off+ks.accepted[u]] {
				if seen[v] < cur {
					seen[v] = cur
					q = append(q, v)
				}
			}
			if len(q)-from > 1 {
				slices.Sort(q[from:])
			}
			continue
		}
		for _, x := range g.neighbours(u) {
			if x.s >= r.t && seen[x.v] < cur {
				seen[x.v] = cur
				q = append(q, x.v)
			}
		}
	}
	r.queue = q
	return q
}
