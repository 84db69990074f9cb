package cluster

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/dedupstudio/dedupstudio/internal/par"
)

// Edge is a pair of documents and their similarity: a verified LSH candidate (MinHash
// estimate or exact Jaccard), or a link inside a cluster.
type Edge struct {
	A, B int
	Sim  float64
}

// Input is what clustering starts from. Documents are the indices 0..len(Docs)-1.
type Input struct {
	// Docs holds what the keeper rule reads, one per document.
	Docs []Doc
	// Exact holds groups of documents with equal content after normalization (ExactGroups).
	// A document is in at most one group. Members of a group are always clustered together
	// and a member is removed as an exact duplicate when its group holds the keeper.
	Exact [][]int
	// Edges are the verified candidate pairs with their similarity, accepted or not: an edge
	// is accepted when its similarity reaches the threshold, and a rejected one still saves
	// a Sim call. Either orientation; a pair given twice keeps its larger similarity.
	Edges []Edge
	// Sim returns the similarity of any two documents, candidates or not: keeper-star and
	// complete-link ask it for pairs the edges do not cover, and every policy asks it for
	// a removed document's similarity to its keeper when no edge gives it. It may be
	// expensive (exact Jaccard on demand); each policy's doc says how often it is called.
	// It must be symmetric and, if Graph.Cluster runs concurrently, safe for concurrent use;
	// a NaN counts as 0.
	Sim func(a, b int) float64
}

// InputError is input or configuration that clustering cannot use, naming the field at
// fault (e.g. "edges[12]", "exact[3][1]", "threshold").
type InputError struct {
	Field string
	Msg   string
}

func (e *InputError) Error() string { return "cluster: " + e.Field + ": " + e.Msg }

// Config is one way of clustering a Graph: the sweep varies Threshold and Policy, a
// manifest records all four.
type Config struct {
	Threshold float64 // an edge is accepted, a pair passes, at Sim >= Threshold
	Policy    Policy
	Rule      Rule
	// Budget bounds the pair checks keeper-star and complete-link spend per node of a
	// connected component (a node is a document or an exact group); 0 means
	// DefaultBudget, a negative value no bound. See Result.Limited.
	Budget int
	// Lean leaves out each cluster's links and diagnostics (Cluster.Links, Diag but for
	// Size, Result.Chained): a sweep scoring thousands of configurations needs only who
	// is removed in favour of whom.
	Lean bool
	// ConcurrentSim says Input.Sim is safe for concurrent use: keeper-star then asks it
	// for a large part's tests on every core (the clusters are the same; only the wall
	// time differs). A sweep sets it.
	ConcurrentSim bool
	// Order, when set, is Rule compiled over the graph's documents (Rule.Order or
	// RankedOrder of Input.Docs), used instead of compiling Rule again: a sweep passes
	// each rule's RankedOrder to thousands of clusterings. It must be Rule's.
	Order Order `json:"-"`
}

// DefaultBudget is Config.Budget when none is given: 1024 pair checks per node.
// Complete-link needs about s/2 per node to merge a near-clique of s nodes in full, so
// near-cliques of up to 2,000 documents are clustered in full; on the real-text test
// corpus 128 per node was enough at every threshold from 0.1, and keeper-star needed less
// than 8.
const DefaultBudget = 1024

func (c Config) validate() error {
	if math.IsNaN(c.Threshold) || c.Threshold < 0 || c.Threshold > 1 {
		return &InputError{Field: "threshold", Msg: fmt.Sprintf("%v is not in [0, 1]", c.Threshold)}
	}
	if err := c.Policy.Validate(); err != nil {
		return err
	}
	return c.Rule.Validate()
}

func (c Config) budget() int {
	switch {
	case c.Budget == 0:
		return DefaultBudget
	case c.Budget < 0:
		return math.MaxInt / (1 << 32) // no bound that a product with a node count can overflow
	}
	return min(c.Budget, math.MaxInt/(1<<32)) // nor a huge one
}

// Reason says why a document is removed.
type Reason string

// Reasons for a removal.
const (
	Exact Reason = "exact" // same content as the keeper after normalization
	Near  Reason = "near"  // similar to the keeper
)

// Removal is one document a cluster removes in favour of its keeper.
type Removal struct {
	Doc    int
	Sim    float64 // direct similarity to the keeper (1 for an exact duplicate)
	Reason Reason
}

// Chain is a path of links from a cluster's keeper to one member: Docs[0] is the keeper,
// Sims[i] the similarity of the link Docs[i]~Docs[i+1]. Its length in hops is len(Sims).
type Chain struct {
	Docs []int
	Sims []float64
}

