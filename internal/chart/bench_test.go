package chart

import (
	"testing"
)

// dashboard is what one sweep dashboard page draws: the recall chart of a 200-
// configuration sweep, S-curves of two shapes with measured bins, per-category recall,
// the Jaccard histogram of 1,200 labeled pairs and a bands x rows heatmap.
func dashboard(b *testing.B) []func() (*Figure, error) {
	b.Helper()
	return []func() (*Figure, error){
		sampleTradeoff(200).Figure,
		sampleSCurves().Figure,
		sampleCategories().Figure,
		sampleHistogram().Figure,
		sampleHeatmap().Figure,
	}
}

// BenchmarkDashboardSVG builds and draws one dashboard's charts as SVG; bytes/op is
// the SVG written. The page should take well under 100 ms for all of them.
func BenchmarkDashboardSVG(b *testing.B) {
	charts := dashboard(b)
	var n int64
	for _, build := range charts {
		f, err := build()
		if err != nil {
			b.Fatal(err)
		}
		svg, err := f.SVG(Size{})
		if err != nil {
			b.Fatal(err)
		}
		n += int64(len(svg))
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, build := range charts {
			f, err := build()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.SVG(Size{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkDashboardPNG draws the same charts as PNG at twice the pixel density, the
// download format; it is not on the page's path.
func BenchmarkDashboardPNG(b *testing.B) {
	charts := dashboard(b)
	figs := make([]*Figure, len(charts))
	for i, build := range charts {
		f, err := build()
		if err != nil {
			b.Fatal(err)
		}
		figs[i] = f
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range figs {
			if _, err := f.PNG(Size{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkClusterSVG draws a cluster page's charts: a 30-document similarity matrix
// and a chain of 6.
func BenchmarkClusterSVG(b *testing.B) {
	m, ch := sampleMatrix(30), longChain(6)
	b.ReportAllocs()
	for b.Loop() {
		for _, build := range []func() (*Figure, error){m.Figure, ch.Figure} {
			f, err := build()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.SVG(Size{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
