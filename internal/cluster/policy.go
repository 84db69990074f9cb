package cluster

import "strconv"

// Policy says which documents of a connected component of accepted edges end up in one
// cluster, i.e. which are removed in favour of which keeper.
type Policy string

// Policies.
const (
	// Components clusters each connected component of the accepted edges: single linkage,
	// what datatrove, text-dedup and NeMo Curator do. A removed document may be far from
	// its keeper (see the package doc). Sim is called at most once per removed document,
	// for its similarity to the keeper when no edge gives it.
	Components Policy = "components"
	// KeeperStar removes a document only when its own direct similarity to its cluster's
	// keeper passes the threshold; the others split off into clusters of their own, each
	// with its keeper by the rule, and so on. Sim is called at most once per (keeper,
	// document of its component) pair no edge covers, and at most Budget times per node of
	// a component.
	KeeperStar Policy = "keeper-star"
	// CompleteLink clusters only documents that all pass the threshold with one another,
	// by greedy agglomerative complete linkage within each component. Sim is called at most
	// once per pair no edge covers, only for merges nothing known forbids, and the checks
	// are at most Budget per node of a component.
	CompleteLink Policy = "complete-link"
)

// Policies returns every policy, in the order a comparison shows them.
func Policies() []Policy { return []Policy{Components, KeeperStar, CompleteLink} }

// ParsePolicy returns the policy named s.
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(s); p {
	case Components, KeeperStar, CompleteLink:
		return p, nil
	}
	return "", &InputError{Field: "policy", Msg: "unknown policy " + strconv.Quote(s) + " (want components, keeper-star or complete-link)"}
}
