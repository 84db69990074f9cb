package chart

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
	"github.com/dedupstudio/dedupstudio/internal/percent"
)

// ShapeHeatmap draws one value (recall, false merges, ...) for every bands x rows
// shape of one representation and threshold: rows per band across, bands up. Each
// cell shows its value as text, so the colour only guides the eye; shapes that were
// not run are left light grey.
type ShapeHeatmap struct {
	Title string // "<Value> by bands and rows" when empty
	// Value names what the cells hold, in plain words: "Recall", "False merges".
	Value string
	// Percent writes values, which must then be rates in [0, 1], as percentages.
	Percent bool
	Cells   []ShapeCell
	// Min and Max fix the ends of the colour scale (when Min < Max); otherwise it
	// spans the values drawn.
	Min, Max float64
}

// ShapeCell is the value for one shape.
type ShapeCell struct {
	Shape lsh.Shape
	Value Estimate
}

// Figure draws the heatmap. It fails on a shape with fewer than one band or row, a
// shape given twice, a value that is infinite or (with Percent) not a rate.
func (hm ShapeHeatmap) Figure() (*Figure, error) {
	cells := slices.Clone(hm.Cells)
	seen := map[lsh.Shape]int{}
	for i, c := range cells {
		where := fmt.Sprintf("shape heatmap: cell %d (%s)", i, c.Shape)
		if c.Shape.Bands < 1 || c.Shape.Rows < 1 {
			return nil, fmt.Errorf("%s: needs at least one band and one row", where)
		}
		if j, dup := seen[c.Shape]; dup {
			return nil, fmt.Errorf("%s: shape also given as cell %d", where, j)
		}
		seen[c.Shape] = i
		if math.IsInf(c.Value.Value, 0) {
			return nil, fmt.Errorf("%s: value is infinite", where)
		}
		if hm.Percent {
			if err := c.Value.checkRate(); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
		}
	}
	name := cmp.Or(hm.Value, "Value")
	title := cmp.Or(hm.Title, name+" by bands and rows")
	col := columnName(name)
	tab := Table{Columns: append([]string{"bands", "rows"}, estimateColumns(col)...)}
	for _, c := range cells {
		tab.Rows = append(tab.Rows, append([]string{intCell(c.Shape.Bands), intCell(c.Shape.Rows)}, estimateCells(c.Value)...))
	}
	var bands, rows []int
	for _, c := range cells {
		bands, rows = append(bands, c.Shape.Bands), append(rows, c.Shape.Rows)
	}
	slices.Sort(bands)
	slices.Sort(rows)
	bands, rows = slices.Compact(bands), slices.Compact(rows)

	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range cells {
		if c.Value.hasValue() {
			lo, hi = math.Min(lo, c.Value.Value), math.Max(hi, c.Value.Value)
		}
	}
	if hm.Min < hm.Max {
		lo, hi = hm.Min, hm.Max
	}
	format := func(v float64) string {
		if hm.Percent {
			return percent.Short(v)
		}
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return &Figure{
		name:  "shape heatmap",
		title: title,
		width: 480,
		height: func(w float64, th theme) float64 {
			return float64(th.px(2.6*float64(max(len(bands), 1))+8) + colorScaleHeight(th, false))
		},
		draw: func(c draw.Canvas, th theme) {
			c = drawTitle(margins(c, th), th, title)
			c = drawColorScale(c, th, colorScale{name: name, lo: lo, hi: hi, format: format})
			p := newPlot(th, "Rows per band", "Bands")
			g := cellGrid{cols: len(rows), rows: len(bands), lo: lo, hi: hi, emptyText: "not run"}
			for _, r := range rows {
				g.colLabels = append(g.colLabels, strconv.Itoa(r))
			}
			for _, b := range bands {
				g.rowLabels = append(g.rowLabels, strconv.Itoa(b))
			}
			for _, cl := range cells {
				x, y := slices.Index(rows, cl.Shape.Rows), slices.Index(bands, cl.Shape.Bands)
				v := math.NaN()
				if cl.Value.hasValue() {
					v = cl.Value.Value
				}
				g.cells = append(g.cells, gridCell{x: x, y: y, v: v, text: format(v),
					hook: hook{attrs: [][2]string{{"class", "cell"}, {"data-shape", cl.Shape.String()}},
						title: fmt.Sprintf("%d bands × %d rows: %s %s", cl.Shape.Bands, cl.Shape.Rows, lowerFirst(name), valueText(cl.Value, hm.Percent))}})
			}
			if len(cells) == 0 {
				p.Add(emptyNote(th, "No shapes to show yet: run a sweep."))
			}
			g.plot(p, th)
			p.Draw(c)
		},
		table: tab,
	}, nil
}

// valueText describes a cell's value for its hover text.
func valueText(e Estimate, percent bool) string {
	if percent {
		return e.describe()
	}
	if !e.hasValue() {
		return "not measured"
	}
	s := strconv.FormatFloat(e.Value, 'g', 4, 64)
	if e.hasInterval() {
		s += " (95% interval " + strconv.FormatFloat(e.Lo, 'g', 4, 64) + " to " + strconv.FormatFloat(e.Hi, 'g', 4, 64) + ")"
	}
	return s
}

func lowerFirst(s string) string {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return s
	}
	return string(s[0]+'a'-'A') + s[1:]
}

