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

// SimilarityMatrix draws the pairwise similarity of a cluster's documents, coloured
// on a fixed 0-1 scale with the values written in the cells where they fit. Rows are
// numbered and named; columns carry the same numbers. Cells at or above the
// threshold are outlined, so a member that reached the cluster only through others
// (its row has no outlined cell in the keeper's column) stands out without colour.
type SimilarityMatrix struct {
	Title string // "Pairwise similarity" when empty
	Docs  []MatrixDoc
	// Similarity is len(Docs) x len(Docs) and symmetric; NaN is unknown. The diagonal
	// is not drawn.
	Similarity [][]float64
	// Threshold in (0, 1] is marked on the scale and outlines cells; 0 or NaN, none.
	Threshold float64
	// Measure names the similarity: "Exact Jaccard" when empty.
	Measure string
}

// MatrixDoc is one document of the matrix.
type MatrixDoc struct {
	ID     string // written as data-docs="ID,ID" on each cell
	Label  string // a name a person recognises; the ID when empty
	Keeper bool
}

// maxMatrixDocs bounds the matrix to what can be read (and keeps the SVG small).
const maxMatrixDocs = 80

func (d MatrixDoc) name() string { return cmp.Or(d.Label, d.ID) }

// Figure draws the matrix. It fails on more than 80 documents, a matrix whose size
// does not match Docs, a value outside [0, 1] or an asymmetric pair, naming the cell.
func (m SimilarityMatrix) Figure() (*Figure, error) {
	n := len(m.Docs)
	if n > maxMatrixDocs {
		return nil, fmt.Errorf("similarity matrix: %d documents are more than the %d that can be read; pass the ones to show", n, maxMatrixDocs)
	}
	if len(m.Similarity) != n {
		return nil, fmt.Errorf("similarity matrix: %d rows of similarities for %d documents", len(m.Similarity), n)
	}
	ids := map[string]int{}
	for i, d := range m.Docs {
		if d.ID == "" {
			return nil, fmt.Errorf("similarity matrix: document %d has no ID", i)
		}
		if j, dup := ids[d.ID]; dup {
			return nil, fmt.Errorf("similarity matrix: document %d (%q): ID also used by document %d", i, d.ID, j)
		}
		ids[d.ID] = i
	}
	sim := make([][]float64, n)
	for i, row := range m.Similarity {
		if len(row) != n {
			return nil, fmt.Errorf("similarity matrix: row %d has %d values for %d documents", i, len(row), n)
		}
		sim[i] = slices.Clone(row)
		for j, v := range row {
			if i == j {
				continue
			}
			if math.IsInf(v, 0) || v < 0 || v > 1 {
				return nil, fmt.Errorf("similarity matrix: cell %d,%d (%q, %q): %g is outside [0, 1]", i, j, m.Docs[i].ID, m.Docs[j].ID, v)
			}
			if w := m.Similarity[j][i]; len(m.Similarity[j]) == n && !(v == w || math.IsNaN(v) && math.IsNaN(w)) {
				return nil, fmt.Errorf("similarity matrix: cell %d,%d is %g but cell %d,%d is %g", i, j, v, j, i, w)
			}
		}
	}
	if math.IsInf(m.Threshold, 0) || m.Threshold < 0 || m.Threshold > 1 {
		return nil, fmt.Errorf("similarity matrix: threshold %g is outside [0, 1]", m.Threshold)
	}
	docs := slices.Clone(m.Docs)
	measure := cmp.Or(m.Measure, "Exact Jaccard")
	title := cmp.Or(m.Title, "Pairwise similarity")
	tab := Table{Columns: []string{"doc_a", "label_a", "doc_b", "label_b", columnName(measure), "at_or_above_threshold"}}
	for i := range n {
		for j := i + 1; j < n; j++ {
			above := ""
			if hasThreshold(m.Threshold) && !math.IsNaN(sim[i][j]) {
				above = boolCell(sim[i][j] >= m.Threshold)
			}
			tab.Rows = append(tab.Rows, []string{textCell(docs[i].ID), textCell(docs[i].Label), textCell(docs[j].ID), textCell(docs[j].Label), num(sim[i][j]), above})
		}
	}
	rowLabel := func(i int) string {
		s := strconv.Itoa(i+1) + "  " + docs[i].name()
		if docs[i].Keeper {
			s += " (keeper)"
		}
		return s
	}
	// layout decides, for a width, how big the square cells are and how rows are
	// labelled: by number and name while rows stay tall enough to read a name, by
	// number alone (every k-th when cells get small) when the matrix is larger. The
	// names are always in the hover text and the CSV.
	type layout struct {
		cell               vg.Length
		names              bool
		labelW             vg.Length
		rowEvery, colEvery int
	}
	layoutFor := func(w vg.Length, th theme) layout {
		sty := th.tick
		nn := vg.Length(max(n, 1))
		extra := th.px(2.5) // margins and the gap between labels and cells
		var nameW vg.Length
		for i := range n {
			nameW = max(nameW, sty.Width(fitText(sty, rowLabel(i), w*0.42)))
		}
		if cell := (w - nameW - extra) / nn; cell >= th.px(1.3) {
			return layout{cell: min(cell, th.px(4)), names: true, labelW: nameW, rowEvery: 1, colEvery: max(1, int(math.Ceil(float64((sty.Width(strconv.Itoa(n))+th.px(0.3))/min(cell, th.px(4))))))}
		}
		numW := sty.Width(strconv.Itoa(n))
		cell := max((w-numW-extra)/nn, 1)
		every := func(need vg.Length) int { return max(1, int(math.Ceil(float64(need/cell)))) }
		return layout{cell: cell, labelW: numW, rowEvery: every(th.px(1.2)), colEvery: every(numW + th.px(0.4))}
	}
	return &Figure{
		name:  "similarity matrix",
		title: title,
		width: 480,
		height: func(w float64, th theme) float64 {
			l := layoutFor(vg.Length(w), th)
			return float64(l.cell*vg.Length(max(n, 1)) + th.px(10))
		},
		draw: func(c draw.Canvas, th theme) {
			c = drawTitle(margins(c, th), th, title)
			var marks []scaleMark
			if hasThreshold(m.Threshold) {
				marks = append(marks, scaleMark{m.Threshold, "threshold " + strconv.FormatFloat(m.Threshold, 'f', 2, 64)})
			}
			c = drawColorScale(c, th, colorScale{name: measure, lo: 0, hi: 1, format: func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }, marks: marks})
			l := layoutFor(c.Max.X-c.Min.X, th)
			outline := hasThreshold(m.Threshold) && n > 1 && l.cell >= th.px(0.9)
			if outline {
				c = drawLegend(c, th, []legendEntry{{"outlined: at or above the threshold", []plot.Thumbnailer{boxThumb(viridis(0.8), cellOutline)}}})
			}
			p := newPlot(th, "", "")
			g := cellGrid{cols: n, rows: n, lo: 0, hi: 1}
			if outline {
				g.outline = func(v float64) bool { return v >= m.Threshold }
			}
			for i := range n {
				lbl := strconv.Itoa(i + 1)
				if i%l.colEvery != 0 {
					lbl = ""
				}
				g.colLabels = append(g.colLabels, lbl)
			}
			for k := range n {
				i := n - 1 - k // the first document on top
				lbl := strconv.Itoa(i + 1)
				switch {
				case l.names:
					lbl = fitText(th.tick, rowLabel(i), (c.Max.X-c.Min.X)*0.42)
				case i%l.rowEvery != 0:
					lbl = ""
				}
				g.rowLabels = append(g.rowLabels, lbl)
			}
			for i := range n {
				for j := range n {
					if i == j {
						continue
					}
					v := sim[i][j]
					title := docs[i].name() + " ~ " + docs[j].name() + ": "
					if math.IsNaN(v) {
						title += "not measured"
					} else {
						title += strconv.FormatFloat(v, 'f', 3, 64)
						if hasThreshold(m.Threshold) && v < m.Threshold {
							title += ", below the threshold"
						}
					}
					g.cells = append(g.cells, gridCell{x: j, y: n - 1 - i, v: v, text: strconv.FormatFloat(v, 'f', 2, 64),
						hook: hook{attrs: [][2]string{{"class", "cell"}, {"data-docs", docs[i].ID + "," + docs[j].ID}}, title: title}})
				}
			}
			if n == 0 {
				p.Add(emptyNote(th, "No documents in this cluster."))
			}
			g.plot(p, th)
			// Keep the cells square: give away the width and height the grid does
			// not need (the canvas may be larger than the default height asked).
			if n > 0 {
				side := l.cell * vg.Length(n)
				xAxis := th.px(2)
				if extra := c.Max.Y - c.Min.Y - xAxis - side; extra > 0 {
					c = draw.Crop(c, 0, 0, 0, -extra)
				}
				if extra := c.Max.X - c.Min.X - l.labelW - th.px(1.6) - side; extra > 0 {
					c = draw.Crop(c, 0, -extra, 0, 0)
				}
			}
			p.Draw(c)
		},
		table: tab,
	}, nil
}

