package chart

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Charts of one row per item (CategoryRecall, RateRatios): each row a text line, its
// name on the left and its value on the right, with its mark under it, the first row on
// top. The pieces they share are here.

// rowsFigure is a row chart's figure: 480 pixels wide, 2.9 lines a row, the title over
// what body draws.
func rowsFigure(name, title string, rows int, tab Table, body func(c draw.Canvas, th theme)) *Figure {
	return &Figure{
		name:  name,
		title: title,
		width: 480,
		height: func(_ float64, th theme) float64 {
			return float64(th.px(2.9*float64(max(rows, 1)) + 8.5))
		},
		draw: func(c draw.Canvas, th theme) {
			body(drawTitle(margins(c, th), th, title), th)
		},
		table: tab,
	}
}

// rowsPlot is the plot under n rows: no y axis, a row a unit, a vertical grid, and
// empty as a note when there is no row.
func rowsPlot(th theme, xLabel string, n int, empty string) *plot.Plot {
	p := newPlot(th, xLabel, "")
	p.HideY()
	p.Y.Min, p.Y.Max = 0, float64(max(n, 1))
	p.Y.Padding = 0
	p.Add(grid(true, false))
	if n == 0 {
		p.Add(emptyNote(th, empty))
	}
	return p
}

// rowText is a row's text styles: the name's (left) and the value's (right), both on
// the line's baseline, and the least gap between them.
func rowText(th theme) (name, value draw.TextStyle, gap vg.Length) {
	name = th.label
	name.YAlign = draw.YBottom
	value = name
	value.XAlign = draw.XRight
	return name, value, th.px(1)
}

// checkName fails on row i's empty or repeated name (seen holds the names before it);
// chart and row name them in the message: "category recall", "category".
func checkName(seen map[string]bool, i int, name, chart, row string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s: %s %d has no name", chart, row, i)
	case seen[name]:
		return fmt.Errorf("%s: %s %d: %q appears twice", chart, row, i, name)
	}
	seen[name] = true
	return nil
}

// checkID fails on item i's empty ID, or one an earlier item has (ids: ID to index);
// chart and item name them in the message: "recall chart", "point".
func checkID(ids map[string]int, i int, id, chart, item string) error {
	if id == "" {
		return fmt.Errorf("%s: %s %d has no ID", chart, item, i)
	}
	if j, dup := ids[id]; dup {
		return fmt.Errorf("%s: %s %d (%q): ID also used by %s %d", chart, item, i, id, item, j)
	}
	ids[id] = i
	return nil
}
