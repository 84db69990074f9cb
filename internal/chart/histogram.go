package chart

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// JaccardHistogram draws how the exact Jaccard similarity of labeled duplicates and
// of labeled non-duplicates is spread, with the threshold: the further apart the two
// humps and the cleaner the threshold falls between them, the easier the decision.
// Duplicates are filled bars, non-duplicates an outline, so the two series differ
// without colour.
type JaccardHistogram struct {
	Title         string // "Exact Jaccard of labeled pairs" when empty
	Duplicates    []float64
	NonDuplicates []float64
	// Threshold in (0, 1] is drawn; 0 or NaN draws none.
	Threshold float64
	// Bins splits [0, 1] into this many equal bins (20 when 0); the last bin holds 1.
	Bins int
	// Share draws each series as a share of its own pairs rather than as counts, for
	// comparing shapes when one class far outnumbers the other.
	Share bool
}

// Figure draws the chart. It fails on a similarity outside [0, 1] (naming the series
// and index), a threshold outside [0, 1] or fewer than 1 or more than 200 bins.
func (h JaccardHistogram) Figure() (*Figure, error) {
	bins := cmp.Or(h.Bins, 20)
	if bins < 1 || bins > 200 {
		return nil, fmt.Errorf("jaccard histogram: %d bins is outside 1-200", h.Bins)
	}
	if math.IsInf(h.Threshold, 0) || h.Threshold < 0 || h.Threshold > 1 {
		return nil, fmt.Errorf("jaccard histogram: threshold %g is outside [0, 1]", h.Threshold)
	}
	count := func(what string, xs []float64) ([]int, error) {
		n := make([]int, bins)
		for i, x := range xs {
			if !(x >= 0 && x <= 1) {
				return nil, fmt.Errorf("jaccard histogram: %s %d: similarity %g is outside [0, 1]", what, i, x)
			}
			n[min(int(x*float64(bins)), bins-1)]++
		}
		return n, nil
	}
	dup, err := count("duplicate", h.Duplicates)
	if err != nil {
		return nil, err
	}
	non, err := count("non-duplicate", h.NonDuplicates)
	if err != nil {
		return nil, err
	}
	nd, nn := len(h.Duplicates), len(h.NonDuplicates)
	share := func(k, n int) float64 {
		if n == 0 {
			return math.NaN()
		}
		return float64(k) / float64(n)
	}
	title := cmp.Or(h.Title, "Exact Jaccard of labeled pairs")
	tab := Table{Columns: []string{"bin_lo", "bin_hi", "duplicates", "non_duplicates", "duplicates_share", "non_duplicates_share", "threshold"}}
	thr := math.NaN()
	if hasThreshold(h.Threshold) {
		thr = h.Threshold
	}
	for i := range bins {
		tab.Rows = append(tab.Rows, []string{num(float64(i) / float64(bins)), num(float64(i+1) / float64(bins)),
			intCell(dup[i]), intCell(non[i]), num(share(dup[i], nd)), num(share(non[i], nn)), num(thr)})
	}
	hv := h
	hv.Duplicates, hv.NonDuplicates = nil, nil // the counts are all the drawing needs
	return &Figure{
		name:   "jaccard histogram",
		title:  title,
		width:  480,
		height: func(w float64, th theme) float64 { return math.Max(w*0.66, 15*th.fs) },
		draw: func(c draw.Canvas, th theme) {
			c = drawTitle(margins(c, th), th, title)
			hv.draw(c, th, slices.Clone(dup), slices.Clone(non), nd, nn)
		},
		table: tab,
	}, nil
}

func (h JaccardHistogram) draw(c draw.Canvas, th theme, dup, non []int, nd, nn int) {
	bins := len(dup)
	dupFill := faded(blue, 0.7)
	nonLine := draw.LineStyle{Color: vermillion, Width: 2}
	threshSty := draw.LineStyle{Color: ink, Width: 1.25, Dashes: []vg.Length{5, 3}}
	legend := []legendEntry{
		{"duplicates (n=" + strconv.Itoa(nd) + ")", []plot.Thumbnailer{boxThumb(dupFill, draw.LineStyle{})}},
		{"non-duplicates (n=" + strconv.Itoa(nn) + ")", []plot.Thumbnailer{boxThumb(nil, nonLine)}},
	}
	if hasThreshold(h.Threshold) {
		legend = append(legend, legendEntry{"threshold " + strconv.FormatFloat(h.Threshold, 'f', 2, 64), []plot.Thumbnailer{lineThumb(threshSty)}})
	}
	c = drawLegend(c, th, legend)

	ylabel := "Labeled pairs"
	height := func(k, n int) float64 { return float64(k) }
	if h.Share {
		ylabel = "Share of the class's pairs"
		height = func(k, n int) float64 {
			if n == 0 {
				return 0
			}
			return float64(k) / float64(n)
		}
	}
	ymax := 0.0
	for i := range bins {
		ymax = math.Max(ymax, math.Max(height(dup[i], nd), height(non[i], nn)))
	}
	p := newPlot(th, "Exact Jaccard similarity", ylabel)
	if h.Share {
		p.Y.Tick.Marker = ticks{percent: true}
		p.Y.Max = roundUp(math.Max(ymax, 0.01))
	} else {
		p.Y.Tick.Marker = ticks{integer: true}
		p.Y.Max = roundUp(math.Max(ymax, 1))
	}
	p.X.Min, p.X.Max, p.Y.Min = 0, 1, 0
	p.Add(grid(false, true))
	if nd+nn == 0 {
		p.Add(emptyNote(th, "No labeled pairs yet: label some pairs first."))
	}
	p.Add(plotterFunc(func(c draw.Canvas, p *plot.Plot) {
		tx, ty := p.Transforms(&c)
		edge := func(i int) vg.Length { return tx(float64(i) / float64(bins)) }
		for i := range bins {
			if dup[i] == 0 {
				continue
			}
			r := vg.Rectangle{Min: vg.Point{X: edge(i) + 0.5, Y: ty(0)}, Max: vg.Point{X: edge(i+1) - 0.5, Y: ty(height(dup[i], nd))}}
			c.SetColor(dupFill)
			c.Fill(r.Path())
		}
		// Non-duplicates as one outline: up and down at bin edges, flat across bins.
		var line []vg.Point
		for i := range bins {
			y := ty(height(non[i], nn))
			if len(line) == 0 {
				line = append(line, vg.Point{X: edge(i), Y: ty(0)})
			}
			line = append(line, vg.Point{X: edge(i), Y: y}, vg.Point{X: edge(i + 1), Y: y})
		}
		line = append(line, vg.Point{X: edge(bins), Y: ty(0)})
		if nn > 0 {
			c.StrokeLines(nonLine, line)
		}
		if hasThreshold(h.Threshold) {
			x := tx(h.Threshold)
			c.StrokeLine2(threshSty, x, c.Min.Y, x, c.Max.Y)
		}
	}))
	p.Draw(c)
}
