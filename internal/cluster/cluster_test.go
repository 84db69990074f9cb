package cluster

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// fixture is a small crafted graph: pairwise similarities (pairs not listed are 0), the
// pairs that are candidate edges, and text lengths for the keeper rule.
type fixture struct {
	lens  []int
	sims  map[[2]int]float64
	edges [][2]int // candidate pairs; their similarity comes from sims
	exact [][]int
	calls int
}

func (f *fixture) sim(a, b int) float64 {
	f.calls++
	if a == b {
		return 1
	}
	if a > b {
		a, b = b, a
	}
	return f.sims[[2]int{a, b}]
}

func (f *fixture) graph(t *testing.T) *Graph {
	t.Helper()
	in := Input{Docs: make([]Doc, len(f.lens)), Exact: f.exact, Sim: f.sim}
	for i, l := range f.lens {
		in.Docs[i].Len = l
	}
	for _, p := range f.edges {
		in.Edges = append(in.Edges, Edge{A: p[0], B: p[1], Sim: f.sim(p[0], p[1])})
	}
	f.calls = 0
	g, err := NewGraph(in)
	if err != nil {
		t.Fatalf("NewGraph: %v", err)
	}
	return g
}

// chainFixture is a path 0~1~...~n-1 whose neighbours have similarity 0.8 and whose other
// pairs 0.2 (under a threshold of 0.5), with the given text lengths.
func chainFixture(lens ...int) *fixture {
	f := &fixture{lens: lens, sims: map[[2]int]float64{}}
	for a := range lens {
		for b := a + 1; b < len(lens); b++ {
			f.sims[[2]int{a, b}] = 0.2
		}
		if a+1 < len(lens) {
			f.sims[[2]int{a, a + 1}] = 0.8
			f.edges = append(f.edges, [2]int{a, a + 1})
		}
	}
	return f
}

var longest = Rule{By: []Criterion{Longest}}

func cfg(p Policy) Config { return Config{Threshold: 0.5, Policy: p, Rule: longest} }

// summary writes each cluster as "keeper:[members]".
func summary(cs []Cluster) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%d:%v", c.Keeper, c.Members))
	}
	return out
}

func mustCluster(t *testing.T, g *Graph, c Config) Result {
	t.Helper()
	res, err := g.Cluster(c)
	if err != nil {
		t.Fatalf("Cluster(%v): %v", c.Policy, err)
	}
	checkResult(t, g, c, res)
	return res
}

