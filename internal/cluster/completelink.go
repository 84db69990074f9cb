package cluster

import (
	"math"
	"slices"
)

func init() {
	register(PolicyInfo{Name: CompleteLink, Title: "complete link",
		start: func(r *run, compOf []int32, ncomp int32) componentClusterer {
			r.memo = make(map[uint64]float64)
			c := &completeLinkRun{r: r}
			c.off, c.edges = r.componentEdges(compOf, ncomp)
			return c
		}})
}

type completeLinkRun struct {
	r     *run
	cl    completeLink
	off   []int32
	edges []cedge
}

func (c *completeLinkRun) component(i int32, nodes []int32) {
	c.cl.component(c.r, nodes, c.edges[c.off[i]:c.off[i+1]])
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

// start makes every node of a component a cluster of its own, with no failed attempt
// remembered: where Graph.Cluster and Levels begin a component.
func (cl *completeLink) start(r *run, nodes []int32) {
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
}

// component clusters the nodes of one component, given its accepted edges in order.
func (cl *completeLink) component(r *run, nodes []int32, edges []cedge) {
	cl.start(r, nodes)
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
		if cl.firstFail(r, ru, rv) < r.t {
			cl.failed[pairKey(ru, rv)] = true
			continue
		}
		h, t := cl.head[ru], cl.tail[rv]
		cl.next[cl.tail[ru]] = cl.head[rv]
		root := r.union(ru, rv)
		cl.head[root], cl.tail[root] = h, t
	}
	cl.finish(r, nodes, limited)
}

// finish adds one proto per final cluster of a component, in order of its smallest node,
// and counts the component when its work was limited: where Graph.Cluster and Levels end
// a component.
func (cl *completeLink) finish(r *run, nodes []int32, limited bool) {
	if limited {
		r.limited++
	}
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

// firstFail returns the similarity of the first pair across the clusters rooted at a and
// b found under the threshold (every pair passes when none is: +Inf). The pairs are
// looked at in one order (a's list, then b's), known ones first.
func (cl *completeLink) firstFail(r *run, a, b int32) float64 {
	cl.pending = cl.pending[:0]
	nb := int(r.uf.Size(b))
	for x := cl.head[a]; x >= 0; x = cl.next[x] {
		// x's edges are looked up by binary search, or, when b has many members for
		// x's neighbours, by loading them all once (run.load).
		loaded := len(r.g.neighbours(x)) <= 8*nb
		if loaded {
			r.load(x)
		}
		for y := cl.head[b]; y >= 0; y = cl.next[y] {
			if loaded {
				if r.stamp[y] == r.cur {
					if s := r.known[y]; s < r.t {
						return s
					}
					continue
				}
			} else if s, ok := r.g.edgeSim(x, y); ok {
				if s < r.t {
					return s
				}
				continue
			}
			key := pairKey(x, y)
			if s, ok := r.memo[key]; ok {
				if s < r.t {
					return s
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
			return s
		}
	}
	return math.Inf(1)
}
