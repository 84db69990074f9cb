package calib

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/frame"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// hand is a hand-made truth input: documents by length, candidate edges with their
// verification similarity, the verification's similarity of other pairs, and every
// pair's shingle counts under the campaign's representation.
type hand struct {
	lens   []int
	exact  [][]int
	edges  []cluster.Edge
	others map[[2]int]float64 // verification similarity of non-candidates
	counts map[[2]int][2]int  // (inter, union) of every pair that matters
	same   map[[2]int]bool    // identical normalized texts
}

func key(a, b int) [2]int { return [2]int{min(a, b), max(a, b)} }

func (h hand) input(threshold float64) truthInput {
	docs := make([]cluster.Doc, len(h.lens))
	for i, l := range h.lens {
		docs[i] = cluster.Doc{Len: l}
	}
	sim := func(a, b int) float64 {
		for _, e := range h.edges {
			if key(e.A, e.B) == key(a, b) {
				return e.Sim
			}
		}
		return h.others[key(a, b)]
	}
	counts := func(a, b int) (int, int, bool) {
		c := h.counts[key(a, b)]
		return c[0], c[1], h.same[key(a, b)]
	}
	return truthInput{docs: docs, exact: h.exact, edges: h.edges, sim: sim, counts: counts, threshold: threshold}
}

// removal is a (removed, keeper) pair.
type removal struct{ doc, keeper int }

func removalsOf(c *Clustering) []removal {
	var out []removal
	for _, r := range c.Removals {
		out = append(out, removal{int(r.Doc), int(r.Keeper)})
	}
	return out
}

