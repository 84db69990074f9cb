package chart

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"image/png"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// node is a parsed SVG element: enough of a DOM for structural checks.
type node struct {
	name     string
	attrs    map[string]string
	children []*node
	text     string
}

func parseSVG(t *testing.T, svg []byte) *node {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var stack []*node
	var root *node
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			n := &node{name: tk.Name.Local, attrs: map[string]string{}}
			for _, a := range tk.Attr {
				n.attrs[a.Name.Local] = a.Value
			}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			} else {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(tk)
			}
		}
	}
	if root == nil || root.name != "svg" {
		t.Fatalf("SVG has no <svg> root")
	}
	return root
}

// walk calls fn for n and every element under it.
func (n *node) walk(fn func(*node)) {
	fn(n)
	for _, c := range n.children {
		c.walk(fn)
	}
}

// all returns the elements under n (n included) for which keep is true.
func (n *node) all(keep func(*node) bool) []*node {
	var out []*node
	n.walk(func(m *node) {
		if keep(m) {
			out = append(out, m)
		}
	})
	return out
}

func (n *node) title() string {
	for _, c := range n.children {
		if c.name == "title" {
			return c.text
		}
	}
	return ""
}

func hasAttr(name string) func(*node) bool {
	return func(n *node) bool { _, ok := n.attrs[name]; return ok }
}

// checkSVG asserts what every chart SVG must be: well-formed, scalable, titled, and
// paintable under a policy that blocks inline styles (no style attribute, no <style>),
// with nothing that fetches or runs anything.
func checkSVG(t *testing.T, svg []byte, title string) *node {
	t.Helper()
	root := parseSVG(t, svg)
	if vb := root.attrs["viewBox"]; len(strings.Fields(vb)) != 4 {
		t.Errorf("root viewBox = %q; want four numbers", vb)
	}
	if got := root.title(); got != title {
		t.Errorf("root <title> = %q; want %q", got, title)
	}
	root.walk(func(n *node) {
		switch n.name {
		case "style", "script", "foreignObject", "image", "use", "a":
			t.Errorf("SVG has a <%s> element", n.name)
		}
		for k := range n.attrs {
			if k == "style" || k == "href" || strings.HasPrefix(k, "on") {
				t.Errorf("<%s> has a %s attribute", n.name, k)
			}
		}
	})
	if len(root.all(func(n *node) bool { return n.name == "path" })) == 0 {
		t.Error("SVG draws no paths")
	}
	return root
}

func checkPNG(t *testing.T, b []byte, sz Size) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("PNG does not decode: %v", err)
	}
	if w, h := img.Bounds().Dx(), img.Bounds().Dy(); sz.Width > 0 && sz.Height > 0 &&
		(w != int(math.Round(sz.Width*sz.Scale)) || h != int(math.Round(sz.Height*sz.Scale))) {
		t.Errorf("PNG is %dx%d; want %gx%g", w, h, sz.Width*sz.Scale, sz.Height*sz.Scale)
	}
}

// readCSV parses a figure's CSV and checks it reads back as its Table.
func readCSV(t *testing.T, f *Figure) [][]string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(f.CSV())).ReadAll()
	if err != nil {
		t.Fatalf("CSV does not parse: %v", err)
	}
	tab := f.Table()
	if len(recs) == 0 || !slices.Equal(recs[0], tab.Columns) {
		t.Fatalf("CSV header = %v; want %v", recs[0], tab.Columns)
	}
	if len(recs)-1 != len(tab.Rows) {
		t.Fatalf("CSV has %d rows; want %d", len(recs)-1, len(tab.Rows))
	}
	for i, r := range recs[1:] {
		if !slices.Equal(r, tab.Rows[i]) {
			t.Fatalf("CSV row %d = %v; want %v", i, r, tab.Rows[i])
		}
	}
	return recs
}

func nanEstimate() Estimate { return Estimate{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()} }