// checkResult asserts what every result must satisfy whatever the policy.
func checkResult(t *testing.T, g *Graph, c Config, res Result) {
	t.Helper()
	removed := 0
	seen := make([]bool, g.n)
	for i, cl := range res.Clusters {
		if cl.ID != i {
			t.Errorf("Clusters[%d].ID = %d", i, cl.ID)
		}
		if len(cl.Members) < 2 || !slices.IsSorted(cl.Members) {
			t.Errorf("cluster %d members %v: want two or more, sorted", i, cl.Members)
		}
		if _, ok := slices.BinarySearch(cl.Members, cl.Keeper); !ok {
			t.Errorf("cluster %d: keeper %d not a member", i, cl.Keeper)
		}
		if len(cl.Removed) != len(cl.Members)-1 {
			t.Errorf("cluster %d: %d removals for %d members", i, len(cl.Removed), len(cl.Members))
		}
		chained := 0
		for _, rm := range cl.Removed {
			if rm.Doc == cl.Keeper {
				t.Errorf("cluster %d removes its keeper", i)
			}
			if want := g.in.Sim(rm.Doc, cl.Keeper); rm.Reason == Near && rm.Sim != want {
				t.Errorf("cluster %d: removal of %d has Sim %v; Sim(%d, %d) = %v", i, rm.Doc, rm.Sim, rm.Doc, cl.Keeper, want)
			}
			if rm.Sim < c.Threshold {
				chained++
			}
		}
		for _, d := range cl.Members {
			if seen[d] {
				t.Errorf("document %d in two clusters", d)
			}
			seen[d] = true
			if res.Assign[d] != i {
				t.Errorf("Assign[%d] = %d; want %d", d, res.Assign[d], i)
			}
		}
		removed += len(cl.Removed)
		dg := cl.Diag
		// The slices share arenas: each must be capped so that appending to it copies.
		if cap(cl.Members) != len(cl.Members) || cap(cl.Removed) != len(cl.Removed) || cap(cl.Links) != len(cl.Links) ||
			cap(dg.Chain.Docs) != len(dg.Chain.Docs) || cap(dg.Chain.Sims) != len(dg.Chain.Sims) {
			t.Errorf("cluster %d: a slice has room beyond its length", i)
		}
		if dg.Size != len(cl.Members) || dg.ChainedMembers != chained || dg.Chained != (chained > 0) {
			t.Errorf("cluster %d: Size %d, ChainedMembers %d, Chained %v; want %d, %d", i, dg.Size, dg.ChainedMembers, dg.Chained, len(cl.Members), chained)
		}
		hops := len(dg.Chain.Sims)
		if len(dg.Chain.Docs) != hops+1 || dg.Chain.Docs[0] != cl.Keeper {
			t.Errorf("cluster %d: chain %v / %v does not start at keeper %d", i, dg.Chain.Docs, dg.Chain.Sims, cl.Keeper)
		}
		if dg.Chained != (hops > 1) {
			t.Errorf("cluster %d: Chained %v with a longest chain of %d hops", i, dg.Chained, hops)
		}
		for j, s := range dg.Chain.Sims {
			if s < c.Threshold {
				t.Errorf("cluster %d: chain link %d~%d at %v under the threshold", i, dg.Chain.Docs[j], dg.Chain.Docs[j+1], s)
			}
		}
		for _, l := range cl.Links {
			if l.A >= l.B || l.Sim < c.Threshold {
				t.Errorf("cluster %d: link %v", i, l)
			}
		}
	}
	for d, a := range res.Assign {
		if a >= 0 && !seen[d] {
			t.Errorf("Assign[%d] = %d but document %d is in no cluster", d, a, d)
		}
	}
	if res.Removed != removed {
		t.Errorf("Removed = %d; want %d", res.Removed, removed)
	}
}

func TestChains(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		f      *fixture
		policy Policy
		want   []string
	}{
		// A~B~C, A not~C, A kept: components removes C through B.
		{"abc keep A components", chainFixture(30, 20, 10), Components, []string{"0:[0 1 2]"}},
		{"abc keep A keeper-star", chainFixture(30, 20, 10), KeeperStar, []string{"0:[0 1]"}},
		{"abc keep A complete-link", chainFixture(30, 20, 10), CompleteLink, []string{"0:[0 1]"}},
		// B kept: both pass B directly, so keeper-star removes both; complete-link cannot
		// put A and C together and gives C up to whichever clique reached it first.
		{"abc keep B components", chainFixture(20, 30, 10), Components, []string{"1:[0 1 2]"}},
		{"abc keep B keeper-star", chainFixture(20, 30, 10), KeeperStar, []string{"1:[0 1 2]"}},
		{"abc keep B complete-link", chainFixture(20, 30, 10), CompleteLink, []string{"1:[0 1]"}},
		{"abc keep C keeper-star", chainFixture(10, 20, 30), KeeperStar, []string{"2:[1 2]"}},
		// A~B~C~D, A kept: keeper-star keeps A with B, then C~D is clustered on its own.
		{"abcd components", chainFixture(40, 30, 20, 10), Components, []string{"0:[0 1 2 3]"}},
		{"abcd keeper-star", chainFixture(40, 30, 20, 10), KeeperStar, []string{"0:[0 1]", "2:[2 3]"}},
		{"abcd complete-link", chainFixture(40, 30, 20, 10), CompleteLink, []string{"0:[0 1]", "2:[2 3]"}},
		{"abcd keep C keeper-star", chainFixture(30, 20, 40, 10), KeeperStar, []string{"2:[1 2 3]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := mustCluster(t, tt.f.graph(t), cfg(tt.policy))
			if got := summary(res.Clusters); !slices.Equal(got, tt.want) {
				t.Errorf("clusters = %v; want %v", got, tt.want)
			}
			if tt.policy != Components && res.Chained != 0 {
				t.Errorf("Chained = %d; want 0 under %s", res.Chained, tt.policy)
			}
		})
	}
}