func TestOutcomeOfHandMade(t *testing.T) {
	t.Parallel()
	// A chain: A~B and B~C pass 0.5, A and C share little (0.3). Lengths make B the
	// longest and C the shortest; A is the earliest.
	chain := hand{
		lens:   []int{100, 200, 50},
		edges:  []cluster.Edge{{A: 0, B: 1, Sim: 0.8}, {A: 1, B: 2, Sim: 0.8}},
		others: map[[2]int]float64{key(0, 2): 0.3},
		counts: map[[2]int][2]int{key(0, 1): {8, 10}, key(1, 2): {8, 10}, key(0, 2): {3, 10}},
	}
	// Two identical texts (an exact group) and a third document accepted at 0.6 whose
	// campaign Jaccard is only 0.4.
	identical := hand{
		lens:   []int{100, 100, 80},
		exact:  [][]int{{0, 1}},
		edges:  []cluster.Edge{{A: 0, B: 1, Sim: 1}, {A: 0, B: 2, Sim: 0.6}},
		others: map[[2]int]float64{key(1, 2): 0.6},
		counts: map[[2]int][2]int{key(0, 1): {10, 10}, key(0, 2): {4, 10}, key(1, 2): {4, 10}},
		same:   map[[2]int]bool{key(0, 1): true},
	}
	// A hub: document 3, the longest, contains a third of each of 0, 1 and 2 (J 0.6),
	// which share little with each other (0.1).
	hub := hand{
		lens:   []int{50, 60, 70, 500},
		edges:  []cluster.Edge{{A: 0, B: 3, Sim: 0.6}, {A: 1, B: 3, Sim: 0.6}, {A: 2, B: 3, Sim: 0.6}},
		others: map[[2]int]float64{key(0, 1): 0.1, key(0, 2): 0.1, key(1, 2): 0.1},
		counts: map[[2]int][2]int{key(0, 3): {6, 10}, key(1, 3): {6, 10}, key(2, 3): {6, 10},
			key(0, 1): {1, 10}, key(0, 2): {1, 10}, key(1, 2): {1, 10}},
	}
	type want struct {
		removals []removal
		false5   int // false removals at tau 0.5
		false7   int // at tau 0.7
	}
	cases := []struct {
		name      string
		in        hand
		threshold float64
		accepted  int
		bins      map[string]int64 // J21 label -> accepted pairs
		identical int64
		dup5      int64 // accepted duplicates at tau 0.5
		want      map[cluster.Policy]map[cluster.Criterion]want
	}{
		{
			name: "chain", in: chain, threshold: 0.5, accepted: 2, bins: map[string]int64{"j0.8-0.85": 2}, dup5: 2,
			want: map[cluster.Policy]map[cluster.Criterion]want{
				// One component; the keeper decides whether C is removed for a document it
				// shares a tenth with.
				cluster.Components: {
					cluster.Earliest: {[]removal{{1, 0}, {2, 0}}, 1, 1},
					cluster.Longest:  {[]removal{{0, 1}, {2, 1}}, 0, 0},
					cluster.Shortest: {[]removal{{0, 2}, {1, 2}}, 1, 1},
				},
				// Keeper-star removes only what passes the keeper itself.
				cluster.KeeperStar: {
					cluster.Earliest: {[]removal{{1, 0}}, 0, 0},
					cluster.Longest:  {[]removal{{0, 1}, {2, 1}}, 0, 0},
					cluster.Shortest: {[]removal{{1, 2}}, 0, 0},
				},
				// Complete-link merges A and B first (ties by node), then refuses C (A~C fails).
				cluster.CompleteLink: {
					cluster.Earliest: {[]removal{{1, 0}}, 0, 0},
					cluster.Longest:  {[]removal{{0, 1}}, 0, 0},
					cluster.Shortest: {[]removal{{1, 0}}, 0, 0},
				},
			},
		},
		{
			name: "identical", in: identical, threshold: 0.5, accepted: 2, bins: map[string]int64{"j0.4-0.45": 1}, identical: 1, dup5: 1,
			want: map[cluster.Policy]map[cluster.Criterion]want{
				cluster.Components: {
					cluster.Earliest: {[]removal{{1, 0}, {2, 0}}, 1, 1},
					cluster.Longest:  {[]removal{{1, 0}, {2, 0}}, 1, 1}, // 0 and 1 tie on length: the earlier
					cluster.Shortest: {[]removal{{0, 2}, {1, 2}}, 2, 2},
				},
				cluster.KeeperStar: {
					cluster.Shortest: {[]removal{{0, 2}, {1, 2}}, 2, 2}, // the exact group passes 2 at 0.6
				},
			},
		},
		{
			name: "hub", in: hub, threshold: 0.5, accepted: 3, bins: map[string]int64{"j0.6-0.65": 3}, dup5: 3,
			want: map[cluster.Policy]map[cluster.Criterion]want{
				cluster.Components: {
					cluster.Earliest: {[]removal{{1, 0}, {2, 0}, {3, 0}}, 2, 3},
					cluster.Longest:  {[]removal{{0, 3}, {1, 3}, {2, 3}}, 0, 3},
				},
				cluster.KeeperStar: {
					// 0 keeps the hub only; 1 and 2 then stand alone (their link is the hub).
					cluster.Earliest: {[]removal{{3, 0}}, 0, 1},
					cluster.Longest:  {[]removal{{0, 3}, {1, 3}, {2, 3}}, 0, 3},
				},
				cluster.CompleteLink: {
					// Edges in order (0,3), (1,3), (2,3): {0,3} forms, 1 and 2 fail against 0.
					cluster.Earliest: {[]removal{{3, 0}}, 0, 1},
					cluster.Longest:  {[]removal{{0, 3}}, 0, 1},
				},
			},
		},
		{
			// A similarity equal to the threshold passes it.
			name: "edges at the threshold", in: chain, threshold: 0.8, accepted: 2, bins: map[string]int64{"j0.8-0.85": 2}, dup5: 2,
			want: map[cluster.Policy]map[cluster.Criterion]want{
				cluster.Components: {cluster.Earliest: {[]removal{{1, 0}, {2, 0}}, 1, 1}},
				cluster.KeeperStar: {cluster.Longest: {[]removal{{0, 1}, {2, 1}}, 0, 0}},
			},
		},
		{
			name: "threshold above every edge", in: chain, threshold: 0.9, accepted: 0, bins: nil, dup5: 0,
			want: map[cluster.Policy]map[cluster.Criterion]want{
				cluster.Components: {cluster.Earliest: {nil, 0, 0}},
				cluster.KeeperStar: {cluster.Longest: {nil, 0, 0}},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o, err := outcomeOf(tc.in.input(tc.threshold), cluster.Policies(), Rules)
			if err != nil {
				t.Fatal(err)
			}
			if o.Accepted != tc.accepted {
				t.Errorf("Accepted = %d; want %d", o.Accepted, tc.accepted)
			}
			if o.Identical != tc.identical {
				t.Errorf("Identical = %d; want %d", o.Identical, tc.identical)
			}
			for b, n := range o.Bins {
				if want := tc.bins[frame.J21.Label(b)]; n != want {
					t.Errorf("Bins[%s] = %d; want %d", frame.J21.Label(b), n, want)
				}
			}
			if got := o.AcceptedDuplicates(Cut(0.5)); got != tc.dup5 {
				t.Errorf("AcceptedDuplicates(Cut(0.5)) = %d; want %d", got, tc.dup5)
			}
			if len(o.Clusterings) != len(cluster.Policies())*len(Rules) {
				t.Fatalf("%d clusterings; want %d", len(o.Clusterings), len(cluster.Policies())*len(Rules))
			}
			for pol, byRule := range tc.want {
				for rule, w := range byRule {
					c := o.Clustering(pol, rule)
					got := removalsOf(c)
					if !slices.Equal(got, w.removals) {
						t.Errorf("%s/%s: removals %v; want %v", pol, rule, got, w.removals)
					}
					if n := c.FalseRemovals(Cut(0.5)); n != w.false5 {
						t.Errorf("%s/%s: FalseRemovals(Cut(0.5)) = %d; want %d", pol, rule, n, w.false5)
					}
					if n := c.FalseRemovals(Cut(0.7)); n != w.false7 {
						t.Errorf("%s/%s: FalseRemovals(Cut(0.7)) = %d; want %d", pol, rule, n, w.false7)
					}
					var binned int64
					for _, n := range c.Bins {
						binned += n
					}
					if binned+c.Identical != int64(len(c.Removals)) {
						t.Errorf("%s/%s: %d binned + %d identical removal pairs; want %d", pol, rule, binned, c.Identical, len(c.Removals))
					}
				}
			}
		})
	}
}

