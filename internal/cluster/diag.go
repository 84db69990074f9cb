package cluster

import (
	"cmp"
	"slices"
)

// result turns the proposed clusters of nodes into Clusters of documents with their
// removals, links and diagnostics.
func (r *run) result() Result {
	g := r.g
	res := Result{Config: r.cfg, Assign: make([]int, g.n), SimCalls: r.simCalls, Limited: r.limited}
	for i := range res.Assign {
		res.Assign[i] = -1
	}
	docsOf := func(p proto) int {
		d := 0
		for _, u := range r.pnodes[p.off:p.end] {
			d += len(g.group(u))
		}
		return d
	}
	// Every cluster's slices are cut from a few arenas, sized up front so that they never
	// grow: members, links (at most the accepted edges from the clusters' nodes plus one
	// exact or direct link per member) and chains (at most one document per member). The
	// slices are capped, so appending to one never writes into the next.
	total, count, accepted := 0, 0, 0
	for _, p := range r.protos {
		if d := docsOf(p); d >= 2 {
			total += d
			count++
			for _, u := range r.pnodes[p.off:p.end] {
				for _, x := range g.neighbours(u) {
					if x.v > u && x.s >= r.t {
						accepted++
					}
				}
			}
		}
	}
	members := make([]int, 0, total)
	removed := make([]Removal, 0, total-count)
	clusters := make([]Cluster, 0, count)
	var links []Edge
	var chainDocs []int
	var chainSims []float64
	if !r.cfg.Lean {
		links = make([]Edge, 0, accepted+total)
		chainDocs = make([]int, 0, total)
		chainSims = make([]float64, 0, total)
	}
	simOf := r.known // per node similarity to the cluster's keeper; load is not used below
	r.diag.docLoc = make([]int32, g.n)
	for _, p := range r.protos {
		if docsOf(p) < 2 {
			continue
		}
		nodes, sims := r.pnodes[p.off:p.end], r.psims[p.off:p.end]
		k, kd := p.keeper, int(r.rep[p.keeper])
		mOff := len(members)
		for i, u := range nodes {
			simOf[u] = sims[i]
			for _, d := range g.group(u) {
				members = append(members, int(d))
			}
		}
		ms := members[mOff:len(members):len(members)]
		slices.Sort(ms)
		rOff := len(removed)
		for _, d := range ms {
			switch u := g.nodeOf[d]; {
			case d == kd:
			case u == k:
				removed = append(removed, Removal{Doc: d, Sim: 1, Reason: Exact})
				res.RemovedExact++
			default:
				removed = append(removed, Removal{Doc: d, Sim: simOf[u], Reason: Near})
			}
		}
		rs := removed[rOff:len(removed):len(removed)]
		var ls []Edge
		d := Diagnostics{Size: len(ms)}
		if !r.cfg.Lean {
			lOff := len(links)
			links = r.appendLinks(links, k, nodes, sims)
			ls = links[lOff:len(links):len(links)]
			d, chainDocs, chainSims = r.diag.compute(ms, rs, ls, kd, r.t, g.nodeOf, chainDocs, chainSims)
		}
		clusters = append(clusters, Cluster{Keeper: kd, Members: ms, Removed: rs, Links: ls, Diag: d})
		res.Removed += len(rs)
		if d.Chained {
			res.Chained++
		}
	}
	slices.SortFunc(clusters, func(a, b Cluster) int { return cmp.Compare(a.Members[0], b.Members[0]) })
	for i := range clusters {
		clusters[i].ID = i
		for _, d := range clusters[i].Members {
			res.Assign[d] = i
		}
	}
	res.Clusters = clusters
	return res
}

