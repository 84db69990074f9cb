package results

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/corpus"
	"github.com/dedupstudio/dedupstudio/internal/unionfind"
)

// Dataset is the dataset the results are about: its documents' external ids in import
// order (the order datatrove's index of a one-task run follows), and what the keeper
// rule reads of each, at the same index.
type Dataset struct {
	Name string
	IDs  []string
	Docs []cluster.Doc
}

// BuildOptions choose how results become clusters.
type BuildOptions struct {
	// Rule chooses the keepers the file does not give (and all of them when
	// IgnoreFileKeepers).
	Rule              cluster.Rule
	IgnoreFileKeepers bool
	// SkipUnknown skips and counts the records that name a document the dataset does not
	// have, instead of refusing the file.
	SkipUnknown bool
}

// Cluster is one cluster of an engine's results, its documents as indexes into the
// dataset.
type Cluster struct {
	Members []int // sorted
	Keeper  int
	// KeeperFromFile is true when the engine's file named the keeper.
	KeeperFromFile bool
	// Links are the pairs the engine scored between members (A < B, the higher score of
	// a pair given twice); empty for engines that give clusters without pairs.
	Links []cluster.Edge
	// Weakest is the engine's weakest link: the lowest score on the cluster's maximum
	// spanning tree, the link whose loss would split it first; NaN without scores.
	Weakest float64
}

// Built is what Build makes of a Read.
type Built struct {
	Clusters []Cluster // ordered by smallest member
	// Skipped counts records skipped for naming a document the dataset does not have,
	// SkippedIDs the first MaxListed of those ids.
	Skipped    int
	SkippedIDs []string
	Removals   int
}

