// Package chart draws Dedup Studio's charts as SVG with gonum/plot: S-curves of LSH shapes
// with the threshold marked (and, later, measured collision rates on them).
package chart

import (
	"bytes"
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

// palette is colour-blind safe (Okabe-Ito).
var palette = []color.RGBA{
	{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255}, {230, 159, 0, 255}, {86, 180, 233, 255},
}

// SCurve draws P(s) = 1-(1-s^r)^b for each shape over s in [0, 1], with a vertical line
// at the threshold t (skipped when t < 0), as an SVG of the given size in points.
func SCurve(shapes []lsh.Shape, t float64, width, height vg.Length) ([]byte, error) {
	p := plot.New()
	p.Title.Text = "Candidate probability by Jaccard similarity"
	p.X.Label.Text = "Jaccard similarity s"
	p.Y.Label.Text = "P(candidate)"
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	p.Add(plotter.NewGrid())
	p.Legend.Top = true // the S rises left to right: the upper left stays clear
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(8)
	for i, sh := range shapes {
		pts := make(plotter.XYs, 201)
		for j := range pts {
			s := float64(j) / 200
			pts[j] = plotter.XY{X: s, Y: lsh.Probability(s, sh)}
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		line.Color = palette[i%len(palette)]
		line.Width = vg.Points(2)
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("%d bands × %d rows", sh.Bands, sh.Rows), line)
	}
	if t >= 0 && t <= 1 {
		th, err := plotter.NewLine(plotter.XYs{{X: t, Y: 0}, {X: t, Y: 1}})
		if err != nil {
			return nil, err
		}
		th.Color = color.RGBA{80, 80, 80, 255}
		th.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(th)
		p.Legend.Add(fmt.Sprintf("threshold %.2f", t), th)
	}
	c := vgsvg.New(width, height)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