func TestDuplicateRule(t *testing.T) {
	t.Parallel()
	cases := []struct {
		inter, union int
		identical    bool
		tau          float64
		want         bool
	}{
		{7, 10, false, 0.7, true}, // exactly tau: a duplicate (7/10 rounds to the same double as 0.7)
		{69, 100, false, 0.7, false},
		{1, 2, false, 0.5, true},
		{49, 99, false, 0.5, false},
		{0, 10, true, 0.9, true}, // identical normalized texts, whatever the shingles
		{0, 0, false, 0.9, true}, // two texts without a shingle: J = 1
		{1, 5, false, 0.2, true},
	}
	for _, tc := range cases {
		if got := Cut(tc.tau).Duplicate(1, 2, tc.inter, tc.union, tc.identical); got != tc.want {
			t.Errorf("Cut(%v).Duplicate(%d, %d, %v) = %v; want %v", tc.tau, tc.inter, tc.union, tc.identical, got, tc.want)
		}
	}
}

// TestRampRule checks a ramp: never a duplicate under it, always over it, and in between
// a duplicate with the ramp's probability, the same answer for a pair whichever way it
// is named. Tolerance: 4,000 pairs at each J, so the share's standard error is at most
// 0.008; the bar is 0.03 (3.75 standard errors).
func TestRampRule(t *testing.T) {
	t.Parallel()
	r := LabelRule{Tau: 0.6, Ramp: 0.15}
	for _, tc := range []struct {
		inter, union int
		want         float64
	}{{44, 100, 0}, {45, 100, 0}, {525, 1000, 0.25}, {60, 100, 0.5}, {675, 1000, 0.75}, {75, 100, 1}, {9, 10, 1}} {
		dups := 0
		const n = 4000
		for i := range int32(n) {
			a, b := i, i+n
			d := r.Duplicate(a, b, tc.inter, tc.union, false)
			if d != r.Duplicate(b, a, tc.inter, tc.union, false) {
				t.Fatalf("pair %d, %d: the answer depends on the order of the documents", a, b)
			}
			if d {
				dups++
			}
		}
		if got := float64(dups) / n; math.Abs(got-tc.want) > 0.03 {
			t.Errorf("%s at J = %d/%d: %.3f of pairs are duplicates; want %.2f", r, tc.inter, tc.union, got, tc.want)
		}
	}
	if !r.Duplicate(1, 2, 0, 10, true) {
		t.Error("identical normalized texts under a ramp: not a duplicate")
	}
	for s, want := range map[string]LabelRule{"0.5": Cut(0.5), " 0.6~0.15": r, "0.6~0.15r": {Tau: 0.6, Ramp: 0.15, Redraw: true}} {
		got, err := ParseLabelRule(s)
		if err != nil || got != want {
			t.Errorf("ParseLabelRule(%q) = %v, %v; want %v", s, got, err, want)
		}
		if back, err := ParseLabelRule(got.String()); err != nil || back != got {
			t.Errorf("ParseLabelRule(%q) = %v, %v; want %v back", got.String(), back, err, got)
		}
	}
	for _, s := range []string{"x", "0.3~0.2", "0.9~0.2", "0.5~-0.1", "0.5~y", "0.5~0r", "0.5r"} {
		if _, err := ParseLabelRule(s); err == nil {
			t.Errorf("ParseLabelRule(%q) took it", s)
		}
	}
}