// Build resolves r's documents against ds and forms the clusters: the connected
// components of the pairs and of the memberships together, each with the keeper the file
// gives or the rule's. Unknown documents are an *UnknownIDsError unless opt.SkipUnknown.
func Build(r *Read, ds Dataset, opt BuildOptions) (Built, error) {
	if err := opt.Rule.Validate(); err != nil {
		return Built{}, err
	}
	byID := make(map[string]int, len(ds.IDs))
	for i, id := range ds.IDs {
		byID[id] = i
	}
	var out Built
	unknown := &badList{}
	// Each document the file names is resolved once, where it is first used.
	const unresolved, missing = -1, -2
	at := make([]int, len(r.Docs))
	for i := range at {
		at[i] = unresolved
	}
	resolve := func(doc int) (int, bool) {
		if at[doc] == unresolved {
			at[doc] = missing
			ref := r.Docs[doc]
			switch i, ok := byID[ref.ID]; {
			case ref.Index >= 0 && ref.Index < len(ds.IDs):
				at[doc] = ref.Index
			case ref.Index >= 0:
				unknown.add(&corpus.RecordError{Place: ref.Place, Field: ref.Field, Msg: fmt.Sprintf("document index %d: the dataset has %d documents (indexes count the documents of one task's input, in the order the dataset was imported)", ref.Index, len(ds.IDs))})
			case ok:
				at[doc] = i
			default:
				unknown.add(&corpus.RecordError{Place: ref.Place, Field: ref.Field, Msg: fmt.Sprintf("no document %s in the dataset", strconv.Quote(ref.ID))})
				if len(out.SkippedIDs) < MaxListed {
					out.SkippedIDs = append(out.SkippedIDs, ref.ID)
				}
			}
		}
		return at[doc], at[doc] >= 0
	}

	// all joins memberships and pairs; scored only pairs, for the spanning tree.
	all, scored := unionfind.New(len(ds.IDs)), unionfind.New(len(ds.IDs))
	find := func(d int) int { return int(all.Find(int32(d))) }
	union := func(a, b int) { all.Union(int32(a), int32(b)) }

	// Pairs, resolved; a pair given twice keeps its higher score. A search before insert
	// (Milvus, the datasketch program) kept the stored documents its hits name and removed
	// each query in favour of its best hit: with the file's keepers, each query keeps only
	// that pair, so the clusters are what the engine removed, one stored document each.
	stars := r.Format.SearchBeforeInsert() && r.KeeperGiven && !opt.IgnoreFileKeepers
	type key struct{ a, b int }
	scores := map[key]float64{}
	type best struct {
		hit   int
		score float64
	}
	bestHit := map[int]best{}
	hits := map[int]bool{}
	for _, p := range r.Pairs {
		a, okA := resolve(p.A)
		b, okB := resolve(p.B)
		if !okA || !okB {
			out.Skipped += p.Rows
			continue
		}
		if a == b {
			continue
		}
		if stars {
			if x, ok := bestHit[a]; !ok || p.Score > x.score || p.Score == x.score && b < x.hit {
				bestHit[a] = best{b, p.Score}
			}
			continue
		}
		k := key{min(a, b), max(a, b)}
		if s, ok := scores[k]; !ok || p.Score > s || math.IsNaN(s) {
			scores[k] = p.Score
		}
	}
	for q, x := range bestHit {
		scores[key{min(q, x.hit), max(q, x.hit)}] = x.score
		hits[x.hit] = true
	}
	// Memberships: the members of a group joined together.
	keeperOf := map[string]int{}
	firstOf := map[string]int{}
	sizeOf := map[string]int{}
	countOf := map[string]int{}
	seen := map[int]string{}
	placeOf := map[string]corpus.Place{} // where each group is first named
	bad := &badList{}
	keeperSkipped := map[string]bool{}
	for _, m := range r.Members {
		if _, ok := placeOf[m.Group]; !ok {
			placeOf[m.Group] = m.Place
		}
		d, ok := resolve(m.Doc)
		if !ok {
			out.Skipped += m.Rows
			keeperSkipped[m.Group] = keeperSkipped[m.Group] || m.Keeper
			continue
		}
		docField := r.Docs[m.Doc].Field
		if g, dup := seen[d]; dup && g != m.Group && r.Format != Manifest {
			bad.add(&corpus.RecordError{Place: m.Place, Field: docField, Msg: fmt.Sprintf("document %s is in cluster %s and in cluster %s", ds.IDs[d], g, m.Group)})
			continue
		}
		seen[d] = m.Group
		countOf[m.Group]++
		if m.Size > 0 {
			sizeOf[m.Group] = m.Size
		}
		if f, ok := firstOf[m.Group]; ok {
			union(f, d)
		} else {
			firstOf[m.Group] = d
		}
		if m.Keeper && r.KeeperGiven {
			if k, ok := keeperOf[m.Group]; ok && k != d {
				bad.add(&corpus.RecordError{Place: m.Place, Field: docField, Msg: fmt.Sprintf("cluster %s keeps %s and %s: a cluster keeps one document", m.Group, ds.IDs[k], ds.IDs[d])})
				continue
			}
			keeperOf[m.Group] = d
		}
	}
	if unknown.total > 0 && !opt.SkipUnknown {
		return Built{}, &UnknownIDsError{File: r.File, Dataset: ds.Name, Errors: unknown.errs, Total: unknown.total}
	}
	for _, g := range slices.Sorted(maps.Keys(sizeOf)) { // errors in a stable order
		want := sizeOf[g]
		if got := countOf[g]; got < want && unknown.total == 0 {
			bad.add(&corpus.RecordError{Place: placeOf[g], Field: "metadata.minhash_cluster_size",
				Msg: fmt.Sprintf("cluster %s has %d documents in the file of the %d datatrove says it has: import the filter's kept output and its exclusion output together (cat them into one file)", g, got, want)})
		}
	}
	if bad.total > 0 {
		return Built{}, &BadInputError{File: r.File, Errors: bad.errs, Total: bad.total}
	}

	// Kruskal over the pairs, highest score first: an edge that joins two parts is on the
	// maximum spanning tree, and the last such edge of a cluster is its weakest link.
	edges := make([]cluster.Edge, 0, len(scores))
	for k, s := range scores {
		edges = append(edges, cluster.Edge{A: k.a, B: k.b, Sim: s})
	}
	slices.SortFunc(edges, func(x, y cluster.Edge) int {
		return cmp.Or(cmp.Compare(y.Sim, x.Sim), cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B))
	})
	var tree []cluster.Edge
	for _, e := range edges {
		union(e.A, e.B)
		if _, _, joined := scored.Union(int32(e.A), int32(e.B)); joined {
			tree = append(tree, e)
		}
	}

	byRoot := map[int]*Cluster{}
	for d := range len(ds.IDs) {
		if all.Size(int32(d)) < 2 {
			continue
		}
		root := find(d)
		c := byRoot[root]
		if c == nil {
			c = &Cluster{Weakest: math.NaN()}
			byRoot[root] = c
		}
		c.Members = append(c.Members, d)
	}
	for _, e := range edges {
		c := byRoot[find(e.A)]
		c.Links = append(c.Links, e)
	}
	for _, e := range tree {
		c := byRoot[find(e.A)]
		if math.IsNaN(c.Weakest) || e.Sim < c.Weakest {
			c.Weakest = e.Sim
		}
	}
	if r.KeeperGiven && !opt.IgnoreFileKeepers {
		for g, f := range firstOf {
			// A keeper skipped as unknown leaves its cluster to the rule.
			if _, ok := keeperOf[g]; !ok && countOf[g] > 1 && !keeperSkipped[g] {
				bad.add(&corpus.RecordError{Place: placeOf[g], Field: "cluster " + g,
					Msg: fmt.Sprintf("every listed member (%s, ...) is removed, so the document the engine kept is not in the file; "+
						"import a file that lists every member (newer datatrove), the JSONL documents, or choose keepers by the rule", ds.IDs[f])})
			}
		}
		if bad.total > 0 {
			return Built{}, &BadInputError{File: r.File, Errors: bad.errs, Total: bad.total}
		}
	}
	givenKeeper := map[int]int{}
	for g, k := range keeperOf {
		givenKeeper[find(firstOf[g])] = k
	}
	for root, c := range byRoot {
		if len(c.Members) < 2 {
			continue
		}
		slices.Sort(c.Members)
		slices.SortFunc(c.Links, func(x, y cluster.Edge) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) })
		if k, ok := givenKeeper[root]; ok && !opt.IgnoreFileKeepers {
			c.Keeper, c.KeeperFromFile = k, true
		} else if i := slices.IndexFunc(c.Members, func(d int) bool { return hits[d] }); stars && i >= 0 {
			c.Keeper, c.KeeperFromFile = c.Members[i], true
		} else {
			c.Keeper = opt.Rule.Keeper(ds.Docs, c.Members)
		}
		out.Clusters = append(out.Clusters, *c)
		out.Removals += len(c.Members) - 1
	}
	slices.SortFunc(out.Clusters, func(x, y Cluster) int { return cmp.Compare(x.Members[0], y.Members[0]) })
	return out, nil
}