// TestEveryChartRenders draws every chart from typical, empty and degenerate inputs
// (one point, all points equal, NaN values and intervals, no threshold) as SVG at two
// widths, as PNG and as CSV, and checks each output's structure.
func TestEveryChartRenders(t *testing.T) {
	t.Parallel()
	eq := Estimate{Value: 0.9, Lo: 0.85, Hi: 0.95, N: 10}
	nanIv := Estimate{Value: 0.5, Lo: math.NaN(), Hi: math.NaN(), N: 4}
	oneMatrix := sampleMatrix(1)
	nanMatrix := sampleMatrix(3)
	nanMatrix.Similarity[0][2], nanMatrix.Similarity[2][0] = math.NaN(), math.NaN()
	cases := []struct {
		name  string
		build func() (*Figure, error)
	}{
		{"tradeoff typical", sampleTradeoff(60).Figure},
		{"tradeoff empty", Tradeoff{}.Figure},
		{"tradeoff one point", Tradeoff{Points: []TradeoffPoint{{ID: "1", Recall: eq, FalseRemoval: Point(0)}}, Selected: "1", Recommended: "1", Intervals: true}.Figure},
		{"tradeoff all equal", Tradeoff{Points: []TradeoffPoint{{ID: "a", Recall: eq, FalseRemoval: eq}, {ID: "b", Recall: eq, FalseRemoval: eq}}, DimDominated: true, Intervals: true}.Figure},
		{"tradeoff NaN", Tradeoff{Points: []TradeoffPoint{{ID: "a", Recall: nanEstimate(), FalseRemoval: nanIv}, {ID: "b", Recall: nanIv, FalseRemoval: nanIv}}, Intervals: true}.Figure},
		{"tradeoff all at zero", Tradeoff{Points: []TradeoffPoint{{ID: "a", Recall: Point(0), FalseRemoval: Point(0)}}}.Figure},
		{"s-curves typical", sampleSCurves().Figure},
		{"s-curves empty", SCurves{}.Figure},
		{"s-curves one shape no threshold", SCurves{Curves: []ShapeCurve{{Shape: lsh.Shape{Bands: 1, Rows: 1}}}}.Figure},
		{"s-curves NaN", SCurves{Threshold: math.NaN(), Curves: []ShapeCurve{{Shape: lsh.Shape{Bands: 2, Rows: 64}, Measured: []BinRate{{Lo: 0, Hi: 1, At: math.NaN(), Rate: nanIv}, {Lo: 0.5, Hi: 0.6, Rate: nanEstimate()}}}}}.Figure},
		{"categories typical", sampleCategories().Figure},
		{"categories empty", CategoryRecall{}.Figure},
		{"categories one NaN", CategoryRecall{Categories: []Category{{Name: "x", Recall: nanIv}}}.Figure},
		{"histogram typical", sampleHistogram().Figure},
		{"histogram empty", JaccardHistogram{}.Figure},
		{"histogram all equal", JaccardHistogram{Duplicates: []float64{1, 1, 1}, NonDuplicates: []float64{1}, Threshold: 1, Bins: 1, Share: true}.Figure},
		{"heatmap typical", sampleHeatmap().Figure},
		{"heatmap empty", ShapeHeatmap{}.Figure},
		{"heatmap one cell", ShapeHeatmap{Value: "False merges", Cells: []ShapeCell{{Shape: lsh.Shape{Bands: 20, Rows: 5}, Value: Point(3)}}}.Figure},
		{"heatmap NaN", ShapeHeatmap{Percent: true, Cells: []ShapeCell{{Shape: lsh.Shape{Bands: 2, Rows: 5}, Value: nanEstimate()}, {Shape: lsh.Shape{Bands: 4, Rows: 5}, Value: nanIv}}}.Figure},
		{"matrix typical", sampleMatrix(6).Figure},
		{"matrix empty", SimilarityMatrix{}.Figure},
		{"matrix one", oneMatrix.Figure},
		{"matrix NaN", nanMatrix.Figure},
		{"matrix large", sampleMatrix(maxMatrixDocs).Figure},
		{"chain typical", sampleChain().Figure},
		{"chain empty", Chain{}.Figure},
		{"chain one", Chain{Nodes: []ChainNode{{ID: "1", Keeper: true, ToKeeper: math.NaN()}}}.Figure},
		{"chain long", longChain(14).Figure},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, err := tc.build()
			if err != nil {
				t.Fatalf("Figure() = %v", err)
			}
			for _, sz := range []Size{{}, {Width: 390, FontSize: 12}} {
				svg, err := f.SVG(sz)
				if err != nil {
					t.Fatalf("SVG(%+v) = %v", sz, err)
				}
				checkSVG(t, svg, f.Title())
			}
			sz := Size{Width: 400, Height: 300, Scale: 1}
			p, err := f.PNG(sz)
			if err != nil {
				t.Fatalf("PNG(%+v) = %v", sz, err)
			}
			checkPNG(t, p, sz)
			readCSV(t, f)
		})
	}
}