// appendLinks appends the links of a cluster of nodes kept by k: accepted edges between
// its nodes (on their representatives), each exact group's representative to the rest of
// its group, and the keeper to every document of every node whose similarity to it passes
// and is not already an accepted edge. The links are sorted by (A, B), A < B.
func (r *run) appendLinks(links []Edge, k int32, nodes []int32, sims []float64) []Edge {
	g := r.g
	start := len(links)
	r.markCur++
	for _, u := range nodes {
		r.mark[u] = r.markCur
	}
	for _, u := range nodes {
		ru := int(r.rep[u])
		for _, x := range g.neighbours(u) {
			if x.v > u && x.s >= r.t && r.mark[x.v] == r.markCur {
				links = append(links, link(ru, int(r.rep[x.v]), x.s))
			}
		}
		for _, d := range g.group(u) {
			if int(d) != ru {
				links = append(links, link(ru, int(d), 1))
			}
		}
	}
	kd := int(r.rep[k])
	for i, u := range nodes {
		if u == k || sims[i] < r.t {
			continue
		}
		edge, ok := g.edgeSim(k, u)
		accepted := ok && edge >= r.t
		for _, d := range g.group(u) {
			if !(accepted && d == r.rep[u]) {
				links = append(links, link(kd, int(d), sims[i]))
			}
		}
	}
	slices.SortFunc(links[start:], func(a, b Edge) int {
		return cmp.Or(cmp.Compare(a.A, b.A), cmp.Compare(a.B, b.B))
	})
	return links
}

func link(a, b int, s float64) Edge {
	if a > b {
		a, b = b, a
	}
	return Edge{A: a, B: b, Sim: s}
}

