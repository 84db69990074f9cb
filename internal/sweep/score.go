package sweep

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/par"
	"github.com/dedupstudio/dedupstudio/internal/unionfind"
)

// level returns how many of the ascending thresholds ths a similarity reaches: a pair of
// similarity s is accepted at ths[j] exactly when j < level(s).
func level(ths []float64, s float64) int {
	return sort.Search(len(ths), func(j int) bool { return ths[j] > s })
}

// modelBins returns the model bin of every candidate of cs (identicalBin for identical
// texts), computed once per shape; nil without a model.
func (e *engine) modelBins(ctx context.Context, cs *shapeCands) ([]uint8, error) {
	if e.bin == nil {
		return nil, nil
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.bins != nil {
		return cs.bins, nil
	}
	out, missing, at := e.bin.known(cs.keys)
	bins := make([]uint8, len(missing))
	err := par.Chunks(ctx, len(missing), 1024, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			a, b := unpair(missing[i])
			bins[i] = uint8(e.bin.ofOnce(int(a), int(b)))
		}
	})
	if err != nil {
		return nil, err
	}
	for n, i := range at {
		out[i] = bins[n]
	}
	e.bin.remember(missing, bins)
	cs.bins = out
	return out, nil
}

// pass scores one (shape, similarity, policy) at every threshold of ths (ascending) and
// returns the scores and the accepted candidates per threshold.
func (e *engine) pass(ctx context.Context, cs *shapeCands, sims similarities, ths []float64, policy cluster.Policy) ([]Scores, []int, error) {
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
	bins, err := e.modelBins(ctx, cs)
	if err != nil {
		return nil, nil, err
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
	// The accepted pairs per model bin, from the highest threshold down.
	var accBins []int64
	if bins != nil {
		accBins = make([]int64, e.bin.bins()+1)
	}
	addAccepted := func(j int) {
		if bins == nil {
			return
		}
		for _, i := range order[start[j+1]:start[j+2]] {
			accBins[bins[i]]++
		}
	}
	profileOf := func(rules []RuleProfile) *Profile {
		if bins == nil {
			return nil
		}
		nb := e.bin.bins()
		return &Profile{Accepted: slices.Clone(accBins[:nb]), AcceptedIdentical: accBins[nb], Rules: rules}
	}

	if _, custom := e.policies[policy]; policy != cluster.Components && !custom && cluster.FollowsLevels(policy) {
		step := func(j int) []bool {
			addAccepted(j)
			acceptedAt(j)
			return acc
		}
		scores, err := e.passLevels(ctx, cs, sims, ths, policy, step, profileOf)
		return scores, accepted, err
	}
	if policy != cluster.Components {
		for j := m - 1; j >= 0; j-- {
			addAccepted(j)
			t := ths[j]
			o, rules, err := e.one(ctx, cs, sims, t, policy)
			if err != nil {
				return nil, nil, err
			}
			scores[j] = e.scores(o.acc, o.merged, o.removals, o.multi, o.largest, profileOf(rules))
			accepted[j] = o.edges
		}
		return scores, accepted, nil
	}
	// Connected components only grow as the threshold falls: add the edges of each level
	// from the highest threshold down and read the components (and every rule's keepers)
	// off after each.
	uf := unionfind.New(e.n)
	var kt *keeperTracker
	if bins != nil {
		kt = newKeeperTracker(e.bin, e.orders, e.n)
	}
	for j := m - 1; j >= 0; j-- {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		for _, i := range order[start[j+1]:start[j+2]] {
			a, b := unpair(cs.keys[i])
			if keep, gone, ok := uf.Union(a, b); ok && kt != nil {
				kt.merge(keep, gone)
			}
		}
		addAccepted(j)
		acceptedAt(j)
		mergedSizesOf(uf, e.keys, merged)
		removals, multi, largest := e.n-uf.Sets(), uf.Multi(), uf.Largest()
		var rules []RuleProfile
		if kt != nil {
			rules = kt.rules(e.ruleNames, removals, multi, largest)
		}
		scores[j] = e.scores(acc, merged, removals, multi, largest, profileOf(rules))
	}
	return scores, accepted, nil
}

// scores counts the outcome of one configuration on the counted pairs: accepted[i] per
// counted pair, and merged[i], the size of the cluster that holds both its documents (0
// when they are apart); prof the configuration's profile for the dataset estimates (nil
// without a model).
func (e *engine) scores(accepted []bool, merged []int32, removals, clusters, largest int, prof *Profile) Scores {
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
	if e.model != nil && prof != nil {
		est := e.model.Estimate(*prof)
		s.Dataset, s.Profile = &est, prof
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
	var prof *Profile
	if e.bin != nil {
		nb := e.bin.bins()
		acc := make([]int64, nb+1)
		members := map[int32][]int32{}
		for d, id := range ids {
			members[id] = append(members[id], int32(d))
		}
		for _, ms := range members {
			for x := range ms {
				for y := x + 1; y < len(ms); y++ {
					acc[e.bin.of(int(ms[x]), int(ms[y]))]++
				}
			}
		}
		prof = &Profile{Accepted: acc[:nb], AcceptedIdentical: acc[nb], Rules: e.bin.profileOfIDs(ids, e.orders, e.ruleNames)}
	}
	return e.scores(same, mergedSizes(e.keys, ids), e.n-sets, multi, largest, prof)
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

// graphFor returns the cluster.Graph of a shape's candidates under one verification
// (and, for estimates, one k), built once for the policies internal/cluster runs and
// kept until dropGraphs.
func (e *engine) graphFor(cs *shapeCands, sims similarities) (*cluster.Graph, error) {
	key := sims.key()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if g := cs.graphs[key]; g != nil {
		return g, nil
	}
	edges := make([]cluster.Edge, sims.len())
	for i := range edges {
		a, b := unpair(cs.keys[i])
		edges[i] = cluster.Edge{A: int(a), B: int(b), Sim: sims.at(i)}
	}
	g, err := cluster.NewGraph(cluster.Input{Docs: e.keep, Exact: e.exactGroups(), Edges: edges, Sim: e.simFunc(sims)})
	if err != nil {
		return nil, fmt.Errorf("cluster graph of %v: %w", cs.shape, err)
	}
	if cs.graphs == nil {
		cs.graphs = map[string]*cluster.Graph{}
	}
	cs.graphs[key] = g
	return g, nil
}

// dropGraphs releases the shape's cluster graphs: a graph holds about 100 bytes a
// candidate, and a shape's graphs held through all its ks and verifications were the
// largest part of a large sweep's heap.
func (cs *shapeCands) dropGraphs() {
	cs.mu.Lock()
	cs.graphs = nil
	cs.mu.Unlock()
}