func longChain(n int) Chain {
	ch := Chain{Threshold: 0.8}
	for i := range n {
		ch.Nodes = append(ch.Nodes, ChainNode{ID: strconv.Itoa(i), Label: "doc " + strconv.Itoa(i), Keeper: i == 0,
			Next: 0.85, ToKeeper: math.Pow(0.85, float64(i)), CutNext: i == 3})
	}
	return ch
}

// TestTradeoffHooks checks what the dashboard's script relies on: one element per
// drawn configuration carrying data-config="ID" and a <title> that names it, the
// selected and recommended ones flagged, the front flagged from the values, and a
// point that cannot be drawn left out of the SVG but kept in the CSV.
func TestTradeoffHooks(t *testing.T) {
	t.Parallel()
	in := Tradeoff{
		Points: []TradeoffPoint{
			{ID: "17", Label: `word 5-shingles <k=128> & "exact"`, Recall: Estimate{Value: 0.9, Lo: 0.8, Hi: 0.95, N: 40}, FalseRemoval: Point(0.01)},
			{ID: "18", Label: "char 5-shingles", Recall: Point(0.8), FalseRemoval: Point(0.02)}, // dominated by 17
			{ID: "19", Label: "char 7-shingles", Recall: Point(0.95), FalseRemoval: Point(0.03)},
			{ID: "20", Label: "no duplicates labeled", Recall: nanEstimate(), FalseRemoval: Point(0.01)},
		},
		Selected: "18", Recommended: "17", DimDominated: true, Intervals: true,
	}
	f, err := in.Figure()
	if err != nil {
		t.Fatal(err)
	}
	svg, err := f.SVG(Size{})
	if err != nil {
		t.Fatal(err)
	}
	root := checkSVG(t, svg, "Recall against false-removal rate")
	hooks := root.all(hasAttr("data-config"))
	got := map[string]*node{}
	for _, h := range hooks {
		if _, dup := got[h.attrs["data-config"]]; dup {
			t.Errorf("data-config=%q appears twice", h.attrs["data-config"])
		}
		got[h.attrs["data-config"]] = h
	}
	if len(hooks) != 3 {
		t.Errorf("SVG has %d elements with data-config; want 3 (one per drawable configuration)", len(hooks))
	}
	for _, c := range []struct {
		id, title, front, selected, recommended string
	}{
		{"17", `word 5-shingles <k=128> & "exact" (recommended, on the Pareto front)`, "true", "", "true"},
		{"18", "char 5-shingles (selected, dominated)", "false", "true", ""},
		{"19", "char 7-shingles (on the Pareto front)", "true", "", ""},
	} {
		h := got[c.id]
		if h == nil {
			t.Errorf("no element with data-config=%q", c.id)
			continue
		}
		if first, _, _ := strings.Cut(h.title(), "\n"); first != c.title {
			t.Errorf("title of %s starts %q; want %q", c.id, first, c.title)
		}
		if h.attrs["data-front"] != c.front || h.attrs["data-selected"] != c.selected || h.attrs["data-recommended"] != c.recommended {
			t.Errorf("%s: data-front=%q data-selected=%q data-recommended=%q; want %q %q %q", c.id,
				h.attrs["data-front"], h.attrs["data-selected"], h.attrs["data-recommended"], c.front, c.selected, c.recommended)
		}
		// The invisible target and the mark, at least.
		if n := len(h.all(func(n *node) bool { return n.name == "path" })); n < 2 {
			t.Errorf("%s's element holds %d paths; want the hit area and the mark", c.id, n)
		}
	}
	if tt := got["17"].title(); !strings.Contains(tt, "Recall 90% (95% interval 80% to 95%, n=40)") || !strings.Contains(tt, "False-removal rate 1.0%") {
		t.Errorf("title of 17 = %q; want both estimates", tt)
	}
	recs := readCSV(t, f)
	if len(recs) != 5 || recs[4][1] != "20" || recs[4][3] != "" {
		t.Errorf("CSV row for the undrawable point = %v; want config 20 with an empty recall", recs[len(recs)-1])
	}
}