// words returns n distinct words starting at word i ("w0 w1 ...").
func words(from, n int, prefix string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + string(rune('a'+(from+i)/26)) + string(rune('a'+(from+i)%26))
	}
	return out
}

// TestEngineOnTexts runs the engine end to end on texts whose word 5-shingles are
// counted by hand: A has 20 words (16 shingles); B is A with its last word changed
// (15 shared, 17 in all: J = 15/17); C is A in capitals with doubled spaces (identical
// after normalization); D shares nothing.
func TestEngineOnTexts(t *testing.T) {
	t.Parallel()
	a := words(0, 20, "w")
	b := append(append([]string{}, a[:19]...), "changed")
	c := strings.ToUpper(strings.Join(a, "  "))
	d := strings.Join(words(100, 30, "x"), " ")
	docs := []Doc{{ID: "a", Text: strings.Join(a, " ")}, {ID: "b", Text: strings.Join(b, " ")}, {ID: "c", Text: c}, {ID: "d", Text: d}}
	ctx := context.Background()
	pop, err := NewPopulation(ctx, docs, Word5())
	if err != nil {
		t.Fatal(err)
	}
	wantPairs := []Pair{{A: 0, B: 1, Inter: 15, Union: 17}, {A: 0, B: 2, Inter: 16, Union: 16, Identical: true}, {A: 1, B: 2, Inter: 15, Union: 17}}
	if len(pop.Pairs) != len(wantPairs) {
		t.Fatalf("Pairs = %v; want %v", pop.Pairs, wantPairs)
	}
	for i, p := range pop.Pairs {
		if p != wantPairs[i] {
			t.Errorf("Pairs[%d] = %+v; want %+v", i, p, wantPairs[i])
		}
	}
	if n := pop.Duplicates(Cut(0.9)); n != 1 {
		t.Errorf("Duplicates(Cut(0.9)) = %d; want 1 (the identical pair; 15/17 = 0.88)", n)
	}
	if n := pop.Duplicates(Cut(0.5)); n != 3 {
		t.Errorf("Duplicates(Cut(0.5)) = %d; want 3", n)
	}
	e := NewEngine(pop)
	o, err := e.Evaluate(ctx, Config{Spec: Word5(), Shape: lsh.Shape{Bands: 32, Rows: 4}, Threshold: 0.5, Verification: Exact},
		[]cluster.Policy{cluster.Components}, Rules)
	if err != nil {
		t.Fatal(err)
	}
	if o.Candidates != 3 || o.Accepted != 3 {
		t.Errorf("candidates %d, accepted %d; want 3 and 3 (A, B and C pairwise)", o.Candidates, o.Accepted)
	}
	if r := o.Recall(pop, Cut(0.5)); r != 1 {
		t.Errorf("Recall(0.5) = %v; want 1", r)
	}
	if r := o.Recall(pop, Cut(0.9)); r != 1 {
		t.Errorf("Recall(0.9) = %v; want 1", r)
	}
	// Earliest keeps A: B goes at 15/17, C as an identical text.
	cl := o.Clustering(cluster.Components, cluster.Earliest)
	if got, want := removalsOf(cl), []removal{{1, 0}, {2, 0}}; !slices.Equal(got, want) {
		t.Errorf("removals %v; want %v", got, want)
	}
	if cl.Identical != 1 || cl.FalseRemovals(Cut(0.9)) != 1 || cl.FalseRemovals(Cut(0.8)) != 0 {
		t.Errorf("identical %d, false at 0.9 %d, at 0.8 %d; want 1, 1 (B: 15/17 < 0.9), 0", cl.Identical, cl.FalseRemovals(Cut(0.9)), cl.FalseRemovals(Cut(0.8)))
	}
	// Longest keeps C (doubled spaces): A goes as identical, B at 15/17.
	cl = o.Clustering(cluster.Components, cluster.Longest)
	if got, want := removalsOf(cl), []removal{{0, 2}, {1, 2}}; !slices.Equal(got, want) {
		t.Errorf("longest: removals %v; want %v", got, want)
	}
}

