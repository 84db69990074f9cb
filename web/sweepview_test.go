package web

import (
	"cmp"
	"context"
	"errors"
	"math"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/chart"
	"github.com/dedupstudio/dedupstudio/internal/cluster"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/sweep"
)

// The dashboard's views and charts on a real sweep.Run over a small labeled sample.

func ordinals(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestSweepFixtureHasMissesAndFalseMerges(t *testing.T) {
	t.Parallel()
	rep, _ := newSweepCorpus(6).report(t)
	if len(rep.Results) != rep.Configs || len(rep.Results) < 8 {
		t.Fatalf("%d results of %d configs; want a complete sweep of at least 8", len(rep.Results), rep.Configs)
	}
	var missed, merged bool
	for _, r := range rep.Results {
		missed = missed || r.Recall.Hits < r.Recall.Of
		merged = merged || r.FalseMerges.Hits > 0
	}
	if !missed || !merged {
		t.Errorf("no configuration missed a duplicate (%v) or merged a non-duplicate (%v): the fixture tests nothing", missed, merged)
	}
}

func TestTradeoffFigure(t *testing.T) {
	t.Parallel()
	rep, _ := newSweepCorpus(6).report(t)
	rs := rep.Results
	keys := ordinals(len(rs))
	for i := range keys {
		keys[i] += 100 // keys are ordinals, not indexes
	}
	hs := sweep.Headlines(rs)
	fig, err := tradeoffFigure(rs, hs, sweep.Front(hs), keys, rep.Baseline, 2, 0, true, "")
	if err != nil {
		t.Fatal(err)
	}
	svg, err := fig.SVG(chart.Size{})
	if err != nil {
		t.Fatal(err)
	}
	points := regexp.MustCompile(`<g class="point" data-config="(\d+)"`).FindAllSubmatch(svg, -1)
	drawable := 0
	for _, r := range rs {
		h := r.Headline()
		if !math.IsNaN(h.Recall.Value) && !math.IsNaN(h.FalseRemovalRate.Value) {
			drawable++
		}
	}
	// Co-located configurations share a mark whose title counts the others.
	shared := 0
	for _, m := range regexp.MustCompile(`and (\d+) more configurations at this spot`).FindAllSubmatch(svg, -1) {
		n, _ := strconv.Atoi(string(m[1]))
		shared += n
	}
	if len(points)+shared != drawable || len(points) == 0 {
		t.Errorf("SVG has %d marks standing for %d more; want %d configurations in all", len(points), shared, drawable)
	}
	for _, p := range points {
		if n, _ := strconv.Atoi(string(p[1])); n < 100 {
			t.Errorf("point keyed %s; want an ordinal of 100 or more", p[1])
		}
	}
	if !strings.Contains(string(svg), `data-config="102"`) || !regexp.MustCompile(`data-config="102"[^>]*data-selected="true"`).Match(svg) {
		t.Error("the selected configuration (ordinal 102) is not marked data-selected")
	}
	if !strings.Contains(string(svg), "<title>"+xmlEscape(configWords(rs[2].Config))) {
		t.Errorf("no hover title naming %q", configWords(rs[2].Config))
	}
	base := rep.Results[0].Scores // a stand-in baseline: the input has no content hashes
	if rows := tradeoffTable(rs, hs, sweep.Front(hs), keys, &base, "").Rows; len(rows) != len(rs)+1 || rows[len(rs)][0] != "baseline" {
		t.Errorf("the chart's CSV has %d rows; want %d (every configuration and the baseline)", len(rows), len(rs)+1)
	}
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func TestSelectionFigures(t *testing.T) {
	t.Parallel()
	c := newSweepCorpus(6)
	rep, in := c.report(t)
	sel := rep.Results[len(rep.Results)-1]
	st, err := sweep.Prepare(context.Background(), in, sel.Config, sweep.Options{Replicates: 50})
	if err != nil {
		t.Fatal(err)
	}
	outs, err := st.Outcomes(context.Background(), sel.Config.Threshold)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("scurve", func(t *testing.T) {
		fig, err := scurveFigure(sel, outs, sel.Config.Threshold)
		if err != nil {
			t.Fatal(err)
		}
		svg, _ := fig.SVG(chart.Size{})
		if n := strings.Count(string(svg), `class="measured"`); n == 0 {
			t.Error("no measured collision rate drawn")
		}
		if !strings.Contains(string(svg), `data-shape="`+sel.Config.Shape.String()+`"`) {
			t.Errorf("the selected shape %v is not drawn", sel.Config.Shape)
		}
	})
	t.Run("histogram", func(t *testing.T) {
		fig, err := histogramFigure(sel, outs, sel.Config.Threshold)
		if err != nil {
			t.Fatal(err)
		}
		var dups, non int
		for _, o := range outs {
			if o.Duplicate {
				dups++
			} else {
				non++
			}
		}
		if dups == 0 || non == 0 {
			t.Fatalf("outcomes: %d duplicates, %d non-duplicates", dups, non)
		}
		if len(fig.Table().Rows) == 0 {
			t.Error("histogram has no data")
		}
	})
	t.Run("categories", func(t *testing.T) {
		fig, err := categoryFigure(sel)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, row := range fig.Table().Rows {
			names[row[0]] = true
		}
		if !names["minor"] || !names["partial"] || names["different"] {
			t.Errorf("categories charted %v; want minor and partial (the duplicates), not different", names)
		}
	})
	t.Run("outcomes", func(t *testing.T) {
		href := func(id int64) string { return "/campaigns/1/pairs/" + strconv.FormatInt(id, 10) }
		fm, ms, nf, nm := outcomeRows(outs, href, 2)
		var wantF, wantM int
		for _, o := range outs {
			if o.FalseMerge() {
				wantF++
			}
			if o.Missed() {
				wantM++
			}
		}
		if nf != wantF || nm != wantM {
			t.Errorf("outcomeRows counts %d false merges, %d misses; want %d, %d", nf, nm, wantF, wantM)
		}
		if len(fm) != min(wantF, 2) || len(ms) != min(wantM, 2) {
			t.Errorf("listed %d and %d; want at most 2 of each", len(fm), len(ms))
		}
		for _, r := range append(fm, ms...) {
			if r.Href != href(r.Pair) || r.Why == "" {
				t.Errorf("row %+v: want a link to its pair and a reason", r)
			}
		}
	})
}

func TestHeatmapFigure(t *testing.T) {
	t.Parallel()
	rep, _ := newSweepCorpus(6).report(t)
	sel := rep.Results[0].Config
	want := 0
	for _, r := range rep.Results {
		c := r.Config
		if c.Spec == sel.Spec && c.Threshold == sel.Threshold && c.Verification == sel.Verification && c.Policy == sel.Policy {
			want++
		}
	}
	for _, value := range []string{"recall", "false"} {
		hc := defaultHeat(sel)
		hc.Value = value
		fig, err := heatmapFigure(rep.Results, hc)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(fig.Table().Rows); got != want {
			t.Errorf("heatmap of %s: %d cells; want %d (the shapes scored at that representation and threshold)", value, got, want)
		}
	}
}

func TestSortResults(t *testing.T) {
	t.Parallel()
	rep, _ := newSweepCorpus(6).report(t)
	rs := rep.Results
	for key, desc := range sortKeys {
		t.Run(key, func(t *testing.T) {
			order := sortResults(rs, key, desc)
			if len(order) != len(rs) {
				t.Fatalf("%d indexes; want %d", len(order), len(rs))
			}
			if key != "recall" {
				return
			}
			prev := math.Inf(1)
			for _, i := range order {
				v := rs[i].Headline().Recall.Value
				if math.IsNaN(v) {
					prev = math.Inf(-1)
					continue
				}
				if v > prev {
					t.Fatalf("recall %v after %v sorting descending", v, prev)
				}
				prev = v
			}
		})
	}
}

func TestResultsTable(t *testing.T) {
	t.Parallel()
	rep, _ := newSweepCorpus(6).report(t)
	hs := sweep.Headlines(rep.Results)
	tb := resultsTable(rep.Results, hs, sweep.Front(hs))
	if len(tb.Rows) != len(rep.Results) {
		t.Fatalf("%d rows; want %d", len(tb.Rows), len(rep.Results))
	}
	for i, row := range tb.Rows {
		if len(row) != len(tb.Columns) {
			t.Fatalf("row %d has %d fields; want %d", i, len(row), len(tb.Columns))
		}
	}
}

func TestGridForm(t *testing.T) {
	t.Parallel()
	def := sweep.DefaultGrid()
	g, err := defaultGridForm().parse()
	if err != nil {
		t.Fatalf("the default form does not parse: %v", err)
	}
	a, _ := def.Configs()
	b, _ := g.Configs()
	if len(a) != len(b) {
		t.Fatalf("default form makes %d configurations; sweep.DefaultGrid makes %d", len(b), len(a))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("configuration %d: form %v; DefaultGrid %v", i, b[i], a[i])
		}
	}
	// Round trip through url.Values, as a refused form is refilled.
	if g2, err := gridFormFrom(defaultGridForm().values()).parse(); err != nil {
		t.Fatal(err)
	} else if c, _ := g2.Configs(); len(c) != len(a) {
		t.Errorf("after a round trip: %d configurations; want %d", len(c), len(a))
	}
	bad := []struct {
		field, value, wantField string
	}{
		{"word", "1-x", "word"},
		{"word", "5-1", "word"},
		{"k", "", "k"},
		{"k", "0", "k"},
		{"to", "0.2", "to"},
		{"step", "0.001", "step"},
		{"from", "1.5", "from"},
		{"shapes", "20x", "shapes"},
		{"norm", "", "norm"},
	}
	for _, tc := range bad {
		t.Run(tc.field+"="+tc.value, func(t *testing.T) {
			v := defaultGridForm().values()
			v.Set(tc.field, tc.value)
			_, err := gridFormFrom(v).parse()
			var fe *formError
			if !errors.As(err, &fe) || fe.field != tc.wantField {
				t.Errorf("parse with %s=%q: %v; want a form error naming %s", tc.field, tc.value, err, tc.wantField)
			}
		})
	}
	t.Run("verification", func(t *testing.T) {
		v := defaultGridForm().values()
		v.Del("verification")
		var fe *formError
		if _, err := gridFormFrom(v).parse(); !errors.As(err, &fe) || fe.field != "verification" {
			t.Errorf("no verification ticked: %v; want a form error naming verification", err)
		}
	})
	t.Run("bad spec value", func(t *testing.T) {
		v := defaultGridForm().values()
		v.Set("scheme", "nonsense")
		if _, err := gridFormFrom(v).parse(); err == nil {
			t.Error("scheme nonsense parsed")
		} else if _, ok := userMessage(err); !ok {
			t.Errorf("scheme nonsense: %v is not shown to the person", err)
		}
	})
}

func TestIntRanges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{[]int{1, 2, 3, 4, 5}, "1-5"},
		{[]int{3, 1, 2, 7}, "1-3, 7"},
		{[]int{128, 256}, "128, 256"},
		{[]int{4, 5}, "4, 5"},
		{nil, ""},
	} {
		if got := intRanges(tc.in); got != tc.want {
			t.Errorf("intRanges(%v) = %q; want %q", tc.in, got, tc.want)
		}
		back, err := parseIntRanges("x", tc.want, 1, 4096)
		if err != nil || len(back) != len(tc.in) {
			t.Errorf("parseIntRanges(%q) = %v, %v; want %d values", tc.want, back, err, len(tc.in))
		}
	}
}