// TestParetoFront checks the front on crafted points.
func TestParetoFront(t *testing.T) {
	t.Parallel()
	pt := func(fr, rc float64) TradeoffPoint {
		return TradeoffPoint{ID: "x", Recall: Point(rc), FalseRemoval: Point(fr)}
	}
	cases := []struct {
		name string
		pts  []TradeoffPoint
		want []bool
	}{
		{"empty", nil, []bool{}},
		{"one", []TradeoffPoint{pt(0.1, 0.5)}, []bool{true}},
		{"staircase", []TradeoffPoint{pt(0, 0.5), pt(0.1, 0.7), pt(0.2, 0.9)}, []bool{true, true, true}},
		{"dominated below", []TradeoffPoint{pt(0.1, 0.9), pt(0.2, 0.8)}, []bool{true, false}},
		{"same rate, lower recall", []TradeoffPoint{pt(0.1, 0.9), pt(0.1, 0.8)}, []bool{true, false}},
		{"same recall, higher rate", []TradeoffPoint{pt(0.1, 0.9), pt(0.2, 0.9)}, []bool{true, false}},
		{"ties are both on", []TradeoffPoint{pt(0.1, 0.9), pt(0.1, 0.9)}, []bool{true, true}},
		{"NaN never on", []TradeoffPoint{{Recall: nanEstimate(), FalseRemoval: Point(0)}, pt(0.3, 0.3)}, []bool{false, true}},
		{"unsorted input", []TradeoffPoint{pt(0.3, 0.95), pt(0.05, 0.2), pt(0.2, 0.5), pt(0.1, 0.6)}, []bool{true, true, false, true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := paretoFront(tc.pts); !slices.Equal(got, tc.want) {
				t.Errorf("paretoFront = %v; want %v", got, tc.want)
			}
		})
	}
}

