package cluster

import (
	"cmp"
	"slices"
)

// CutPlan is the set of links whose removal leaves no chained member linked to the
// keeper: a minimum cut between the keeper and the chained members of a cluster's links.
type CutPlan struct {
	// Links to cut, weakest first; empty when the cluster is not chained or OK is false.
	Links []Edge
	// Chained and Unchained count the members the cut separates from the keeper: every
	// chained member, and the members that pass the keeper but reach it only through them.
	Chained, Unchained int
	// OK is false when no cut of at most limit links separates every chained member.
	OK bool
}

// SeparatingCut finds the fewest links (the weakest among equally few) whose removal
// leaves none of the chained documents connected to keeper over links; links between
// documents that together reports as inseparable (exact duplicates) are never cut. Of
// the minimum cuts it takes the one that keeps the most documents with the keeper. It
// gives up (OK false) when more than limit links would have to go.
//
// The cut is a maximum flow from the keeper to the chained documents (each link a unit
// capacity both ways, augmenting paths found breadth first, a bounded number of them,
// each linear in the links), then the documents that can still reach a chained one in the
// residual graph form the far side. Links are weighted so that, among cuts of as many
// links, the weaker ones are cut: a unit is 2^32 plus the link's similarity in thousandths.
func SeparatingCut(keeper int, chained []int, links []Edge, together func(a, b int) bool, limit int) CutPlan {
	if len(chained) == 0 {
		return CutPlan{OK: true}
	}
	// Nodes: the documents of the links, then the sink.
	ids := map[int]int{}
	node := func(d int) int {
		if i, ok := ids[d]; ok {
			return i
		}
		ids[d] = len(ids)
		return len(ids) - 1
	}
	node(keeper)
	for _, l := range links {
		node(l.A)
		node(l.B)
	}
	isChained := map[int]bool{}
	for _, d := range chained {
		if _, linked := ids[d]; linked {
			isChained[d] = true
		}
	}
	n := len(ids) + 1
	sink := n - 1
	const unit = int64(1) << 32
	inf := unit * int64(limit+2) * 2
	type arc struct {
		to  int
		cap int64
		rev int // index of the reverse arc in adj[to]
	}
	adj := make([][]arc, n)
	addArc := func(a, b int, c int64) {
		adj[a] = append(adj[a], arc{to: b, cap: c, rev: len(adj[b])})
		adj[b] = append(adj[b], arc{to: a, cap: c, rev: len(adj[a]) - 1})
	}
	for _, l := range links {
		c := unit + int64(l.Sim*1000+0.5)
		if together != nil && together(l.A, l.B) {
			c = inf
		}
		addArc(ids[l.A], ids[l.B], c)
	}
	for d := range isChained {
		addArc(ids[d], sink, inf)
	}
	src := ids[keeper]
	var flow int64
	prev := make([]int, n)
	prevArc := make([]int, n)
	// Partial pushes (links of unequal weight) can take more paths than links cut.
	for range 20 * (limit + 1) {
		// Breadth first from the keeper to the sink in the residual graph.
		for i := range prev {
			prev[i] = -1
		}
		prev[src] = src
		q := []int{src}
		for i := 0; i < len(q) && prev[sink] < 0; i++ {
			x := q[i]
			for k, a := range adj[x] {
				if a.cap > 0 && prev[a.to] < 0 {
					prev[a.to], prevArc[a.to] = x, k
					q = append(q, a.to)
				}
			}
		}
		if prev[sink] < 0 {
			break
		}
		push := inf
		for y := sink; y != src; y = prev[y] {
			push = min(push, adj[prev[y]][prevArc[y]].cap)
		}
		for y := sink; y != src; y = prev[y] {
			a := &adj[prev[y]][prevArc[y]]
			a.cap -= push
			adj[y][a.rev].cap += push
		}
		flow += push
		if flow >= inf || flow > (unit+1000)*int64(limit) {
			return CutPlan{}
		}
	}
	// The far side: the nodes that still reach the sink in the residual graph (an arc
	// x->y with room means x reaches y).
	far := make([]bool, n)
	far[sink] = true
	q := []int{sink}
	for i := 0; i < len(q); i++ {
		y := q[i]
		for _, a := range adj[y] {
			// a is y->x; its reverse x->y has room when adj[x][a.rev].cap > 0.
			if !far[a.to] && adj[a.to][a.rev].cap > 0 {
				far[a.to] = true
				q = append(q, a.to)
			}
		}
	}
	if far[src] {
		return CutPlan{} // more than limit links (the search stopped early)
	}
	plan := CutPlan{OK: true}
	for _, l := range links {
		if far[ids[l.A]] != far[ids[l.B]] {
			plan.Links = append(plan.Links, l)
		}
	}
	if len(plan.Links) > limit {
		return CutPlan{}
	}
	for d, i := range ids {
		if far[i] && d != keeper {
			if isChained[d] {
				plan.Chained++
			} else {
				plan.Unchained++
			}
		}
	}
	slices.SortFunc(plan.Links, func(a, b Edge) int {
		return cmp.Or(cmp.Compare(a.Sim, b.Sim), cmp.Compare(a.A, b.A), cmp.Compare(a.B, b.B))
	})
	return plan
}
