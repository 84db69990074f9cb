package chart

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/percent"
)

// SCurves draws, for each shape, the chance that a pair of Jaccard similarity s
// shares at least one band, P(s) = 1-(1-s^r)^b, with what was measured on labeled
// pairs drawn on top: per similarity bin, the share of pairs that did collide, with
// its interval. Each curve's (1/b)^(1/r), about where it is steepest, is marked by a
// dotted drop line, and the threshold by a dashed one.
type SCurves struct {
	Title  string // "Chance that a pair becomes a candidate" when empty
	Curves []ShapeCurve
	// Threshold in (0, 1] is drawn; 0 or NaN draws none.
	Threshold float64
}

// ShapeCurve is one shape and, optionally, what was measured for it.
type ShapeCurve struct {
	Shape lsh.Shape
	Label string // "20 bands × 5 rows" when empty
	// Measured holds one entry per similarity bin.
	Measured []BinRate
}

// BinRate is the measured collision rate of the labeled pairs in one bin of exact
// Jaccard similarity [Lo, Hi).
type BinRate struct {
	Lo, Hi float64
	// At is where in the bin the point is drawn: the mean similarity of its pairs, so
	// a bin whose pairs crowd at one end is compared with the curve where they are.
	// Outside [Lo, Hi] (or NaN) draws it at the middle of the bin.
	At float64
	// Rate is the share of the bin's pairs that collided in at least one band; N is
	// the number of pairs.
	Rate Estimate
}

func (b BinRate) x() float64 {
	if b.At >= b.Lo && b.At <= b.Hi {
		return b.At
	}
	return (b.Lo + b.Hi) / 2
}

func (sc ShapeCurve) label() string {
	return cmp.Or(sc.Label, fmt.Sprintf("%d bands × %d rows", sc.Shape.Bands, sc.Shape.Rows))
}

func hasThreshold(t float64) bool { return t > 0 && t <= 1 }

// curveDashes give each curve its own line pattern, so curves differ without colour.
var curveDashes = [][]vg.Length{nil, {7, 3}, {2, 2.5}, {9, 3, 2, 3}, {4, 4}, {12, 4}}

// Figure draws the curves. It fails on a shape with fewer than one band or row, a bin
// outside [0, 1] or a rate outside [0, 1], naming the curve and bin.
func (s SCurves) Figure() (*Figure, error) {
	curves := slices.Clone(s.Curves)
	for i, sc := range curves {
		if sc.Shape.Bands < 1 || sc.Shape.Rows < 1 {
			return nil, fmt.Errorf("s-curves: curve %d: shape %d×%d needs at least one band and one row", i, sc.Shape.Bands, sc.Shape.Rows)
		}
		for j, b := range sc.Measured {
			where := fmt.Sprintf("s-curves: curve %d (%s): bin %d", i, sc.Shape, j)
			if !(b.Lo >= 0 && b.Lo < b.Hi && b.Hi <= 1) {
				return nil, fmt.Errorf("%s: [%g, %g) is not a bin within [0, 1]", where, b.Lo, b.Hi)
			}
			if err := b.Rate.checkRate(); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
		}
		curves[i].Measured = slices.Clone(sc.Measured)
	}
	if math.IsInf(s.Threshold, 0) || s.Threshold < 0 || s.Threshold > 1 {
		return nil, fmt.Errorf("s-curves: threshold %g is outside [0, 1]", s.Threshold)
	}
	title := cmp.Or(s.Title, "Chance that a pair becomes a candidate")

	tab := Table{Columns: []string{"kind", "bands", "rows", "label", "similarity", "bin_lo", "bin_hi"}}
	tab.Columns = append(tab.Columns, estimateColumns("rate")...)
	nan := math.NaN()
	add := func(kind string, sc *ShapeCurve, sim, lo, hi float64, e Estimate) {
		r := []string{kind, "", "", "", num(sim), num(lo), num(hi)}
		if sc != nil {
			r[1], r[2], r[3] = intCell(sc.Shape.Bands), intCell(sc.Shape.Rows), textCell(sc.label())
		}
		tab.Rows = append(tab.Rows, append(r, estimateCells(e)...))
	}
	for i := range curves {
		sc := &curves[i]
		for j := 0; j <= 100; j++ {
			x := float64(j) / 100
			add("curve", sc, x, nan, nan, Point(lsh.Probability(x, sc.Shape)))
		}
		knee := lsh.ThresholdApprox(sc.Shape)
		add("approximate_threshold", sc, knee, nan, nan, Point(lsh.Probability(knee, sc.Shape)))
		for _, b := range sc.Measured {
			add("measured", sc, b.x(), b.Lo, b.Hi, b.Rate)
		}
	}
	if hasThreshold(s.Threshold) {
		add("threshold", nil, s.Threshold, nan, nan, Point(nan))
	}

	return &Figure{
		name:   "s-curves",
		title:  title,
		width:  480,
		height: func(w float64, th theme) float64 { return math.Max(w*0.72, 16*th.fs) },
		draw: func(c draw.Canvas, th theme) {
			c = drawTitle(margins(c, th), th, title)
			s.draw(c, th, curves)
		},
		table: tab,
	}, nil
}

