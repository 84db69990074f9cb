package web

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"gonum.org/v1/plot/vg"

	"github.com/dedupstudio/dedupstudio/internal/chart"
	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

func floatParam(q url.Values, name string, def, lo, hi float64) (float64, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	f, ok := parseDecimal(v)
	if !ok || f < lo || f > hi {
		return 0, &formError{name, fmt.Sprintf("%q is not a number between %g and %g", v, lo, hi)}
	}
	return f, nil
}

func intParam(q url.Values, name string, def, lo, hi int) (int, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	n, ok := parseWhole(v)
	if !ok || n < lo || n > hi {
		return 0, &formError{name, fmt.Sprintf("%q is not a whole number between %d and %d", v, lo, hi)}
	}
	return n, nil
}

// shapeParams reads bands, rows and threshold for the chart and data downloads.
func shapeParams(q url.Values) (lsh.Shape, float64, error) {
	b, err := intParam(q, "bands", 0, 1, 4096)
	if err != nil {
		return lsh.Shape{}, 0, err
	}
	rows, err := intParam(q, "rows", 0, 1, 4096)
	if err != nil {
		return lsh.Shape{}, 0, err
	}
	if b == 0 || rows == 0 {
		return lsh.Shape{}, 0, &formError{"bands", "bands and rows are required"}
	}
	t, err := floatParam(q, "threshold", -1, 0, 1)
	if err != nil {
		return lsh.Shape{}, 0, err
	}
	return lsh.Shape{Bands: b, Rows: rows}, t, nil
}

func (s *server) shapeSVG(w http.ResponseWriter, r *http.Request) {
	sh, t, err := shapeParams(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	svg, err := chart.SCurve([]lsh.Shape{sh}, t, 6*vg.Inch, 4*vg.Inch)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	if r.URL.Query().Get("download") != "" {
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="s-curve-%dx%d.svg"`, sh.Bands, sh.Rows))
	}
	w.Write(svg)
}

func (s *server) shapeCSV(w http.ResponseWriter, r *http.Request) {
	sh, _, err := shapeParams(r.URL.Query())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	cw.Write([]string{"similarity", "p_candidate", "bands", "rows"})
	for i := 0; i <= 100; i++ {
		x := float64(i) / 100
		cw.Write([]string{strconv.FormatFloat(x, 'f', 2, 64), strconv.FormatFloat(lsh.Probability(x, sh), 'f', 6, 64),
			strconv.Itoa(sh.Bands), strconv.Itoa(sh.Rows)})
	}
	cw.Flush()
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="s-curve-%dx%d.csv"`, sh.Bands, sh.Rows))
	w.Write(buf.Bytes())
}
