package cluster

import (
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/dedupstudio/dedupstudio/internal/unionfind"
)

// Cluster clusters g under cfg. Bad configuration is an *InputError.
func (g *Graph) Cluster(cfg Config) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	return g.run(cfg, -1), nil
}

// run is one clustering of a Graph: the per-call state, so that a Graph can be clustered
// concurrently.
type run struct {
	g     *Graph
	cfg   Config
	t     float64
	order *order
	// forced is the node whose representative is a keeper chosen by hand, or -1.
	forced int32
	// rep is each node's representative: the document of its exact group that the rule
	// keeps (or the forced keeper). Sim is called on representatives.
	rep []int32

	// The known similarities of one node (see load): known[v] is valid when stamp[v] == cur.
	stamp []int32
	known []float64
	cur   int32
	// mark is a second, independent set of nodes: mark[v] == markCur.
	mark    []int32
	markCur int32
	// memo holds the Sim results of complete-link, keyed by node pair.
	memo map[uint64]float64

	simCalls, limited int
	// below is the largest Sim value under the threshold since it was last reset (-1:
	// none): what Levels needs to know whether a lower threshold changes an answer.
	below float64

	// Proposed clusters of nodes: protos[i] is pnodes/psims[off:end], each node with its
	// similarity to the keeper node.
	protos []proto
	pnodes []int32
	psims  []float64

	uf      *unionfind.Forest
	queue   []int32
	presims []float64 // presim's results
	diag    diagScratch
}

type proto struct {
	keeper   int32
	off, end int
}

// newRun is a run of cfg over g at threshold t, each node represented by the document
// of its group the keeper rule ranks first.
func (g *Graph) newRun(cfg Config, t float64) *run {
	nn := g.nodes()
	o := cfg.Order.o
	if o == nil {
		o = newOrder(cfg.Rule, g.in.Docs)
	}
	r := &run{
		g: g, cfg: cfg, t: t, order: o, forced: -1,
		rep:   make([]int32, nn),
		stamp: make([]int32, nn), known: make([]float64, nn),
		mark: make([]int32, nn),
		uf:   unionfind.New(nn),
	}
	for u := range int32(nn) {
		grp := g.group(u)
		best := grp[0]
		for _, d := range grp[1:] {
			if r.order.less(int(d), int(best)) {
				best = d
			}
		}
		r.rep[u] = best
	}
	return r
}

func (g *Graph) run(cfg Config, forcedDoc int) Result {
	nn := g.nodes()
	r := g.newRun(cfg, cfg.Threshold)
	if forcedDoc >= 0 {
		r.forced = g.nodeOf[forcedDoc]
		r.rep[r.forced] = int32(forcedDoc)
	}

	// Connected components of the accepted edges.
	for u := range int32(nn) {
		for _, x := range g.neighbours(u) {
			if x.v > u && x.s >= r.t {
				r.union(u, x.v)
			}
		}
	}
	// Components worth a look: two nodes or more, or one exact group. compOf numbers them
	// by root; compNodes[compOff[c]:compOff[c+1]] lists each one's nodes in ascending order.
	compOf := make([]int32, nn)
	ncomp := int32(0)
	for u := range int32(nn) {
		root := r.find(u)
		if root == u && (r.uf.Size(u) > 1 || len(g.group(u)) > 1) {
			compOf[u] = ncomp
			ncomp++
		} else if root == u {
			compOf[u] = -1
		}
	}
	compOff := make([]int32, ncomp+1)
	for u := range int32(nn) {
		if c := compOf[r.find(u)]; c >= 0 {
			compOff[c+1]++
		}
	}
	for c := range ncomp {
		compOff[c+1] += compOff[c]
	}
	compNodes := make([]int32, compOff[ncomp])
	fill := slices.Clone(compOff[:ncomp])
	for u := range int32(nn) {
		if c := compOf[r.find(u)]; c >= 0 {
			compNodes[fill[c]] = u
			fill[c]++
		}
	}

	info, _ := PolicyOf(cfg.Policy) // validated with cfg
	clusterer := info.start(r, compOf, ncomp)
	for c := range ncomp {
		clusterer.component(c, compNodes[compOff[c]:compOff[c+1]])
	}
	return r.result()
}

