package cluster

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestLevelsAgreesWithCluster follows random graphs down random falling thresholds with
// Levels and checks that, at every threshold, the clusters it has reported (each
// component as last changed) are exactly Graph.Cluster's at that threshold: the same
// documents, the same keepers, under every policy, rules and budgets small enough to
// run out. Half the cases round similarities to tenths and draw thresholds among them,
// so that ties between a similarity and a threshold are common.
func TestLevelsAgreesWithCluster(t *testing.T) {
	for seed := range uint64(400) {
		rc := newRandomCase(seed)
		rng := rand.New(rand.NewPCG(seed, 7))
		if seed%2 == 0 {
			for a := range rc.pair {
				for b := range rc.pair[a] {
					rc.pair[a][b] = math.Round(rc.pair[a][b]*10) / 10
				}
			}
			for i := range rc.in.Edges {
				e := &rc.in.Edges[i]
				e.Sim = rc.sim(e.A, e.B)
			}
		}
		g, err := NewGraph(rc.in)
		if err != nil {
			t.Fatal(err)
		}
		ths := make([]float64, 2+rng.IntN(10))
		for i := range ths {
			ths[i] = math.Round(rng.Float64()*20) / 20
			if seed%3 == 0 {
				ths[i] = rng.Float64()
			}
		}
		slices.Sort(ths)
		slices.Reverse(ths)
		for _, pol := range Policies() {
			for _, budget := range []int{0, 1, 3} {
				cfg := Config{Policy: pol, Rule: rc.rule, Budget: budget, Lean: true}
				l, err := g.Levels(cfg)
				if err != nil {
					t.Fatal(err)
				}
				have := map[int32][]LevelCluster{}
				for _, th := range ths {
					lv, err := l.Lower(th)
					if err != nil {
						t.Fatal(err)
					}
					for _, id := range lv.Gone {
						if _, ok := have[id]; !ok {
							t.Fatalf("seed %d %s: component %d gone but never reported", seed, pol, id)
						}
						delete(have, id)
					}
					for _, c := range lv.Changed {
						have[c.ID] = slices.Clone(c.Clusters)
						for i := range have[c.ID] {
							have[c.ID][i].Members = slices.Clone(have[c.ID][i].Members)
						}
					}
					cfg.Threshold = th
					res, err := g.Cluster(cfg)
					if err != nil {
						t.Fatal(err)
					}
					var want, got []string
					for _, c := range res.Clusters {
						want = append(want, fmt.Sprint(c.Keeper, c.Members))
					}
					for _, cs := range have {
						for _, c := range cs {
							got = append(got, fmt.Sprint(c.Keeper, c.Members))
						}
					}
					slices.Sort(want)
					slices.Sort(got)
					if !slices.Equal(got, want) {
						t.Fatalf("seed %d %s %s budget %d at %v (thresholds %v):\nLevels  %s\nCluster %s", seed, pol, rc.rule, budget, th, ths,
							strings.Join(got, "; "), strings.Join(want, "; "))
					}
				}
			}
		}
	}
}

// TestLevelsRefusesRisingThreshold: Levels only lowers the threshold.
func TestLevelsRefusesRisingThreshold(t *testing.T) {
	rc := newRandomCase(1)
	g, err := NewGraph(rc.in)
	if err != nil {
		t.Fatal(err)
	}
	l, err := g.Levels(Config{Policy: KeeperStar, Rule: rc.rule})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Lower(0.5); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Lower(0.6); err == nil {
		t.Error("Lower(0.6) after Lower(0.5): no error")
	}
	if _, err := l.Lower(math.NaN()); err == nil {
		t.Error("Lower(NaN): no error")
	}
}

// TestSortRanks: the radix sort of edge places agrees with slices.Sort on short and long
// lists, small and large values.
func TestSortRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	var spare []int32
	for _, n := range []int{0, 1, 255, 256, 1000, 70_000} {
		for _, hi := range []int32{1, 2047, 2048, 1 << 22, math.MaxInt32} {
			ranks := make([]int32, n)
			for i := range ranks {
				ranks[i] = rng.Int32N(hi)
			}
			want := slices.Clone(ranks)
			slices.Sort(want)
			var got []int32
			got, spare = sortRanks(ranks, spare)
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d hi=%d: not sorted", n, hi)
			}
		}
	}
}