// TestRampRedraw checks that a ramp that redraws gives each draw its own realization:
// draw 0 of a fixed ramp and every draw of it are the one realization; a redrawing
// ramp's draws differ from it and from each other in about the share of mixed pairs
// two independent coins would (2p(1-p) at J = 0.6, p = 0.5: a half), and keep the
// ramp's probability.
func TestRampRedraw(t *testing.T) {
	t.Parallel()
	fixed := LabelRule{Tau: 0.6, Ramp: 0.15}
	redraw := fixed
	redraw.Redraw = true
	if fixed.ForDraw(3) != fixed {
		t.Errorf("a fixed ramp's draw 3 labels with %+v; want the fixed realization", fixed.ForDraw(3))
	}
	const n = 4000
	labels := func(r LabelRule) []bool {
		out := make([]bool, n)
		for i := range int32(n) {
			out[i] = r.Duplicate(i, i+n, 60, 100, false)
		}
		return out
	}
	base := labels(fixed)
	prev := base
	for d := range 3 {
		r := redraw.ForDraw(d)
		if r.Seed == 0 {
			t.Fatalf("draw %d of a redrawing ramp has the fixed realization", d)
		}
		got := labels(r)
		differ, dups := 0, 0
		for i := range got {
			if got[i] != prev[i] {
				differ++
			}
			if got[i] {
				dups++
			}
		}
		if share := float64(differ) / n; math.Abs(share-0.5) > 0.04 {
			t.Errorf("draw %d: %.3f of the pairs labeled differently from the realization before; want about half", d, share)
		}
		if share := float64(dups) / n; math.Abs(share-0.5) > 0.03 {
			t.Errorf("draw %d: %.3f of the pairs at J 0.6 are duplicates; want 0.5", d, share)
		}
		prev = got
	}
}
