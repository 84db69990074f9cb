package chart

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strconv"
	"strings"

	xfont "golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// svgCanvas is a vg.Canvas that writes SVG whose paint is carried by presentation
// attributes (fill="#0072b2", stroke-width="2", font-size="12"), never by style
// attributes or <style> elements. A Content-Security-Policy without 'unsafe-inline'
// in style-src blocks style attributes, so gonum's own vgsvg output, which paints
// with style="...", renders as black shapes under such a policy; presentation
// attributes are not styles in CSP's sense and survive even default-src 'none'.
//
// It also lets plotters wrap what they draw in a group carrying data attributes and
// a <title> (see beginHook), which the browser shows on hover and a script can find.
//
// One unit of the canvas is one CSS pixel: a chart of Width 480 is a 480 px wide SVG.
type svgCanvas struct {
	w, h  vg.Length
	title string
	buf   bytes.Buffer
	stack []svgState
	open  int // hook groups not yet closed
	num   []byte
}

type svgState struct {
	color      color.Color
	lineWidth  vg.Length
	dashes     []vg.Length
	dashOffset vg.Length
	groups     int // <g> elements opened by transforms at this level
}

// fontFallbacks follow the family gonum measures text with. Arimo and Arial are
// metric-compatible with Liberation Sans, so text laid out with its metrics fits.
const fontFallbacks = ", Arimo, Arial, Helvetica, sans-serif"

func newSVGCanvas(w, h vg.Length, title string) *svgCanvas {
	c := &svgCanvas{w: w, h: h, title: title, stack: []svgState{{}}}
	vg.Initialize(c)
	return c
}

func (c *svgCanvas) state() *svgState { return &c.stack[len(c.stack)-1] }

// Size implements vg.CanvasSizer.
func (c *svgCanvas) Size() (w, h vg.Length) { return c.w, c.h }

func (c *svgCanvas) SetLineWidth(w vg.Length) { c.state().lineWidth = w }

func (c *svgCanvas) SetLineDash(pattern []vg.Length, offset vg.Length) {
	c.state().dashes = pattern
	c.state().dashOffset = offset
}

func (c *svgCanvas) SetColor(clr color.Color) {
	if clr == nil {
		clr = color.Black
	}
	c.state().color = clr
}

func (c *svgCanvas) Rotate(rad float64) {
	c.openTransform("rotate(" + c.f(rad*180/math.Pi) + ")")
}

func (c *svgCanvas) Translate(pt vg.Point) {
	c.openTransform("translate(" + c.f(pt.X.Points()) + "," + c.f(pt.Y.Points()) + ")")
}

func (c *svgCanvas) Scale(x, y float64) {
	c.openTransform("scale(" + c.f(x) + "," + c.f(y) + ")")
}

func (c *svgCanvas) openTransform(t string) {
	fmt.Fprintf(&c.buf, "<g transform=\"%s\">\n", t)
	c.state().groups++
}

func (c *svgCanvas) Push() {
	top := *c.state()
	top.groups = 0
	c.stack = append(c.stack, top)
}

func (c *svgCanvas) Pop() {
	for range c.state().groups {
		c.buf.WriteString("</g>\n")
	}
	c.stack = c.stack[:len(c.stack)-1]
}

func (c *svgCanvas) Stroke(p vg.Path) {
	st := c.state()
	if st.lineWidth <= 0 || len(p) == 0 {
		return
	}
	hex, op := svgColor(st.color)
	if op == 0 {
		return
	}
	c.buf.WriteString(`<path d="`)
	c.pathData(p)
	c.buf.WriteString(`" fill="none" stroke="` + hex + `"`)
	if op < 1 {
		c.buf.WriteString(` stroke-opacity="` + c.f(op) + `"`)
	}
	if w := st.lineWidth.Points(); w != 1 {
		c.buf.WriteString(` stroke-width="` + c.f(w) + `"`)
	}
	if len(st.dashes) > 0 {
		ds := make([]string, len(st.dashes))
		for i, d := range st.dashes {
			ds[i] = c.f(d.Points())
		}
		c.buf.WriteString(` stroke-dasharray="` + strings.Join(ds, ",") + `"`)
		if st.dashOffset != 0 {
			c.buf.WriteString(` stroke-dashoffset="` + c.f(st.dashOffset.Points()) + `"`)
		}
	}
	c.buf.WriteString("/>\n")
}

func (c *svgCanvas) Fill(p vg.Path) {
	if len(p) == 0 {
		return
	}
	hex, op := svgColor(c.state().color)
	c.buf.WriteString(`<path d="`)
	c.pathData(p)
	c.buf.WriteString(`" fill="` + hex + `"`)
	if op < 1 {
		// A fully transparent fill is still painted for pointer events: that is
		// what the hit areas of chart points rely on.
		c.buf.WriteString(` fill-opacity="` + c.f(op) + `"`)
	}
	c.buf.WriteString("/>\n")
}