// A sweep's configuration travels to the run form typed (proposal: sweep.Config and a
// keeper rule as a run request) and back through one pair: runFormOf writes the form's
// fields, the link's query carries them, runFormFrom and parse read them. Every
// registered policy, both verifications, two representations, thresholds that are not
// short decimals and keeper rules with punctuation come back as the same request.
func TestProposalRoundTrip(t *testing.T) {
	t.Parallel()
	char := lsh.DefaultSpec()
	char.Level, char.Size, char.Scheme, char.Hashes = lsh.Char, 5, lsh.Datasketch, 64
	g := sweep.Grid{Specs: []lsh.Spec{lsh.DefaultSpec(), char}, Shapes: []lsh.Shape{{Bands: 16, Rows: 4}},
		Thresholds: []float64{1.0 / 3, 0.85, 1}, Verifications: []sweep.Verification{sweep.MinHashEstimate, sweep.ExactJaccard},
		Policies: cluster.Policies()}
	cs, err := g.Configs()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[cluster.Policy]bool{}
	for _, c := range cs {
		seen[c.Policy] = true
		for _, keeper := range []string{"source(debian,spdx)>longest", "", "longest"} {
			req, err := proposal(7, 3, c, keeper)
			if err != nil {
				t.Fatalf("proposal(%s, %q) = %v", c, keeper, err)
			}
			href := proposeHref(req)
			u, err := url.Parse(href)
			if err != nil {
				t.Fatal(err)
			}
			if u.Path != "/datasets/7/runs/new" || strings.Contains(u.RawQuery, "+") {
				t.Errorf("proposal link %s; want /datasets/7/runs/new?… with spaces as %%20", href)
			}
			got, err := runFormFrom(u.Query()).parse(7, "test")
			if err != nil {
				t.Fatalf("the run form refuses the proposal %s: %v", href, err)
			}
			want := req
			want.Params.CodeVersion = "test"
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: run form read %+v; want %+v", href, got, want)
			}
			if back := sweep.ConfigOf(got.Params); back != c {
				t.Errorf("%s: the run's configuration %v; want the sweep's %v", href, back, c)
			}
			if wantRule := cmp.Or(keeper, defaultKeeper); got.Params.Rule.String() != wantRule {
				t.Errorf("%s: keeper rule %q; want %q", href, got.Params.Rule, wantRule)
			}
		}
	}
	if len(seen) != len(cluster.Policies()) {
		t.Errorf("policies proposed %v; want every registered one %v", seen, cluster.Policies())
	}
	// A run request with a campaign of none and approvals lowered comes back the same.
	req, err := proposal(2, 0, cs[0], "source(a,b)>earliest")
	if err != nil {
		t.Fatal(err)
	}
	req.ApprovalsRequired = 1
	got, err := runFormFrom(runFormOf(req).query()).parse(2, "")
	if err != nil || !reflect.DeepEqual(got, req) {
		t.Errorf("round trip of %+v = %+v, %v", req, got, err)
	}
	// What the run form cannot run is not proposed.
	bad := cs[0]
	bad.Policy = "single-pass"
	if _, err := proposal(7, 3, bad, ""); err == nil {
		t.Errorf("proposal of an unregistered policy: no error")
	}
	if _, err := proposal(7, 3, cs[0], "tallest"); err == nil {
		t.Errorf("proposal with keeper rule tallest: no error")
	}
}

func TestFormConfigs(t *testing.T) {
	t.Parallel()
	small := gridFormOf(smallGrid())
	g, err := small.parse()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := configCount(g)
	if n, ok := formConfigs(small, nil); ok {
		t.Errorf("automatic shapes counted (%d) without an earlier sweep of the grid", n)
	}
	if n, ok := formConfigs(small, map[string]int{gridKey(g): want}); !ok || n != want {
		t.Errorf("automatic shapes with an earlier sweep of the grid: %d, %v; want %d", n, ok, want)
	}
	explicit := small
	explicit.Shapes = "16x4, 8x8"
	ge, err := explicit.parse()
	if err != nil {
		t.Fatal(err)
	}
	wantE, _ := configCount(ge)
	if n, ok := formConfigs(explicit, nil); !ok || n != wantE || n == 0 {
		t.Errorf("explicit shapes: %d, %v; want %d", n, ok, wantE)
	}
}
