// Package chart draws Dedup Studio's charts: the sweep dashboard (recall against
// false removals with the Pareto front, S-curves with measured collision rates,
// per-category recall, Jaccard histograms, a bands x rows heatmap) and the cluster
// pages (a pairwise similarity matrix, a chain drawing).
//
// Every chart is a pure function from a plain input struct to a *Figure, which writes
// what it shows three ways: SVG, PNG (gonum's vgimg) and CSV (Figure.Table), so a
// page can offer "download SVG / PNG / CSV" of exactly what is on screen. Nothing
// here does I/O.
//
// The SVG is drawn by gonum/plot onto this package's own SVG canvas, which paints with
// presentation attributes (fill="#0072b2") instead of style attributes. A strict
// Content-Security-Policy (style-src without 'unsafe-inline') blocks style attributes,
// which is why gonum's own SVG renders as black shapes when opened on its own; these
// SVGs render the same under any policy, even default-src 'none', and may be inlined
// into a page. They carry a viewBox, so they scale, and no <style>, <script>, image or
// external reference.
//
// Marks a script may select are groups with a class, data attributes and a <title>
// (the hover text); no element has an id, so several charts can share a page:
//
//	recall chart   <g class="point" data-config="ID" data-front="true|false"
//	                  [data-selected="true"] [data-recommended="true"]>
//	               <g class="baseline">
//	s-curves       <g class="measured" data-shape="20x5" data-bin="0.8-0.9">,
//	               <g class="knee" data-shape="20x5">
//	categories     <g class="category" data-category="NAME">
//	shape heatmap  <g class="cell" data-shape="20x5">
//	matrix         <g class="cell" data-docs="ID,ID">
//	chain          <g class="node" data-doc="ID">, <g class="link" data-docs="ID,ID">
//
// A recall-chart point's group holds an invisible disc larger than the mark, so a
// finger can hit it.
//
// Sizes are CSS pixels. The defaults read well at 480 px; at a phone's 390 px ask for
// Width 390 rather than shrinking a wider SVG, so text keeps its size.
//
// Colours are the Okabe-Ito palette (safe for the common colour-vision deficiencies)
// and viridis for colour scales; every series also differs by shape or line style, so
// none is told apart by colour alone.
package chart

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"slices"
	"strconv"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/dedupstudio/dedupstudio/internal/percent"
)

// Okabe-Ito colours by name: distinguishable with the common colour-vision
// deficiencies and in greyscale by lightness.
var (
	blue       = color.NRGBA{0, 114, 178, 255}
	vermillion = color.NRGBA{213, 94, 0, 255}
	green      = color.NRGBA{0, 158, 115, 255}
	purple     = color.NRGBA{204, 121, 167, 255}
	orange     = color.NRGBA{230, 159, 0, 255}
	sky        = color.NRGBA{86, 180, 233, 255}
	ink        = color.NRGBA{26, 26, 26, 255}
	axisGrey   = color.NRGBA{85, 85, 85, 255}
	gridGrey   = color.NRGBA{229, 229, 229, 255}
	mutedGrey  = color.NRGBA{110, 110, 110, 255}
	white      = color.NRGBA{255, 255, 255, 255}
	clear      = color.NRGBA{0, 0, 0, 0}
)

// palette is the order series take colours in.
var palette = []color.NRGBA{blue, vermillion, green, purple, orange, sky}

// faded returns c at the given opacity.
func faded(c color.NRGBA, a float64) color.NRGBA {
	c.A = uint8(math.Round(255 * a))
	return c
}

// Size is how large to draw a figure, in CSS pixels. A zero field takes the figure's
// default; Height left zero follows from Width and what the chart holds.
type Size struct {
	Width, Height float64
	// FontSize is the size of axis labels and legends (12 when zero); titles are a
	// little larger, tick labels a little smaller.
	FontSize float64
	// Scale is how many PNG pixels make one CSS pixel (2 when zero, sharp on
	// high-density screens). SVG ignores it.
	Scale float64
}