// TestCSVRoundTrip reads each chart's CSV back and compares the numbers with the input.
func TestCSVRoundTrip(t *testing.T) {
	t.Parallel()
	parse := func(t *testing.T, s string) float64 {
		t.Helper()
		if s == "" {
			return math.NaN()
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("cell %q is not a number", s)
		}
		return v
	}
	same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

	t.Run("tradeoff", func(t *testing.T) {
		in := sampleTradeoff(25)
		in.Points[4].Label = "=HYPERLINK(\"x\")" // a formula a spreadsheet must not run
		f, err := in.Figure()
		if err != nil {
			t.Fatal(err)
		}
		recs := readCSV(t, f)
		col := map[string]int{}
		for i, c := range recs[0] {
			col[c] = i
		}
		for i, p := range in.Points {
			r := recs[i+1]
			if r[col["config"]] != p.ID {
				t.Fatalf("row %d config = %q; want %q", i, r[col["config"]], p.ID)
			}
			for _, c := range []struct {
				name string
				want float64
			}{{"recall", p.Recall.Value}, {"recall_lo", p.Recall.Lo}, {"recall_hi", p.Recall.Hi},
				{"false_removal_rate", p.FalseRemoval.Value}, {"false_removal_rate_lo", p.FalseRemoval.Lo}, {"false_removal_rate_hi", p.FalseRemoval.Hi}} {
				if got := parse(t, r[col[c.name]]); !same(got, c.want) {
					t.Errorf("row %d %s = %v; want %v exactly", i, c.name, got, c.want)
				}
			}
			if got := r[col["recall_n"]]; got != strconv.Itoa(p.Recall.N) {
				t.Errorf("row %d recall_n = %s; want %d", i, got, p.Recall.N)
			}
		}
		if got := recs[5][col["label"]]; got != `'=HYPERLINK("x")` {
			t.Errorf("formula label written as %q; want it neutralised with a leading apostrophe", got)
		}
		if last := recs[len(recs)-1]; last[0] != "baseline" {
			t.Errorf("last row %v; want the baseline", last)
		}
	})
	t.Run("histogram", func(t *testing.T) {
		in := sampleHistogram()
		f, err := in.Figure()
		if err != nil {
			t.Fatal(err)
		}
		recs := readCSV(t, f)
		var nd, nn int
		for i, r := range recs[1:] {
			lo, hi := parse(t, r[0]), parse(t, r[1])
			want := [2]int{}
			for _, x := range in.Duplicates {
				if x >= lo && (x < hi || hi == 1 && x == 1) {
					want[0]++
				}
			}
			for _, x := range in.NonDuplicates {
				if x >= lo && (x < hi || hi == 1 && x == 1) {
					want[1]++
				}
			}
			if r[2] != strconv.Itoa(want[0]) || r[3] != strconv.Itoa(want[1]) {
				t.Errorf("bin %d [%g, %g): %s duplicates, %s non-duplicates; want %d, %d", i, lo, hi, r[2], r[3], want[0], want[1])
			}
			d, _ := strconv.Atoi(r[2])
			n, _ := strconv.Atoi(r[3])
			nd, nn = nd+d, nn+n
		}
		if nd != len(in.Duplicates) || nn != len(in.NonDuplicates) {
			t.Errorf("bins hold %d and %d pairs; want %d and %d", nd, nn, len(in.Duplicates), len(in.NonDuplicates))
		}
	})
	t.Run("s-curves", func(t *testing.T) {
		in := sampleSCurves()
		f, err := in.Figure()
		if err != nil {
			t.Fatal(err)
		}
		recs := readCSV(t, f)
		measured := 0
		for _, r := range recs[1:] {
			switch r[0] {
			case "curve":
				b, _ := strconv.Atoi(r[1])
				rows, _ := strconv.Atoi(r[2])
				s := parse(t, r[4])
				if got, want := parse(t, r[7]), lsh.Probability(s, lsh.Shape{Bands: b, Rows: rows}); got != want {
					t.Errorf("curve %dx%d at %g = %v; want %v", b, rows, s, got, want)
				}
			case "approximate_threshold":
				b, _ := strconv.Atoi(r[1])
				rows, _ := strconv.Atoi(r[2])
				if got, want := parse(t, r[4]), lsh.ThresholdApprox(lsh.Shape{Bands: b, Rows: rows}); got != want {
					t.Errorf("(1/b)^(1/r) of %dx%d = %v; want %v", b, rows, got, want)
				}
			case "measured":
				measured++
			case "threshold":
				if parse(t, r[4]) != in.Threshold {
					t.Errorf("threshold row %v; want %g", r, in.Threshold)
				}
			}
		}
		if want := len(in.Curves[0].Measured) + len(in.Curves[1].Measured); measured != want {
			t.Errorf("%d measured rows; want %d", measured, want)
		}
	})
	t.Run("matrix", func(t *testing.T) {
		in := sampleMatrix(5)
		f, err := in.Figure()
		if err != nil {
			t.Fatal(err)
		}
		recs := readCSV(t, f)
		if len(recs)-1 != 10 {
			t.Fatalf("%d rows; want 10 (each unordered pair once)", len(recs)-1)
		}
		idx := func(id string) int { n, _ := strconv.Atoi(id); return n - 100 }
		for _, r := range recs[1:] {
			if got, want := parse(t, r[4]), in.Similarity[idx(r[0])][idx(r[2])]; got != want {
				t.Errorf("%s~%s = %v; want %v", r[0], r[2], got, want)
			}
		}
	})
}

