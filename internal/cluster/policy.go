package cluster

import (
	"strconv"
	"strings"
)

// Policy says which documents of a connected component of accepted edges end up in one
// cluster, i.e. which are removed in favour of which keeper. The policies are
// registered (PolicyInfo, one file each: components.go, keeperstar.go, completelink.go);
// the manifest's run compares every registered policy and a sweep scores each of them,
// so a new policy is one file that registers itself.
type Policy string

// The registered policies.
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

// PolicyInfo is a registered policy: its name, what pages say of it, whether its
// clusters depend on the keeper rule (a sweep clusters once per rule when they do, once
// for all rules when they do not), and how it clusters a run's components.
type PolicyInfo struct {
	Name            Policy
	Title           string // "connected components"
	KeeperDependent bool
	// start prepares one clustering (a Graph.Cluster call) of ncomp components, compOf
	// numbering them by root; the clusterer then proposes the clusters of each component.
	start func(r *run, compOf []int32, ncomp int32) componentClusterer
}

// componentClusterer proposes the clusters of one connected component (r.addProto).
type componentClusterer interface {
	component(c int32, nodes []int32)
}

var registry []PolicyInfo

// register adds a policy; the order of registration is the order pages show them in.
func register(p PolicyInfo) {
	for i, q := range registry {
		if q.Name == p.Name {
			panic("cluster: policy " + string(p.Name) + " registered twice")
		}
		if policyRank(p.Name) < policyRank(q.Name) {
			registry = append(registry[:i], append([]PolicyInfo{p}, registry[i:]...)...)
			return
		}
	}
	registry = append(registry, p)
}

// policyOrder places the policies of this package (files register in file-name order);
// any other comes after them, in the order it registers.
var policyOrder = map[Policy]int{Components: 0, KeeperStar: 1, CompleteLink: 2}

func policyRank(p Policy) int {
	if r, ok := policyOrder[p]; ok {
		return r
	}
	return len(policyOrder)
}

// Policies returns every registered policy, in the order a comparison shows them.
func Policies() []Policy { return names(registry, PolicyInfo.name) }

// PolicyOf returns the registered policy p.
func PolicyOf(p Policy) (PolicyInfo, bool) { return find(registry, p, PolicyInfo.name) }

func (p PolicyInfo) name() Policy { return p.Name }

// Validate reports a policy that is not registered as an *InputError.
func (p Policy) Validate() error {
	_, err := ParsePolicy(string(p))
	return err
}

// ParsePolicy returns the policy named s.
func ParsePolicy(s string) (Policy, error) {
	if _, ok := PolicyOf(Policy(s)); ok {
		return Policy(s), nil
	}
	known := names(registry, func(p PolicyInfo) string { return string(p.Name) })
	return "", &InputError{Field: "policy", Msg: "unknown policy " + strconv.Quote(s) + " (want " + strings.Join(known, ", ") + ")"}
}
