package chart

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Tradeoff is the sweep dashboard's main chart: recall (up) against the false-removal
// rate (right), one point per configuration. The Pareto front (no other configuration
// has at least the recall with at most the false removals, and is better in one) is
// worked out here from the values drawn, so the line always matches the points.
type Tradeoff struct {
	Title  string // "Recall against false-removal rate" when empty
	Points []TradeoffPoint
	// Baseline is exact-hash dedup alone, the figure every configuration must beat;
	// drawn as a cross and never on the front. Nil draws none.
	Baseline *TradeoffPoint
	// Selected and Recommended are IDs of Points; "" marks none.
	Selected, Recommended string
	// DimDominated draws the points off the front faintly.
	DimDominated bool
	// Intervals draws each estimate's 95% interval as a bar on both axes.
	Intervals bool
}

// TradeoffPoint is one configuration.
type TradeoffPoint struct {
	// ID is the configuration's stable key, written as data-config="ID" on its mark.
	ID string
	// Label names the configuration in plain words for the hover text, e.g.
	// "word 5-shingles, k=128, 20 bands × 5 rows, threshold 0.80, exact Jaccard".
	Label        string
	Recall       Estimate
	FalseRemoval Estimate
}

func (pt TradeoffPoint) drawable() bool { return pt.Recall.hasValue() && pt.FalseRemoval.hasValue() }

func (pt TradeoffPoint) check(where string) error {
	if err := pt.Recall.checkRate(); err != nil {
		return fmt.Errorf("%s: recall: %w", where, err)
	}
	if err := pt.FalseRemoval.checkRate(); err != nil {
		return fmt.Errorf("%s: false-removal rate: %w", where, err)
	}
	return nil
}

// paretoFront reports, for each point, whether no other point dominates it (recall
// at least as high and false-removal rate at least as low, strictly better in one).
// Points that cannot be drawn are never on the front. O(n log n).
func paretoFront(pts []TradeoffPoint) []bool {
	on := make([]bool, len(pts))
	idx := make([]int, 0, len(pts))
	for i, p := range pts {
		if p.drawable() {
			idx = append(idx, i)
		}
	}
	// Lowest false removals first; among equals, highest recall first.
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := cmp.Compare(pts[a].FalseRemoval.Value, pts[b].FalseRemoval.Value); c != 0 {
			return c
		}
		return cmp.Compare(pts[b].Recall.Value, pts[a].Recall.Value)
	})
	best := math.Inf(-1) // highest recall among strictly lower false-removal rates
	for g := 0; g < len(idx); {
		x := pts[idx[g]].FalseRemoval.Value
		top := pts[idx[g]].Recall.Value
		e := g
		for ; e < len(idx) && pts[idx[e]].FalseRemoval.Value == x; e++ {
			if y := pts[idx[e]].Recall.Value; y == top && y > best {
				on[idx[e]] = true
			}
		}
		best = math.Max(best, top)
		g = e
	}
	return on
}

// Figure draws the chart. It fails on a rate outside [0, 1], an empty or repeated ID,
// or a Selected or Recommended ID that is not among Points, naming the point.
func (t Tradeoff) Figure() (*Figure, error) {
	pts := slices.Clone(t.Points)
	ids := make(map[string]int, len(pts))
	for i, p := range pts {
		where := fmt.Sprintf("recall chart: point %d (%q)", i, p.ID)
		if err := checkID(ids, i, p.ID, "recall chart", "point"); err != nil {
			return nil, err
		}
		if err := p.check(where); err != nil {
			return nil, err
		}
	}
	var base *TradeoffPoint
	if t.Baseline != nil {
		b := *t.Baseline
		if err := b.check("recall chart: baseline"); err != nil {
			return nil, err
		}
		base = &b
	}
	for _, s := range []struct{ what, id string }{{"selected", t.Selected}, {"recommended", t.Recommended}} {
		if _, ok := ids[s.id]; s.id != "" && !ok {
			return nil, fmt.Errorf("recall chart: %s configuration %q is not among the points", s.what, s.id)
		}
	}
	front := paretoFront(pts)
	title := cmp.Or(t.Title, "Recall against false-removal rate")

	tab := Table{Columns: []string{"kind", "config", "label"}}
	tab.Columns = append(tab.Columns, estimateColumns("recall")...)
	tab.Columns = append(tab.Columns, estimateColumns("false_removal_rate")...)
	tab.Columns = append(tab.Columns, "pareto_front", "selected", "recommended")
	row := func(kind string, p TradeoffPoint, front bool) []string {
		r := []string{kind, textCell(p.ID), textCell(p.Label)}
		r = append(r, estimateCells(p.Recall)...)
		r = append(r, estimateCells(p.FalseRemoval)...)
		return append(r, boolCell(front), boolCell(kind == "configuration" && p.ID == t.Selected),
			boolCell(kind == "configuration" && p.ID == t.Recommended))
	}
	for i, p := range pts {
		tab.Rows = append(tab.Rows, row("configuration", p, front[i]))
	}
	if base != nil {
		tab.Rows = append(tab.Rows, row("baseline", *base, false))
	}

	return &Figure{
		name:  "recall",
		title: title,
		width: 480,
		height: func(w float64, th theme) float64 {
			return math.Max(w*0.78, 16*th.fs)
		},
		draw: func(c draw.Canvas, th theme) {
			c = drawTitle(margins(c, th), th, title)
			t.draw(c, th, pts, base, front)
		},
		table: tab,
	}, nil
}