// TestLevelsKeeperStarBudgetOrder: when the budget runs out inside a keeper's part,
// the nodes tested are the first the search over neighbours (ascending) finds, in
// Levels as in Graph.Cluster. Random graphs under budgets of two and four checks per
// node, where the order decides (about one case in ten thousand: the random cases of
// TestLevelsAgreesWithCluster found none; a search of accepted edges by similarity,
// tried for speed, failed here and nowhere else), at the case's threshold.
func TestLevelsKeeperStarBudgetOrder(t *testing.T) {
	for seed := range uint64(10_000) {
		rc := newRandomCase(seed)
		g, err := NewGraph(rc.in)
		if err != nil {
			t.Fatal(err)
		}
		for _, budget := range []int{2, 4} {
			cfg := Config{Threshold: rc.t, Policy: KeeperStar, Rule: rc.rule, Budget: budget, Lean: true}
			res, err := g.Cluster(cfg)
			if err != nil {
				t.Fatal(err)
			}
			l, err := g.Levels(cfg)
			if err != nil {
				t.Fatal(err)
			}
			lv, err := l.Lower(rc.t)
			if err != nil {
				t.Fatal(err)
			}
			var want, got []string
			for _, c := range res.Clusters {
				want = append(want, fmt.Sprint(c.Keeper, c.Members))
			}
			for _, c := range lv.Changed {
				for _, cl := range c.Clusters {
					got = append(got, fmt.Sprint(cl.Keeper, cl.Members))
				}
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d budget %d at %v:\nLevels  %s\nCluster %s", seed, budget, rc.t,
					strings.Join(got, "; "), strings.Join(want, "; "))
			}
		}
	}
}

// TestKeeperStarConcurrentSim: keeper-star asking Sim for a large part's tests on every
// core (Config.ConcurrentSim) makes the clusters, Sim calls and budget stops it makes
// asking one at a time, through Graph.Cluster and through Levels: one component of 3,000
// documents joined by a chain of accepted edges, whose other pairs pass about one time in
// five, so each keeper's part is far above presimMin.
func TestKeeperStarConcurrentSim(t *testing.T) {
	const n = 3000
	// probe, once set, makes the next call wait (up to a second) for a second call to
	// be in flight: presim's goroutines are then seen together however fast Sim is.
	var inFlight, most atomic.Int32
	var probe atomic.Bool
	sim := func(a, b int) float64 {
		if a == b {
			return 1
		}
		c := inFlight.Add(1)
		defer inFlight.Add(-1)
		if probe.CompareAndSwap(true, false) {
			for deadline := time.Now().Add(time.Second); inFlight.Load() < 2 && time.Now().Before(deadline); {
				runtime.Gosched()
			}
			c = inFlight.Load()
		}
		for {
			m := most.Load()
			if c <= m || most.CompareAndSwap(m, c) {
				break
			}
		}
		a, b = min(a, b), max(a, b)
		h := uint64(a)*0x9E3779B97F4A7C15 ^ uint64(b)*0xC2B2AE3D27D4EB4F
		h ^= h >> 29
		h *= 0xBF58476D1CE4E5B9
		h ^= h >> 32
		return float64(h%1000) / 1000
	}
	docs := make([]Doc, n)
	var edges []Edge
	for d := range n {
		docs[d] = Doc{Len: d % 17}
		if d > 0 {
			edges = append(edges, Edge{A: d - 1, B: d, Sim: 0.9})
		}
	}
	rule, _ := ParseRule("longest")
	g, err := NewGraph(Input{Docs: docs, Edges: edges, Sim: sim})
	if err != nil {
		t.Fatal(err)
	}
	describe := func(res Result) string {
		var b strings.Builder
		for _, c := range res.Clusters {
			fmt.Fprint(&b, c.Keeper, c.Members, ";")
		}
		fmt.Fprint(&b, " calls ", res.SimCalls, " limited ", res.Limited)
		return b.String()
	}
	for _, budget := range []int{0, 1, 40} {
		for _, th := range []float64{0.8, 0.5} {
			cfg := Config{Threshold: th, Policy: KeeperStar, Rule: rule, Budget: budget, Lean: true}
			want, err := g.Cluster(cfg)
			if err != nil {
				t.Fatal(err)
			}
			cfg.ConcurrentSim = true
			probe.Store(budget == 0 && th == 0.8)
			got, err := g.Cluster(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if describe(got) != describe(want) {
				t.Fatalf("budget %d at %v: concurrent Sim clusters differ:\n%.300s\nwant\n%.300s", budget, th, describe(got), describe(want))
			}
			if budget == 1 && want.Limited == 0 {
				t.Fatalf("budget 1 at %v did not run out: the test does not reach the budget's stop", th)
			}
			l, err := g.Levels(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, lt := range []float64{0.95, th} {
				lv, err := l.Lower(lt)
				if err != nil {
					t.Fatal(err)
				}
				if lt != th {
					continue
				}
				var lc, wc []string
				for _, c := range lv.Changed {
					for _, cl := range c.Clusters {
						lc = append(lc, fmt.Sprint(cl.Keeper, cl.Members))
					}
				}
				for _, c := range want.Clusters {
					wc = append(wc, fmt.Sprint(c.Keeper, c.Members))
				}
				slices.Sort(lc)
				slices.Sort(wc)
				if !slices.Equal(lc, wc) {
					t.Fatalf("budget %d at %v: Levels with concurrent Sim differs from Cluster", budget, th)
				}
			}
		}
	}
	if runtime.GOMAXPROCS(0) >= 2 && most.Load() < 2 {
		t.Fatalf("Sim was never called concurrently (at most %d in flight)", most.Load())
	}
}

// TestSortedEdgesOrder: the graph's edges by compareEdges (similarity highest first, then
// u, then v), as a comparison sort gives them, for similarities with many ties (tenths,
// estimates k/128), spread over every bit (exact values), and -0.
func TestSortedEdgesOrder(t *testing.T) {
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 3))
		n := 2 + rng.IntN(300)
		var edges []Edge
		for range rng.IntN(3000) {
			a, b := rng.IntN(n), rng.IntN(n)
			if a == b {
				continue
			}
			s := rng.Float64()
			switch seed % 4 {
			case 0:
				s = math.Round(s*10) / 10
			case 1:
				s = float64(rng.IntN(129)) / 128
			case 2:
				if rng.IntN(5) == 0 {
					s = math.Copysign(0, -1)
				}
			}
			edges = append(edges, Edge{A: a, B: b, Sim: s})
		}
		g, err := NewGraph(Input{Docs: make([]Doc, n), Edges: edges, Sim: func(int, int) float64 { return 0 }})
		if err != nil {
			t.Fatal(err)
		}
		got := g.sortedEdges()
		want := slices.Clone(got)
		slices.SortFunc(want, compareEdges)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: edges out of compareEdges' order", seed)
		}
		for u := range int32(g.nodes()) {
			for i, x := range g.neighbours(u) {
				if e := got[g.rank[g.adjOff[u]+int32(i)]]; x.v > u && (e.u != u || e.v != x.v) {
					t.Fatalf("seed %d: rank of (%d, %d) points at (%d, %d)", seed, u, x.v, e.u, e.v)
				}
			}
		}
	}
}