// Chain draws the path from a cluster's keeper to a member the way the cluster was
// joined, A ~ B ~ C, as nodes in a row with each link's similarity over it. Under each
// node: its direct similarity to the keeper, in vermillion and with a dashed outline
// when below the threshold (the member is there only through the chain). A link
// suggested for cutting is drawn dashed and labelled. Long chains wrap, the next row
// running back the other way.
type Chain struct {
	Title string // "Chain from the keeper" when empty
	Nodes []ChainNode
	// Threshold in (0, 1] decides which direct similarities are flagged; 0 or NaN,
	// none.
	Threshold float64
}

// ChainNode is one document of the chain.
type ChainNode struct {
	ID     string // written as data-doc="ID" on the node
	Label  string // a name a person recognises; the ID when empty
	Keeper bool
	// Next is the similarity to the next node; ignored on the last.
	Next float64
	// ToKeeper is the direct similarity to the keeper; NaN is unknown.
	ToKeeper float64
	// CutNext suggests cutting the link to the next node.
	CutNext bool
}

func (n ChainNode) name() string { return cmp.Or(n.Label, n.ID) }

// Figure draws the chain. It fails on a node without an ID, a repeated ID, or a
// similarity outside [0, 1].
func (ch Chain) Figure() (*Figure, error) {
	nodes := slices.Clone(ch.Nodes)
	ids := map[string]int{}
	for i, n := range nodes {
		where := fmt.Sprintf("chain: node %d (%q)", i, n.ID)
		if err := checkID(ids, i, n.ID, "chain", "node"); err != nil {
			return nil, err
		}
		if i < len(nodes)-1 && !(n.Next >= 0 && n.Next <= 1) {
			return nil, fmt.Errorf("%s: similarity to the next node %g is outside [0, 1]", where, n.Next)
		}
		if math.IsInf(n.ToKeeper, 0) || n.ToKeeper < 0 || n.ToKeeper > 1 {
			return nil, fmt.Errorf("%s: similarity to the keeper %g is outside [0, 1]", where, n.ToKeeper)
		}
	}
	if math.IsInf(ch.Threshold, 0) || ch.Threshold < 0 || ch.Threshold > 1 {
		return nil, fmt.Errorf("chain: threshold %g is outside [0, 1]", ch.Threshold)
	}
	title := cmp.Or(ch.Title, "Chain from the keeper")
	tab := Table{Columns: []string{"position", "doc", "label", "keeper", "similarity_to_next", "similarity_to_keeper", "below_threshold_to_keeper", "cut_suggested_after"}}
	for i, n := range nodes {
		next := math.NaN()
		if i < len(nodes)-1 {
			next = n.Next
		}
		below := ""
		if hasThreshold(ch.Threshold) && !math.IsNaN(n.ToKeeper) {
			below = boolCell(n.ToKeeper < ch.Threshold)
		}
		tab.Rows = append(tab.Rows, []string{intCell(i + 1), textCell(n.ID), textCell(n.Label), boolCell(n.Keeper), num(next), num(n.ToKeeper), below, boolCell(n.CutNext && i < len(nodes)-1)})
	}
	return &Figure{
		name:  "chain",
		title: title,
		width: 480,
		height: func(w float64, th theme) float64 {
			_, rows := chainLayout(len(nodes), vg.Length(w)-th.px(1), th)
			return float64(th.px(7.5*float64(max(rows, 1))+2) + legendHeight(ch.legend(th, nodes), th, vg.Length(w)))
		},
		draw: func(c draw.Canvas, th theme) {
			c = drawTitle(margins(c, th), th, title)
			c = drawLegend(c, th, ch.legend(th, nodes))
			ch.draw(c, th, nodes)
		},
		table: tab,
	}, nil
}

