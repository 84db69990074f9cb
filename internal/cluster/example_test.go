package cluster_test

import (
	"fmt"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
)

// A~B~C with A not~C: B is a near-duplicate of both, A and C share little. A is the
// longest text, so the rule keeps it; the policies disagree about C.
func Example() {
	sims := map[[2]int]float64{{0, 1}: 0.8, {1, 2}: 0.7, {0, 2}: 0.2}
	sim := func(a, b int) float64 {
		if a > b {
			a, b = b, a
		}
		return sims[[2]int{a, b}]
	}
	g, err := cluster.NewGraph(cluster.Input{
		Docs:  []cluster.Doc{{Len: 300}, {Len: 200}, {Len: 100}},
		Edges: []cluster.Edge{{A: 0, B: 1, Sim: 0.8}, {A: 1, B: 2, Sim: 0.7}}, // LSH candidates, verified
		Sim:   sim,
	})
	if err != nil {
		panic(err)
	}
	rule, _ := cluster.ParseRule("longest")
	for _, p := range cluster.Policies() {
		res, err := g.Cluster(cluster.Config{Threshold: 0.5, Policy: p, Rule: rule})
		if err != nil {
			panic(err)
		}
		for _, c := range res.Clusters {
			fmt.Printf("%-13s keeper %d removes", p, c.Keeper)
			for _, rm := range c.Removed {
				fmt.Printf(" %d (%.1f to the keeper)", rm.Doc, rm.Sim)
			}
			if c.Diag.Chained {
				cut := c.Diag.Cut.Edge
				fmt.Printf("; chained %v, cut %d~%d", c.Diag.Chain.Docs, cut.A, cut.B)
			}
			fmt.Println()
		}
	}
	// Output:
	// components    keeper 0 removes 1 (0.8 to the keeper) 2 (0.2 to the keeper); chained [0 1 2], cut 1~2
	// keeper-star   keeper 0 removes 1 (0.8 to the keeper)
	// complete-link keeper 0 removes 1 (0.8 to the keeper)
}