// Marker sizes of the recall chart, in multiples of the font size.
const (
	pointR    = 0.33 // a configuration
	hitR      = 0.75 // the invisible target around it that takes hover and clicks
	selectedR = 0.7  // the ring around the selected one
	recR      = 0.55 // the triangle of the recommended one
)

func (t Tradeoff) draw(c draw.Canvas, th theme, pts []TradeoffPoint, base *TradeoffPoint, front []bool) {
	var drawable plotter.XYs
	anyDominated, anyInterval := false, false
	xmax, ymin := 0.0, 1.0
	consider := func(p TradeoffPoint, bars bool) {
		drawable = append(drawable, plotter.XY{X: p.FalseRemoval.Value, Y: p.Recall.Value})
		xmax = math.Max(xmax, p.FalseRemoval.Value)
		ymin = math.Min(ymin, p.Recall.Value)
		if bars && p.FalseRemoval.hasInterval() {
			xmax = math.Max(xmax, p.FalseRemoval.Hi)
			anyInterval = true
		}
		if bars && p.Recall.hasInterval() {
			ymin = math.Min(ymin, p.Recall.Lo)
			anyInterval = true
		}
	}
	for i, p := range pts {
		if p.drawable() {
			consider(p, t.Intervals && !t.dimmed(p, front[i]))
			anyDominated = anyDominated || t.dimmed(p, front[i])
		}
	}
	if base != nil && base.drawable() {
		consider(*base, t.Intervals)
	}

	blueDim := faded(blue, 0.28)
	var legend []legendEntry
	legend = append(legend, legendEntry{"configuration", []plot.Thumbnailer{markThumb(disc, th.px(pointR), blue, draw.LineStyle{})}})
	if t.DimDominated && anyDominated {
		legend = append(legend, legendEntry{"dominated", []plot.Thumbnailer{markThumb(disc, th.px(pointR), blueDim, draw.LineStyle{})}})
	}
	frontLine := draw.LineStyle{Color: ink, Width: 1.5}
	legend = append(legend, legendEntry{"Pareto front", []plot.Thumbnailer{lineThumb(frontLine)}})
	if t.Recommended != "" {
		legend = append(legend, legendEntry{"recommended", []plot.Thumbnailer{markThumb(triangle, th.px(recR), vermillion, draw.LineStyle{Color: white, Width: 1})}})
	}
	selLine := draw.LineStyle{Color: ink, Width: 2}
	if t.Selected != "" {
		legend = append(legend, legendEntry{"selected", []plot.Thumbnailer{markThumb(disc, th.px(selectedR), nil, selLine)}})
	}
	if base != nil {
		legend = append(legend, legendEntry{"exact-hash baseline", []plot.Thumbnailer{crossThumb(th)}})
	}
	barSty := draw.LineStyle{Color: faded(blue, 0.5), Width: 1}
	if anyInterval {
		legend = append(legend, legendEntry{"95% interval", []plot.Thumbnailer{thumbFunc(func(c *draw.Canvas) {
			errorBar(*c, barSty, true, c.Center().Y, c.Min.X+2, c.Max.X-2, th.px(0.25))
		})}})
	}
	if len(drawable) == 0 {
		legend = nil
	}
	c = drawLegend(c, th, legend)

	p := newPlot(th, "False-removal rate", "Recall")
	p.X.Tick.Marker, p.Y.Tick.Marker = ticks{percent: true}, ticks{percent: true}
	// A rate stops at 100%: padding a point near it must not run the axis to 125%.
	p.X.Min, p.X.Max = 0, math.Min(1, roundUp(math.Max(xmax*1.04, 0.01)))
	p.Y.Max = 1
	p.Y.Min = math.Max(0, roundDown(math.Min(ymin, 0.9), 1))
	if len(drawable) == 0 {
		p.Y.Min = 0
	}
	p.Add(grid(true, true))
	if len(drawable) == 0 {
		p.Add(emptyNote(th, "No configurations to show yet: run a sweep."))
	}

	// Draw order: interval bars, the front line, then marks from least to most
	// important, so the selected ring is never hidden.
	order := make([]int, 0, len(pts))
	for i, pt := range pts {
		if pt.drawable() {
			order = append(order, i)
		}
	}
	rank := func(i int) int {
		switch {
		case pts[i].ID == t.Selected:
			return 4
		case pts[i].ID == t.Recommended:
			return 3
		case front[i]:
			return 2
		}
		return 1
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rank(a), rank(b)) })

	p.Add(layer{pts: drawable, r: th.px(hitR), plot: func(c draw.Canvas, p *plot.Plot) {
		tx, ty := p.Transforms(&c)
		if t.Intervals {
			capHalf := th.px(0.2)
			bars := func(pt TradeoffPoint, sty draw.LineStyle) {
				x, y := tx(pt.FalseRemoval.Value), ty(pt.Recall.Value)
				if pt.FalseRemoval.hasInterval() {
					errorBar(c, sty, true, y, tx(pt.FalseRemoval.Lo), tx(pt.FalseRemoval.Hi), capHalf)
				}
				if pt.Recall.hasInterval() {
					errorBar(c, sty, false, x, ty(pt.Recall.Lo), ty(pt.Recall.Hi), capHalf)
				}
			}
			// Dimmed points keep their bars out of the way: the bars of dozens of
			// dominated configurations would hide the front.
			for _, i := range order {
				if t.dimmed(pts[i], front[i]) {
					continue
				}
				bars(pts[i], barSty)
			}
			if base != nil && base.drawable() {
				bars(*base, draw.LineStyle{Color: faded(ink, 0.4), Width: 1})
			}
		}

		// Dimmed points go under the front line, the rest over it.
		k := 0
		for ; k < len(order) && t.dimmed(pts[order[k]], front[order[k]]); k++ {
			t.drawPoint(c, th, tx, ty, pts[order[k]], front[order[k]])
		}

		// The front as a step line: between two front points the best recall
		// reachable stays that of the left one until the right one's rate.
		var fp []TradeoffPoint
		for i, pt := range pts {
			if front[i] {
				fp = append(fp, pt)
			}
		}
		slices.SortFunc(fp, func(a, b TradeoffPoint) int {
			return cmp.Or(cmp.Compare(a.FalseRemoval.Value, b.FalseRemoval.Value), cmp.Compare(a.Recall.Value, b.Recall.Value))
		})
		if len(fp) > 1 {
			line := []vg.Point{{X: tx(fp[0].FalseRemoval.Value), Y: ty(fp[0].Recall.Value)}}
			for _, q := range fp[1:] {
				x, y := tx(q.FalseRemoval.Value), ty(q.Recall.Value)
				line = append(line, vg.Point{X: x, Y: line[len(line)-1].Y}, vg.Point{X: x, Y: y})
			}
			c.StrokeLines(frontLine, line)
		}

		for _, i := range order[k:] {
			t.drawPoint(c, th, tx, ty, pts[i], front[i])
		}
		if base != nil && base.drawable() {
			at := vg.Point{X: tx(base.FalseRemoval.Value), Y: ty(base.Recall.Value)}
			h := hook{attrs: [][2]string{{"class", "baseline"}}, title: "Exact-hash baseline" + t.describeValues(*base)}
			withHook(c, h, func() {
				hitArea(c, at, th.px(hitR))
				drawCross(c, at, th)
			})
		}
	}})
	p.Draw(c)
}