// Size limits keep a request parameter from asking for a gigapixel PNG.
const (
	minWidth, maxWidth = 160, 4000
	minFont, maxFont   = 6, 48
	maxScale           = 4
)

func (s Size) resolve(f *Figure) (Size, error) {
	if s.FontSize == 0 {
		s.FontSize = 12
	}
	if s.Width == 0 {
		s.Width = f.width
	}
	if s.Scale == 0 {
		s.Scale = 2
	}
	switch {
	case !(s.Width >= minWidth && s.Width <= maxWidth):
		return s, fmt.Errorf("chart %s: width %g px is outside %d-%d", f.name, s.Width, minWidth, maxWidth)
	case !(s.FontSize >= minFont && s.FontSize <= maxFont):
		return s, fmt.Errorf("chart %s: font size %g px is outside %d-%d", f.name, s.FontSize, minFont, maxFont)
	case !(s.Scale > 0 && s.Scale <= maxScale):
		return s, fmt.Errorf("chart %s: scale %g is outside (0, %d]", f.name, s.Scale, maxScale)
	}
	if s.Height == 0 {
		s.Height = math.Round(f.height(s.Width, newTheme(s.FontSize)))
	}
	if !(s.Height >= minWidth/2 && s.Height <= maxWidth) {
		return s, fmt.Errorf("chart %s: height %g px is outside %d-%d", f.name, s.Height, minWidth/2, maxWidth)
	}
	return s, nil
}

// Figure is one chart, ready to be written as SVG, PNG or CSV. It holds a copy of
// its input's values, so one Figure serves all three downloads the same data.
type Figure struct {
	name   string // for error messages: "recall", "s-curves", ...
	title  string
	width  float64
	height func(width float64, th theme) float64
	draw   func(c draw.Canvas, th theme)
	table  Table
}

// Title is the figure's title in plain words, also the SVG's accessible name.
func (f *Figure) Title() string { return f.title }

// Table is the data the figure shows, one row per mark, for download as CSV. It is
// a copy: changing it changes nothing the figure writes.
func (f *Figure) Table() Table {
	t := Table{Columns: slices.Clone(f.table.Columns), Rows: make([][]string, len(f.table.Rows))}
	for i, r := range f.table.Rows {
		t.Rows[i] = slices.Clone(r)
	}
	return t
}

// CSV is Table written as CSV.
func (f *Figure) CSV() []byte { return f.table.CSV() }

// SVG draws the figure as a standalone SVG document that may also be inlined into
// HTML: no styles, no scripts, a viewBox, a <title>.
func (f *Figure) SVG(sz Size) ([]byte, error) {
	sz, err := sz.resolve(f)
	if err != nil {
		return nil, err
	}
	c := newSVGCanvas(vg.Length(sz.Width), vg.Length(sz.Height), f.title)
	if err := f.render(c, sz); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("chart %s: %w", f.name, err)
	}
	return b.Bytes(), nil
}

// PNG draws the figure as a PNG of Width*Scale by Height*Scale pixels on white.
func (f *Figure) PNG(sz Size) ([]byte, error) {
	sz, err := sz.resolve(f)
	if err != nil {
		return nil, err
	}
	// vgimg measures in points (1/72 inch); this package's unit is the CSS pixel,
	// so 72*Scale dots per inch give Scale device pixels per CSS pixel.
	c := vgimg.NewWith(vgimg.UseWH(vg.Length(sz.Width), vg.Length(sz.Height)), vgimg.UseDPI(int(math.Round(72*sz.Scale))))
	if err := f.render(c, sz); err != nil {
		return nil, err
	}
	// Charts are mostly flat white, which the fastest deflate level already packs
	// well; the default level takes several times longer for a few percent.
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&b, c.Image()); err != nil {
		return nil, fmt.Errorf("chart %s: encode png: %w", f.name, err)
	}
	return b.Bytes(), nil
}

