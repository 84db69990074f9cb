package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"weak"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/labels"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// tokens returns the text "w<lo> w<lo+1> ... w<hi-1>": under word 1-shingles its set is
// exactly those tokens, so Jaccard similarities of such texts are known by
// construction.
func tokens(lo, hi int) string {
	var sb strings.Builder
	for i := lo; i < hi; i++ {
		fmt.Fprintf(&sb, "w%d ", i)
	}
	return sb.String()
}

// handSample is a small dataset whose answers are known:
//
//	0, 1   identical                            labeled exact duplicate
//	2, 3   J = 80/100 = 0.8                     labeled minor duplicate
//	4, 5   J = 75/125 = 0.6                     labeled minor duplicate
//	5, 6   J = 0.6 (not labeled): the chain 4~5~6
//	4, 6   J = 50/150 = 0.333                   labeled different: merged only through the chain
//	7, 8   J = 40/100 = 0.4                     labeled partial, a duplicate
//	9, 10  J = 0                                labeled different
//	11-14  unrelated
func handSample() ([]string, []LabeledPair) {
	texts := []string{
		tokens(0, 100), tokens(0, 100),
		tokens(1000, 1090), tokens(1010, 1100),
		tokens(2000, 2100), tokens(2025, 2125), tokens(2050, 2150),
		tokens(3000, 3070), tokens(3030, 3100),
		tokens(4000, 4100), tokens(5000, 5100),
		tokens(6000, 6100), tokens(7000, 7100), tokens(8000, 8100), tokens(9000, 9100),
	}
	lab := func(id int64, a, b int, cat string, dup bool) LabeledPair {
		return LabeledPair{ID: id, A: a, B: b, Labels: []Label{{Annotator: "ann", Kind: "label", Category: cat, Duplicate: dup}}}
	}
	pairs := []LabeledPair{
		lab(1, 0, 1, "exact", true),
		lab(2, 2, 3, "minor", true),
		lab(3, 4, 6, "different", false),
		lab(4, 7, 8, "partial", true),
		lab(5, 9, 10, "different", false),
		lab(6, 4, 5, "minor", true),
	}
	return texts, pairs
}

// word1 is the representation of the hand sample: word 1-shingles, k=128.
func word1(tb testing.TB) lsh.Spec {
	tb.Helper()
	s, err := lsh.ParseSpec("level=word size=1 k=128")
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// pairsOnly is a cluster policy that never chains: an accepted edge merges two
// documents only while both are alone.
func pairsOnly(n int, edges []Edge, _ float64) []int32 {
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(i)
	}
	used := make([]bool, n)
	for _, e := range edges {
		if !used[e.A] && !used[e.B] {
			used[e.A], used[e.B] = true, true
			ids[e.B] = ids[e.A]
		}
	}
	return ids
}

func handInput(tb testing.TB) Input {
	tb.Helper()
	texts, pairs := handSample()
	in := textInput(texts, pairs, precompute(tb, texts, []lsh.Spec{word1(tb)}))
	in.Rep = word1(tb) // the campaign's representation: its bins are the estimates'
	in.Policies = map[cluster.Policy]Clusterer{"pairs-only": pairsOnly}
	return in
}

func findResult(tb testing.TB, rs []Result, t float64, v Verification, policy cluster.Policy) Result {
	tb.Helper()
	for _, r := range rs {
		if r.Config.Threshold == t && r.Config.Verification == v && r.Config.Policy == policy {
			return r
		}
	}
	tb.Fatalf("no result at threshold %v, %s, %s", t, v, policy)
	return Result{}
}

func category(tb testing.TB, s Scores, key string) CategoryScore {
	tb.Helper()
	for _, c := range s.Categories {
		if c.Category == key {
			return c
		}
	}
	tb.Fatalf("no category %q in %v", key, s.Categories)
	return CategoryScore{}
}

func checkRate(tb testing.TB, name string, got Rate, hits, of int) {
	tb.Helper()
	if got.Hits != hits || got.Of != of {
		tb.Errorf("%s = %d/%d; want %d/%d", name, got.Hits, got.Of, hits, of)
	}
}

