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

// RateRatios draws, for each group of a dataset (a source, a language), the ratio of
// its rate (e.g. of documents removed) to the rest of the dataset's, with its 95%
// interval, on a logarithmic axis with a line at 1 (no difference): a forest plot. A
// group flagged as disproportionate (by a test the caller ran) is drawn in vermillion
// with a diamond, the others in blue with a circle, so the two differ without colour.
// Hook: <g class="group" data-group="NAME">.
type RateRatios struct {
	Title   string // "Rate ratio against the rest" when empty
	Measure string // the axis label: "Removal rate ratio (group / rest)" when empty
	Groups  []RatioGroup
}

// RatioGroup is one group's ratio. NaN (or a ratio of 0, which a log axis cannot
// place) is written as text only.
type RatioGroup struct {
	Name          string
	Ratio, Lo, Hi float64
	N             int // the group's size
	Flagged       bool
	Note          string // e.g. "12% removed" for the row's text line
}

// Figure draws the chart. It fails on an unnamed or repeated group or a negative or
// infinite ratio.
func (rr RateRatios) Figure() (*Figure, error) {
	groups := slices.Clone(rr.Groups)
	seen := map[string]bool{}
	lo, hi := 1.0, 1.0
	for i, g := range groups {
		if err := checkName(seen, i, g.Name, "rate ratios", "group"); err != nil {
			return nil, err
		}
		for _, v := range []float64{g.Ratio, g.Lo, g.Hi} {
			if v < 0 || math.IsInf(v, 0) {
				return nil, fmt.Errorf("rate ratios: group %d (%q): %g is not a ratio", i, g.Name, v)
			}
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	// Whole powers of ten around every value, at least 0.1 to 10.
	lo = math.Min(0.1, math.Pow(10, math.Floor(math.Log10(lo))))
	hi = math.Max(10, math.Pow(10, math.Ceil(math.Log10(hi))))
	title := cmp.Or(rr.Title, "Rate ratio against the rest")
	measure := cmp.Or(rr.Measure, "Removal rate ratio (group / rest)")
	tab := Table{Columns: []string{"group", "n", "ratio", "ratio_lo", "ratio_hi", "flagged", "note"}}
	for _, g := range groups {
		tab.Rows = append(tab.Rows, []string{textCell(g.Name), intCell(g.N), num(g.Ratio), num(g.Lo), num(g.Hi), boolCell(g.Flagged), textCell(g.Note)})
	}
	return rowsFigure("rate ratios", title, len(groups), tab, func(c draw.Canvas, th theme) { drawRatios(c, th, groups, measure, lo, hi) }), nil
}

// ratioTicks labels a log axis at 1, 2 and 5 times the powers of ten.
type ratioTicks struct{}

func (ratioTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m != 2 || hi/lo <= 100 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			out = append(out, t)
		}
	}
	return out
}

func drawRatios(c draw.Canvas, th theme, groups []RatioGroup, measure string, lo, hi float64) {
	barSty := draw.LineStyle{Color: ink, Width: 1.25}
	refSty := draw.LineStyle{Color: axisGrey, Width: 1, Dashes: []vg.Length{th.px(0.3), th.px(0.2)}}
	r := th.px(0.32)
	c = drawLegend(c, th, []legendEntry{
		{"as the rest", []plot.Thumbnailer{markThumb(disc, r, blue, draw.LineStyle{})}},
		{"flagged", []plot.Thumbnailer{markThumb(diamond, r*1.2, vermillion, draw.LineStyle{})}},
		{"95% interval", []plot.Thumbnailer{thumbFunc(func(c *draw.Canvas) {
			errorBar(*c, barSty, true, c.Center().Y, c.Min.X+2, c.Max.X-2, th.px(0.3))
		})}},
	})
	n := len(groups)
	p := rowsPlot(th, measure, n, "No groups to compare.")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = ratioTicks{}
	p.X.Min, p.X.Max = lo, hi
	p.Add(plotterFunc(func(c draw.Canvas, p *plot.Plot) {
		tx, ty := p.Transforms(&c)
		c.StrokeLine2(refSty, tx(1), c.Min.Y, tx(1), c.Max.Y)
		label, value, gap := rowText(th)
		for k, g := range groups {
			i := float64(n - 1 - k) // the first group on top
			val := ratioText(g)
			name := fitText(label, g.Name+" (n="+strconv.Itoa(g.N)+")", c.Max.X-c.Min.X-value.Width(val)-gap)
			h := hook{attrs: [][2]string{{"class", "group"}, {"data-group", g.Name}}, title: g.Name + ": " + val}
			withHook(c, h, func() {
				base := ty(i + 0.56)
				c.FillText(label, vg.Point{X: c.Min.X, Y: base}, name)
				c.FillText(value, vg.Point{X: c.Max.X, Y: base}, val)
				y := ty(i + 0.28)
				if g.Lo > 0 && g.Hi >= g.Lo {
					errorBar(c, barSty, true, y, tx(math.Max(g.Lo, lo)), tx(math.Min(g.Hi, hi)), th.px(0.3))
				}
				if g.Ratio > 0 {
					at := vg.Point{X: tx(math.Min(math.Max(g.Ratio, lo), hi)), Y: y}
					if g.Flagged {
						mark(c, diamond, at, r*1.2, vermillion, draw.LineStyle{Color: ink, Width: 0.75})
					} else {
						mark(c, disc, at, r, blue, draw.LineStyle{Color: ink, Width: 0.75})
					}
				}
			})
		}
	}))
	p.Draw(c)
}

// ratioText is a group's line: "2.1 (1.4–3.2) · 12% removed".
func ratioText(g RatioGroup) string {
	s := "no comparison"
	if !math.IsNaN(g.Ratio) {
		s = strconv.FormatFloat(g.Ratio, 'g', 2, 64)
		if g.Lo > 0 && g.Hi >= g.Lo {
			s += " (" + strconv.FormatFloat(g.Lo, 'g', 2, 64) + "–" + strconv.FormatFloat(g.Hi, 'g', 2, 64) + ")"
		}
	}
	if g.Note != "" {
		s += " · " + g.Note
	}
	return s
}