// TestBadInputIsRefused checks that inputs the charts cannot draw honestly fail with
// an error naming the place.
func TestBadInputIsRefused(t *testing.T) {
	t.Parallel()
	ok := Point(0.5)
	cases := []struct {
		name  string
		build func() (*Figure, error)
		want  string
	}{
		{"tradeoff no id", Tradeoff{Points: []TradeoffPoint{{Recall: ok, FalseRemoval: ok}}}.Figure, "point 0 has no ID"},
		{"tradeoff dup id", Tradeoff{Points: []TradeoffPoint{{ID: "a", Recall: ok, FalseRemoval: ok}, {ID: "a", Recall: ok, FalseRemoval: ok}}}.Figure, `point 1 ("a"): ID also used by point 0`},
		{"tradeoff recall > 1", Tradeoff{Points: []TradeoffPoint{{ID: "a", Recall: Point(1.2), FalseRemoval: ok}}}.Figure, `point 0 ("a"): recall: value 1.2`},
		{"tradeoff interval", Tradeoff{Points: []TradeoffPoint{{ID: "a", Recall: ok, FalseRemoval: Estimate{Value: 0.5, Lo: -0.1, Hi: 0.6}}}}.Figure, "false-removal rate: interval"},
		{"tradeoff unknown selected", Tradeoff{Points: []TradeoffPoint{{ID: "a", Recall: ok, FalseRemoval: ok}}, Selected: "b"}.Figure, `selected configuration "b"`},
		{"s-curve shape", SCurves{Curves: []ShapeCurve{{Shape: lsh.Shape{Bands: 0, Rows: 5}}}}.Figure, "curve 0: shape 0×5"},
		{"s-curve bin", SCurves{Curves: []ShapeCurve{{Shape: lsh.Shape{Bands: 2, Rows: 5}, Measured: []BinRate{{Lo: 0.5, Hi: 0.4, Rate: ok}}}}}.Figure, "bin 0: [0.5, 0.4)"},
		{"s-curve threshold", SCurves{Threshold: 2}.Figure, "threshold 2"},
		{"category no name", CategoryRecall{Categories: []Category{{Recall: ok}}}.Figure, "category 0 has no name"},
		{"category twice", CategoryRecall{Categories: []Category{{Name: "a", Recall: ok}, {Name: "a", Recall: ok}}}.Figure, `category 1: "a" appears twice`},
		{"histogram value", JaccardHistogram{NonDuplicates: []float64{0.1, math.NaN()}}.Figure, "non-duplicate 1: similarity NaN"},
		{"histogram bins", JaccardHistogram{Bins: -3}.Figure, "-3 bins"},
		{"heatmap twice", ShapeHeatmap{Cells: []ShapeCell{{Shape: lsh.Shape{Bands: 2, Rows: 2}, Value: ok}, {Shape: lsh.Shape{Bands: 2, Rows: 2}, Value: ok}}}.Figure, "cell 1 (2x2): shape also given as cell 0"},
		{"heatmap percent", ShapeHeatmap{Percent: true, Cells: []ShapeCell{{Shape: lsh.Shape{Bands: 2, Rows: 2}, Value: Point(3)}}}.Figure, "cell 0 (2x2): value 3"},
		{"matrix size", SimilarityMatrix{Docs: []MatrixDoc{{ID: "a"}}, Similarity: nil}.Figure, "0 rows of similarities for 1 documents"},
		{"matrix asymmetric", SimilarityMatrix{Docs: []MatrixDoc{{ID: "a"}, {ID: "b"}}, Similarity: [][]float64{{1, 0.5}, {0.6, 1}}}.Figure, "cell 0,1 is 0.5 but cell 1,0 is 0.6"},
		{"matrix range", SimilarityMatrix{Docs: []MatrixDoc{{ID: "a"}, {ID: "b"}}, Similarity: [][]float64{{1, 1.5}, {1.5, 1}}}.Figure, `cell 0,1 ("a", "b"): 1.5`},
		{"matrix too big", sampleMatrix(maxMatrixDocs + 1).Figure, "81 documents"},
		{"chain dup", Chain{Nodes: []ChainNode{{ID: "a"}, {ID: "a"}}}.Figure, `node 1 ("a"): ID also used by node 0`},
		{"chain next", Chain{Nodes: []ChainNode{{ID: "a", Next: math.NaN()}, {ID: "b"}}}.Figure, `node 0 ("a"): similarity to the next node NaN`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, err := tc.build()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Figure() = %v, %v; want an error containing %q", f, err, tc.want)
			}
		})
	}
	f, err := sampleChain().Figure()
	if err != nil {
		t.Fatal(err)
	}
	for _, sz := range []Size{{Width: 10}, {Width: 400, Height: 1e6}, {FontSize: 100}, {Scale: 50}, {Width: math.NaN()}} {
		if _, err := f.PNG(sz); err == nil {
			t.Errorf("PNG(%+v) succeeded; want a size error", sz)
		}
	}
}