func (r *run) find(x int32) int32 { return r.uf.Find(x) }

// union joins the sets of a and b and returns the new root.
func (r *run) union(a, b int32) int32 {
	root, _, _ := r.uf.Union(a, b)
	return root
}

// lessNode orders nodes by the rule applied to their representatives.
func (r *run) lessNode(u, v int32) bool { return r.order.less(int(r.rep[u]), int(r.rep[v])) }

// pick returns the keeper node of nodes: the forced one if it is there, else the rule's.
func (r *run) pick(nodes []int32) int32 {
	if r.forced >= 0 && slices.Contains(nodes, r.forced) {
		return r.forced
	}
	best := nodes[0]
	for _, u := range nodes[1:] {
		if r.lessNode(u, best) {
			best = u
		}
	}
	return best
}

// load makes the similarities the edges give for node k known.
func (r *run) load(k int32) {
	if r.cur == math.MaxInt32 {
		// A long Levels loads billions of times: start the stamps again.
		clear(r.stamp)
		r.cur = 0
	}
	r.cur++
	for _, x := range r.g.neighbours(k) {
		r.stamp[x.v] = r.cur
		r.known[x.v] = x.s
	}
}

// sim calls Input.Sim on the representatives of u and v. A NaN counts as 0: a pair
// whose similarity cannot be told is not a duplicate.
func (r *run) sim(u, v int32) float64 {
	return r.took(r.g.in.Sim(int(r.rep[u]), int(r.rep[v])))
}

// took counts s as the result of one Sim call, as sim does.
func (r *run) took(s float64) float64 {
	r.simCalls++
	if math.IsNaN(s) {
		s = 0
	}
	if s < r.t && s > r.below {
		r.below = s
	}
	return s
}

// presimMin is the least number of keeper-star tests presim spreads over the cores.
const presimMin = 512

// presim returns Input.Sim of node k's representative with each of tests' (those no edge
// of k gives: the others' places are left as they are), computed on every core, when
// Sim may be called concurrently and there are enough of them; nil otherwise. The
// caller takes them in order with took, as if it had called sim.
func (r *run) presim(k int32, tests []int32) []float64 {
	workers := runtime.GOMAXPROCS(0)
	if !r.cfg.ConcurrentSim || len(tests) < presimMin || workers < 2 {
		return nil
	}
	r.presims = slices.Grow(r.presims[:0], len(tests))[:len(tests)]
	out, rk := r.presims, int(r.rep[k])
	chunk := (len(tests) + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < len(tests); lo += chunk {
		hi := min(lo+chunk, len(tests))
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				if m := tests[i]; r.stamp[m] != r.cur {
					out[i] = r.g.in.Sim(rk, int(r.rep[m]))
				}
			}
		})
	}
	wg.Wait()
	return out
}

func pairKey(u, v int32) uint64 {
	if u > v {
		u, v = v, u
	}
	return uint64(u)<<32 | uint64(uint32(v))
}

// addProto proposes nodes as a cluster kept by k, finding each node's similarity to k
// from the edges, the memo, or a Sim call, in that order.
func (r *run) addProto(k int32, nodes []int32) {
	r.load(k)
	off := len(r.pnodes)
	for _, u := range nodes {
		var s float64
		switch {
		case u == k:
			s = 1
		case r.stamp[u] == r.cur:
			s = r.known[u]
		default:
			var ok bool
			if s, ok = r.memo[pairKey(k, u)]; !ok {
				s = r.sim(k, u)
			}
		}
		r.pnodes = append(r.pnodes, u)
		r.psims = append(r.psims, s)
	}
	r.protos = append(r.protos, proto{keeper: k, off: off, end: len(r.pnodes)})
}
