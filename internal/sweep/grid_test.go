package sweep

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

func TestDefaultGrid(t *testing.T) {
	g := DefaultGrid()
	if err := g.Validate(); err != nil {
		t.Fatalf("DefaultGrid().Validate() = %v", err)
	}
	if len(g.Specs) != 20 {
		t.Errorf("%d specs; want 20 (word 1-5, char 3-7, k 128 and 256)", len(g.Specs))
	}
	if want := []float64{0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95}; !slices.Equal(g.Thresholds, want) {
		t.Errorf("thresholds = %v; want %v", g.Thresholds, want)
	}
	for _, k := range []int{128, 256} {
		shapes, err := ShapesFor(k, g.Thresholds)
		if err != nil {
			t.Fatal(err)
		}
		for _, th := range g.Thresholds {
			opt, _ := lsh.OptimalShape(th, k, lsh.EqualWeights)
			if !slices.Contains(shapes, opt.Shape) {
				t.Errorf("ShapesFor(%d) = %v lacks the optimum %v of %v", k, shapes, opt.Shape, th)
			}
		}
		for i := 1; i < len(shapes); i++ {
			if shapes[i].Rows < shapes[i-1].Rows {
				t.Errorf("ShapesFor(%d) = %v; want ordered by rows", k, shapes)
			}
		}
	}
	configs, err := g.Configs()
	if err != nil {
		t.Fatal(err)
	}
	n, _ := g.count()
	if len(configs) != n {
		t.Errorf("Configs() has %d; count() says %d", len(configs), n)
	}
	// Ten signature requests: k=128 is a prefix of k=256 under the classic scheme.
	if got := Requests(g.Specs); len(got) != 10 || got[0].Hashes != 256 {
		t.Errorf("Requests(default specs) = %d specs, first k=%d; want 10 at k=256", len(got), got[0].Hashes)
	}
}

func TestGridValidate(t *testing.T) {
	t.Parallel()
	base := func() Grid {
		return Grid{Specs: []lsh.Spec{lsh.DefaultSpec()}, Thresholds: []float64{0.5}, Verifications: []Verification{ExactJaccard}, Policies: []cluster.Policy{cluster.Components}}
	}
	bad := lsh.DefaultSpec()
	bad.Size = 0
	cases := []struct {
		name  string
		edit  func(*Grid)
		axis  string
		index int
	}{
		{"no spec", func(g *Grid) { g.Specs = nil }, "specs", -1},
		{"bad spec", func(g *Grid) { g.Specs = append(g.Specs, bad) }, "specs", 1},
		{"spec twice", func(g *Grid) { g.Specs = append(g.Specs, g.Specs[0]) }, "specs", 1},
		{"shape over k", func(g *Grid) { g.Shapes = []lsh.Shape{{Bands: 20, Rows: 5}, {Bands: 30, Rows: 5}} }, "shapes", 1},
		{"zero rows", func(g *Grid) { g.Shapes = []lsh.Shape{{Bands: 20, Rows: 0}} }, "shapes", 0},
		{"no threshold", func(g *Grid) { g.Thresholds = nil }, "thresholds", -1},
		{"threshold 0", func(g *Grid) { g.Thresholds = []float64{0.5, 0} }, "thresholds", 1},
		{"threshold above 1", func(g *Grid) { g.Thresholds = []float64{1.5} }, "thresholds", 0},
		{"unknown verification", func(g *Grid) { g.Verifications = []Verification{"guess"} }, "verifications", 0},
		{"unknown policy", func(g *Grid) { g.Policies = []cluster.Policy{cluster.Components, "single-pass"} }, "policies", 1},
		{"too many thresholds", func(g *Grid) { g.Thresholds = Steps(0.005, 1, 0.005) }, "thresholds", -1},
		{"too large", func(g *Grid) {
			g.Thresholds = Steps(0.01, 1, 0.01)
			g.Verifications = []Verification{ExactJaccard, MinHashEstimate}
			g.Specs = Representations(lsh.DefaultSpec(), Sizes(1, 6), Sizes(1, 5), []int{128})
			g.Shapes = nil
			for r := 1; r <= 100; r++ {
				g.Shapes = append(g.Shapes, lsh.Shape{Bands: 1, Rows: r})
			}
		}, "grid", -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := base()
			c.edit(&g)
			err := g.Validate()
			var ge *GridError
			if !errors.As(err, &ge) || ge.Axis != c.axis || ge.Index != c.index {
				t.Errorf("Validate() = %v; want a GridError on %s[%d]", err, c.axis, c.index)
			}
		})
	}
	g := base()
	g.Policies = []cluster.Policy{"single-pass"}
	if err := g.Validate("single-pass"); err != nil {
		t.Errorf("Validate(with keeper-star given) = %v; want nil", err)
	}
}