// columnName turns a value's name into a CSV column name: "False merges" becomes
// "false_merges".
func columnName(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			out = append(out, r+'a'-'A')
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			out = append(out, r)
		case len(out) > 0 && out[len(out)-1] != '_':
			out = append(out, '_')
		}
	}
	for len(out) > 0 && out[len(out)-1] == '_' {
		out = out[:len(out)-1]
	}
	if len(out) == 0 {
		return "value"
	}
	return string(out)
}

// cellGrid is a grid of coloured cells on nominal axes, with their values written in
// them where they fit; shared by the shape heatmap and the similarity matrix.
type cellGrid struct {
	cols, rows           int
	colLabels, rowLabels []string // bottom to top for rows
	cells                []gridCell
	lo, hi               float64
	outline              func(v float64) bool // cells to outline, or nil
	emptyText            string               // written in grid positions without a cell
}

type gridCell struct {
	x, y int     // column, row (row 0 at the bottom)
	v    float64 // NaN: no value
	text string
	hook hook
}

var noData = color.NRGBA{242, 242, 242, 255}

func (g cellGrid) plot(p *plot.Plot, th theme) {
	ticks := func(labels []string) plot.ConstantTicks {
		t := make(plot.ConstantTicks, len(labels))
		for i, l := range labels {
			t[i] = plot.Tick{Value: float64(i), Label: l}
		}
		return t
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = ticks(g.colLabels), ticks(g.rowLabels)
	p.X.Min, p.X.Max = -0.5, float64(max(g.cols, 1))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(max(g.rows, 1))-0.5
	p.X.Padding, p.Y.Padding = 0, 0
	p.X.Tick.Length, p.Y.Tick.Length = 0, 0
	p.X.Width, p.Y.Width = 0, 0
	p.Add(plotterFunc(func(c draw.Canvas, p *plot.Plot) {
		tx, ty := p.Transforms(&c)
		sty := th.small
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
		// Grid positions without a cell (shapes not run) in light grey.
		taken := make(map[[2]int]bool, len(g.cells))
		for _, cl := range g.cells {
			taken[[2]int{cl.x, cl.y}] = true
		}
		for x := range g.cols {
			for y := range g.rows {
				if taken[[2]int{x, y}] {
					continue
				}
				r := vg.Rectangle{Min: vg.Point{X: tx(float64(x)-0.5) + 1, Y: ty(float64(y)-0.5) + 1},
					Max: vg.Point{X: tx(float64(x)+0.5) - 1, Y: ty(float64(y)+0.5) - 1}}
				c.SetColor(noData)
				c.Fill(r.Path())
				if g.emptyText != "" && sty.Width(g.emptyText)+4 <= r.Max.X-r.Min.X {
					et := sty
					et.Color = mutedGrey
					c.FillText(et, r.Min.Add(r.Size().Scale(0.5)), g.emptyText)
				}
			}
		}
		for _, cl := range g.cells {
			r := vg.Rectangle{Min: vg.Point{X: tx(float64(cl.x)-0.5) + 1, Y: ty(float64(cl.y)-0.5) + 1},
				Max: vg.Point{X: tx(float64(cl.x)+0.5) - 1, Y: ty(float64(cl.y)+0.5) - 1}}
			withHook(c, cl.hook, func() {
				bg := color.Color(noData)
				if !math.IsNaN(cl.v) {
					bg = viridis(unit(cl.v, g.lo, g.hi))
				}
				c.SetColor(bg)
				c.Fill(r.Path())
				if g.outline != nil && !math.IsNaN(cl.v) && g.outline(cl.v) {
					in := vg.Rectangle{Min: vg.Point{X: r.Min.X + 1.5, Y: r.Min.Y + 1.5}, Max: vg.Point{X: r.Max.X - 1.5, Y: r.Max.Y - 1.5}}
					c.StrokeLines(cellOutline, []vg.Point{in.Min, {X: in.Min.X, Y: in.Max.Y}, in.Max, {X: in.Max.X, Y: in.Min.Y}, in.Min})
				}
				txt := cl.text
				if math.IsNaN(cl.v) {
					txt = "–"
				}
				w, h := r.Max.X-r.Min.X, r.Max.Y-r.Min.Y
				if sty.Width(txt)+4 <= w && sty.Height(txt) <= h {
					ts := sty
					ts.Color = textOn(bg)
					c.FillText(ts, r.Min.Add(r.Size().Scale(0.5)), txt)
				}
			})
		}
	}))
}

// unit maps v from [lo, hi] onto [0, 1], clamped; a flat range maps to the middle.
func unit(v, lo, hi float64) float64 {
	if !(hi > lo) {
		return 0.5
	}
	return math.Min(1, math.Max(0, (v-lo)/(hi-lo)))
}

// viridisStops are nine evenly spaced colours of the viridis map: perceptually
// uniform, readable in greyscale and by colour-blind readers.
var viridisStops = []color.NRGBA{
	{0x44, 0x01, 0x54, 255}, {0x47, 0x2d, 0x7b, 255}, {0x3b, 0x52, 0x8b, 255},
	{0x2c, 0x72, 0x8e, 255}, {0x21, 0x90, 0x8c, 255}, {0x27, 0xad, 0x81, 255},
	{0x5d, 0xc8, 0x63, 255}, {0xaa, 0xdc, 0x32, 255}, {0xfd, 0xe7, 0x25, 255},
}

// viridis returns the colour at t in [0, 1], interpolating between the stops.
func viridis(t float64) color.NRGBA {
	t = math.Min(1, math.Max(0, t))
	f := t * float64(len(viridisStops)-1)
	i := min(int(f), len(viridisStops)-2)
	u := f - float64(i)
	a, b := viridisStops[i], viridisStops[i+1]
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + u*(float64(y)-float64(x)))) }
	return color.NRGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 255}
}

