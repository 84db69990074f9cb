package sweep

import (
	"github.com/dedupstudio/dedupstudio/internal/unionfind"
)

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

// Components is cluster.Components as a Clusterer: union-find over the edges; each
// cluster's id is its smallest document index. The sweep scores cluster.Components in
// one union-find pass over all thresholds: single linkage, every chain of accepted
// pairs (A~B, B~C) is one cluster, so A and C are merged even when they share nothing.
// It is what most pipelines run and what chains hurt most. The other registered
// policies (cluster.Policies) are clustered by internal/cluster at each threshold.
func Components(n int, edges []Edge, _ float64) []int32 {
	uf := unionfind.New(n)
	for _, e := range edges {
		uf.Union(e.A, e.B)
	}
	return uf.IDs()
}

// mergedSizesOf writes, per pair of keys, the size of uf's set that holds both its
// elements into out, 0 when they are apart: mergedSizes for a clustering in progress.
func mergedSizesOf(uf *unionfind.Forest, keys []uint64, out []int32) {
	for i, k := range keys {
		a, b := unpair(k)
		out[i] = 0
		if ra := uf.Find(a); ra == uf.Find(b) {
			out[i] = uf.Size(ra)
		}
	}
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