// drawPoint draws one configuration inside its hook: an invisible target larger
// than the mark for hover and clicks, the mark, and the ring when selected.
func (t Tradeoff) drawPoint(c draw.Canvas, th theme, tx, ty func(float64) vg.Length, pt TradeoffPoint, front bool) {
	at := vg.Point{X: tx(pt.FalseRemoval.Value), Y: ty(pt.Recall.Value)}
	h := hook{attrs: [][2]string{{"class", "point"}, {"data-config", pt.ID}, {"data-front", boolCell(front)}}, title: t.describe(pt, front)}
	if pt.ID == t.Selected {
		h.attrs = append(h.attrs, [2]string{"data-selected", "true"})
	}
	if pt.ID == t.Recommended {
		h.attrs = append(h.attrs, [2]string{"data-recommended", "true"})
	}
	withHook(c, h, func() {
		hitArea(c, at, th.px(hitR))
		fill := blue
		if t.dimmed(pt, front) {
			fill = faded(blue, 0.28)
		}
		if pt.ID == t.Recommended {
			mark(c, triangle, at, th.px(recR), vermillion, draw.LineStyle{Color: white, Width: 1})
		} else {
			mark(c, disc, at, th.px(pointR), fill, draw.LineStyle{Color: white, Width: 0.75})
		}
		if pt.ID == t.Selected {
			mark(c, disc, at, th.px(selectedR), nil, draw.LineStyle{Color: ink, Width: 2})
		}
	})
}