func TestChainDiagnostics(t *testing.T) {
	t.Parallel()
	f := chainFixture(30, 20, 10)
	res := mustCluster(t, f.graph(t), cfg(Components))
	c := res.Clusters[0]
	wantRemoved := []Removal{{Doc: 1, Sim: 0.8, Reason: Near}, {Doc: 2, Sim: 0.2, Reason: Near}}
	if !slices.Equal(c.Removed, wantRemoved) {
		t.Errorf("Removed = %v; want %v", c.Removed, wantRemoved)
	}
	d := c.Diag
	if !d.Chained || d.ChainedMembers != 1 || d.Weakest != 2 || d.WeakestSim != 0.2 {
		t.Errorf("Chained %v, ChainedMembers %d, Weakest %d at %v; want true, 1, 2 at 0.2", d.Chained, d.ChainedMembers, d.Weakest, d.WeakestSim)
	}
	if !slices.Equal(d.Chain.Docs, []int{0, 1, 2}) || !slices.Equal(d.Chain.Sims, []float64{0.8, 0.8}) {
		t.Errorf("Chain = %v; want 0~1~2 at 0.8, 0.8", d.Chain)
	}
	if want := (Suggestion{Edge: Edge{A: 1, B: 2, Sim: 0.8}, Chained: 1}); d.Cut != want {
		t.Errorf("Cut = %+v; want %+v", d.Cut, want)
	}
	// One Sim call: doc 2's similarity to the keeper; doc 1's comes from its edge.
	if res.SimCalls != 1 {
		t.Errorf("SimCalls = %d; want 1", res.SimCalls)
	}
	if res.Chained != 1 || res.Removed != 2 {
		t.Errorf("Chained %d, Removed %d; want 1, 2", res.Chained, res.Removed)
	}
	if !res.Together(0, 2) {
		t.Errorf("Together(0, 2) = false; want true")
	}
}

// barbell is two cliques {0..4} and {5..9} (similarity 0.9 inside) joined by the one
// edge 4~5 (0.6); across, other pairs are 0.1. Document 0 is the longest.
func barbell() *fixture {
	f := &fixture{lens: []int{100, 9, 9, 9, 9, 9, 9, 9, 9, 9}, sims: map[[2]int]float64{}}
	for a := range 10 {
		for b := a + 1; b < 10; b++ {
			s := 0.1
			if (a < 5) == (b < 5) {
				s = 0.9
				f.edges = append(f.edges, [2]int{a, b})
			}
			f.sims[[2]int{a, b}] = s
		}
	}
	f.sims[[2]int{4, 5}] = 0.6
	f.edges = append(f.edges, [2]int{4, 5})
	return f
}

func TestSuggestedCut(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		f           *fixture
		want        Suggestion
		wantKeeper  []int // the keeper's cluster after cutting
		wantOthers  []string
		wantChained bool // whether any cluster is still chained after the cut
		keeperCut   Edge // the keeper's cluster's next suggestion, if still chained
	}{
		{"barbell", barbell(), Suggestion{Edge: Edge{A: 4, B: 5, Sim: 0.6}, Chained: 5},
			[]int{0, 1, 2, 3, 4}, []string{"5:[5 6 7 8 9]"}, false, Edge{}},
		// Keeper at one end of a 10-chain: cut right after its one direct neighbour.
		{"chain keeper at end", chainFixture(99, 9, 8, 7, 6, 5, 4, 3, 2, 1), Suggestion{Edge: Edge{A: 1, B: 2, Sim: 0.8}, Chained: 8},
			[]int{0, 1}, []string{"2:[2 3 4 5 6 7 8 9]"}, true, Edge{}},
		// Keeper in the middle: the longer side (4 chained) is cut before the shorter (3).
		{"chain keeper inside", chainFixture(1, 2, 3, 4, 99, 5, 6, 7, 8, 9), Suggestion{Edge: Edge{A: 5, B: 6, Sim: 0.8}, Chained: 4},
			[]int{0, 1, 2, 3, 4, 5}, []string{"9:[6 7 8 9]"}, true, Edge{A: 3, B: 2, Sim: 0.8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := tt.f.graph(t)
			res := mustCluster(t, g, cfg(Components))
			if len(res.Clusters) != 1 {
				t.Fatalf("clusters = %v; want one", summary(res.Clusters))
			}
			c := res.Clusters[0]
			if c.Diag.Cut != tt.want {
				t.Fatalf("Cut = %+v; want %+v", c.Diag.Cut, tt.want)
			}
			out, err := g.Cut(cfg(Components), c, c.Diag.Cut.Edge)
			if err != nil {
				t.Fatalf("Cut: %v", err)
			}
			if out[0].ID != c.ID || out[0].Keeper != c.Keeper || !slices.Equal(out[0].Members, tt.wantKeeper) {
				t.Errorf("Cut: keeper's cluster = %d %d:%v; want %d %d:%v", out[0].ID, out[0].Keeper, out[0].Members, c.ID, c.Keeper, tt.wantKeeper)
			}
			if got := out[0].Diag.Cut.Edge; got != tt.keeperCut {
				t.Errorf("Cut: keeper's cluster's next cut = %v; want %v", got, tt.keeperCut)
			}
			if got := summary(out[1:]); !slices.Equal(got, tt.wantOthers) {
				t.Errorf("Cut: split off %v; want %v", got, tt.wantOthers)
			}
			for _, x := range out[1:] {
				if x.ID != -1 {
					t.Errorf("Cut: new cluster ID %d; want -1", x.ID)
				}
			}
			chained := slices.ContainsFunc(out, func(x Cluster) bool { return x.Diag.Chained })
			if chained != tt.wantChained {
				t.Errorf("Cut: some cluster chained = %v; want %v", chained, tt.wantChained)
			}
		})
	}
}