func TestRunHandSample(t *testing.T) {
	in := handInput(t)
	// 64 bands of 2 rows: every labeled pair with J >= 0.33 collides (P >= 0.999), the
	// J = 0 pair cannot.
	g := Grid{
		Specs:         []lsh.Spec{word1(t)},
		Shapes:        []lsh.Shape{{Bands: 64, Rows: 2}},
		Thresholds:    []float64{0.3, 0.5, 0.9},
		Verifications: []Verification{ExactJaccard, MinHashEstimate},
		Policies:      []cluster.Policy{cluster.Components, "pairs-only"},
	}
	rep, err := Run(context.Background(), in, g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 12 || rep.Configs != 12 {
		t.Fatalf("%d results of %d configs; want 12 of 12", len(rep.Results), rep.Configs)
	}
	cases := []struct {
		threshold                  float64
		policy                     cluster.Policy
		recall, falseMerges        int // of 4 duplicates, of 2 non-duplicates
		precisionHits, precisionOf int
		removals, clusters         int
		largest                    int
	}{
		// At 0.5: (7,8) at J=0.4 is missed; (4,6) at 0.333 is not accepted but the chain
		// 4~5~6 puts it in one cluster under connected components.
		{0.5, cluster.Components, 3, 1, 3, 3, 4, 3, 3},
		{0.5, "pairs-only", 3, 0, 3, 3, 3, 3, 2},
		// At 0.3 every labeled pair but (9,10) is accepted, (4,6) directly.
		{0.3, cluster.Components, 4, 1, 4, 5, 5, 4, 3},
		// At 0.9 only the identical pair.
		{0.9, cluster.Components, 1, 0, 1, 1, 1, 1, 2},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("t=%v/%s", c.threshold, c.policy), func(t *testing.T) {
			r := findResult(t, rep.Results, c.threshold, ExactJaccard, c.policy)
			checkRate(t, "CandidateRecall", r.CandidateRecall, 4, 4)
			checkRate(t, "Recall", r.Recall, c.recall, 4)
			checkRate(t, "FalseMerges", r.FalseMerges, c.falseMerges, 2)
			checkRate(t, "Precision", r.Precision, c.precisionHits, c.precisionOf)
			if r.Removals != c.removals || r.Clusters != c.clusters || r.LargestCluster != c.largest {
				t.Errorf("removals, clusters, largest = %d, %d, %d; want %d, %d, %d",
					r.Removals, r.Clusters, r.LargestCluster, c.removals, c.clusters, c.largest)
			}
			if r.Dataset != nil {
				t.Errorf("Dataset = %+v; want nil (no pair carries a design)", r.Dataset)
			}
		})
	}
	t.Run("categories", func(t *testing.T) {
		r := findResult(t, rep.Results, 0.5, ExactJaccard, cluster.Components)
		checkRate(t, "exact recall", category(t, r.Scores, "exact").Recall, 1, 1)
		checkRate(t, "minor recall", category(t, r.Scores, "minor").Recall, 2, 2)
		checkRate(t, "partial recall", category(t, r.Scores, "partial").Recall, 0, 1)
		checkRate(t, "different false merges", category(t, r.Scores, "different").FalseMerges, 1, 2)
		checkRate(t, "translation recall", category(t, r.Scores, "translation").Recall, 0, 0)
		if got, want := len(r.Categories), len(labels.DefaultCategories); got != want {
			t.Errorf("%d categories; want %d (the campaign's)", got, want)
		}
	})
	t.Run("baseline", func(t *testing.T) {
		b := rep.Baseline
		if b == nil {
			t.Fatal("no baseline")
		}
		checkRate(t, "baseline Recall", b.Recall, 1, 4)
		checkRate(t, "baseline FalseMerges", b.FalseMerges, 0, 2)
		if b.Removals != 1 {
			t.Errorf("baseline Removals = %d; want 1", b.Removals)
		}
	})
	t.Run("expected candidate recall", func(t *testing.T) {
		r := findResult(t, rep.Results, 0.5, ExactJaccard, cluster.Components)
		sh := lsh.Shape{Bands: 64, Rows: 2}
		want := (lsh.Probability(1, sh) + lsh.Probability(0.8, sh) + lsh.Probability(0.4, sh) + lsh.Probability(0.6, sh)) / 4
		if math.Abs(r.ExpectedCandidateRecall-want) > 1e-12 {
			t.Errorf("ExpectedCandidateRecall = %v; want %v", r.ExpectedCandidateRecall, want)
		}
	})
	t.Run("estimate verification", func(t *testing.T) {
		// The identical pair's estimate is exactly 1; J=0.8 and 0.6 are accepted at 0.3
		// whatever the estimate's noise (sd <= 0.044 at k=128).
		r := findResult(t, rep.Results, 0.3, MinHashEstimate, cluster.Components)
		checkRate(t, "estimate Recall at 0.3", r.Recall, 4, 4)
		r = findResult(t, rep.Results, 0.9, MinHashEstimate, cluster.Components)
		if r.Recall.Hits < 1 {
			t.Errorf("estimate Recall at 0.9 = %d/4; want the identical pair at least", r.Recall.Hits)
		}
	})
}

