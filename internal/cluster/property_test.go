package cluster

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// randomCase is a random graph whose similarities come from content: documents with the
// same content id are exact duplicates (similarity 1), and contents of the same latent
// family are similar (0.3..1) while the others are not (0..0.55), so chains, hubs and
// near-cliques all occur. Candidate edges are a random subset of pairs, likelier the more
// similar, as LSH gives.
type randomCase struct {
	n       int
	content []int
	pair    [][]float64 // by content
	in      Input
	t       float64
	rule    Rule
}

var randomRules = []string{"longest", "shortest", "earliest", "source(b,a)>longest"}

func newRandomCase(seed uint64) *randomCase {
	rng := rand.New(rand.NewPCG(seed, 42))
	n := 2 + rng.IntN(40)
	m := 1 + rng.IntN(n) // contents
	fam := make([]int, m)
	families := 1 + rng.IntN(max(1, m/3))
	for c := range fam {
		fam[c] = rng.IntN(families)
	}
	rc := &randomCase{n: n, content: make([]int, n), pair: make([][]float64, m), t: 0.3 + 0.4*rng.Float64()}
	for c := range m {
		rc.pair[c] = make([]float64, m)
	}
	for a := range m {
		rc.pair[a][a] = 1
		for b := a + 1; b < m; b++ {
			s := 0.55 * rng.Float64()
			if fam[a] == fam[b] {
				s = 0.3 + 0.7*rng.Float64()
			}
			rc.pair[a][b], rc.pair[b][a] = s, s
		}
	}
	docs := make([]Doc, n)
	for d := range n {
		rc.content[d] = rng.IntN(m)
		docs[d] = Doc{Len: rng.IntN(5), Source: []string{"a", "b", "c"}[rng.IntN(3)]}
	}
	byContent := map[int][]int{}
	for d, c := range rc.content {
		byContent[c] = append(byContent[c], d)
	}
	var exact [][]int
	for _, ds := range byContent {
		if len(ds) > 1 {
			exact = append(exact, ds)
		}
	}
	var edges []Edge
	for a := range n {
		for b := a + 1; b < n; b++ {
			s := rc.sim(a, b)
			if rng.Float64() < 0.1+0.8*s {
				e := Edge{A: a, B: b, Sim: s}
				if rng.IntN(2) == 0 {
					e.A, e.B = b, a
				}
				edges = append(edges, e)
				if rng.IntN(10) == 0 {
					edges = append(edges, e) // given twice
				}
			}
		}
	}
	rc.in = Input{Docs: docs, Exact: exact, Edges: edges, Sim: rc.sim}
	rc.rule, _ = ParseRule(randomRules[rng.IntN(len(randomRules))])
	return rc
}

func (rc *randomCase) sim(a, b int) float64 { return rc.pair[rc.content[a]][rc.content[b]] }

// components is the reference for the components policy: breadth-first search over the
// accepted edges and the exact pairs.
func (rc *randomCase) components() [][]int {
	adj := make([][]int, rc.n)
	for _, e := range rc.in.Edges {
		if e.Sim >= rc.t {
			adj[e.A] = append(adj[e.A], e.B)
			adj[e.B] = append(adj[e.B], e.A)
		}
	}
	for a := range rc.n {
		for b := range rc.n {
			if a != b && rc.content[a] == rc.content[b] {
				adj[a] = append(adj[a], b)
			}
		}
	}
	seen := make([]bool, rc.n)
	var out [][]int
	for s := range rc.n {
		if seen[s] {
			continue
		}
		seen[s] = true
		comp := []int{s}
		for i := 0; i < len(comp); i++ {
			for _, y := range adj[comp[i]] {
				if !seen[y] {
					seen[y] = true
					comp = append(comp, y)
				}
			}
		}
		if len(comp) > 1 {
			slices.Sort(comp)
			out = append(out, comp)
		}
	}
	return out
}

