package sweep

import (
	"context"
	"fmt"
	"sort"

	"github.com/dedupstudio/dedupstudio/internal/unionfind"
)

// level returns how many of the ascending thresholds ths a similarity reaches: a pair of
// similarity s is accepted at ths[j] exactly when j < level(s).
func level(ths []float64, s float64) int {
	return sort.Search(len(ths), func(j int) bool { return ths[j] > s })
}

// pass scores one (shape, similarity, policy) at every threshold of ths (ascending) and
// returns the scores and the accepted candidates per threshold.
func (e *engine) pass(ctx context.Context, cs *shapeCands, sims similarities, ths []float64, policy string) ([]Scores, []int, error) {
	m := len(ths) // at most MaxThresholds, so a level fits a byte
	n := sims.len()
	lv := make([]uint8, n)
	counts := make([]int, m+2)
	for i := range n {
		l := level(ths, sims.at(i))
		lv[i] = uint8(l)
		counts[l+1]++
	}
	// order lists the candidates by level (counting sort); start[l] is where level l begins.
	start := make([]int, m+2)
	for l := 1; l <= m+1; l++ {
		start[l] = start[l-1] + counts[l]
	}
	order := make([]int32, n)
	fill := append([]int(nil), start[:m+1]...)
	for i, l := range lv {
		order[fill[l]] = int32(i)
		fill[l]++
	}
	scores := make([]Scores, m)
	accepted := make([]int, m)
	acc := make([]bool, len(e.keys))
	merged := make([]int32, len(e.keys))
	acceptedAt := func(j int) {
		for i, c := range cs.labCand {
			acc[i] = c >= 0 && int(lv[c]) > j
		}
		accepted[j] = n - start[j+1]
	}

	if _, ok := e.policies[policy]; ok {
		for j, t := range ths {
			o, err := e.one(ctx, cs, sims, t, policy)
			if err != nil {
				return nil, nil, err
			}
			scores[j] = e.scores(o.acc, o.merged, o.removals, o.multi, o.largest, o.caps)
			accepted[j] = o.edges
		}
		return scores, accepted, nil
	}
	if policy != ConnectedComponents {
		return nil, nil, fmt.Errorf("unknown policy %q", policy)
	}
	// Connected components only grow as the threshold falls: add the edges of each level
	// from the highest threshold down and read the components off after each.
	uf := unionfind.New(e.n)
	tr := e.capTracker()
	for j := m - 1; j >= 0; j-- {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		for _, i := range order[start[j+1]:start[j+2]] {
			a, b := unpair(cs.keys[i])
			if keep, gone, ok := uf.Union(a, b); ok && tr != nil {
				tr.merge(keep, gone)
			}
		}
		var caps []int64
		if tr != nil {
			caps = tr.caps()
		}
		acceptedAt(j)
		mergedSizesOf(uf, e.keys, merged)
		scores[j] = e.scores(acc, merged, e.n-uf.Sets(), uf.Multi(), uf.Largest(), caps)
	}
	return scores, accepted, nil
}

// scores counts the outcome of one configuration on the counted pairs: accepted[i] per
// counted pair, and merged[i], the size of the cluster that holds both its documents (0
// when they are apart); caps the clustering's pairs per bin (binTracker), nil when it
// was not computed.
func (e *engine) scores(accepted []bool, merged []int32, removals, clusters, largest int, caps []int64) Scores {
	type tally struct{ dups, dupAcc, dupMerged, non, nonAcc, nonMerged int }
	var all tally
	per := make([]tally, len(e.cats))
	for i, d := range e.dup {
		t := &per[e.catOf[i]]
		if d {
			all.dups++
			t.dups++
			if accepted[i] {
				all.dupAcc++
				t.dupAcc++
			}
			if merged[i] > 0 {
				all.dupMerged++
				t.dupMerged++
			}
		} else {
			all.non++
			t.non++
			if accepted[i] {
				all.nonAcc++
				t.nonAcc++
			}
			if merged[i] > 0 {
				all.nonMerged++
				t.nonMerged++
			}
		}
	}
	s := Scores{
		Recall:         NewRate(all.dupAcc, all.dups),
		ClusterRecall:  NewRate(all.dupMerged, all.dups),
		FalseMerges:    NewRate(all.nonMerged, all.non),
		Precision:      NewRate(all.dupAcc, all.dupAcc+all.nonAcc),
		Removals:       removals,
		Clusters:       clusters,
		LargestCluster: largest,
	}
	for c, t := range per {
		s.Categories = append(s.Categories, CategoryScore{
			Category:    e.cats[c],
			Recall:      NewRate(t.dupAcc, t.dups),
			FalseMerges: NewRate(t.nonMerged, t.non),
		})
	}
	if e.des.Name != "" {
		acc := make([]bool, len(e.des.pairs))
		fm := make([]int32, len(e.des.pairs))
		for i, p := range e.des.pairs {
			acc[i] = e.dup[p] && accepted[p]
			if !e.dup[p] {
				fm[i] = merged[p]
			}
		}
		est := e.des.estimate(acc, fm, removals, caps)
		s.Dataset = &est
	}
	return s
}

// baseline scores exact-hash dedup alone: documents with equal content hashes form one
// cluster, and a pair is accepted when its hashes are equal.
func (e *engine) baseline() Scores {
	first := make(map[uint64]int32, e.n)
	ids := make([]int32, e.n)
	for i, h := range e.in.Docs.ContentHash {
		id, ok := first[h]
		if !ok {
			id = int32(i)
			first[h] = id
		}
		ids[i] = id
	}
	same := make([]bool, len(e.keys))
	for i, k := range e.keys {
		a, b := unpair(k)
		same[i] = ids[a] == ids[b]
	}
	sets, multi, largest := clusterStats(ids)
	return e.scores(same, mergedSizes(e.keys, ids), e.n-sets, multi, largest, e.capsOf(ids))
}

// mergedSizes returns, per counted pair (keys), the size of the cluster of ids that
// holds both its documents, 0 when they are apart.
func mergedSizes(keys []uint64, ids []int32) []int32 {
	size := make(map[int32]int32, 64)
	for _, id := range ids {
		size[id]++
	}
	out := make([]int32, len(keys))
	for i, k := range keys {
		a, b := unpair(k)
		if ids[a] == ids[b] {
			out[i] = size[ids[a]]
		}
	}
	return out
}