// TestRescoreMatchesRun checks that the slider's path (one clustering at one threshold)
// gives the same scores as the sweep's incremental path, for every configuration of a
// grid over real text, and that a custom policy wrapping Components agrees with the
// built-in one.
func TestRescoreMatchesRun(t *testing.T) {
	d := loadDemo(t)
	spec := lsh.DefaultSpec()
	g := Grid{
		Specs:         []lsh.Spec{spec},
		Shapes:        []lsh.Shape{{Bands: 32, Rows: 4}, {Bands: 14, Rows: 9}},
		Thresholds:    []float64{0.3, 0.5, 0.7, 0.9},
		Verifications: []Verification{MinHashEstimate, ExactJaccard},
		Policies:      []cluster.Policy{cluster.Components, "components-again"},
	}
	in := textInput(d.texts, d.pairs, precompute(t, d.texts, g.Specs))
	in.Policies = map[cluster.Policy]Clusterer{"components-again": Components}
	rep, err := Run(context.Background(), in, g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	states := map[[3]string]*State{}
	for _, r := range rep.Results {
		c := r.Config
		key := [3]string{c.Shape.String(), string(c.Verification), string(c.Policy)}
		st := states[key]
		if st == nil {
			if st, err = Prepare(context.Background(), in, c, Options{}); err != nil {
				t.Fatal(err)
			}
			states[key] = st
		}
		got, err := st.Rescore(context.Background(), c.Threshold)
		if err != nil {
			t.Fatal(err)
		}
		if !sameScores(got.Scores, r.Scores) || got.Accepted != r.Accepted || got.Candidates != r.Candidates {
			t.Errorf("%s: Rescore = %+v; Run gave %+v", c.Label(), got.Scores, r.Scores)
		}
	}
	// The built-in and the wrapped policy agree.
	for _, r := range rep.Results {
		if r.Config.Policy != cluster.Components {
			continue
		}
		o := findConfig(t, rep.Results, r.Config, "components-again")
		if !sameScores(o.Scores, r.Scores) {
			t.Errorf("%s: wrapped Components = %+v; built-in %+v", r.Config.Label(), o.Scores, r.Scores)
		}
	}
}

func findConfig(tb testing.TB, rs []Result, c Config, policy cluster.Policy) Result {
	tb.Helper()
	c.Policy = policy
	for _, r := range rs {
		if r.Config == c {
			return r
		}
	}
	tb.Fatalf("no result for %s", c.Label())
	return Result{}
}

func sameRate(a, b Rate) bool { return a.Hits == b.Hits && a.Of == b.Of }

func sameScores(a, b Scores) bool {
	if !sameRate(a.Recall, b.Recall) || !sameRate(a.ClusterRecall, b.ClusterRecall) ||
		!sameRate(a.FalseMerges, b.FalseMerges) || !sameRate(a.Precision, b.Precision) ||
		a.Removals != b.Removals || a.Clusters != b.Clusters || a.LargestCluster != b.LargestCluster ||
		len(a.Categories) != len(b.Categories) {
		return false
	}
	for i := range a.Categories {
		if a.Categories[i].Category != b.Categories[i].Category || !sameRate(a.Categories[i].Recall, b.Categories[i].Recall) ||
			!sameRate(a.Categories[i].FalseMerges, b.Categories[i].FalseMerges) {
			return false
		}
	}
	return (a.Dataset == nil) == (b.Dataset == nil)
}

// TestRunDemoMonotone checks on real text what connected components guarantee: as the
// threshold rises, recall, cluster recall, false merges and removals never grow, and
// candidate recall bounds recall.
func TestRunDemoMonotone(t *testing.T) {
	d := loadDemo(t)
	char5, err := lsh.ParseSpec("level=char size=5 k=128")
	if err != nil {
		t.Fatal(err)
	}
	g := Grid{
		Specs:         []lsh.Spec{lsh.DefaultSpec(), char5},
		Thresholds:    Steps(0.3, 0.95, 0.05),
		Verifications: []Verification{MinHashEstimate, ExactJaccard},
		Policies:      []cluster.Policy{cluster.Components},
	}
	in := textInput(d.texts, d.pairs, precompute(t, d.texts, g.Specs))
	rep, err := Run(context.Background(), in, g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Labels.Counted != len(d.pairs) || rep.Labels.RuleOnly != len(d.pairs) {
		t.Errorf("counted %d (rule %d); want all %d by their rule labels", rep.Labels.Counted, rep.Labels.RuleOnly, len(d.pairs))
	}
	var prev *Result
	for i := range rep.Results {
		r := &rep.Results[i]
		if r.Recall.Hits > r.CandidateRecall.Hits {
			t.Errorf("%s: recall %d > candidate recall %d", r.Config.Label(), r.Recall.Hits, r.CandidateRecall.Hits)
		}
		if r.Accepted > r.Candidates {
			t.Errorf("%s: %d accepted of %d candidates", r.Config.Label(), r.Accepted, r.Candidates)
		}
		if prev != nil && prev.Config.Spec == r.Config.Spec && prev.Config.Shape == r.Config.Shape &&
			prev.Config.Verification == r.Config.Verification {
			if r.Recall.Hits > prev.Recall.Hits || r.ClusterRecall.Hits > prev.ClusterRecall.Hits ||
				r.FalseMerges.Hits > prev.FalseMerges.Hits || r.Removals > prev.Removals || r.Accepted > prev.Accepted {
				t.Errorf("%s after %s: recall %d→%d, false merges %d→%d, removals %d→%d; none may grow",
					r.Config.Label(), prev.Config.Label(), prev.Recall.Hits, r.Recall.Hits,
					prev.FalseMerges.Hits, r.FalseMerges.Hits, prev.Removals, r.Removals)
			}
		}
		prev = r
	}
	// The exact-hash baseline finds the exact copies and nothing below.
	if b := rep.Baseline; b == nil || b.Recall.Hits == 0 || b.FalseMerges.Hits != 0 {
		t.Errorf("baseline = %+v; want some recall and no false merge", b)
	}
}

func TestRunCancel(t *testing.T) {
	d := loadDemo(t)
	g := Grid{
		Specs:         []lsh.Spec{lsh.DefaultSpec()},
		Thresholds:    Steps(0.3, 0.95, 0.05),
		Verifications: []Verification{MinHashEstimate, ExactJaccard},
		Policies:      []cluster.Policy{cluster.Components},
	}
	in := textInput(d.texts, d.pairs, precompute(t, d.texts, g.Specs))
	total, err := g.count()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("midway", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var emitted []Result
		lastDone := 0
		const stopAt = 20
		rep, err := Run(ctx, in, g, Options{
			OnResult: func(r Result) {
				emitted = append(emitted, r)
				if len(emitted) == stopAt {
					cancel()
				}
			},
			Progress: func(done, all int) {
				lastDone = done
				if all != total {
					t.Errorf("Progress total = %d; want %d", all, total)
				}
			},
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run after cancel: err = %v; want context.Canceled", err)
		}
		if rep == nil {
			t.Fatal("Run after cancel returned no report")
		}
		// Promptly: no result after the one whose OnResult cancelled (a receiver that
		// stores results in a goroutine of its own relies on it, internal/sweeprun).
		if n := len(rep.Results); n != stopAt {
			t.Errorf("%d results after cancelling at %d of %d; want none more", n, stopAt, total)
		}
		if len(emitted) != len(rep.Results) || lastDone != len(rep.Results) {
			t.Errorf("emitted %d, progress %d, report %d; want equal", len(emitted), lastDone, len(rep.Results))
		}
		for _, r := range rep.Results {
			if r.Recall.Of != rep.Labels.Counted-countNonDup(rep) || r.Candidates == 0 {
				t.Errorf("partial result %s is not whole: %+v", r.Config.Label(), r.Recall)
			}
		}
	})
	t.Run("before start", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		rep, err := Run(ctx, in, g, Options{})
		if !errors.Is(err, context.Canceled) || rep == nil || len(rep.Results) != 0 {
			t.Errorf("Run on a cancelled context = %v results, %v; want none, context.Canceled", rep, err)
		}
	})
}

func countNonDup(rep *Report) int {
	n := 0
	for _, p := range rep.Labels.Pairs {
		if !p.Duplicate {
			n++
		}
	}
	return n
}

func TestRunInputErrors(t *testing.T) {
	texts, pairs := handSample()
	good := func() Input { return handInput(t) }
	g := Grid{Specs: []lsh.Spec{word1(t)}, Thresholds: []float64{0.5}, Verifications: []Verification{ExactJaccard}, Policies: []cluster.Policy{cluster.Components}}
	cases := []struct {
		name  string
		edit  func(*Input)
		field string
	}{
		{"pair out of range", func(in *Input) { in.Pairs = append([]LabeledPair{{ID: 9, A: 0, B: len(texts)}}, pairs...) }, "pairs"},
		{"pair twice the same document", func(in *Input) { in.Pairs = []LabeledPair{{ID: 9, A: 3, B: 3}} }, "pairs"},
		{"hash count", func(in *Input) { in.Docs.ContentHash = in.Docs.ContentHash[:3] }, "content hashes"},
		{"no text", func(in *Input) { in.Docs.Text = nil }, "text"},
		{"no signatures", func(in *Input) { in.Signatures = nil }, "signatures"},
		{"short signatures", func(in *Input) {
			in.Signatures = func(context.Context, lsh.Spec) ([]lsh.Signature, error) { return make([]lsh.Signature, 2), nil }
		}, "signatures"},
		{"registered policy name", func(in *Input) { in.Policies = map[cluster.Policy]Clusterer{cluster.Components: Components} }, "policies"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := good()
			c.edit(&in)
			_, err := Run(context.Background(), in, g, Options{})
			var ie *InputError
			if !errors.As(err, &ie) || ie.Field != c.field {
				t.Errorf("Run = %v; want an InputError on %q", err, c.field)
			}
		})
	}
}