// keeperStar is the reference for the keeper-star policy, straight from its definition:
// keep the best document of a part, remove what passes it directly, split the rest into
// its connected parts (accepted edges and exact pairs) and do the same in each.
func (rc *randomCase) keeperStar() []string {
	o := newOrder(rc.rule, rc.in.Docs)
	linked := func(a, b int) bool {
		if rc.content[a] == rc.content[b] {
			return true
		}
		for _, e := range rc.in.Edges {
			if (e.A == a && e.B == b || e.A == b && e.B == a) && e.Sim >= rc.t {
				return true
			}
		}
		return false
	}
	var out []Cluster
	var split func(part []int)
	split = func(part []int) {
		if len(part) == 0 {
			return
		}
		k := part[0]
		for _, d := range part[1:] {
			if o.less(d, k) {
				k = d
			}
		}
		var cl, rest []int
		for _, d := range part {
			if d == k || rc.sim(k, d) >= rc.t {
				cl = append(cl, d)
			} else {
				rest = append(rest, d)
			}
		}
		if len(cl) > 1 {
			slices.Sort(cl)
			out = append(out, Cluster{Keeper: k, Members: cl})
		}
		// The connected parts of rest.
		seen := map[int]bool{}
		for _, s := range rest {
			if seen[s] {
				continue
			}
			seen[s] = true
			sub := []int{s}
			for i := 0; i < len(sub); i++ {
				for _, y := range rest {
					if !seen[y] && linked(sub[i], y) {
						seen[y] = true
						sub = append(sub, y)
					}
				}
			}
			split(sub)
		}
	}
	for _, comp := range rc.components() {
		split(comp)
	}
	slices.SortFunc(out, func(a, b Cluster) int { return a.Members[0] - b.Members[0] })
	return summary(out)
}

func TestPropertyRandomGraphs(t *testing.T) {
	t.Parallel()
	// What the random graphs exercised, so that the properties are not checked vacuously.
	var exercised struct{ exact, chained, cuts, limited, keeperStarSplits int }
	defer func() {
		t.Logf("exercised: %+v", exercised)
		if exercised.exact == 0 || exercised.chained == 0 || exercised.cuts == 0 || exercised.limited == 0 || exercised.keeperStarSplits == 0 {
			t.Errorf("the random graphs did not exercise everything: %+v", exercised)
		}
	}()
	for seed := range uint64(400) {
		rc := newRandomCase(seed)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			g, err := NewGraph(rc.in)
			if err != nil {
				t.Fatalf("NewGraph: %v", err)
			}
			results := map[Policy]Result{}
			for _, p := range Policies() {
				for _, budget := range []int{-1, 1} {
					c := Config{Threshold: rc.t, Policy: p, Rule: rc.rule, Budget: budget}
					res := mustCluster(t, g, c)
					checkLinksAndChain(t, res)
					// Lean leaves out links and diagnostics, nothing else.
					c.Lean = true
					lean, err := g.Cluster(c)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(lean.Assign, res.Assign) || lean.Removed != res.Removed || len(lean.Clusters) != len(res.Clusters) {
						t.Errorf("%s budget %d: lean clustering differs", p, budget)
					}
					for i, cl := range lean.Clusters {
						if cl.Keeper != res.Clusters[i].Keeper || !slices.Equal(cl.Removed, res.Clusters[i].Removed) || cl.Links != nil {
							t.Errorf("%s budget %d: lean cluster %d = %+v; want %+v without links", p, budget, i, cl, res.Clusters[i])
						}
					}
					exercised.limited += res.Limited
					if budget < 0 {
						results[p] = res
						if res.Limited != 0 {
							t.Errorf("%s unbounded: Limited = %d", p, res.Limited)
						}
					}
					switch p {
					case KeeperStar:
						// Every removed document passes its keeper directly.
						for _, cl := range res.Clusters {
							for _, rm := range cl.Removed {
								if s := rc.sim(rm.Doc, cl.Keeper); s < rc.t {
									t.Errorf("keeper-star budget %d: %d removed for keeper %d at %v < %v", budget, rm.Doc, cl.Keeper, s, rc.t)
								}
							}
						}
					case CompleteLink:
						// No failing pair is ever in one cluster.
						for _, cl := range res.Clusters {
							for i, a := range cl.Members {
								for _, b := range cl.Members[i+1:] {
									if s := rc.sim(a, b); s < rc.t {
										t.Errorf("complete-link budget %d: %d and %d together at %v < %v", budget, a, b, s, rc.t)
									}
								}
							}
						}
					}
					if p != Components && res.Chained != 0 {
						t.Errorf("%s budget %d: %d chained clusters", p, budget, res.Chained)
					}
				}
			}

			exercised.exact += results[Components].RemovedExact
			exercised.chained += results[Components].Chained
			if len(results[KeeperStar].Clusters) > len(results[Components].Clusters) {
				exercised.keeperStarSplits++
			}
			for _, cl := range results[Components].Clusters {
				if cl.Diag.Cut.Chained > 0 {
					exercised.cuts++
				}
			}
			var got [][]int
			for _, cl := range results[Components].Clusters {
				got = append(got, cl.Members)
			}
			if want := rc.components(); !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("components = %v; breadth-first reference %v", got, want)
			}
			if got, want := summary(results[KeeperStar].Clusters), rc.keeperStar(); !slices.Equal(got, want) {
				t.Errorf("keeper-star = %v; reference %v", got, want)
			}
			// Under one rule the other policies remove a subset of what components removes.
			byComp := removedSet(results[Components])
			for _, p := range []Policy{KeeperStar, CompleteLink} {
				for d := range removedSet(results[p]) {
					if !byComp[d] {
						t.Errorf("%s removes %d, which components keeps", p, d)
					}
				}
			}
			checkOverrideAndCut(t, rc, g, results)
		})
	}
}