// Suggestion is a link whose removal separates chained members from the keeper. Edge.A is
// on the keeper's side. Chained == 0 means there is no suggestion: the cluster is not
// chained, or no single link separates any chained member.
type Suggestion struct {
	Edge      Edge
	Chained   int // chained members it separates from the keeper
	Unchained int // members that pass the keeper but are separated with them
}

// Diagnostics say how much a cluster can be trusted. A cluster's links are every pair of
// members known to pass the threshold: the accepted edges between them, a link of
// similarity 1 from each exact group's representative to the rest of the group, and a
// direct link from the keeper to each member whose own similarity to it passes. A member
// that is not directly linked to the keeper is only in the cluster through others.
type Diagnostics struct {
	Size int
	// Weakest is the member least similar to the keeper and WeakestSim that similarity
	// (lowest index on ties); for a cluster of exact duplicates WeakestSim is 1.
	Weakest    int
	WeakestSim float64
	// Chained is true when some member's direct similarity to the keeper is under the
	// threshold: a document that would be removed although it is not a duplicate of what
	// is kept. ChainedMembers counts them.
	Chained        bool
	ChainedMembers int
	// Chain is the longest of the shortest link paths from the keeper to a member: the
	// member farthest in hops (ties: lower similarity to the keeper, then lower index).
	// It has more than one hop exactly when the cluster is chained.
	Chain Chain
	// Cut is the link to cut to split the chained members off.
	Cut Suggestion
}

// Cluster is a group of documents of which one, the keeper, stays and the others are
// removed. Members and Removed are sorted by document, Links by (A, B) with A < B.
type Cluster struct {
	ID       int // index in Result.Clusters; -1 for clusters new from Override or Cut
	Keeper   int
	Override string // why the keeper was chosen by hand; empty when the rule chose it
	Members  []int  // every document, the keeper included
	Removed  []Removal
	Links    []Edge
	Diag     Diagnostics
}

// Result is a clustering of a Graph. Documents in no cluster are kept.
type Result struct {
	Config   Config
	Clusters []Cluster // ordered by smallest member
	// Assign is each document's cluster ID, or -1 when it is in no cluster: what a sweep
	// compares labeled pairs against (see Together).
	Assign       []int
	Removed      int // documents removed
	RemovedExact int // of which exact duplicates of their keeper
	Chained      int // chained clusters
	// SimCalls counts the calls to Input.Sim this clustering made.
	SimCalls int
	// Limited counts the connected components where keeper-star or complete-link ran out
	// of Config.Budget. There the policy stopped testing pairs that no edge covers, so its
	// clusters may be smaller than unbounded work would make them, never larger and never
	// with a failing pair.
	Limited int
}

// Together reports whether documents a and b are in the same cluster, i.e. one of them
// would be removed because of the other's cluster. A labeled non-duplicate pair for which
// it is true is a false merge.
func (r *Result) Together(a, b int) bool {
	return r.Assign[a] >= 0 && r.Assign[a] == r.Assign[b]
}

// ByRisk orders clusters for review, riskiest first: chained before unchained, then by
// weakest link to the keeper (lowest first), then larger first, then by ID. Use it with
// slices.SortFunc.
func ByRisk(a, b Cluster) int {
	if a.Diag.Chained != b.Diag.Chained {
		if a.Diag.Chained {
			return -1
		}
		return 1
	}
	return cmp.Or(
		cmp.Compare(a.Diag.WeakestSim, b.Diag.WeakestSim),
		cmp.Compare(b.Diag.Size, a.Diag.Size),
		cmp.Compare(a.ID, b.ID),
	)
}

// Graph is an Input validated and indexed once, to be clustered under many Configs (a
// sweep's thresholds and policies). It is not changed by clustering: Cluster, Override
// and Cut may run concurrently if Input.Sim allows it.
type Graph struct {
	in Input
	n  int
	// Exact groups collapse into nodes, numbered in order of their smallest document.
	nodeOf  []int32 // document -> node
	grpOff  []int32 // node -> its documents grpDocs[grpOff[u]:grpOff[u+1]], ascending
	grpDocs []int32
	// adjacency of nodes over every edge, accepted or not: adj[adjOff[u]:adjOff[u+1]]
	// sorted by neighbour, one entry per neighbour.
	adjOff []int32
	adj    []nb

	// Every edge once (u < v), by similarity, highest first, then by (u, v): complete-link's
	// merge order at any threshold. Sorted on first use, with the place in it of each
	// adjacency entry (u, v) with u < v (rank, parallel to adj; 0 for the others).
	sortOnce sync.Once
	sorted   []cedge
	rank     []int32

	// byRank lists each node's neighbours in the order of their edges in sorted:
	// byRank[adjOff[u]:adjOff[u+1]], so the edges accepted at any threshold are a prefix
	// of each list. Built on first use (keeper-star's Levels).
	byRankOnce sync.Once
	byRank     []int32
}