// diagScratch holds the buffers of compute, grown to the largest cluster and reused.
type diagScratch struct {
	docLoc                     []int32 // document -> position in the cluster's members
	dsim                       []float64
	off, to                    []int32
	ts                         []float64
	dist, bpar, queue          []int32
	bsim                       []float64
	disc, low, next, dpar, sub []int32
	subChained, stack          []int32
	dparSim                    []float64
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// compute returns the diagnostics of one cluster (members ms sorted, removals rs, links
// ls, keeper kd; nodeOf tells exact duplicates) and appends its longest chain to
// chainDocs and chainSims.
//
// The longest chain comes from a breadth-first search from the keeper over the links.
// The suggested cut comes from one depth-first search from the keeper that finds the
// bridges of the links (Tarjan's low-link) and counts, for each, the chained and unchained
// members on its far side; the bridge separating the most chained members wins, then the
// one separating the fewest unchained members, then the weakest link, then the lowest
// (A, B). A link between exact duplicates is never suggested: they stay together. Both
// are linear in the cluster's size and links.
func (ds *diagScratch) compute(ms []int, rs []Removal, ls []Edge, kd int, t float64, nodeOf []int32, chainDocs []int, chainSims []float64) (Diagnostics, []int, []float64) {
	m := len(ms)
	for i, d := range ms {
		ds.docLoc[d] = int32(i)
	}
	kl := ds.docLoc[kd]
	d := Diagnostics{Size: m, Weakest: kd, WeakestSim: 1}
	ds.dsim = grow(ds.dsim, m)
	ds.dsim[kl] = 1
	for _, rm := range rs {
		ds.dsim[ds.docLoc[rm.Doc]] = rm.Sim
		if rm.Sim < d.WeakestSim || (rm.Sim == d.WeakestSim && d.Weakest == kd) {
			d.Weakest, d.WeakestSim = rm.Doc, rm.Sim
		}
		if rm.Sim < t {
			d.ChainedMembers++
		}
	}
	d.Chained = d.ChainedMembers > 0

	// The links as adjacency lists over member positions.
	ds.off = grow(ds.off, m+1)
	clear(ds.off)
	for _, e := range ls {
		ds.off[ds.docLoc[e.A]+1]++
		ds.off[ds.docLoc[e.B]+1]++
	}
	for i := range m {
		ds.off[i+1] += ds.off[i]
	}
	ds.to = grow(ds.to, 2*len(ls))
	ds.ts = grow(ds.ts, 2*len(ls))
	ds.next = grow(ds.next, m)
	copy(ds.next, ds.off[:m])
	for _, e := range ls {
		a, b := ds.docLoc[e.A], ds.docLoc[e.B]
		ds.to[ds.next[a]], ds.ts[ds.next[a]] = b, e.Sim
		ds.next[a]++
		ds.to[ds.next[b]], ds.ts[ds.next[b]] = a, e.Sim
		ds.next[b]++
	}

	// Longest chain: breadth-first from the keeper.
	ds.dist = grow(ds.dist, m)
	ds.bpar = grow(ds.bpar, m)
	ds.bsim = grow(ds.bsim, m)
	for i := range ds.dist {
		ds.dist[i] = -1
	}
	ds.dist[kl] = 0
	far := kl
	q := append(ds.queue[:0], kl)
	for i := 0; i < len(q); i++ {
		x := q[i]
		for j := ds.off[x]; j < ds.off[x+1]; j++ {
			if y := ds.to[j]; ds.dist[y] < 0 {
				ds.dist[y], ds.bpar[y], ds.bsim[y] = ds.dist[x]+1, x, ds.ts[j]
				q = append(q, y)
				if ds.dist[y] > ds.dist[far] || (ds.dist[y] == ds.dist[far] &&
					(ds.dsim[y] < ds.dsim[far] || ds.dsim[y] == ds.dsim[far] && y < far)) {
					far = y
				}
			}
		}
	}
	ds.queue = q
	hops := int(ds.dist[far])
	start := len(chainDocs)
	chainDocs = slices.Grow(chainDocs, hops+1)[:start+hops+1]
	chainSims = slices.Grow(chainSims, hops)[:len(chainSims)+hops]
	docs, sims := chainDocs[start:len(chainDocs):len(chainDocs)], chainSims[len(chainSims)-hops:len(chainSims):len(chainSims)]
	for x, i := far, hops; ; i-- {
		docs[i] = ms[x]
		if x == kl {
			break
		}
		sims[i-1] = ds.bsim[x]
		x = ds.bpar[x]
	}
	d.Chain = Chain{Docs: docs, Sims: sims}
	if d.Chained {
		d.Cut = ds.suggestCut(ms, kl, t, nodeOf)
	}
	return d, chainDocs, chainSims
}

// suggestCut finds the bridges of the links by an iterative depth-first search from the
// keeper and picks the one to cut (see compute).
func (ds *diagScratch) suggestCut(ms []int, kl int32, t float64, nodeOf []int32) Suggestion {
	m := len(ms)
	ds.disc = grow(ds.disc, m)
	ds.low = grow(ds.low, m)
	ds.dpar = grow(ds.dpar, m)
	ds.dparSim = grow(ds.dparSim, m)
	ds.sub = grow(ds.sub, m)
	ds.subChained = grow(ds.subChained, m)
	for i := range m {
		ds.disc[i] = -1
	}
	copy(ds.next, ds.off[:m])
	var best Suggestion
	timer := int32(0)
	visit := func(x, parent int32, s float64) {
		ds.disc[x], ds.low[x] = timer, timer
		timer++
		ds.dpar[x], ds.dparSim[x] = parent, s
		ds.sub[x] = 1
		ds.subChained[x] = 0
		if x != kl && ds.dsim[x] < t {
			ds.subChained[x] = 1
		}
		ds.stack = append(ds.stack, x)
	}
	ds.stack = ds.stack[:0]
	visit(kl, -1, 1)
	for len(ds.stack) > 0 {
		x := ds.stack[len(ds.stack)-1]
		if j := ds.next[x]; j < ds.off[x+1] {
			ds.next[x]++
			y := ds.to[j]
			switch {
			case y == ds.dpar[x]: // links are distinct pairs: the only way back is the tree edge
			case ds.disc[y] < 0:
				visit(y, x, ds.ts[j])
			default:
				ds.low[x] = min(ds.low[x], ds.disc[y])
			}
			continue
		}
		ds.stack = ds.stack[:len(ds.stack)-1]
		p := ds.dpar[x]
		if p < 0 {
			continue
		}
		ds.low[p] = min(ds.low[p], ds.low[x])
		ds.sub[p] += ds.sub[x]
		ds.subChained[p] += ds.subChained[x]
		if ds.low[x] <= ds.disc[p] || ds.subChained[x] == 0 || nodeOf[ms[p]] == nodeOf[ms[x]] {
			continue
		}
		c := Suggestion{
			Edge:      Edge{A: ms[p], B: ms[x], Sim: ds.dparSim[x]},
			Chained:   int(ds.subChained[x]),
			Unchained: int(ds.sub[x] - ds.subChained[x]),
		}
		if best.Chained == 0 || cmp.Or(
			cmp.Compare(best.Chained, c.Chained),
			cmp.Compare(c.Unchained, best.Unchained),
			cmp.Compare(c.Edge.Sim, best.Edge.Sim),
			cmp.Compare(c.Edge.A, best.Edge.A),
			cmp.Compare(c.Edge.B, best.Edge.B),
		) < 0 {
			best = c
		}
	}
	return best
}