// TestTextIsEscaped checks that document names cannot break out of the SVG: markup,
// quotes, control characters and invalid UTF-8 in a label come back as plain text.
func TestTextIsEscaped(t *testing.T) {
	t.Parallel()
	evil := "<script>alert(1)</script> \"q\" & 'a' \x01 \xff end"
	f, err := Chain{Nodes: []ChainNode{{ID: `id"><x`, Label: evil, Keeper: true, ToKeeper: 1, Next: 0.9}, {ID: "b", Label: "b", ToKeeper: 0.9}}}.Figure()
	if err != nil {
		t.Fatal(err)
	}
	svg, err := f.SVG(Size{})
	if err != nil {
		t.Fatal(err)
	}
	root := checkSVG(t, svg, "Chain from the keeper")
	nodes := root.all(hasAttr("data-doc"))
	if len(nodes) != 2 || nodes[0].attrs["data-doc"] != `id"><x` {
		t.Fatalf("data-doc hooks = %d, first %q; want 2, the first the raw ID", len(nodes), nodes[0].attrs["data-doc"])
	}
	want := "<script>alert(1)</script> \"q\" & 'a'  \uFFFD end (keeper)"
	if got := nodes[0].title(); got != want {
		t.Errorf("title = %q; want %q", got, want)
	}
	if len(root.all(func(n *node) bool { return n.name == "script" })) != 0 {
		t.Error("a <script> element came through")
	}
}

// TestTicks checks axis labels: round steps, the same decimals on every label of an
// axis and no more than the step needs, percent.
func TestTicks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		tk     ticks
		lo, hi float64
		want   []string
	}{
		{ticks{}, 0, 1, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{ticks{}, -0.5, 5.5, []string{"0", "2", "4"}},
		{ticks{percent: true}, 0, 0.05, []string{"0%", "1%", "2%", "3%", "4%", "5%"}},
		{ticks{percent: true}, 0, 0.0025, []string{"0.00%", "0.05%", "0.10%", "0.15%", "0.20%", "0.25%"}},
		{ticks{percent: true}, 0.2, 1, []string{"20%", "40%", "60%", "80%", "100%"}},
		{ticks{integer: true}, 0, 3, []string{"0", "1", "2", "3"}},
		{ticks{integer: true}, 0, 250, []string{"0", "50", "100", "150", "200", "250"}},
	}
	for _, tc := range cases {
		var got []string
		for _, tk := range tc.tk.Ticks(tc.lo, tc.hi) {
			got = append(got, tk.Label)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%+v.Ticks(%g, %g) = %v; want %v", tc.tk, tc.lo, tc.hi, got, tc.want)
		}
	}
}

// TestSCurveCompat keeps the shape calculator's chart working: the same call, an SVG
// naming the shape and the threshold, and no threshold line when t < 0.
func TestSCurveCompat(t *testing.T) {
	t.Parallel()
	svg, err := SCurve([]lsh.Shape{{Bands: 20, Rows: 5}, {Bands: 5, Rows: 25}}, 0.8, 6*vg.Inch, 4*vg.Inch)
	if err != nil {
		t.Fatal(err)
	}
	root := checkSVG(t, svg, "Candidate probability by Jaccard similarity")
	var texts []string
	root.walk(func(n *node) {
		if n.name == "text" {
			texts = append(texts, n.text)
		}
	})
	for _, want := range []string{"20 bands × 5 rows", "5 bands × 25 rows", "threshold 0.80"} {
		if !slices.Contains(texts, want) {
			t.Errorf("SVG texts %q lack %q", texts, want)
		}
	}
	svg, err = SCurve([]lsh.Shape{{Bands: 20, Rows: 5}}, -1, 6*vg.Inch, 4*vg.Inch)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(svg, []byte("threshold")) {
		t.Error("t = -1 drew a threshold")
	}
}

// TestHooksOnEveryChart checks the data attributes of the other charts' marks.
func TestHooksOnEveryChart(t *testing.T) {
	t.Parallel()
	figs := sampleFigures(t)
	cases := []struct {
		fig, attr string
		want      int
	}{
		{"heatmap", "data-shape", len(sampleHeatmap().Cells)},
		{"matrix", "data-docs", 6 * 5},
		{"chain", "data-doc", len(sampleChain().Nodes)},
		{"categories", "data-category", len(sampleCategories().Categories)},
	}
	for _, tc := range cases {
		svg, err := figs[tc.fig].SVG(Size{})
		if err != nil {
			t.Fatal(err)
		}
		hooks := parseSVG(t, svg).all(hasAttr(tc.attr))
		if len(hooks) != tc.want {
			t.Errorf("%s: %d elements with %s; want %d", tc.fig, len(hooks), tc.attr, tc.want)
		}
		for _, h := range hooks {
			if h.title() == "" {
				t.Errorf("%s: %s=%q has no title", tc.fig, tc.attr, h.attrs[tc.attr])
			}
		}
	}
}