type cedge struct {
	u, v int32
	s    float64
}

// sortedEdges returns g.sorted, sorting it on the first call.
func (g *Graph) sortedEdges() []cedge {
	g.sortOnce.Do(func() {
		es := make([]placed, 0, len(g.adj)/2)
		for u := range int32(g.nodes()) {
			off := g.adjOff[u]
			for i, x := range g.neighbours(u) {
				if x.v > u {
					es = append(es, placed{cedge{u, x.v, x.s}, off + int32(i)})
				}
			}
		}
		// es is in (u, v) order already, so a stable sort by similarity, highest first,
		// gives compareEdges' order: a radix sort on the similarity's bits, in linear
		// time (a sweep's graphs have millions of edges, and the policies that share the
		// graph wait for it).
		es = radixBySim(es, make([]placed, len(es)))
		g.sorted = make([]cedge, len(es))
		g.rank = make([]int32, len(g.adj))
		for i, e := range es {
			g.sorted[i] = e.cedge
			g.rank[e.at] = int32(i)
		}
	})
	return g.sorted
}

// placed is an edge and the index of its (u, v) entry in Graph.adj.
type placed struct {
	cedge
	at int32
}

// radixBySim sorts xs by similarity (in [0, 1], not NaN), highest first, stably: a radix
// sort on 16-bit digits of the similarity's bits (which order non-negative floats as they
// compare), skipping the digits every value shares (estimates k/n leave most low bits
// zero). tmp is scratch of len(xs); the result is xs or tmp.
func radixBySim(xs, tmp []placed) []placed {
	count := make([]int, 1<<16)
	key := func(x placed, shift uint) int { return int(^math.Float64bits(x.s+0) >> shift & 0xFFFF) } // +0: -0 as 0
	for shift := uint(0); shift < 64; shift += 16 {
		clear(count)
		for _, x := range xs {
			count[key(x, shift)]++
		}
		if len(xs) == 0 || count[key(xs[0], shift)] == len(xs) {
			continue
		}
		at := 0
		for d, c := range count {
			count[d] = at
			at += c
		}
		for _, x := range xs {
			d := key(x, shift)
			tmp[count[d]] = x
			count[d]++
		}
		xs, tmp = tmp, xs
	}
	return xs
}

// rankAdjacency returns g.byRank, building it on the first call.
func (g *Graph) rankAdjacency() []int32 {
	g.byRankOnce.Do(func() {
		all := g.sortedEdges()
		fill := slices.Clone(g.adjOff[:g.nodes()])
		g.byRank = make([]int32, len(g.adj))
		for _, e := range all {
			g.byRank[fill[e.u]] = e.v
			g.byRank[fill[e.v]] = e.u
			fill[e.u]++
			fill[e.v]++
		}
	})
	return g.byRank
}

// compareEdges orders edges by similarity, highest first, then by (u, v): what
// cmp.Or of the three cmp.Compare calls gives (similarities are never NaN: NewGraph
// refuses them), without computing the later comparisons when the first decides.
func compareEdges(a, b cedge) int {
	switch {
	case a.s > b.s:
		return -1
	case a.s < b.s:
		return 1
	case a.u != b.u:
		return cmp.Compare(a.u, b.u)
	}
	return cmp.Compare(a.v, b.v)
}

type nb struct {
	v int32
	s float64
}