// chainLayout returns how many nodes fit in a row of this width and how many rows
// the chain takes.
func chainLayout(n int, width vg.Length, th theme) (perRow, rows int) {
	perRow = max(1, int((width+th.px(1))/th.px(8)))
	return perRow, (n + perRow - 1) / perRow
}

func (ch Chain) below(n ChainNode) bool {
	return hasThreshold(ch.Threshold) && !n.Keeper && !math.IsNaN(n.ToKeeper) && n.ToKeeper < ch.Threshold
}

// cellOutline marks matrix cells at or above the threshold.
var cellOutline = draw.LineStyle{Color: ink, Width: 1.25}

var (
	chainEdge = draw.LineStyle{Color: axisGrey, Width: 2}
	chainCut  = draw.LineStyle{Color: vermillion, Width: 2, Dashes: []vg.Length{5, 3}}
	belowRing = draw.LineStyle{Color: vermillion, Width: 2, Dashes: []vg.Length{3, 2}}
	nodeRing  = draw.LineStyle{Color: blue, Width: 2}
)

func (ch Chain) legend(th theme, nodes []ChainNode) []legendEntry {
	r := th.px(0.45)
	var l []legendEntry
	hasKeeper, hasBelow, hasCut := false, false, false
	for i, n := range nodes {
		hasKeeper = hasKeeper || n.Keeper
		hasBelow = hasBelow || ch.below(n)
		hasCut = hasCut || (n.CutNext && i < len(nodes)-1)
	}
	if hasKeeper {
		l = append(l, legendEntry{"keeper", []plot.Thumbnailer{markThumb(disc, r, blue, draw.LineStyle{})}})
	}
	if len(nodes) > 0 {
		l = append(l, legendEntry{"member", []plot.Thumbnailer{markThumb(disc, r, white, nodeRing)}})
	}
	if hasBelow {
		l = append(l, legendEntry{"below threshold " + strconv.FormatFloat(ch.Threshold, 'f', 2, 64) + " to the keeper", []plot.Thumbnailer{markThumb(disc, r, white, belowRing)}})
	}
	if hasCut {
		l = append(l, legendEntry{"suggested cut", []plot.Thumbnailer{lineThumb(chainCut)}})
	}
	return l
}