// TestRankedOrder: RankedOrder's Less answers as Order's for every pair, under rules
// of every kind, for two document lists; and a clustering given it (Config.Order)
// makes the clusters it makes without.
func TestRankedOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	lists := make([][]Doc, 2)
	for l := range lists {
		docs := make([]Doc, 60)
		for i := range docs {
			docs[i] = Doc{Len: rng.IntN(4), Source: []string{"a", "b", "c"}[rng.IntN(3)]}
		}
		lists[l] = docs
	}
	for range 2 {
		for _, text := range randomRules {
			rule, err := ParseRule(text)
			if err != nil {
				t.Fatal(err)
			}
			for l, docs := range lists {
				plain, ranked := rule.Order(docs), rule.RankedOrder(docs)
				for a := range docs {
					for b := range docs {
						if plain.Less(a, b) != ranked.Less(a, b) {
							t.Fatalf("rule %s, list %d: Less(%d, %d) ranked %v, want %v", text, l, a, b, ranked.Less(a, b), plain.Less(a, b))
						}
					}
				}
				var edges []Edge
				for range 80 {
					a, b := rng.IntN(len(docs)), rng.IntN(len(docs))
					if a != b {
						edges = append(edges, Edge{A: a, B: b, Sim: 0.5 + rng.Float64()/2})
					}
				}
				g, err := NewGraph(Input{Docs: docs, Edges: edges, Sim: func(a, b int) float64 { return float64((a*7+b*7)%10) / 10 }})
				if err != nil {
					t.Fatal(err)
				}
				for _, pol := range Policies() {
					cfg := Config{Threshold: 0.6, Policy: pol, Rule: rule, Lean: true}
					want, _ := g.Cluster(cfg)
					cfg.Order = ranked
					got, _ := g.Cluster(cfg)
					if fmt.Sprint(got.Clusters) != fmt.Sprint(want.Clusters) {
						t.Fatalf("rule %s, %s: clusters with the ranked order differ", text, pol)
					}
				}
			}
		}
	}
}