// TestSizeScales checks that Width, Height and Scale reach the outputs.
func TestSizeScales(t *testing.T) {
	t.Parallel()
	f, err := sampleHistogram().Figure()
	if err != nil {
		t.Fatal(err)
	}
	svg, err := f.SVG(Size{Width: 390, Height: 260})
	if err != nil {
		t.Fatal(err)
	}
	root := parseSVG(t, svg)
	if root.attrs["width"] != "390" || root.attrs["height"] != "260" || root.attrs["viewBox"] != "0 0 390 260" {
		t.Errorf("svg width=%q height=%q viewBox=%q; want 390, 260, 0 0 390 260", root.attrs["width"], root.attrs["height"], root.attrs["viewBox"])
	}
	p, err := f.PNG(Size{Width: 390, Height: 260, Scale: 2})
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, p, Size{Width: 390, Height: 260, Scale: 2})
	var sizes []string
	root.walk(func(n *node) {
		if n.name == "text" {
			sizes = append(sizes, n.attrs["font-size"])
		}
	})
	svg, err = f.SVG(Size{Width: 390, FontSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	big := 0
	parseSVG(t, svg).walk(func(n *node) {
		if v, err := strconv.ParseFloat(n.attrs["font-size"], 64); err == nil && v >= 14 {
			big++
		}
	})
	if big < len(sizes)/2 {
		t.Errorf("FontSize 16: %d of %d texts at 14 px or more; want most", big, len(sizes))
	}
}

// TestEstimateInterval checks which intervals are drawn: only those around the value,
// so a zero-valued Lo and Hi (an Estimate built with just a Value) draws no bar.
func TestEstimateInterval(t *testing.T) {
	t.Parallel()
	cases := []struct {
		e    Estimate
		want bool
	}{
		{Estimate{Value: 0.9, Lo: 0.8, Hi: 0.95}, true},
		{Estimate{Value: 0.9}, false},
		{Estimate{}, true}, // 0 in [0, 0]: a zero-length bar at 0
		{Point(0.5), false},
		{Estimate{Value: math.NaN(), Lo: 0.1, Hi: 0.2}, false},
		{Estimate{Value: 0.5, Lo: 0.6, Hi: 0.7}, false},
		{Estimate{Value: 0.5, Lo: math.Inf(-1), Hi: 0.7}, false},
	}
	for _, tc := range cases {
		if got := tc.e.hasInterval(); got != tc.want {
			t.Errorf("%+v.hasInterval() = %v; want %v", tc.e, got, tc.want)
		}
	}
}

// TestDeterministic checks that a figure writes the same bytes every time, also from
// several goroutines at once, so a page can cache a chart by its input.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	for name, f := range sampleFigures(t) {
		want, err := f.SVG(Size{})
		if err != nil {
			t.Fatal(err)
		}
		got := make([][]byte, 4)
		done := make(chan struct{})
		for i := range got {
			go func() {
				defer func() { done <- struct{}{} }()
				got[i], _ = f.SVG(Size{})
			}()
		}
		for range got {
			<-done
		}
		for i, g := range got {
			if !bytes.Equal(g, want) {
				t.Errorf("%s: render %d differs from the first", name, i)
			}
		}
	}
}

// Issue 27: a configuration near a 100% false-removal rate ran the x-axis to 125% (its
// padding rounded up past the end of a rate). The axis stops at 100%.
func TestTradeoffAxisStopsAtOne(t *testing.T) {
	t.Parallel()
	fig, err := Tradeoff{Points: []TradeoffPoint{{ID: "a", Recall: Point(0.99), FalseRemoval: Point(0.97)}, {ID: "b", Recall: Point(0.5), FalseRemoval: Point(0.1)}}}.Figure()
	if err != nil {
		t.Fatal(err)
	}
	svg, err := fig.SVG(Size{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(svg), ">100%<") || strings.Contains(string(svg), "125%") || strings.Contains(string(svg), "120%") {
		t.Errorf("the false-removal axis of a point at 97%% does not end at 100%%:\n%.2000s", svg)
	}
}
