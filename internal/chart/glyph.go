package chart

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// shape is a marker outline; series that share a chart differ by shape as well as
// colour, so they stay apart in greyscale and for colour-blind readers.
type shape int

const (
	disc shape = iota
	square
	triangle
	diamond
	downTriangle
)

var shapes = []shape{disc, square, triangle, diamond, downTriangle}

// path returns the outline of the shape centred on pt with "radius" r; each shape is
// scaled to look about as heavy as a disc of that radius.
func (s shape) path(pt vg.Point, r vg.Length) vg.Path {
	var p vg.Path
	poly := func(pts ...vg.Point) {
		p.Move(pts[0])
		for _, q := range pts[1:] {
			p.Line(q)
		}
		p.Close()
	}
	at := func(dx, dy float64) vg.Point {
		return vg.Point{X: pt.X + vg.Length(dx)*r, Y: pt.Y + vg.Length(dy)*r}
	}
	switch s {
	case square:
		h := 0.89
		poly(at(-h, -h), at(h, -h), at(h, h), at(-h, h))
	case triangle:
		k := 1.3
		poly(at(0, k), at(-k*math.Sqrt(3)/2, -k/2), at(k*math.Sqrt(3)/2, -k/2))
	case downTriangle:
		k := 1.3
		poly(at(0, -k), at(k*math.Sqrt(3)/2, k/2), at(-k*math.Sqrt(3)/2, k/2))
	case diamond:
		k := 1.25
		poly(at(0, k), at(k, 0), at(0, -k), at(-k, 0))
	default:
		p.Move(at(1, 0))
		p.Arc(pt, r, 0, 2*math.Pi)
		p.Close()
	}
	return p
}

// mark draws a marker: filled when fill is not nil, outlined when line has a colour.
func mark(c draw.Canvas, s shape, pt vg.Point, r vg.Length, fill color.Color, line draw.LineStyle) {
	p := s.path(pt, r)
	if fill != nil {
		c.SetColor(fill)
		c.Fill(p)
	}
	if line.Color != nil && line.Width > 0 {
		c.SetLineStyle(line)
		c.Stroke(p)
	}
}

// markThumb draws a marker in the middle of a legend thumbnail.
func markThumb(s shape, r vg.Length, fill color.Color, line draw.LineStyle) thumbFunc {
	return func(c *draw.Canvas) { mark(*c, s, c.Center(), r, fill, line) }
}

// layer is a plotter drawn with the plot's own data-to-canvas transform. Its glyph
// boxes (a square of half-side r around each point) make the plot keep room so that
// markers at the edge of the data are not drawn over the axes.
type layer struct {
	plot func(c draw.Canvas, p *plot.Plot)
	pts  plotter.XYs
	r    vg.Length
}

func (l layer) Plot(c draw.Canvas, p *plot.Plot) { l.plot(c, p) }

func (l layer) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	boxes := make([]plot.GlyphBox, len(l.pts))
	for i, pt := range l.pts {
		boxes[i] = plot.GlyphBox{X: p.X.Norm(pt.X), Y: p.Y.Norm(pt.Y),
			Rectangle: vg.Rectangle{Min: vg.Point{X: -l.r, Y: -l.r}, Max: vg.Point{X: l.r, Y: l.r}}}
	}
	return boxes
}