func (ch Chain) draw(c draw.Canvas, th theme, nodes []ChainNode) {
	if len(nodes) == 0 {
		sty := th.label
		sty.Color = mutedGrey
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
		c.FillText(sty, c.Center(), "No chain to show.")
		return
	}
	width := c.Max.X - c.Min.X
	perRow, _ := chainLayout(len(nodes), width, th)
	cols := min(perRow, len(nodes))
	step := width / vg.Length(cols)
	rowH := th.px(7.5)
	r := th.px(0.85)
	pos := func(i int) vg.Point {
		row, k := i/perRow, i%perRow
		if row%2 == 1 {
			k = perRow - 1 - k // snake: odd rows run right to left
		}
		return vg.Point{X: c.Min.X + step*(vg.Length(k)+0.5), Y: c.Max.Y - th.px(2.6) - rowH*vg.Length(row)}
	}
	edgeText := th.small
	edgeText.XAlign, edgeText.YAlign = draw.XCenter, draw.YBottom
	// Links first, so nodes sit on top of them.
	for i := 0; i < len(nodes)-1; i++ {
		a, b := pos(i), pos(i+1)
		sty := chainEdge
		cut := nodes[i].CutNext
		if cut {
			sty = chainCut
		}
		title := nodes[i].name() + " ~ " + nodes[i+1].name() + ": " + strconv.FormatFloat(nodes[i].Next, 'f', 3, 64)
		if cut {
			title += " (suggested cut)"
		}
		withHook(c, hook{attrs: [][2]string{{"class", "link"}, {"data-docs", nodes[i].ID + "," + nodes[i+1].ID}}, title: title}, func() {
			mid := vg.Point{X: (a.X + b.X) / 2, Y: (a.Y + b.Y) / 2}
			if a.Y == b.Y { // along a row
				dir := vg.Length(1)
				if b.X < a.X {
					dir = -1
				}
				c.StrokeLine2(sty, a.X+dir*r, a.Y, b.X-dir*r, b.Y)
				c.FillText(edgeText, vg.Point{X: mid.X, Y: mid.Y + th.px(0.3)}, strconv.FormatFloat(nodes[i].Next, 'f', 2, 64))
				if cut {
					ct := edgeText
					ct.YAlign = draw.YTop
					ct.Color = vermillion
					c.FillText(ct, vg.Point{X: mid.X, Y: mid.Y - th.px(0.3)}, "cut?")
				}
				return
			}
			// Down to the next row at the end of this one: out to the edge of the
			// node's column, down, and back in, clear of the labels under the nodes.
			out := step/2 - th.px(0.15)
			if a.X < c.Center().X {
				out = -out
			}
			x := a.X + out
			c.StrokeLines(sty, []vg.Point{{X: a.X + sign(out)*r, Y: a.Y}, {X: x, Y: a.Y}, {X: x, Y: b.Y}, {X: b.X + sign(out)*r, Y: b.Y}})
			side := edgeText
			side.YAlign = draw.YCenter
			txt := strconv.FormatFloat(nodes[i].Next, 'f', 2, 64)
			if cut {
				txt += " cut?"
				side.Color = vermillion
			}
			// The text goes inward of the connector, between the two rows' labels.
			ty := (a.Y+b.Y)/2 - th.px(0.9)
			if out > 0 {
				side.XAlign = draw.XRight
				c.FillText(side, vg.Point{X: x - th.px(0.4), Y: ty}, txt)
			} else {
				side.XAlign = draw.XLeft
				c.FillText(side, vg.Point{X: x + th.px(0.4), Y: ty}, txt)
			}
		})
	}
	label := th.small
	label.XAlign, label.YAlign = draw.XCenter, draw.YTop
	for i, n := range nodes {
		at := pos(i)
		below := ch.below(n)
		title := n.name()
		if n.Keeper {
			title += " (keeper)"
		}
		if !math.IsNaN(n.ToKeeper) && !n.Keeper {
			title += "\nsimilarity to the keeper " + strconv.FormatFloat(n.ToKeeper, 'f', 3, 64)
			if below {
				title += ", below the threshold " + strconv.FormatFloat(ch.Threshold, 'f', 2, 64)
			}
		}
		withHook(c, hook{attrs: [][2]string{{"class", "node"}, {"data-doc", n.ID}}, title: title}, func() {
			switch {
			case n.Keeper:
				mark(c, disc, at, r, blue, draw.LineStyle{})
			case below:
				mark(c, disc, at, r, white, belowRing)
			default:
				mark(c, disc, at, r, white, nodeRing)
			}
			num := th.small
			num.XAlign, num.YAlign = draw.XCenter, draw.YCenter
			if n.Keeper {
				num.Color = white
			}
			c.FillText(num, at, strconv.Itoa(i+1))
			c.FillText(label, vg.Point{X: at.X, Y: at.Y - r - th.px(0.3)}, fitText(label, n.name(), step-th.px(0.4)))
			sub := label
			sub.Color = mutedGrey
			var txt string
			switch {
			case n.Keeper:
				txt = "keeper"
			case math.IsNaN(n.ToKeeper):
				txt = ""
			default:
				txt = "to keeper " + strconv.FormatFloat(n.ToKeeper, 'f', 2, 64)
				if below {
					sub.Color = vermillion
				}
			}
			if txt != "" {
				c.FillText(sub, vg.Point{X: at.X, Y: at.Y - r - th.px(1.6)}, fitText(sub, txt, step-th.px(0.4)))
			}
		})
	}
}

func sign(v vg.Length) vg.Length {
	if v < 0 {
		return -1
	}
	return 1
}