func TestCutErrorsAndNonBridge(t *testing.T) {
	t.Parallel()
	g := barbell().graph(t)
	c := mustCluster(t, g, cfg(Components)).Clusters[0]
	_, err := g.Cut(cfg(Components), c, Edge{A: 0, B: 9})
	if ie, ok := errors.AsType[*InputError](err); !ok || ie.Field != "edge" {
		t.Errorf("Cut(0~9) error = %v; want an *InputError on edge", err)
	}
	// 2~1 is inside a clique: cutting it separates nothing and drops the link.
	out, err := g.Cut(cfg(Components), c, Edge{A: 2, B: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || !slices.Equal(out[0].Members, c.Members) {
		t.Fatalf("Cut(2~1) = %v; want the cluster unchanged", summary(out))
	}
	if slices.ContainsFunc(out[0].Links, func(l Edge) bool { return l.A == 1 && l.B == 2 }) {
		t.Errorf("Cut(2~1) kept the link 1~2")
	}
	if len(out[0].Links) != len(c.Links)-1 {
		t.Errorf("Cut(2~1) links %d; want %d", len(out[0].Links), len(c.Links)-1)
	}
	// 0~1 joins the keeper to a member that passes it: the member's own similarity links
	// it again.
	out, err = g.Cut(cfg(Components), c, Edge{A: 0, B: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || !slices.Equal(out[0].Links, c.Links) {
		t.Errorf("Cut(0~1) = %v with %d links; want the cluster and its %d links", summary(out), len(out[0].Links), len(c.Links))
	}
}

func TestOverride(t *testing.T) {
	t.Parallel()
	t.Run("components", func(t *testing.T) {
		t.Parallel()
		f := chainFixture(30, 20, 10) // keeper 0, chained through 1
		g := f.graph(t)
		c := mustCluster(t, g, cfg(Components)).Clusters[0]
		out, err := g.Override(cfg(Components), c, 1, "the middle version is the canonical one")
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 1 {
			t.Fatalf("Override = %v; want one cluster", summary(out))
		}
		o := out[0]
		if o.ID != c.ID || o.Keeper != 1 || o.Override != "the middle version is the canonical one" || !slices.Equal(o.Members, c.Members) {
			t.Errorf("Override = ID %d keeper %d override %q members %v", o.ID, o.Keeper, o.Override, o.Members)
		}
		want := []Removal{{Doc: 0, Sim: 0.8, Reason: Near}, {Doc: 2, Sim: 0.8, Reason: Near}}
		if !slices.Equal(o.Removed, want) || o.Diag.Chained || o.Diag.WeakestSim != 0.8 {
			t.Errorf("Override: Removed %v, Chained %v, WeakestSim %v; want %v, false, 0.8", o.Removed, o.Diag.Chained, o.Diag.WeakestSim, want)
		}
	})
	t.Run("keeper-star splits off what fails the new keeper", func(t *testing.T) {
		t.Parallel()
		// Star around 0: 1, 2, 3 all pass 0; 1 passes 2 but not 3.
		f := &fixture{lens: []int{50, 40, 30, 20}, sims: map[[2]int]float64{
			{0, 1}: 0.9, {0, 2}: 0.8, {0, 3}: 0.7, {1, 2}: 0.6, {1, 3}: 0.3, {2, 3}: 0.55,
		}, edges: [][2]int{{0, 1}, {0, 2}, {0, 3}}}
		g := f.graph(t)
		res := mustCluster(t, g, cfg(KeeperStar))
		if got := summary(res.Clusters); !slices.Equal(got, []string{"0:[0 1 2 3]"}) {
			t.Fatalf("clusters = %v", got)
		}
		out, err := g.Override(cfg(KeeperStar), res.Clusters[0], 1, "newest")
		if err != nil {
			t.Fatal(err)
		}
		// 1 keeps 0 (0.9) and 2 (0.6); 3 fails 1 (0.3) and is alone, so kept.
		if got := summary(out); !slices.Equal(got, []string{"1:[0 1 2]"}) {
			t.Errorf("Override = %v; want [1:[0 1 2]]", got)
		}
		if out[0].Override != "newest" || out[0].ID != 0 {
			t.Errorf("Override: ID %d, Override %q", out[0].ID, out[0].Override)
		}
	})
	t.Run("errors", func(t *testing.T) {
		t.Parallel()
		g := chainFixture(30, 20, 10, 5).graph(t)
		res := mustCluster(t, g, cfg(KeeperStar))
		c := res.Clusters[0] // 0:[0 1]
		for _, tt := range []struct {
			keeper int
			reason string
			field  string
		}{{1, "  ", "reason"}, {3, "why not", "keeper"}} {
			_, err := g.Override(cfg(KeeperStar), c, tt.keeper, tt.reason)
			if ie, ok := errors.AsType[*InputError](err); !ok || ie.Field != tt.field {
				t.Errorf("Override(%d, %q) error = %v; want an *InputError on %s", tt.keeper, tt.reason, err, tt.field)
			}
		}
	})
}

func TestKeeperRules(t *testing.T) {
	t.Parallel()
	day := func(d int) time.Time { return time.Date(2024, 1, d, 0, 0, 0, 0, time.UTC) }
	docs := []Doc{
		{Len: 10, Source: "npm", Lang: "de"},
		{Len: 30, Date: day(5), Source: "debian", Lang: "en"},
		{Len: 30, Date: day(3), Source: "spdx", Lang: "fr"},
		{Len: 5, Date: day(3), Source: "debian", Lang: "en"},
		{Len: 5, Source: "web", Lang: "ja"},
	}
	all := []int{0, 1, 2, 3, 4}
	tests := []struct {
		rule    string
		members []int
		want    int
	}{
		{"longest", all, 1},          // 1 and 2 tie at 30: lowest index
		{"longest", []int{2, 1}, 1},  // whatever the members' order
		{"shortest", all, 3},         // 3 and 4 tie at 5
		{"earliest", all, 2},         // 2 and 3 dated day 3: lowest index
		{"earliest", []int{0, 4}, 0}, // no dates: import order
		{"earliest", []int{4, 1}, 1}, // dated before undated
		{"source(spdx,debian)", all, 2},
		{"source(debian)", all, 1},          // 1 and 3 from debian
		{"source(debian)>shortest", all, 3}, // the tie goes to the next criterion
		{"source(nowhere)", all, 0},         // nothing listed: import order
		{"language(fr,en)", all, 2},
		{"language(en)>longest", all, 1},
		{"shortest>earliest", all, 3},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			t.Parallel()
			r, err := ParseRule(tt.rule)
			if err != nil {
				t.Fatalf("ParseRule(%q): %v", tt.rule, err)
			}
			if got := r.Keeper(docs, tt.members); got != tt.want {
				t.Errorf("Keeper(%v) = %d; want %d", tt.members, got, tt.want)
			}
			if r.String() != tt.rule {
				t.Errorf("ParseRule(%q).String() = %q", tt.rule, r.String())
			}
		})
	}
}

func TestKeeperRuleInClusters(t *testing.T) {
	t.Parallel()
	// Three mutually similar documents: the rule alone decides the keeper.
	f := &fixture{lens: []int{20, 50, 50}, sims: map[[2]int]float64{{0, 1}: 0.9, {0, 2}: 0.9, {1, 2}: 0.9},
		edges: [][2]int{{0, 1}, {0, 2}, {1, 2}}}
	g := f.graph(t)
	for _, tt := range []struct {
		rule string
		want int
	}{{"longest", 1}, {"shortest", 0}, {"earliest", 0}} {
		for _, p := range Policies() {
			t.Run(tt.rule+"/"+string(p), func(t *testing.T) {
				r, _ := ParseRule(tt.rule)
				res := mustCluster(t, g, Config{Threshold: 0.5, Policy: p, Rule: r})
				if len(res.Clusters) != 1 || res.Clusters[0].Keeper != tt.want {
					t.Errorf("clusters = %v; want keeper %d", summary(res.Clusters), tt.want)
				}
				if res.Config.Rule.String() != tt.rule {
					t.Errorf("Result.Config.Rule = %q; want %q", res.Config.Rule.String(), tt.rule)
				}
			})
		}
	}
}

func TestParseRuleErrors(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "longest>longest", "biggest", "source", "source()", "longest(a)",
		"source(a,a)", "source(a", "language(en,)"} {
		t.Run(s, func(t *testing.T) {
			t.Parallel()
			_, err := ParseRule(s)
			if ie, ok := errors.AsType[*InputError](err); !ok || ie.Field != "rule" {
				t.Errorf("ParseRule(%q) error = %v; want an *InputError on rule", s, err)
			}
		})
	}
	if err := (Rule{By: []Criterion{Longest}, Sources: []string{"a"}}).Validate(); err == nil {
		t.Errorf("Validate(longest with a source ranking) = nil; want an error")
	}
}

func TestExact(t *testing.T) {
	t.Parallel()
	texts := []string{
		"The MIT License",  // 0
		"the  mit license", // 1: equal to 0 after lower+space
		"Apache License 2.0",
		"THE MIT LICENSE\n",  // 3
		"apache license 2.0", // 4
		"BSD",
	}
	groups := ExactGroups(texts, lsh.Norm{Lower: true, CollapseSpace: true})
	want := [][]int{{0, 1, 3}, {2, 4}}
	if !slices.EqualFunc(groups, want, slices.Equal) {
		t.Fatalf("ExactGroups = %v; want %v", groups, want)
	}
	// 3 (the longest of its group) keeps the MIT group. 2 keeps the Apache group (a tie
	// in length, lowest index) and 5, which is near 4 by an edge: 5's similarity to 2 is
	// 4's, with no Sim call.
	f := &fixture{lens: []int{15, 16, 18, 17, 18, 3}, exact: groups,
		sims:  map[[2]int]float64{{0, 1}: 1, {0, 3}: 1, {1, 3}: 1, {2, 4}: 1, {4, 5}: 0.7, {2, 5}: 0.7},
		edges: [][2]int{{4, 5}, {0, 3}}}
	g := f.graph(t)
	for _, p := range Policies() {
		t.Run(string(p), func(t *testing.T) {
			res := mustCluster(t, g, cfg(p))
			if got := summary(res.Clusters); !slices.Equal(got, []string{"3:[0 1 3]", "2:[2 4 5]"}) {
				t.Fatalf("clusters = %v", got)
			}
			want := []Removal{{Doc: 4, Sim: 1, Reason: Exact}, {Doc: 5, Sim: 0.7, Reason: Near}}
			if got := res.Clusters[1].Removed; !slices.Equal(got, want) {
				t.Errorf("Removed = %v; want %v", got, want)
			}
			if res.RemovedExact != 3 || res.Removed != 4 || res.SimCalls != 0 {
				t.Errorf("RemovedExact %d, Removed %d, SimCalls %d; want 3, 4, 0", res.RemovedExact, res.Removed, res.SimCalls)
			}
			// The exact links make the group one hop from its keeper; they cannot be cut.
			if l := res.Clusters[0].Links; !slices.Equal(l, []Edge{{0, 3, 1}, {1, 3, 1}}) {
				t.Errorf("links = %v", l)
			}
			_, err := g.Cut(cfg(p), res.Clusters[0], Edge{A: 0, B: 3})
			if ie, ok := errors.AsType[*InputError](err); !ok || ie.Field != "edge" {
				t.Errorf("Cut(0~3) error = %v; want an *InputError on edge", err)
			}
		})
	}
}

func TestInputErrors(t *testing.T) {
	t.Parallel()
	sim := func(a, b int) float64 { return 0 }
	docs := make([]Doc, 3)
	tests := []struct {
		name  string
		in    Input
		field string
	}{
		{"no sim", Input{Docs: docs}, "sim"},
		{"edge out of range", Input{Docs: docs, Sim: sim, Edges: []Edge{{0, 1, 0.5}, {0, 3, 0.5}}}, "edges[1]"},
		{"self pair", Input{Docs: docs, Sim: sim, Edges: []Edge{{2, 2, 0.5}}}, "edges[0]"},
		{"similarity NaN", Input{Docs: docs, Sim: sim, Edges: []Edge{{0, 2, math.NaN()}}}, "edges[0]"},
		{"similarity over 1", Input{Docs: docs, Sim: sim, Edges: []Edge{{0, 2, 1.5}}}, "edges[0]"},
		{"exact twice", Input{Docs: docs, Sim: sim, Exact: [][]int{{0, 1}, {2, 1}}}, "exact[1][1]"},
		{"exact out of range", Input{Docs: docs, Sim: sim, Exact: [][]int{{0, -1}}}, "exact[0][1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewGraph(tt.in)
			ie, ok := errors.AsType[*InputError](err)
			if !ok || ie.Field != tt.field {
				t.Fatalf("NewGraph error = %v; want an *InputError on %s", err, tt.field)
			}
			if !strings.HasPrefix(err.Error(), "cluster: "+tt.field+": ") {
				t.Errorf("error text %q does not name %s", err, tt.field)
			}
		})
	}
	g, err := NewGraph(Input{Docs: docs, Sim: sim})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg   Config
		field string
	}{
		{Config{Threshold: 1.2, Policy: Components, Rule: longest}, "threshold"},
		{Config{Threshold: math.NaN(), Policy: Components, Rule: longest}, "threshold"},
		{Config{Threshold: 0.5, Policy: "single", Rule: longest}, "policy"},
		{Config{Threshold: 0.5, Policy: Components}, "rule"},
	} {
		_, err := g.Cluster(c.cfg)
		if ie, ok := errors.AsType[*InputError](err); !ok || ie.Field != c.field {
			t.Errorf("Cluster(%+v) error = %v; want an *InputError on %s", c.cfg, err, c.field)
		}
	}
}

