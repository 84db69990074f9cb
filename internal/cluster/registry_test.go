package cluster

import (
	"slices"
	"strings"
	"testing"
)

// TestRegistry: the policies register themselves in the order pages show them, a policy
// registered in one more file is clustered, parsed and listed like the others (and left
// to Graph.Cluster by Levels, which follows only the policies it knows), and
// parsing an unknown name lists every registered one.
func TestRegistry(t *testing.T) {
	if got := Policies(); !slices.Equal(got, []Policy{Components, KeeperStar, CompleteLink}) {
		t.Fatalf("Policies() = %v", got)
	}
	for _, p := range Policies() {
		info, ok := PolicyOf(p)
		if !ok || info.Title == "" || info.KeeperDependent != (p == KeeperStar) {
			t.Errorf("PolicyOf(%s) = %+v, %v", p, info, ok)
		}
	}
	// One more policy, as a new file would add it: every document alone.
	const alone Policy = "alone"
	register(PolicyInfo{Name: alone, Title: "every document alone",
		start: func(*run, []int32, int32) componentClusterer { return aloneRun{} }})
	defer func() { registry = slices.DeleteFunc(registry, func(p PolicyInfo) bool { return p.Name == alone }) }()
	if _, err := ParsePolicy("alone"); err != nil {
		t.Fatal(err)
	}
	g, err := NewGraph(Input{Docs: make([]Doc, 3), Edges: []Edge{{A: 0, B: 1, Sim: 0.9}, {A: 1, B: 2, Sim: 0.9}},
		Sim: func(int, int) float64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Cluster(Config{Threshold: 0.5, Policy: alone, Rule: Rule{By: []Criterion{Earliest}}})
	if err != nil || res.Removed != 0 || len(res.Clusters) != 0 {
		t.Errorf("alone: %+v, %v; want nothing removed", res, err)
	}
	// Levels follows only the policies it knows; a sweep clusters the others threshold by
	// threshold through Graph.Cluster.
	if _, err := g.Levels(Config{Policy: alone, Rule: Rule{By: []Criterion{Earliest}}}); err == nil || FollowsLevels(alone) {
		t.Errorf("Levels(alone) = %v, FollowsLevels %v; want it refused", err, FollowsLevels(alone))
	}
	for _, p := range []Policy{Components, KeeperStar, CompleteLink} {
		if _, err := g.Levels(Config{Policy: p, Rule: Rule{By: []Criterion{Earliest}}}); err != nil || !FollowsLevels(p) {
			t.Errorf("Levels(%s) = %v", p, err)
		}
	}
	if res, _ := g.Cluster(Config{Threshold: 0.5, Policy: Components, Rule: Rule{By: []Criterion{Earliest}}}); res.Removed != 2 {
		t.Errorf("components removed %d; want 2", res.Removed)
	}
	_, err = ParsePolicy("nope")
	if err == nil || !strings.Contains(err.Error(), "components, keeper-star, complete-link, alone") {
		t.Errorf("ParsePolicy(nope) = %v; want the registered names", err)
	}
}

type aloneRun struct{}

func (aloneRun) component(int32, []int32) {}

// TestCriteriaRegistry: the keeper criteria register themselves as the policies do; a
// criterion registered in one more place is parsed, validated, written and applied like
// the others, and messages list every registered one.
func TestCriteriaRegistry(t *testing.T) {
	if got := Criteria(); !slices.Equal(got, []Criterion{Longest, Shortest, Earliest, Source, Language}) {
		t.Fatalf("Criteria() = %v", got)
	}
	for _, c := range Criteria() {
		info, ok := CriterionOf(c)
		if !ok || info.Title == "" || info.compare == nil || info.Ranked() != (c == Source || c == Language) {
			t.Errorf("CriterionOf(%s) = %+v, %v", c, info, ok)
		}
	}
	// One more criterion, as a new registration would add it: documents of an even
	// length first.
	const even Criterion = "even"
	registerCriterion(CriterionInfo{Name: even, Title: "even length first",
		compare: func(_ *order, a, b *Doc) int { return a.Len%2 - b.Len%2 }})
	defer func() { criteria = slices.DeleteFunc(criteria, func(c CriterionInfo) bool { return c.Name == even }) }()
	r, err := ParseRule("even > longest")
	if err != nil {
		t.Fatal(err)
	}
	if s := r.String(); s != "even>longest" {
		t.Errorf("String() = %q; want even>longest", s)
	}
	docs := []Doc{{Len: 9}, {Len: 4}, {Len: 6}, {Len: 11}}
	if k := r.Keeper(docs, []int{0, 1, 2, 3}); k != 2 {
		t.Errorf("Keeper under even>longest = %d; want 2 (the longest of even length)", k)
	}
	if _, err := ParseRule("even(a,b)"); err == nil || !strings.Contains(err.Error(), "takes no ranking") {
		t.Errorf("ParseRule(even(a,b)) = %v; want it to take no ranking", err)
	}
	if err := (Rule{}).Validate(); err == nil || !strings.Contains(err.Error(), "longest, shortest, earliest, source, language or even") {
		t.Errorf("Validate(no criterion) = %v; want the registered names", err)
	}
}