// dimmed reports whether a point is drawn faintly: dominated, with DimDominated set,
// and neither selected nor recommended.
func (t Tradeoff) dimmed(pt TradeoffPoint, front bool) bool {
	return t.DimDominated && !front && pt.ID != t.Selected && pt.ID != t.Recommended
}

// describe is a point's hover text: what it is and both estimates.
func (t Tradeoff) describe(pt TradeoffPoint, front bool) string {
	s := pt.Label
	if s == "" {
		s = "Configuration " + pt.ID
	}
	var notes []string
	if pt.ID == t.Recommended {
		notes = append(notes, "recommended")
	}
	if pt.ID == t.Selected {
		notes = append(notes, "selected")
	}
	if front {
		notes = append(notes, "on the Pareto front")
	} else {
		notes = append(notes, "dominated")
	}
	return s + " (" + joinComma(notes) + ")" + t.describeValues(pt)
}

func (Tradeoff) describeValues(pt TradeoffPoint) string {
	return "\nRecall " + pt.Recall.describe() + "\nFalse-removal rate " + pt.FalseRemoval.describe()
}

// hitArea draws an invisible disc that takes hover and clicks for a small mark. Only
// SVG needs it; a PNG has no pointer.
func hitArea(c draw.Canvas, at vg.Point, r vg.Length) {
	if _, ok := hookerOf(c.Canvas); ok {
		mark(c, disc, at, r, clear, draw.LineStyle{})
	}
}

func drawCross(c draw.Canvas, at vg.Point, th theme) {
	r := th.px(0.4)
	sty := draw.LineStyle{Color: ink, Width: 2}
	c.StrokeLine2(sty, at.X-r, at.Y-r, at.X+r, at.Y+r)
	c.StrokeLine2(sty, at.X-r, at.Y+r, at.X+r, at.Y-r)
}

func crossThumb(th theme) thumbFunc {
	return func(c *draw.Canvas) { drawCross(*c, c.Center(), th) }
}

// niceCeil rounds v up to 1, 2, 2.5 or 5 times a power of ten, so an axis ends on a
// round number.
func niceCeil(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= v*(1-1e-12) {
			return m * mag
		}
	}
	return 10 * mag
}

// roundUp rounds v up to a multiple of the tick step an axis from 0 to v gets, so
// the axis ends on a labelled tick without wasting room.
func roundUp(v float64) float64 {
	step := niceCeil(v / 5)
	return math.Ceil(v/step-1e-9) * step
}

// roundDown rounds lo down to a multiple of the tick step of an axis from lo to hi.
func roundDown(lo, hi float64) float64 {
	step := niceCeil((hi - lo) / 5)
	return math.Floor(lo/step+1e-9) * step
}

// emptyNote writes a sentence in the middle of an empty plot, saying what to do.
func emptyNote(th theme, msg string) plot.Plotter {
	return plotterFunc(func(c draw.Canvas, _ *plot.Plot) {
		sty := th.label
		sty.Color = mutedGrey
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
		c.FillText(sty, c.Center(), msg)
	})
}