// pathData writes the d attribute of a path.
func (c *svgCanvas) pathData(p vg.Path) {
	var cur vg.Point
	has := false
	for _, comp := range p {
		switch comp.Type {
		case vg.MoveComp:
			c.buf.WriteString("M" + c.pt(comp.Pos))
			cur, has = comp.Pos, true
		case vg.LineComp:
			c.buf.WriteString("L" + c.pt(comp.Pos))
			cur, has = comp.Pos, true
		case vg.ArcComp:
			cur = c.arc(comp, cur, has)
			has = true
		case vg.CurveComp:
			switch len(comp.Control) {
			case 1:
				c.buf.WriteString("Q" + c.pt(comp.Control[0]) + " " + c.pt(comp.Pos))
			case 2:
				c.buf.WriteString("C" + c.pt(comp.Control[0]) + " " + c.pt(comp.Control[1]) + " " + c.pt(comp.Pos))
			default:
				panic(fmt.Sprintf("chart: curve with %d control points", len(comp.Control)))
			}
			cur, has = comp.Pos, true
		case vg.CloseComp:
			c.buf.WriteString("Z")
		default:
			panic(fmt.Sprintf("chart: unknown path component %d", comp.Type))
		}
	}
}

// arc writes an arc of the circle around comp.Pos, from angle comp.Start through
// comp.Angle radians (counterclockwise when positive, as in vg). SVG cannot draw a
// whole circle as one arc, so full turns are drawn as two halves.
func (c *svgCanvas) arc(comp vg.PathComp, cur vg.Point, has bool) vg.Point {
	r := comp.Radius.Points()
	at := func(a float64) vg.Point {
		s, co := math.Sincos(a)
		return vg.Point{X: comp.Pos.X + vg.Length(r*co), Y: comp.Pos.Y + vg.Length(r*s)}
	}
	start := at(comp.Start)
	switch {
	case !has:
		c.buf.WriteString("M" + c.pt(start))
	case math.Abs(float64(start.X-cur.X)) > 1e-9 || math.Abs(float64(start.Y-cur.Y)) > 1e-9:
		c.buf.WriteString("L" + c.pt(start))
	}
	sweep := "1"
	if comp.Angle < 0 {
		sweep = "0"
	}
	rr := c.f(r)
	if math.Abs(comp.Angle) >= 2*math.Pi {
		half := math.Copysign(math.Pi, comp.Angle)
		mid := at(comp.Start + half)
		c.buf.WriteString("A" + rr + "," + rr + " 0 0 " + sweep + " " + c.pt(mid))
		c.buf.WriteString("A" + rr + "," + rr + " 0 0 " + sweep + " " + c.pt(start))
		return start
	}
	end := at(comp.Start + comp.Angle)
	large := "0"
	if math.Abs(comp.Angle) > math.Pi {
		large = "1"
	}
	c.buf.WriteString("A" + rr + "," + rr + " 0 " + large + " " + sweep + " " + c.pt(end))
	return end
}

func (c *svgCanvas) FillString(f font.Face, pt vg.Point, text string) {
	if f.Font.Size == 0 || text == "" {
		return
	}
	hex, op := svgColor(c.state().color)
	fmt.Fprintf(&c.buf, `<text x="%s" y="%s" transform="scale(1,-1)" font-family="%s" font-size="%s"`,
		c.f(pt.X.Points()), c.f(-pt.Y.Points()), xmlAttr(familyName(f)+fontFallbacks), c.f(f.Font.Size.Points()))
	switch f.Font.Weight {
	case xfont.WeightNormal:
	case xfont.WeightBold:
		c.buf.WriteString(` font-weight="bold"`)
	default:
		c.buf.WriteString(` font-weight="` + strconv.Itoa(int(f.Font.Weight)*100+400) + `"`)
	}
	if f.Font.Style == xfont.StyleItalic {
		c.buf.WriteString(` font-style="italic"`)
	}
	c.buf.WriteString(` fill="` + hex + `"`)
	if op < 1 {
		c.buf.WriteString(` fill-opacity="` + c.f(op) + `"`)
	}
	c.buf.WriteString(">" + xmlText(text) + "</text>\n")
}

// DrawImage embeds the image as a PNG data URI. The charts here draw none (a policy
// of default-src 'none' blocks data: images); it is here to complete vg.Canvas.
func (c *svgCanvas) DrawImage(rect vg.Rectangle, img image.Image) {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(fmt.Errorf("chart: encode image: %w", err))
	}
	sz := rect.Size()
	fmt.Fprintf(&c.buf, `<image x="%s" y="%s" width="%s" height="%s" transform="scale(1,-1)" href="data:image/png;base64,%s"/>`+"\n",
		c.f(rect.Min.X.Points()), c.f(-rect.Min.Y.Points()-sz.Y.Points()), c.f(sz.X.Points()), c.f(sz.Y.Points()),
		base64.StdEncoding.EncodeToString(b.Bytes()))
}

