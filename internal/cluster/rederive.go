package cluster

import (
	"fmt"
	"slices"
	"strings"
)

// Override makes keeper the keeper of cluster c, for the stated reason, and re-derives
// the cluster under cfg: every removal's similarity to the new keeper, the diagnostics,
// and under keeper-star the members that do not pass the new keeper, which split off
// into clusters of their own as the policy does. Under components and complete-link the
// members stay together (a complete-link cluster passes pairwise whoever keeps it).
//
// It returns the clusters of two or more documents that c's members now form: first the
// one kept by keeper, with c's ID and Override set to reason, then the split-offs with
// ID -1. Members in none are kept. It reads the graph's documents, exact groups and Sim
// and c's own links, not the graph's edges: a Graph built without edges serves it. Sim is
// called for each member not linked to the new keeper, plus what keeper-star needs for
// the split-offs.
func (g *Graph) Override(cfg Config, c Cluster, keeper int, reason string) ([]Cluster, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if strings.TrimSpace(reason) == "" {
		return nil, &InputError{Field: "reason", Msg: "an override needs a reason"}
	}
	if _, ok := slices.BinarySearch(c.Members, keeper); !ok {
		return nil, &InputError{Field: "keeper", Msg: fmt.Sprintf("document %d is not a member of cluster %d", keeper, c.ID)}
	}
	if cfg.Policy == CompleteLink {
		cfg.Policy = Components
	}
	out, err := g.rederive(cfg, c, c.Links, keeper)
	if err != nil {
		return nil, err
	}
	if len(out) > 0 && out[0].Keeper == keeper {
		out[0].Override = reason
	}
	return out, nil
}

// Cut removes the links es (each matched by its documents, in either order) from
// cluster c and re-derives what is left under cfg: the members still linked to the keeper
// stay with it; the others form clusters of their own, each linked part with its keeper
// by the rule (under keeper-star, split further as the policy does). Cutting the links of
// SeparatingCut separates every chained member; cutting a link that is not a bridge
// separates nothing and returns the cluster without that link, so a second cut can
// finish the job. (A link from the keeper to a member that passes it comes back: it is
// the member's own similarity.)
//
// It returns the clusters of two or more documents, first the keeper's with c's ID and
// Override, then the new ones with ID -1; members in none are kept. Like Override it
// needs the graph's documents, exact groups and Sim, not its edges. Sim is called for
// each member of a split-off part not linked to its new keeper.
func (g *Graph) Cut(cfg Config, c Cluster, es ...Edge) ([]Cluster, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return nil, &InputError{Field: "edge", Msg: "no link to cut"}
	}
	links := slices.Clone(c.Links)
	for _, e := range es {
		i := slices.IndexFunc(links, func(l Edge) bool {
			return l.A == e.A && l.B == e.B || l.A == e.B && l.B == e.A
		})
		if i < 0 {
			return nil, &InputError{Field: "edge", Msg: fmt.Sprintf("%d~%d is not a link of cluster %d", e.A, e.B, c.ID)}
		}
		if e.A >= 0 && e.A < g.n && e.B >= 0 && e.B < g.n && g.nodeOf[e.A] == g.nodeOf[e.B] {
			return nil, &InputError{Field: "edge", Msg: fmt.Sprintf("%d~%d joins exact duplicates, which stay together", e.A, e.B)}
		}
		links = slices.Delete(links, i, i+1)
	}
	if cfg.Policy != KeeperStar {
		cfg.Policy = Components
	}
	out, err := g.rederive(cfg, c, links, c.Keeper)
	if err != nil {
		return nil, err
	}
	if len(out) > 0 && out[0].Keeper == c.Keeper {
		out[0].Override = c.Override
	}
	return out, nil
}

// rederive clusters c's members over links alone under cfg, with keeper forced: a Graph
// of the members only, its documents renumbered 0..len-1 in the members' order.
func (g *Graph) rederive(cfg Config, c Cluster, links []Edge, keeper int) ([]Cluster, error) {
	ms := c.Members
	bad := func(msg string) error {
		return &InputError{Field: fmt.Sprintf("cluster %d", c.ID), Msg: msg}
	}
	if !slices.IsSorted(ms) || len(slices.Compact(slices.Clone(ms))) != len(ms) {
		return nil, bad("members are not sorted and distinct")
	}
	if len(ms) > 0 && (ms[0] < 0 || ms[len(ms)-1] >= g.n) {
		return nil, bad(fmt.Sprintf("a member is out of range [0, %d)", g.n))
	}
	loc := func(d int) int {
		if i, ok := slices.BinarySearch(ms, d); ok {
			return i
		}
		return -1
	}
	sub := Input{
		Docs:  make([]Doc, len(ms)),
		Edges: make([]Edge, len(links)),
		Sim:   func(a, b int) float64 { return g.in.Sim(ms[a], ms[b]) },
	}
	exact := map[int32][]int{}
	for i, d := range ms {
		sub.Docs[i] = g.in.Docs[d]
		if u := g.nodeOf[d]; len(g.group(u)) > 1 {
			exact[u] = append(exact[u], i)
		}
	}
	for _, grp := range exact {
		if len(grp) > 1 {
			sub.Exact = append(sub.Exact, grp)
		}
	}
	for i, l := range links {
		a, b := loc(l.A), loc(l.B)
		if a < 0 || b < 0 {
			return nil, bad(fmt.Sprintf("link %d~%d leaves the cluster", l.A, l.B))
		}
		sub.Edges[i] = Edge{A: a, B: b, Sim: l.Sim}
	}
	sg, err := NewGraph(sub)
	if err != nil {
		return nil, bad(err.Error())
	}
	res := sg.run(cfg, loc(keeper))
	out := res.Clusters
	for i := range out {
		x := &out[i]
		x.ID = -1
		x.Keeper = ms[x.Keeper]
		for j := range x.Members {
			x.Members[j] = ms[x.Members[j]]
		}
		for j := range x.Removed {
			x.Removed[j].Doc = ms[x.Removed[j].Doc]
		}
		for j := range x.Links {
			x.Links[j].A, x.Links[j].B = ms[x.Links[j].A], ms[x.Links[j].B]
		}
		x.Diag.Weakest = ms[x.Diag.Weakest]
		for j := range x.Diag.Chain.Docs {
			x.Diag.Chain.Docs[j] = ms[x.Diag.Chain.Docs[j]]
		}
		if x.Diag.Cut.Chained > 0 {
			x.Diag.Cut.Edge.A, x.Diag.Cut.Edge.B = ms[x.Diag.Cut.Edge.A], ms[x.Diag.Cut.Edge.B]
		}
	}
	// The keeper's cluster first, with c's ID.
	if i := slices.IndexFunc(out, func(x Cluster) bool { return x.Keeper == keeper }); i >= 0 {
		kc := out[i]
		copy(out[1:i+1], out[:i])
		out[0] = kc
		out[0].ID = c.ID
	}
	return out, nil
}