// textOn picks black or white text, whichever contrasts more with bg (WCAG relative
// luminance).
func textOn(bg color.Color) color.Color {
	n := color.NRGBAModel.Convert(bg).(color.NRGBA)
	lin := func(c uint8) float64 {
		v := float64(c) / 255
		if v <= 0.04045 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	l := 0.2126*lin(n.R) + 0.7152*lin(n.G) + 0.0722*lin(n.B)
	// Contrast with white is 1.05/(l+0.05), with black (l+0.05)/0.05.
	if 1.05/(l+0.05) > (l+0.05)/0.05 {
		return white
	}
	return ink
}

// colorScale is the legend of a colour-coded value.
type colorScale struct {
	name   string
	lo, hi float64
	format func(float64) string
	marks  []scaleMark // extra labelled ticks, e.g. the threshold
}

type scaleMark struct {
	v     float64
	label string
}

// drawColorScale draws a horizontal colour bar with its name and end values along the
// bottom of c and returns the canvas above it.
func drawColorScale(c draw.Canvas, th theme, s colorScale) draw.Canvas {
	if math.IsInf(s.lo, 0) || math.IsInf(s.hi, 0) {
		return c // nothing drawn, nothing to explain
	}
	h := colorScaleHeight(th, len(s.marks) > 0)
	barH := th.px(0.8)
	name := th.small
	name.YAlign = draw.YCenter
	y0 := c.Min.Y + th.px(1.4) // bar bottom, above the tick labels
	nameW := name.Width(s.name) + th.px(0.6)
	x0 := c.Min.X + nameW
	barW := min(c.Max.X-x0-th.px(1.5), th.px(18))
	if barW < th.px(4) { // a very narrow chart: the bar goes under the name
		x0, barW = c.Min.X+th.px(1), c.Max.X-c.Min.X-th.px(2)
	}
	c.FillText(name, vg.Point{X: c.Min.X, Y: y0 + barH/2}, s.name)
	const steps = 48
	for i := range steps {
		r := vg.Rectangle{Min: vg.Point{X: x0 + barW*vg.Length(i)/steps, Y: y0},
			Max: vg.Point{X: x0 + barW*vg.Length(i+1)/steps + 0.3, Y: y0 + barH}}
		c.SetColor(viridis((float64(i) + 0.5) / steps))
		c.Fill(r.Path())
	}
	tick := th.small
	tick.XAlign, tick.YAlign = draw.XCenter, draw.YTop
	at := func(v float64) vg.Length { return x0 + barW*vg.Length(unit(v, s.lo, s.hi)) }
	lo, hi := s.format(s.lo), s.format(s.hi)
	if s.lo == s.hi {
		c.FillText(tick, vg.Point{X: x0 + barW/2, Y: y0 - th.px(0.2)}, lo)
	} else {
		l := tick
		l.XAlign = draw.XLeft
		c.FillText(l, vg.Point{X: x0, Y: y0 - th.px(0.2)}, lo)
		r := tick
		r.XAlign = draw.XRight
		c.FillText(r, vg.Point{X: x0 + barW, Y: y0 - th.px(0.2)}, hi)
	}
	for _, m := range s.marks {
		x := at(m.v)
		c.StrokeLine2(draw.LineStyle{Color: ink, Width: 1.5}, x, y0-th.px(0.15), x, y0+barH+th.px(0.15))
		mt := tick
		mt.YAlign = draw.YBottom
		c.FillText(mt, vg.Point{X: x, Y: y0 + barH + th.px(0.2)}, m.label)
	}
	return draw.Crop(c, 0, 0, h, 0)
}

// colorScaleHeight is what drawColorScale takes from the bottom of a canvas.
func colorScaleHeight(th theme, marks bool) vg.Length {
	if marks {
		return th.px(4.2)
	}
	return th.px(3)
}