// beginHook opens a group around what is drawn until the matching endHook: its
// attributes (names are fixed by this package; values are escaped) let a script find
// the mark, and its <title> is what the browser shows on hover.
func (c *svgCanvas) beginHook(h hook) {
	c.buf.WriteString("<g")
	for _, a := range h.attrs {
		c.buf.WriteString(" " + a[0] + `="` + xmlAttr(a[1]) + `"`)
	}
	c.buf.WriteString(">")
	if h.title != "" {
		c.buf.WriteString("<title>" + xmlText(h.title) + "</title>")
	}
	c.buf.WriteString("\n")
	c.open++
}

func (c *svgCanvas) endHook() {
	if c.open == 0 {
		panic("chart: endHook without beginHook")
	}
	c.buf.WriteString("</g>\n")
	c.open--
}

// WriteTo writes the document. The body is drawn in vg's coordinates (origin bottom
// left, y up); one group flips it into SVG's.
func (c *svgCanvas) WriteTo(w io.Writer) (int64, error) {
	if c.open != 0 || len(c.stack) != 1 {
		return 0, fmt.Errorf("chart: svg has %d unclosed hooks and %d unpopped states", c.open, len(c.stack)-1)
	}
	var out bytes.Buffer
	W, H := c.f(c.w.Points()), c.f(c.h.Points())
	// The XML declaration makes a standalone file self-describing; an HTML parser
	// reads it as a bogus comment, so the same bytes can be inlined into a page.
	out.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" role="img">`+"\n", W, H, W, H)
	if c.title != "" {
		out.WriteString("<title>" + xmlText(c.title) + "</title>\n")
	}
	out.WriteString(`<g transform="matrix(1,0,0,-1,0,` + H + `)">` + "\n")
	out.Write(c.buf.Bytes())
	for range c.state().groups {
		out.WriteString("</g>\n")
	}
	out.WriteString("</g>\n</svg>\n")
	return out.WriteTo(w)
}

// f formats a coordinate with at most two decimals: a hundredth of a pixel.
func (c *svgCanvas) f(v float64) string {
	c.num = strconv.AppendFloat(c.num[:0], v, 'f', 2, 64)
	s := strings.TrimRight(strings.TrimRight(string(c.num), "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

func (c *svgCanvas) pt(p vg.Point) string { return c.f(p.X.Points()) + "," + c.f(p.Y.Points()) }

// svgColor returns the colour as #rrggbb without premultiplied alpha, and its opacity.
func svgColor(clr color.Color) (string, float64) {
	n := color.NRGBAModel.Convert(clr).(color.NRGBA)
	return fmt.Sprintf("#%02x%02x%02x", n.R, n.G, n.B), float64(n.A) / 255
}

func familyName(f font.Face) string {
	var b sfnt.Buffer
	if f.Face != nil {
		if name, err := f.Face.Name(&b, sfnt.NameIDFamily); err == nil {
			return name
		}
	}
	return "Liberation Sans"
}

var (
	textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	attrEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "\n", "&#10;", "\t", "&#9;", "\r", "&#13;")
)

// xmlText escapes character data and drops what XML 1.0 cannot hold.
func xmlText(s string) string { return textEscaper.Replace(xmlClean(s)) }

func xmlAttr(s string) string { return attrEscaper.Replace(xmlClean(s)) }

// xmlClean removes code points XML 1.0 forbids (most C0 controls, U+FFFE/FFFF),
// so that a document name with a stray control character cannot break the SVG.
func xmlClean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	ok := func(r rune) bool {
		return r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r != 0xFFFE && r != 0xFFFF)
	}
	for _, r := range s {
		if !ok(r) {
			return strings.Map(func(r rune) rune {
				if ok(r) {
					return r
				}
				return -1
			}, s)
		}
	}
	return s
}

// hook is what beginHook wraps around a mark.
type hook struct {
	attrs [][2]string
	title string
}

// hooker is implemented by canvases that can carry hooks (the SVG one).
type hooker interface {
	beginHook(hook)
	endHook()
}

// withHook draws fn inside a hook when the canvas can carry one, and plainly otherwise
// (PNG).
func withHook(c draw.Canvas, h hook, fn func()) {
	hk, ok := hookerOf(c.Canvas)
	if ok {
		hk.beginHook(h)
	}
	fn()
	if ok {
		hk.endHook()
	}
}

// hookerOf finds the hooker under a canvas: gonum's plot hands plotters a draw.Canvas
// that wraps another draw.Canvas (its padding) around the canvas it was given.
func hookerOf(c vg.Canvas) (hooker, bool) {
	for {
		switch v := c.(type) {
		case hooker:
			return v, true
		case draw.Canvas:
			c = v.Canvas
		case *draw.Canvas:
			c = v.Canvas
		default:
			return nil, false
		}
	}
}