func (s SCurves) draw(c draw.Canvas, th theme, curves []ShapeCurve) {
	style := func(i int) (draw.LineStyle, shape) {
		return draw.LineStyle{Color: palette[i%len(palette)], Width: 2, Dashes: curveDashes[i%len(curveDashes)]},
			shapes[i%len(shapes)]
	}
	markR := th.px(0.32)
	kneeSty := func(i int) draw.LineStyle {
		return draw.LineStyle{Color: palette[i%len(palette)], Width: 1.25, Dashes: []vg.Length{1.5, 2.5}}
	}
	threshSty := draw.LineStyle{Color: ink, Width: 1.25, Dashes: []vg.Length{5, 3}}

	var legend []legendEntry
	anyMeasured := false
	for i, sc := range curves {
		ls, sh := style(i)
		thumbs := []plot.Thumbnailer{lineThumb(ls)}
		if len(sc.Measured) > 0 {
			anyMeasured = true
			thumbs = append(thumbs, markThumb(sh, markR, ls.Color, draw.LineStyle{Color: white, Width: 0.75}))
		}
		legend = append(legend, legendEntry{sc.label(), thumbs})
	}
	if anyMeasured {
		legend = append(legend, legendEntry{"measured on labeled pairs (95% interval)", []plot.Thumbnailer{
			thumbFunc(func(c *draw.Canvas) {
				ctr := c.Center()
				errorBar(*c, draw.LineStyle{Color: mutedGrey, Width: 1}, false, ctr.X, c.Min.Y-2, c.Max.Y+2, th.px(0.2))
				mark(*c, disc, ctr, markR, mutedGrey, draw.LineStyle{Color: white, Width: 0.75})
			})}})
	}
	if len(curves) > 0 {
		legend = append(legend, legendEntry{"(1/b)^(1/r)", []plot.Thumbnailer{thumbFunc(func(c *draw.Canvas) {
			x := c.Center().X
			c.StrokeLine2(kneeSty(0), x, c.Min.Y-2, x, c.Max.Y+2)
		})}})
	}
	if hasThreshold(s.Threshold) {
		legend = append(legend, legendEntry{"threshold " + strconv.FormatFloat(s.Threshold, 'f', 2, 64), []plot.Thumbnailer{lineThumb(threshSty)}})
	}
	c = drawLegend(c, th, legend)

	p := newPlot(th, "Jaccard similarity", "Chance")
	p.Y.Tick.Marker = ticks{percent: true}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	p.Add(grid(true, true))
	if len(curves) == 0 {
		p.Add(emptyNote(th, "Choose a shape to see its curve."))
	}
	var measured plotter.XYs
	for _, sc := range curves {
		for _, b := range sc.Measured {
			if b.Rate.hasValue() {
				measured = append(measured, plotter.XY{X: b.x(), Y: b.Rate.Value})
			}
		}
	}
	p.Add(layer{pts: measured, r: markR * 1.3, plot: func(c draw.Canvas, p *plot.Plot) {
		tx, ty := p.Transforms(&c)
		if hasThreshold(s.Threshold) {
			x := tx(s.Threshold)
			c.StrokeLine2(threshSty, x, c.Min.Y, x, c.Max.Y)
		}
		for i, sc := range curves {
			ls, _ := style(i)
			pts := make([]vg.Point, 201)
			for j := range pts {
				x := float64(j) / 200
				pts[j] = vg.Point{X: tx(x), Y: ty(lsh.Probability(x, sc.Shape))}
			}
			c.StrokeLines(ls, pts)
			knee := lsh.ThresholdApprox(sc.Shape)
			if knee >= 0 && knee <= 1 {
				withHook(c, hook{attrs: [][2]string{{"class", "knee"}, {"data-shape", sc.Shape.String()}},
					title: fmt.Sprintf("%s: (1/b)^(1/r) = %.3f, chance there %s", sc.label(), knee, percent.Short(lsh.Probability(knee, sc.Shape)))}, func() {
					c.StrokeLine2(kneeSty(i), tx(knee), ty(0), tx(knee), ty(lsh.Probability(knee, sc.Shape)))
				})
			}
		}
		for i, sc := range curves {
			ls, sh := style(i)
			for _, b := range sc.Measured {
				if !b.Rate.hasValue() {
					continue
				}
				x := tx(b.x())
				title := fmt.Sprintf("%s, similarity %.2f to %.2f: %s of pairs collided", sc.label(), b.Lo, b.Hi, b.Rate.describe())
				withHook(c, hook{attrs: [][2]string{{"class", "measured"}, {"data-shape", sc.Shape.String()},
					{"data-bin", num(b.Lo) + "-" + num(b.Hi)}}, title: title}, func() {
					if b.Rate.hasInterval() {
						errorBar(c, draw.LineStyle{Color: faded(palette[i%len(palette)], 0.75), Width: 1.25}, false, x, ty(b.Rate.Lo), ty(b.Rate.Hi), th.px(0.22))
					}
					mark(c, sh, vg.Point{X: x, Y: ty(b.Rate.Value)}, markR, ls.Color, draw.LineStyle{Color: white, Width: 0.75})
				})
			}
		}
	}})
	p.Draw(c)
}

// SCurve draws the curves of the given shapes with the threshold t marked (none when
// t <= 0) as an SVG of the given size in CSS pixels. It is SCurves.Figure for the
// shape calculator's chart; new code should use SCurves.
func SCurve(shapes []lsh.Shape, t float64, width, height vg.Length) ([]byte, error) {
	s := SCurves{Title: "Candidate probability by Jaccard similarity", Threshold: math.Max(t, 0)}
	for _, sh := range shapes {
		s.Curves = append(s.Curves, ShapeCurve{Shape: sh})
	}
	f, err := s.Figure()
	if err != nil {
		return nil, err
	}
	return f.SVG(Size{Width: float64(width), Height: float64(height)})
}