// TestHugeBudget: a budget so large that its product with a component's size would
// overflow is no bound, not a panic or a negative one.
func TestHugeBudget(t *testing.T) {
	g, err := NewGraph(Input{Docs: make([]Doc, 3), Edges: []Edge{{A: 0, B: 1, Sim: 0.9}, {A: 1, B: 2, Sim: 0.9}},
		Sim: func(int, int) float64 { return 0.1 }})
	if err != nil {
		t.Fatal(err)
	}
	rule, _ := ParseRule("longest")
	for _, pol := range Policies() {
		res, err := g.Cluster(Config{Threshold: 0.5, Policy: pol, Rule: rule, Budget: 1 << 62})
		if err != nil {
			t.Fatal(err)
		}
		if res.Limited != 0 || res.Removed == 0 {
			t.Fatalf("%s with budget 2^62: %d limited, %d removed", pol, res.Limited, res.Removed)
		}
	}
}

// TestKeeperStarLargeAgainstDefinition holds keeper-star, with its tests spread over the
// cores (Config.ConcurrentSim) and without, to its definition on one component of 2,000
// documents whose parts stay large (each document has six accepted edges; about one
// other document in five passes a keeper): keep the best document of a part, take what
// passes it, split the rest into its connected parts, repeat. The budget does not bind.
func TestKeeperStarLargeAgainstDefinition(t *testing.T) {
	const n, th = 2000, 0.8
	rng := rand.New(rand.NewPCG(21, 3))
	adj := make([][]int, n)
	edgeSet := map[[2]int]bool{}
	var edges []Edge
	link := func(a, b int) {
		a, b = min(a, b), max(a, b)
		if a == b || edgeSet[[2]int{a, b}] {
			return
		}
		edgeSet[[2]int{a, b}] = true
		adj[a], adj[b] = append(adj[a], b), append(adj[b], a)
		edges = append(edges, Edge{A: a, B: b, Sim: 0.9})
	}
	for d := range n {
		if d > 0 {
			link(d-1, d) // one component
		}
		for range 5 {
			link(d, rng.IntN(n))
		}
	}
	sim := func(a, b int) float64 {
		if a == b || edgeSet[[2]int{min(a, b), max(a, b)}] {
			return map[bool]float64{true: 1, false: 0.9}[a == b]
		}
		h := uint64(min(a, b))*0x9E3779B97F4A7C15 ^ uint64(max(a, b))*0xC2B2AE3D27D4EB4F
		h ^= h >> 31
		h *= 0xBF58476D1CE4E5B9
		h ^= h >> 29
		return float64(h%1000) / 1000
	}
	docs := make([]Doc, n)
	for d := range docs {
		docs[d] = Doc{Len: rng.IntN(50)}
	}
	rule, _ := ParseRule("longest")
	o := newOrder(rule, docs)

	// The definition.
	var want []Cluster
	var split func(part []int)
	split = func(part []int) {
		k := part[0]
		for _, d := range part[1:] {
			if o.less(d, k) {
				k = d
			}
		}
		cl, rest := []int{k}, map[int]bool{}
		for _, d := range part {
			if d != k {
				if sim(k, d) >= th {
					cl = append(cl, d)
				} else {
					rest[d] = true
				}
			}
		}
		if len(cl) > 1 {
			slices.Sort(cl)
			want = append(want, Cluster{Keeper: k, Members: cl})
		}
		for _, s := range part {
			if !rest[s] {
				continue
			}
			delete(rest, s)
			sub := []int{s}
			for i := 0; i < len(sub); i++ {
				for _, y := range adj[sub[i]] {
					if rest[y] {
						delete(rest, y)
						sub = append(sub, y)
					}
				}
			}
			split(sub)
		}
	}
	all := make([]int, n)
	for d := range all {
		all[d] = d
	}
	split(all)
	slices.SortFunc(want, func(a, b Cluster) int { return a.Members[0] - b.Members[0] })
	if len(want) < 10 {
		t.Fatalf("the definition made %d clusters: the case is too easy to test anything", len(want))
	}

	g, err := NewGraph(Input{Docs: docs, Edges: edges, Sim: sim})
	if err != nil {
		t.Fatal(err)
	}
	for _, concurrent := range []bool{false, true} {
		cfg := Config{Threshold: th, Policy: KeeperStar, Rule: rule, Budget: -1, ConcurrentSim: concurrent}
		res, err := g.Cluster(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got, w := summary(res.Clusters), summary(want); !slices.Equal(got, w) {
			t.Fatalf("concurrent %v: %d clusters, the definition %d; first difference at %d", concurrent, len(got), len(w),
				func() int {
					for i := range min(len(got), len(w)) {
						if got[i] != w[i] {
							return i
						}
					}
					return min(len(got), len(w))
				}())
		}
	}
}