func TestByRisk(t *testing.T) {
	t.Parallel()
	mk := func(id int, chained bool, weakest float64, size int) Cluster {
		return Cluster{ID: id, Diag: Diagnostics{Chained: chained, WeakestSim: weakest, Size: size}}
	}
	cs := []Cluster{mk(0, false, 0.9, 2), mk(1, true, 0.3, 5), mk(2, false, 0.6, 3), mk(3, true, 0.1, 2), mk(4, false, 0.6, 7)}
	slices.SortFunc(cs, ByRisk)
	var got []int
	for _, c := range cs {
		got = append(got, c.ID)
	}
	if want := []int{3, 1, 4, 2, 0}; !slices.Equal(got, want) {
		t.Errorf("ByRisk order = %v; want %v", got, want)
	}
}

func TestParseDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want time.Time
	}{
		{"", time.Time{}},
		{"2024-03-01", time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)},
		{"2024-03-01T10:20:30.5+02:00", time.Date(2024, 3, 1, 8, 20, 30, 5e8, time.UTC)},
		{"01/03/2024", time.Time{}},
		{"2024-13-01", time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := ParseDate(tt.in); !got.Equal(tt.want) {
				t.Errorf("ParseDate(%q) = %v; want %v", tt.in, got, tt.want)
			}
		})
	}
}
