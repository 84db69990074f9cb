package cluster

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// chainedOf lists the members of c under the threshold to its keeper.
func chainedOf(c Cluster, t float64) []int {
	var out []int
	for _, rm := range c.Removed {
		if rm.Sim < t {
			out = append(out, rm.Doc)
		}
	}
	return out
}

// SeparatingCut's links, cut together, leave the keeper's cluster without a chained
// member, where the bridge suggestion alone does not: a keeper inside a chain has chained
// members on both sides (issue 27: "after Cut the chain the cluster was still chained").
func TestSeparatingCutSeparatesEveryChainedMember(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name               string
		f                  *fixture
		links              []Edge
		chained, unchained int
		keeperMembers      []int
	}{
		{"chain keeper at end", chainFixture(99, 9, 8, 7, 6, 5, 4, 3, 2, 1), []Edge{{A: 1, B: 2, Sim: 0.8}}, 8, 0, []int{0, 1}},
		{"chain keeper inside", chainFixture(1, 2, 3, 4, 99, 5, 6, 7, 8, 9), []Edge{{A: 2, B: 3, Sim: 0.8}, {A: 5, B: 6, Sim: 0.8}}, 7, 0, []int{3, 4, 5}},
		// The barbell's far clique hangs on one link, 4~5 (0.6): the weakest, and the
		// only one to cut.
		{"barbell", barbell(), []Edge{{A: 4, B: 5, Sim: 0.6}}, 5, 0, []int{0, 1, 2, 3, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := tt.f.graph(t)
			c := mustCluster(t, g, cfg(Components)).Clusters[0]
			ch := chainedOf(c, 0.5)
			plan := SeparatingCut(c.Keeper, ch, c.Links, nil, 20)
			if !plan.OK || !slices.Equal(plan.Links, tt.links) || plan.Chained != tt.chained || plan.Unchained != tt.unchained {
				t.Fatalf("SeparatingCut = %+v; want links %v, %d chained, %d unchained", plan, tt.links, tt.chained, tt.unchained)
			}
			out, err := g.Cut(cfg(Components), c, plan.Links...)
			if err != nil {
				t.Fatal(err)
			}
			if out[0].Keeper != c.Keeper || !slices.Equal(out[0].Members, tt.keeperMembers) || out[0].Diag.Chained {
				t.Errorf("after the cut the keeper's cluster is %d:%v, chained %v; want %v, not chained", out[0].Keeper, out[0].Members, out[0].Diag.Chained, tt.keeperMembers)
			}
		})
	}
}

// On random link graphs the cut separates every chained document, never cuts a link
// between inseparable documents, and is as small as the smallest cut found by trying
// every set of links (graphs of at most 12 links).
func TestSeparatingCutIsMinimal(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(27, 1))
	tried := 0
	for round := range 400 {
		n := 3 + rng.IntN(6)
		var links []Edge
		for a := range n {
			for b := a + 1; b < n; b++ {
				if rng.Float64() < 0.45 && len(links) < 12 {
					links = append(links, Edge{A: a, B: b, Sim: float64(rng.IntN(90)+10) / 100})
				}
			}
		}
		var chained []int
		for d := 1; d < n; d++ {
			if rng.Float64() < 0.3 {
				chained = append(chained, d)
			}
		}
		together := func(a, b int) bool { return a+b == n } // an arbitrary inseparable pair per sum
		reaches := func(cut uint) bool {
			seen := map[int]bool{0: true}
			for changed := true; changed; {
				changed = false
				for i, l := range links {
					if cut&(1<<i) != 0 || seen[l.A] == seen[l.B] {
						continue
					}
					seen[l.A], seen[l.B], changed = true, true, true
				}
			}
			return slices.ContainsFunc(chained, func(d int) bool { return seen[d] })
		}
		best := -1
		for cut := uint(0); cut < 1<<len(links); cut++ {
			ok := true
			for i, l := range links {
				if cut&(1<<i) != 0 && together(l.A, l.B) {
					ok = false
				}
			}
			if ok && !reaches(cut) && (best < 0 || bits.OnesCount(cut) < best) {
				best = bits.OnesCount(cut)
			}
		}
		plan := SeparatingCut(0, chained, links, together, 20)
		if best < 0 {
			if plan.OK && len(chained) > 0 && reaches(0) {
				t.Fatalf("round %d: links %v chained %v: no cut exists but SeparatingCut = %+v", round, links, chained, plan)
			}
			continue
		}
		tried++
		if !plan.OK || len(plan.Links) != best {
			t.Fatalf("round %d: links %v chained %v: SeparatingCut = %+v; want %d links", round, links, chained, plan, best)
		}
		var cut uint
		for _, pl := range plan.Links {
			i := slices.Index(links, pl)
			if together(pl.A, pl.B) {
				t.Fatalf("round %d: cut the inseparable link %v", round, pl)
			}
			cut |= 1 << i
		}
		if reaches(cut) {
			t.Fatalf("round %d: links %v chained %v: after cutting %v a chained document still reaches the keeper", round, links, chained, plan.Links)
		}
	}
	if tried < 100 {
		t.Errorf("only %d graphs had a cut to compare", tried)
	}
	// A limit below the minimum says it cannot.
	chain := []Edge{{A: 0, B: 1, Sim: 0.9}, {A: 0, B: 2, Sim: 0.9}, {A: 1, B: 3, Sim: 0.8}, {A: 2, B: 3, Sim: 0.8}}
	if plan := SeparatingCut(0, []int{3}, chain, nil, 1); plan.OK {
		t.Errorf("SeparatingCut with limit 1 over two disjoint paths = %+v; want not OK", plan)
	}
	if plan := SeparatingCut(0, []int{3}, chain, nil, 2); !plan.OK || len(plan.Links) != 2 || plan.Links[0].Sim != 0.8 {
		t.Errorf("SeparatingCut with limit 2 = %+v; want the two 0.8 links (the weaker)", plan)
	}
}