func removedSet(res Result) map[int]bool {
	s := map[int]bool{}
	for _, cl := range res.Clusters {
		for _, rm := range cl.Removed {
			s[rm.Doc] = true
		}
	}
	return s
}

// checkLinksAndChain recomputes each cluster's longest chain by breadth-first search over
// its links and compares the hop count.
func checkLinksAndChain(t *testing.T, res Result) {
	t.Helper()
	for _, cl := range res.Clusters {
		dist := map[int]int{cl.Keeper: 0}
		q := []int{cl.Keeper}
		for i := 0; i < len(q); i++ {
			for _, l := range cl.Links {
				for _, ab := range [][2]int{{l.A, l.B}, {l.B, l.A}} {
					if _, ok := dist[ab[1]]; ab[0] == q[i] && !ok {
						dist[ab[1]] = dist[q[i]] + 1
						q = append(q, ab[1])
					}
				}
			}
		}
		if len(dist) != len(cl.Members) {
			t.Errorf("cluster %d: links reach %d of %d members", cl.ID, len(dist), len(cl.Members))
		}
		far := 0
		for _, h := range dist {
			far = max(far, h)
		}
		if got := len(cl.Diag.Chain.Sims); got != far {
			t.Errorf("cluster %d: longest chain %d hops; breadth-first reference %d", cl.ID, got, far)
		}
		if last := cl.Diag.Chain.Docs[len(cl.Diag.Chain.Docs)-1]; dist[last] != far {
			t.Errorf("cluster %d: chain ends at %d, %d hops away", cl.ID, last, dist[last])
		}
	}
}

