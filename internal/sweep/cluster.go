package sweep

// Edge is an accepted pair: documents A < B (indexes) whose similarity under the
// configuration's verification reached the threshold.
type Edge struct {
	A, B       int32
	Similarity float64
}

// Clusterer is a cluster policy: given the n documents and the accepted edges (sorted by
// (A, B)), it returns each document's cluster id. Ids are arbitrary int32 values; two
// documents are in one cluster when their ids are equal, and a cluster of k documents
// removes k-1 of them. threshold is the configuration's, for policies that need it (a
// complete-link policy checks every member pair against it). A Clusterer must be safe to
// call from one goroutine at a time and must not keep edges.
type Clusterer func(n int, edges []Edge, threshold float64) []int32

// ConnectedComponents is the built-in cluster policy: single linkage, every chain of
// accepted pairs (A~B, B~C) is one cluster, so A and C are merged even when they share
// nothing. It is what most pipelines run and what chains hurt most.
const ConnectedComponents = "connected-components"

// Components is the ConnectedComponents policy as a Clusterer: union-find over the
// edges; each cluster's id is its smallest document index.
func Components(n int, edges []Edge, _ float64) []int32 {
	uf := newUnionFind(n)
	for _, e := range edges {
		uf.union(e.A, e.B)
	}
	return uf.ids()
}

// unionFind is a disjoint-set forest with union by size and path halving; it tracks the
// number of sets, the number of sets of two or more and the largest set as edges come in.
type unionFind struct {
	parent  []int32
	size    []int32
	sets    int
	multi   int // sets of two or more
	largest int
}

func newUnionFind(n int) *unionFind {
	uf := &unionFind{parent: make([]int32, n), size: make([]int32, n), sets: n, largest: min(n, 1)}
	for i := range uf.parent {
		uf.parent[i] = int32(i)
		uf.size[i] = 1
	}
	return uf
}

func (uf *unionFind) find(x int32) int32 {
	for uf.parent[x] != x {
		uf.parent[x] = uf.parent[uf.parent[x]]
		x = uf.parent[x]
	}
	return x
}

func (uf *unionFind) union(a, b int32) { uf.unite(a, b) }

// unite joins the sets of a and b and returns the root kept and the root joined to it;
// ok is false when they were one set already.
func (uf *unionFind) unite(a, b int32) (keep, gone int32, ok bool) {
	ra, rb := uf.find(a), uf.find(b)
	if ra == rb {
		return ra, rb, false
	}
	if uf.size[ra] < uf.size[rb] {
		ra, rb = rb, ra
	}
	if uf.size[ra] >= 2 {
		uf.multi--
	}
	if uf.size[rb] >= 2 {
		uf.multi--
	}
	uf.parent[rb] = ra
	uf.size[ra] += uf.size[rb]
	uf.multi++
	uf.sets--
	uf.largest = max(uf.largest, int(uf.size[ra]))
	return ra, rb, true
}

// mergedSizes writes, per pair of keys, the size of the set that holds both its
// elements into out, 0 when they are apart: mergedSizes for a clustering in progress.
func (uf *unionFind) mergedSizes(keys []uint64, out []int32) {
	for i, k := range keys {
		a, b := unpair(k)
		out[i] = 0
		if ra := uf.find(a); ra == uf.find(b) {
			out[i] = uf.size[ra]
		}
	}
}

// ids returns each element's set id: the smallest element of its set.
func (uf *unionFind) ids() []int32 {
	n := len(uf.parent)
	smallest := make([]int32, n)
	for i := range smallest {
		smallest[i] = -1
	}
	out := make([]int32, n)
	for i := range n {
		r := uf.find(int32(i))
		if smallest[r] < 0 {
			smallest[r] = int32(i)
		}
		out[i] = smallest[r]
	}
	return out
}

// clusterStats counts the clusters of ids: sets, sets of two or more, the largest.
func clusterStats(ids []int32) (sets, multi, largest int) {
	count := make(map[int32]int32, 64)
	for _, id := range ids {
		count[id]++
	}
	for _, c := range count {
		if c >= 2 {
			multi++
		}
		largest = max(largest, int(c))
	}
	return len(count), multi, largest
}