// TestRescoreConcurrent rescores one State from several goroutines (as page requests
// would) and checks each answer against a sequential one. Run it with -race.
func TestRescoreConcurrent(t *testing.T) {
	in := handInput(t)
	for i := range in.Pairs {
		in.Pairs[i].Design, in.Pairs[i].Stratum, in.Pairs[i].FrameSize = StudioDesignPrefix+"test", "all", 100
	}
	c := Config{Spec: word1(t), Shape: lsh.Shape{Bands: 64, Rows: 2}, Threshold: 0.5, Verification: ExactJaccard, Policy: cluster.Components}
	st, err := Prepare(t.Context(), in, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ths := []float64{0.3, 0.4, 0.5, 0.7, 0.9}
	want := make([]Result, len(ths))
	for i, th := range ths {
		if want[i], err = st.Rescore(t.Context(), th); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for n := range 20 {
				i := (g + n) % len(ths)
				got, err := st.Rescore(t.Context(), ths[i])
				if err != nil {
					t.Error(err)
					return
				}
				if !sameScores(got.Scores, want[i].Scores) || !reflect.DeepEqual(*got.Dataset, *want[i].Dataset) {
					t.Errorf("concurrent Rescore(%v) = %+v; want %+v", ths[i], got.Scores, want[i].Scores)
				}
			}
		})
	}
	wg.Wait()
	outs, err := st.Outcomes(t.Context(), 0.5)
	if err != nil {
		t.Fatal(err)
	}
	// At 0.5 the one false merge (4,6) comes first, then the miss (7,8).
	if len(outs) != 6 || !outs[0].FalseMerge() || outs[0].Pair != 3 || !outs[1].Missed() || outs[1].Pair != 4 {
		t.Errorf("Outcomes(0.5) = %+v; want pair 3 (false merge) then pair 4 (miss) first", outs)
	}
	if o := outs[1]; !o.Candidate || o.Similarity != 0.4 || o.Jaccard != 0.4 || o.Accepted {
		t.Errorf("miss (7,8) = %+v; want a candidate at exact similarity 0.4, not accepted", o)
	}
	rates := CollisionRates(outs, 10)
	if r := rates[4]; r.Hits != 1 || r.Of != 1 { // (7,8) at J=0.4
		t.Errorf("collision rate in [0.4, 0.5) = %d/%d; want 1/1", r.Hits, r.Of)
	}
	if r := rates[0]; r.Hits != 0 || r.Of != 1 { // (9,10) at J=0
		t.Errorf("collision rate in [0, 0.1) = %d/%d; want 0/1", r.Hits, r.Of)
	}
	if _, err := st.Rescore(t.Context(), 1.5); err == nil {
		t.Error("Rescore(1.5) = nil error")
	}
	// At 0.99 three duplicates are missed: listed most similar first, not in pair order.
	outs, err = st.Outcomes(t.Context(), 0.99)
	if err != nil {
		t.Fatal(err)
	}
	var missed []int64
	var prev = 2.0
	for _, o := range outs {
		if o.Missed() {
			missed = append(missed, o.Pair)
			if o.Jaccard > prev {
				t.Errorf("misses at 0.99 out of order: pair %d (J=%v) after J=%v", o.Pair, o.Jaccard, prev)
			}
			prev = o.Jaccard
		}
	}
	if !slices.Equal(missed, []int64{2, 6, 4}) {
		t.Errorf("misses at 0.99 = %v; want pairs 2, 6, 4 (J 0.8, 0.6, 0.4)", missed)
	}
}

// TestPreparedStateDropsInputPairs: a prepared State (the live panel keeps a few, each
// over every labeled pair) holds the labels resolved, not the input's pairs too.
func TestPreparedStateDropsInputPairs(t *testing.T) {
	c := Config{Spec: word1(t), Shape: lsh.Shape{Bands: 64, Rows: 2}, Threshold: 0.5, Verification: ExactJaccard, Policy: cluster.Components}
	prepare := func() (*State, weak.Pointer[LabeledPair]) {
		in := handInput(t)
		st, err := Prepare(t.Context(), in, c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return st, weak.Make(&in.Pairs[0])
	}
	st, pairs := prepare()
	runtime.GC()
	if pairs.Value() != nil {
		t.Error("the input's pairs are still reachable from the prepared State")
	}
	if r, err := st.Rescore(t.Context(), 0.5); err != nil || r.Scores.Recall.Of == 0 {
		t.Errorf("Rescore(0.5) = %+v, %v; want the labeled duplicates scored", r.Scores, err)
	}
	runtime.KeepAlive(st)
}