// render draws onto c. gonum reports impossible layouts (an axis with no room, a
// range it cannot tick) by panicking; that becomes an error naming the chart.
func (f *Figure) render(c vg.CanvasSizer, sz Size) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("chart %s: draw at %gx%g px: %v", f.name, sz.Width, sz.Height, r)
		}
	}()
	dc := draw.New(c)
	dc.SetColor(white)
	dc.Fill(dc.Rectangle.Path())
	f.draw(dc, newTheme(sz.FontSize))
	return nil
}

// theme holds the text styles for one font size.
type theme struct {
	fs                        float64
	title, label, tick, small text.Style
}

func newTheme(fs float64) theme {
	face := func(size float64, bold bool) font.Font {
		f := font.Font{Typeface: "Liberation", Variant: "Sans", Size: font.Length(size)}
		if bold {
			f.Weight = xfont.WeightBold
		}
		return f
	}
	st := func(size float64, bold bool) text.Style {
		return text.Style{Color: ink, Font: face(size, bold), XAlign: draw.XLeft, YAlign: draw.YBottom, Handler: plot.DefaultTextHandler}
	}
	return theme{
		fs:    fs,
		title: st(math.Round(fs*1.17), true),
		label: st(fs, false),
		tick:  st(math.Round(fs*0.92*2)/2, false),
		small: st(math.Round(fs*0.84*2)/2, false),
	}
}

// px turns a length given in multiples of the font size into canvas units.
func (th theme) px(em float64) vg.Length { return vg.Length(em * th.fs) }

// newPlot returns a plot with this package's look: sans text in the theme's sizes,
// grey axes without a frame, light grid lines, no title (figures draw their own).
func newPlot(th theme, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = nil // render painted the page white already
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = th.label.Font
		ax.Label.TextStyle.Color = ink
		ax.Tick.Label.Font = th.tick.Font
		ax.Tick.Label.Color = ink
		ax.Color = axisGrey
		ax.Tick.Color = axisGrey
		ax.Tick.Length = th.px(0.35)
		ax.Padding = th.px(0.3)
		ax.Label.Padding = th.px(0.25)
		ax.Tick.Marker = ticks{}
	}
	// gonum lifts vertical tick labels by the font's descent; aligning them that
	// much lower centres them on their ticks.
	lbl := p.Y.Tick.Label
	p.Y.Tick.Label.YAlign = draw.YAlignment(-0.5 - float64(lbl.FontExtents().Descent/lbl.Height("0")))
	return p
}

// grid returns light major grid lines; vertical only, horizontal only or both.
func grid(vertical, horizontal bool) *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical = draw.LineStyle{Color: gridGrey, Width: 1}
	g.Horizontal = draw.LineStyle{Color: gridGrey, Width: 1}
	if !vertical {
		g.Vertical.Color = nil
	}
	if !horizontal {
		g.Horizontal.Color = nil
	}
	return g
}

// drawTitle writes title at the top left of c and returns the canvas below it.
func drawTitle(c draw.Canvas, th theme, title string) draw.Canvas {
	if title == "" {
		return c
	}
	pad := th.px(0.5)
	sty := th.title
	sty.YAlign = draw.YTop
	c.FillText(sty, vg.Point{X: c.Min.X + pad, Y: c.Max.Y - pad}, title)
	return draw.Crop(c, 0, 0, 0, -(pad + sty.Height(title) + th.px(0.5)))
}

// margins is the white space kept around a figure's body; wider on the right, where
// half of the last tick label of a horizontal axis sticks out past its end.
func margins(c draw.Canvas, th theme) draw.Canvas {
	m := th.px(0.5)
	return draw.Crop(c, m, -2*m, m, 0)
}

// legendEntry is one item of a figure's legend.
type legendEntry struct {
	text   string
	thumbs []plot.Thumbnailer
}

// thumbFunc draws a legend thumbnail.
type thumbFunc func(c *draw.Canvas)

func (f thumbFunc) Thumbnail(c *draw.Canvas) { f(c) }