func TestGridJSON(t *testing.T) {
	t.Parallel()
	g := DefaultGrid()
	g.Shapes = []lsh.Shape{{Bands: 25, Rows: 5}}
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	var back Grid
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("Unmarshal(%s) = %v", b, err)
	}
	if !slices.Equal(back.Specs, g.Specs) || !slices.Equal(back.Shapes, g.Shapes) || !slices.Equal(back.Thresholds, g.Thresholds) {
		t.Errorf("round trip = %+v; want %+v", back, g)
	}
	// Partial specs, as people write them.
	var partial Grid
	if err := json.Unmarshal([]byte(`{"specs":["level=char size=5"],"shapes":["16x8"],"thresholds":[0.5],"verifications":["exact"],"policies":["connected-components"]}`), &partial); err != nil {
		t.Fatal(err)
	}
	if partial.Specs[0].Level != lsh.Char || partial.Specs[0].Size != 5 || partial.Shapes[0] != (lsh.Shape{Bands: 16, Rows: 8}) {
		t.Errorf("partial grid = %+v", partial)
	}
	if !slices.Equal(partial.Policies, []cluster.Policy{cluster.Components}) {
		t.Errorf("policies of a grid stored before the registry (connected-components) = %q; want [components]", partial.Policies)
	}
	for _, c := range []struct {
		text  string
		axis  string
		index int
	}{
		{`{"specs":["level=char","size=x"]}`, "specs", 1},
		{`{"specs":["level=word"],"shapes":["16x8","16by8"]}`, "shapes", 1},
	} {
		var g Grid
		err := json.Unmarshal([]byte(c.text), &g)
		var ge *GridError
		if !errors.As(err, &ge) || ge.Axis != c.axis || ge.Index != c.index {
			t.Errorf("Unmarshal(%s) = %v; want a GridError on %s[%d]", c.text, err, c.axis, c.index)
		}
	}
}

func TestStepsAndSizes(t *testing.T) {
	t.Parallel()
	if got := Steps(0.3, 0.45, 0.05); !slices.Equal(got, []float64{0.3, 0.35, 0.4, 0.45}) {
		t.Errorf("Steps(0.3, 0.45, 0.05) = %v", got)
	}
	if got := Steps(0.5, 0.4, 0.05); got != nil {
		t.Errorf("Steps(0.5, 0.4, 0.05) = %v; want nil", got)
	}
	if got := Sizes(3, 5); !slices.Equal(got, []int{3, 4, 5}) {
		t.Errorf("Sizes(3, 5) = %v", got)
	}
}

// TestCanPrefix checks the rule against real signatures: wherever CanPrefix says a
// k=64 signature is the prefix of the k=128 one, it is, and for fast it is not.
func TestCanPrefix(t *testing.T) {
	t.Parallel()
	d := loadDemo(t)
	texts := d.texts[:50]
	for _, text := range []string{"scheme=classic", "scheme=datasketch", "scheme=milvus", "scheme=fast"} {
		t.Run(text, func(t *testing.T) {
			long, err := lsh.ParseSpec(text + " k=128")
			if err != nil {
				t.Fatal(err)
			}
			short := long
			short.Hashes = 64
			ls, _ := long.Signatures(texts)
			ss, _ := short.Signatures(texts)
			prefix := true
			for i := range ls {
				if !slices.Equal(ls[i][:64], ss[i]) {
					prefix = false
				}
			}
			if got := CanPrefix(short, long); got != prefix {
				t.Errorf("CanPrefix(k=64, k=128) = %v; the signatures are prefixes: %v", got, prefix)
			}
			if !CanPrefix(long, long) {
				t.Errorf("CanPrefix(s, s) = false")
			}
			if CanPrefix(long, short) {
				t.Errorf("CanPrefix(k=128, k=64) = true")
			}
			other := long
			other.Seed++
			if CanPrefix(short, other) {
				t.Errorf("CanPrefix across seeds = true")
			}
			wantRequests := 1
			if !prefix {
				wantRequests = 2
			}
			if got := Requests([]lsh.Spec{short, long}); len(got) != wantRequests || got[0] != long && prefix {
				t.Errorf("Requests(k=64, k=128) = %v; want %d", got, wantRequests)
			}
		})
	}
}

func TestConfigNames(t *testing.T) {
	t.Parallel()
	c := Config{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 25, Rows: 5}, Threshold: 0.5, Verification: ExactJaccard, Policy: cluster.Components}
	if got, want := c.Label(), "word5 k128 25x5 ≥0.50 exact cc"; got != want {
		t.Errorf("Label() = %q; want %q", got, want)
	}
	if got, want := c.String(), lsh.DefaultSpec().String()+" shape=25x5 threshold=0.5 verification=exact policy=components"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
}

// TestConfigJSON: a configuration is stored with its policy's registered name, the
// string a Config held before the policy was typed, so stored results hash the same
// (TestResultsUnchanged); one stored before the registry says connected-components and
// reads as cluster.Components, within a stored result too.
func TestConfigJSON(t *testing.T) {
	t.Parallel()
	for _, pol := range cluster.Policies() {
		c := Config{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 25, Rows: 5}, Threshold: 0.5, Verification: ExactJaccard, Policy: pol}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if want := `"Policy":"` + string(pol) + `"}`; !strings.HasSuffix(string(b), want) {
			t.Errorf("Marshal(%v) = %s; want it to end %s", c, b, want)
		}
		var back Config
		if err := json.Unmarshal(b, &back); err != nil || back != c {
			t.Errorf("round trip of %s = %v, %v; want %v", b, back, err, c)
		}
	}
	old := Result{Config: Config{Spec: lsh.DefaultSpec(), Shape: lsh.Shape{Bands: 25, Rows: 5}, Threshold: 0.5, Verification: ExactJaccard,
		Policy: cluster.Components}, Accepted: 3, Candidates: 7}
	b, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	stored := strings.Replace(string(b), `"Policy":"components"`, `"Policy":"connected-components"`, 1)
	if stored == string(b) {
		t.Fatalf("no policy in %s", b)
	}
	var r Result
	if err := json.Unmarshal([]byte(stored), &r); err != nil {
		t.Fatal(err)
	}
	if r.Config != old.Config || r.Accepted != 3 || r.Candidates != 7 {
		t.Errorf("a result stored before the registry reads as %+v; want %+v", r, old)
	}
}