// NewGraph validates in and indexes it. Bad input is an *InputError naming the first
// field at fault; nothing of in is kept but its slices other than Edges (which the
// graph copies), which the caller must not change afterwards.
func NewGraph(in Input) (*Graph, error) {
	n := len(in.Docs)
	if n > math.MaxInt32 {
		return nil, &InputError{Field: "docs", Msg: fmt.Sprintf("%d documents, more than %d", n, math.MaxInt32)}
	}
	if in.Sim == nil {
		return nil, &InputError{Field: "sim", Msg: "no similarity function"}
	}
	g := &Graph{in: in, n: n}

	groupOf := make([]int32, n)
	for i := range groupOf {
		groupOf[i] = -1
	}
	for gi, grp := range in.Exact {
		for j, d := range grp {
			field := func() string { return fmt.Sprintf("exact[%d][%d]", gi, j) }
			if d < 0 || d >= n {
				return nil, &InputError{Field: field(), Msg: fmt.Sprintf("document %d out of range [0, %d)", d, n)}
			}
			if groupOf[d] >= 0 {
				return nil, &InputError{Field: field(), Msg: fmt.Sprintf("document %d is already in exact group %d", d, groupOf[d])}
			}
			groupOf[d] = int32(gi)
		}
	}
	for i, e := range in.Edges {
		var msg string
		switch {
		case e.A < 0 || e.A >= n || e.B < 0 || e.B >= n:
			msg = fmt.Sprintf("pair (%d, %d) out of range [0, %d)", e.A, e.B, n)
		case e.A == e.B:
			msg = fmt.Sprintf("document %d paired with itself", e.A)
		case !(e.Sim >= 0 && e.Sim <= 1): // NaN too
			msg = fmt.Sprintf("similarity %v is not in [0, 1]", e.Sim)
		default:
			continue
		}
		return nil, &InputError{Field: fmt.Sprintf("edges[%d]", i), Msg: msg}
	}

	// Nodes: one per exact group, one per other document, in order of smallest document.
	g.nodeOf = make([]int32, n)
	for i := range g.nodeOf {
		g.nodeOf[i] = -1
	}
	nodes := int32(0)
	for d := range n {
		if g.nodeOf[d] >= 0 {
			continue
		}
		if gi := groupOf[d]; gi >= 0 {
			for _, x := range in.Exact[gi] {
				g.nodeOf[x] = nodes
			}
		} else {
			g.nodeOf[d] = nodes
		}
		nodes++
	}
	g.grpOff = make([]int32, nodes+1)
	for _, u := range g.nodeOf {
		g.grpOff[u+1]++
	}
	for u := range nodes {
		g.grpOff[u+1] += g.grpOff[u]
	}
	g.grpDocs = make([]int32, n)
	fill := slices.Clone(g.grpOff[:nodes])
	for d, u := range g.nodeOf {
		g.grpDocs[fill[u]] = int32(d)
		fill[u]++
	}

	// Adjacency over nodes; edges inside an exact group say nothing new and are dropped.
	g.adjOff = make([]int32, nodes+1)
	for _, e := range in.Edges {
		if u, v := g.nodeOf[e.A], g.nodeOf[e.B]; u != v {
			g.adjOff[u+1]++
			g.adjOff[v+1]++
		}
	}
	for u := range nodes {
		g.adjOff[u+1] += g.adjOff[u]
	}
	adj := make([]nb, g.adjOff[nodes])
	copy(fill, g.adjOff[:nodes])
	for _, e := range in.Edges {
		if u, v := g.nodeOf[e.A], g.nodeOf[e.B]; u != v {
			adj[fill[u]] = nb{v, e.Sim}
			fill[u]++
			adj[fill[v]] = nb{u, e.Sim}
			fill[v]++
		}
	}
	// Sort each list by neighbour and keep one entry per neighbour (the largest
	// similarity): each list on its own, on every core (a sweep's graphs have millions of
	// edges, and the policies wait for them), then the lists compacted in place.
	kept := make([]int32, nodes)
	_ = par.Chunks(context.Background(), int(nodes), 4096, func(lo, hi int) {
		for u := lo; u < hi; u++ {
			seg := adj[g.adjOff[u]:g.adjOff[u+1]]
			slices.SortFunc(seg, func(a, b nb) int {
				return cmp.Or(cmp.Compare(a.v, b.v), cmp.Compare(b.s, a.s))
			})
			w, prev := 0, int32(-1)
			for _, x := range seg {
				if x.v != prev {
					seg[w] = x
					w++
					prev = x.v
				}
			}
			kept[u] = int32(w)
		}
	})
	w := int32(0)
	for u := range nodes {
		from := g.adjOff[u]
		g.adjOff[u] = w
		w += int32(copy(adj[w:], adj[from:from+kept[u]]))
	}
	g.adjOff[nodes] = w
	g.adj = adj[:w:w]
	// The edges are in adj now: a large sweep builds graphs of millions of them, and
	// holding the caller's 24-byte copy too kept a third more than the graph needs.
	g.in.Edges = nil
	return g, nil
}

// nodes returns the number of nodes.
func (g *Graph) nodes() int { return len(g.grpOff) - 1 }

func (g *Graph) group(u int32) []int32 { return g.grpDocs[g.grpOff[u]:g.grpOff[u+1]] }

func (g *Graph) neighbours(u int32) []nb { return g.adj[g.adjOff[u]:g.adjOff[u+1]] }

// edgeSim returns the similarity of nodes u and v if an edge gives it.
func (g *Graph) edgeSim(u, v int32) (float64, bool) {
	a, b := g.neighbours(u), g.neighbours(v)
	if len(b) < len(a) {
		a, v = b, u
	}
	i, ok := slices.BinarySearchFunc(a, v, func(x nb, v int32) int { return cmp.Compare(x.v, v) })
	if !ok {
		return 0, false
	}
	return a[i].s, true
}