// legendLayout places entries left to right, wrapping at the canvas width, and
// returns each entry's origin relative to the top left and the total height. Legends
// sit under the plot, where they cover no data.
func legendLayout(entries []legendEntry, th theme, width vg.Length) ([]vg.Point, vg.Length) {
	thumbW, gap, sep, lineH := th.px(1.7), th.px(0.4), th.px(1.2), th.px(1.5)
	pts := make([]vg.Point, len(entries))
	var x vg.Length
	y := vg.Length(0)
	for i, e := range entries {
		w := thumbW + gap + th.small.Width(e.text)
		if x > 0 && x+w > width {
			x, y = 0, y+lineH
		}
		pts[i] = vg.Point{X: x, Y: y}
		x += w + sep
	}
	if len(entries) == 0 {
		return pts, 0
	}
	return pts, y + lineH
}

// drawLegend draws the legend along the bottom of c and returns the canvas above it.
func drawLegend(c draw.Canvas, th theme, entries []legendEntry) draw.Canvas {
	if len(entries) == 0 {
		return c
	}
	pts, h := legendLayout(entries, th, c.Max.X-c.Min.X)
	thumbW, gap, lineH := th.px(1.7), th.px(0.4), th.px(1.5)
	top := c.Min.Y + h
	sty := th.small
	sty.YAlign = draw.YCenter
	for i, e := range entries {
		x := c.Min.X + pts[i].X
		yc := top - pts[i].Y - lineH/2
		icon := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: yc - th.px(0.45)}, Max: vg.Point{X: x + thumbW, Y: yc + th.px(0.45)}}}
		for _, t := range e.thumbs {
			t.Thumbnail(&icon)
		}
		c.FillText(sty, vg.Point{X: x + thumbW + gap, Y: yc}, e.text)
	}
	return draw.Crop(c, 0, 0, h+th.px(0.4), 0)
}

// legendHeight is what drawLegend takes from the bottom of a canvas of this width.
func legendHeight(entries []legendEntry, th theme, width vg.Length) vg.Length {
	if len(entries) == 0 {
		return 0
	}
	_, h := legendLayout(entries, th, width-th.px(1))
	return h + th.px(0.4)
}

// lineThumb draws a horizontal line across a legend thumbnail.
func lineThumb(sty draw.LineStyle) thumbFunc {
	return func(c *draw.Canvas) {
		y := c.Center().Y
		c.StrokeLine2(sty, c.Min.X, y, c.Max.X, y)
	}
}

// boxThumb fills a legend thumbnail with a colour and an optional outline.
func boxThumb(fill color.Color, line draw.LineStyle) thumbFunc {
	return func(c *draw.Canvas) {
		r := vg.Rectangle{Min: vg.Point{X: c.Min.X + 3, Y: c.Min.Y}, Max: vg.Point{X: c.Max.X - 3, Y: c.Max.Y}}
		if fill != nil {
			c.SetColor(fill)
			c.Fill(r.Path())
		}
		if line.Color != nil && line.Width > 0 {
			c.StrokeLines(line, []vg.Point{r.Min, {X: r.Min.X, Y: r.Max.Y}, r.Max, {X: r.Max.X, Y: r.Min.Y}, r.Min})
		}
	}
}

// ticks puts about five labelled ticks on an axis at round steps (1, 2, 2.5 or 5
// times a power of ten), with as many decimals as the labels need and no more.
// percent writes fractions as percentages; integer keeps steps whole (counts).
type ticks struct{ percent, integer bool }

