package chart

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/dedupstudio/dedupstudio/internal/percent"
)

// CategoryRecall draws the recall of one configuration per category of duplicate
// (the campaign's own categories, in the order given) as horizontal bars with their
// 95% interval. Each bar has its name and sample size on the line above it, which
// keeps long names readable on a phone.
type CategoryRecall struct {
	Title      string // "Recall by category" when empty
	Categories []Category
}

// Category is one category's recall; Recall.N is its number of labeled duplicates.
type Category struct {
	Name   string
	Recall Estimate
}

// Figure draws the chart. It fails on an unnamed category, a repeated name or a rate
// outside [0, 1].
func (cr CategoryRecall) Figure() (*Figure, error) {
	cats := slices.Clone(cr.Categories)
	seen := map[string]bool{}
	for i, c := range cats {
		if err := checkName(seen, i, c.Name, "category recall", "category"); err != nil {
			return nil, err
		}
		if err := c.Recall.checkRate(); err != nil {
			return nil, fmt.Errorf("category recall: category %d (%q): %w", i, c.Name, err)
		}
	}
	title := cmp.Or(cr.Title, "Recall by category")
	tab := Table{Columns: append([]string{"category"}, estimateColumns("recall")...)}
	for _, c := range cats {
		tab.Rows = append(tab.Rows, append([]string{textCell(c.Name)}, estimateCells(c.Recall)...))
	}
	return rowsFigure("category recall", title, len(cats), tab, func(c draw.Canvas, th theme) { drawCategories(c, th, cats) }), nil
}

func drawCategories(c draw.Canvas, th theme, cats []Category) {
	barSty := draw.LineStyle{Color: ink, Width: 1.25}
	anyInterval := false
	for _, ct := range cats {
		anyInterval = anyInterval || ct.Recall.hasInterval()
	}
	var legend []legendEntry
	if len(cats) > 0 {
		legend = append(legend, legendEntry{"recall", []plot.Thumbnailer{boxThumb(blue, draw.LineStyle{})}})
	}
	if anyInterval {
		legend = append(legend, legendEntry{"95% interval", []plot.Thumbnailer{thumbFunc(func(c *draw.Canvas) {
			errorBar(*c, barSty, true, c.Center().Y, c.Min.X+2, c.Max.X-2, th.px(0.3))
		})}})
	}
	c = drawLegend(c, th, legend)
	// Room for half of the "0%" tick label left of the axis's start.
	c = draw.Crop(c, th.px(0.9), -th.px(0.9), 0, 0)

	n := len(cats)
	p := rowsPlot(th, "Recall", n, "No categories to show yet.")
	p.X.Tick.Marker = ticks{percent: true}
	p.X.Min, p.X.Max = 0, 1
	p.Add(plotterFunc(func(c draw.Canvas, p *plot.Plot) {
		tx, ty := p.Transforms(&c)
		label, value, gap := rowText(th)
		for k, ct := range cats {
			i := float64(n - 1 - k) // the first category on top
			// Each row: the name and sample size on the left of a text line, the
			// value and interval on its right, the bar under them.
			val := valueLine(ct.Recall)
			name := fitText(label, ct.Name+" (n="+strconv.Itoa(ct.Recall.N)+")", c.Max.X-c.Min.X-value.Width(val)-gap)
			h := hook{attrs: [][2]string{{"class", "category"}, {"data-category", ct.Name}},
				title: ct.Name + ": recall " + ct.Recall.describe()}
			withHook(c, h, func() {
				base := ty(i + 0.56)
				c.FillText(label, vg.Point{X: tx(0), Y: base}, name)
				if !ct.Recall.hasValue() {
					note := value
					note.Color = mutedGrey
					c.FillText(note, vg.Point{X: c.Max.X, Y: base}, "no labeled duplicates")
					return
				}
				c.FillText(value, vg.Point{X: c.Max.X, Y: base}, val)
				lo, hi := ty(i+0.1), ty(i+0.46)
				bar := vg.Rectangle{Min: vg.Point{X: tx(0), Y: lo}, Max: vg.Point{X: tx(ct.Recall.Value), Y: hi}}
				c.SetColor(blue)
				c.Fill(bar.Path())
				if ct.Recall.hasInterval() {
					errorBar(c, barSty, true, (lo+hi)/2, tx(ct.Recall.Lo), tx(ct.Recall.Hi), (hi-lo)*0.32)
				}
			})
		}
	}))
	p.Draw(c)
}

// valueLine is a rate with its interval for a bar's text line: "88% (78-94%)".
func valueLine(e Estimate) string {
	if !e.hasValue() {
		return ""
	}
	if !e.hasInterval() {
		return percent.Short(e.Value)
	}
	return percent.Short(e.Value) + " (" + strings.TrimSuffix(percent.Short(e.Lo), "%") + "–" + percent.Short(e.Hi) + ")"
}

// fitText shortens s with an ellipsis until it is at most w wide in sty.
func fitText(sty draw.TextStyle, s string, w vg.Length) string {
	if sty.Width(s) <= w {
		return s
	}
	r := []rune(s)
	for len(r) > 1 {
		r = r[:len(r)-1]
		if t := string(r) + "…"; sty.Width(t) <= w {
			return t
		}
	}
	return "…"
}