// checkOverrideAndCut overrides the keeper of each cluster with its last member and cuts
// each chained cluster at its suggestion.
func checkOverrideAndCut(t *testing.T, rc *randomCase, g *Graph, results map[Policy]Result) {
	t.Helper()
	for p, res := range results {
		c := Config{Threshold: rc.t, Policy: p, Rule: rc.rule, Budget: -1}
		for _, cl := range res.Clusters {
			k := cl.Members[len(cl.Members)-1]
			out, err := g.Override(c, cl, k, "test")
			if err != nil {
				t.Fatalf("%s: Override(%d, %d): %v", p, cl.ID, k, err)
			}
			checkRederived(t, rc, p, cl, out)
			if p == KeeperStar && (len(out) == 0 || out[0].Keeper != k) {
				// The new keeper is left alone: nothing passes it.
				for _, m := range cl.Members {
					if m != k && rc.sim(m, k) >= rc.t {
						t.Errorf("keeper-star: Override(%d, %d) left %d out though it passes at %v", cl.ID, k, m, rc.sim(m, k))
					}
				}
				continue
			}
			if out[0].Keeper != k || out[0].Override != "test" || out[0].ID != cl.ID {
				t.Errorf("%s: Override(%d, %d) first cluster %d:%v ID %d override %q", p, cl.ID, k, out[0].Keeper, out[0].Members, out[0].ID, out[0].Override)
			}
			if p != KeeperStar && !slices.Equal(out[0].Members, cl.Members) {
				t.Errorf("%s: Override(%d, %d) members %v; want %v", p, cl.ID, k, out[0].Members, cl.Members)
			}
			if !cl.Diag.Chained {
				continue
			}
			cut := cl.Diag.Cut
			if cut.Chained == 0 {
				continue // no single link separates a chained member
			}
			out, err = g.Cut(c, cl, cut.Edge)
			if err != nil {
				t.Fatalf("%s: Cut(%d, %v): %v", p, cl.ID, cut.Edge, err)
			}
			checkRederived(t, rc, p, cl, out)
			kept := 0
			if len(out) > 0 && out[0].Keeper == cl.Keeper {
				kept = len(out[0].Members)
			} else {
				kept = 1
			}
			if want := len(cl.Members) - cut.Chained - cut.Unchained; kept != want {
				t.Errorf("%s: Cut(%d, %+v) left the keeper %d members; want %d", p, cl.ID, cut, kept, want)
			}
			if kept > 1 && out[0].Diag.ChainedMembers != cl.Diag.ChainedMembers-cut.Chained {
				t.Errorf("%s: Cut(%d, %+v) left %d chained; want %d", p, cl.ID, cut, out[0].Diag.ChainedMembers, cl.Diag.ChainedMembers-cut.Chained)
			}
		}
	}
}

// checkRederived asserts what Override and Cut must give: clusters of the original's
// members, each removal's similarity its own to the keeper, and the policy's guarantee.
func checkRederived(t *testing.T, rc *randomCase, p Policy, orig Cluster, out []Cluster) {
	t.Helper()
	seen := map[int]bool{}
	for i, x := range out {
		if i > 0 && x.ID != -1 {
			t.Errorf("%s: re-derived cluster %d has ID %d", p, i, x.ID)
		}
		for _, d := range x.Members {
			if _, ok := slices.BinarySearch(orig.Members, d); !ok || seen[d] {
				t.Errorf("%s: re-derived member %d not in %v or seen twice", p, d, orig.Members)
			}
			seen[d] = true
		}
		for _, rm := range x.Removed {
			if s := rc.sim(rm.Doc, x.Keeper); rm.Sim != s {
				t.Errorf("%s: re-derived removal %d Sim %v; want %v", p, rm.Doc, rm.Sim, s)
			}
			if p == KeeperStar && rm.Sim < rc.t {
				t.Errorf("keeper-star: re-derived removal %d at %v < %v", rm.Doc, rm.Sim, rc.t)
			}
		}
		if len(x.Diag.Chain.Docs) == 0 || x.Diag.Chain.Docs[0] != x.Keeper || x.Diag.Chained != (len(x.Diag.Chain.Sims) > 1) {
			t.Errorf("%s: re-derived chain %v for keeper %d, chained %v", p, x.Diag.Chain, x.Keeper, x.Diag.Chained)
		}
	}
}

// TestConcurrentClusters clusters one Graph from several goroutines (run it with -race)
// and expects what a sequential run gives.
func TestConcurrentClusters(t *testing.T) {
	t.Parallel()
	rc := newRandomCase(0)
	for seed := uint64(1); rc.n < 30; seed++ {
		rc = newRandomCase(seed)
	}
	g, err := NewGraph(rc.in)
	if err != nil {
		t.Fatal(err)
	}
	var cfgs []Config
	for _, p := range Policies() {
		for _, th := range []float64{0.3, 0.5, 0.7} {
			cfgs = append(cfgs, Config{Threshold: th, Policy: p, Rule: rc.rule})
		}
	}
	want := make([][]string, len(cfgs))
	for i, c := range cfgs {
		want[i] = summary(mustCluster(t, g, c).Clusters)
	}
	got := make([][]string, len(cfgs))
	var wg sync.WaitGroup
	for i, c := range cfgs {
		wg.Go(func() {
			res, err := g.Cluster(c)
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = summary(res.Clusters)
		})
	}
	wg.Wait()
	for i := range cfgs {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("concurrent %s at %.1f = %v; sequential %v", cfgs[i].Policy, cfgs[i].Threshold, got[i], want[i])
		}
	}
}