func (t ticks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return nil
	}
	step := niceCeil((hi - lo) / 5)
	if t.integer {
		step = math.Max(1, math.Round(step))
	}
	var vals []float64
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+step*1e-9; k++ {
		vals = append(vals, k*step)
	}
	scale := 1.0
	if t.percent {
		scale = 100
	}
	d := 0
	for ; d < 6; d++ {
		exact := true
		for _, v := range vals {
			x := v * scale * math.Pow10(d)
			exact = exact && math.Abs(x-math.Round(x)) < 1e-6*math.Max(1, math.Abs(x))
		}
		if exact {
			break
		}
	}
	out := make([]plot.Tick, len(vals))
	for i, v := range vals {
		if v == 0 {
			v = 0 // no "-0"
		}
		l := strconv.FormatFloat(v*scale, 'f', d, 64)
		if t.percent {
			l += "%"
		}
		out[i] = plot.Tick{Value: v, Label: l}
	}
	return out
}

// Estimate is a measured value with its 95% interval and sample size. The interval
// is drawn only when Lo <= Value <= Hi, so NaN (or the zero value's 0, 0 around a
// non-zero Value) means none. A Value of NaN means there is nothing to estimate
// from (N = 0): the mark is left out of the drawing and kept in the table.
type Estimate struct {
	Value, Lo, Hi float64
	N             int
}

// Point returns an estimate without an interval.
func Point(v float64) Estimate { return Estimate{Value: v, Lo: math.NaN(), Hi: math.NaN()} }

// hasValue reports whether the estimate can be drawn.
func (e Estimate) hasValue() bool { return !math.IsNaN(e.Value) && !math.IsInf(e.Value, 0) }

// hasInterval reports whether the estimate has an interval to draw.
func (e Estimate) hasInterval() bool {
	return e.hasValue() && !math.IsInf(e.Lo, 0) && !math.IsInf(e.Hi, 0) && e.Lo <= e.Value && e.Value <= e.Hi
}

// checkRate says what is wrong with an estimate of a rate, or nil.
func (e Estimate) checkRate() error {
	if math.IsInf(e.Value, 0) || (!math.IsNaN(e.Value) && (e.Value < 0 || e.Value > 1)) {
		return fmt.Errorf("value %g is not a rate in [0, 1]", e.Value)
	}
	if e.hasInterval() && (e.Lo < 0 || e.Hi > 1) {
		return fmt.Errorf("interval [%g, %g] is not within [0, 1]", e.Lo, e.Hi)
	}
	if e.N < 0 {
		return fmt.Errorf("sample size %d is negative", e.N)
	}
	return nil
}

// describe writes an estimate of a rate for a tooltip: "93% (88-96%, n=120)".
func (e Estimate) describe() string {
	if !e.hasValue() {
		return "no estimate (n=" + strconv.Itoa(e.N) + ")"
	}
	s := percent.Short(e.Value)
	var in []string
	if e.hasInterval() {
		in = append(in, "95% interval "+percent.Short(e.Lo)+" to "+percent.Short(e.Hi))
	}
	if e.N > 0 {
		in = append(in, "n="+strconv.Itoa(e.N))
	}
	if len(in) > 0 {
		s += " (" + joinComma(in) + ")"
	}
	return s
}

func joinComma(s []string) string { return strings.Join(s, ", ") }

// errorBar draws a line from lo to hi with short caps, horizontal when horizontal is
// true; values are canvas coordinates.
func errorBar(c draw.Canvas, sty draw.LineStyle, horizontal bool, at, lo, hi, capHalf vg.Length) {
	if horizontal {
		c.StrokeLine2(sty, lo, at, hi, at)
		c.StrokeLine2(sty, lo, at-capHalf, lo, at+capHalf)
		c.StrokeLine2(sty, hi, at-capHalf, hi, at+capHalf)
		return
	}
	c.StrokeLine2(sty, at, lo, at, hi)
	c.StrokeLine2(sty, at-capHalf, lo, at+capHalf, lo)
	c.StrokeLine2(sty, at-capHalf, hi, at+capHalf, hi)
}

// plotterFunc adapts a function to plot.Plotter, for marks drawn with the plot's
// data-to-canvas transform.
type plotterFunc func(c draw.Canvas, p *plot.Plot)

func (f plotterFunc) Plot(c draw.Canvas, p *plot.Plot) { f(c, p) }
