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
	"github.com/dedupstudio/dedupstudio/web/templates"
)

// formError is a bad form value, named by its field.
type formError struct{ field, msg string }

func (e *formError) Error() string { return e.field + ": " + e.msg }

func floatParam(q url.Values, name string, def, lo, hi float64) (float64, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < lo || f > hi {
		return 0, &formError{name, fmt.Sprintf("%q is not a number between %g and %g", v, lo, hi)}
	}
	return f, nil
}

func intParam(q url.Values, name string, def, lo, hi int) (int, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, &formError{name, fmt.Sprintf("%q is not a whole number between %d and %d", v, lo, hi)}
	}
	return n, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func (s *server) showHome(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	h := templates.Home{
		Page:      s.page(r, "Start"),
		Threshold: orDefault(q.Get("threshold"), "0.8"),
		Hashes:    orDefault(q.Get("hashes"), "128"),
		WeightFP:  orDefault(q.Get("w-fp"), "0.5"),
		WeightFN:  orDefault(q.Get("w-fn"), "0.5"),
	}
	status := http.StatusOK
	choice, err := func() (lsh.ShapeChoice, error) {
		t, err := floatParam(q, "threshold", 0.8, 0, 1)
		if err != nil {
			return lsh.ShapeChoice{}, err
		}
		k, err := intParam(q, "hashes", 128, 1, 1024)
		if err != nil {
			return lsh.ShapeChoice{}, err
		}
		wfp, err := floatParam(q, "w-fp", 0.5, 0, 1e6)
		if err != nil {
			return lsh.ShapeChoice{}, err
		}
		wfn, err := floatParam(q, "w-fn", 0.5, 0, 1e6)
		if err != nil {
			return lsh.ShapeChoice{}, err
		}
		if wfp+wfn == 0 {
			return lsh.ShapeChoice{}, &formError{"w-fp", "the two weights cannot both be 0"}
		}
		c, err := lsh.OptimalShape(t, k, lsh.Weights{FP: wfp, FN: wfn})
		if err != nil {
			return c, err
		}
		h.Query = url.Values{
			"bands":     {strconv.Itoa(c.Shape.Bands)},
			"rows":      {strconv.Itoa(c.Shape.Rows)},
			"threshold": {strconv.FormatFloat(t, 'g', -1, 64)},
		}.Encode()
		return c, nil
	}()
	if err != nil {
		h.Error = err.Error()
		status = http.StatusUnprocessableEntity
	} else {
		h.Bands, h.Rows = choice.Shape.Bands, choice.Shape.Rows
		h.Approx, h.FP, h.FN = choice.Threshold, choice.FP, choice.FN
		for i := 0; i <= 10; i++ {
			x := float64(i) / 10
			h.Rows10 = append(h.Rows10, templates.ShapeRow{S: x, P: lsh.Probability(x, choice.Shape)})
		}
	}
	datasets, err := s.datasetViews(r.Context(), true)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	h.Datasets = datasets
	s.render(w, r, status, templates.HomePage(h))
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
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	}
	svg, err := chart.SCurve([]lsh.Shape{sh}, t, 6*vg.Inch, 4*vg.Inch)
	if err != nil {
		s.log.Error("chart", "err", err, "request_id", requestIDOf(r))
		http.Error(w, "internal error", http.StatusInternalServerError)
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
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
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
