package chart

import (
	"bytes"
	"encoding/xml"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

func TestSCurveIsSVG(t *testing.T) {
	t.Parallel()
	svg, err := SCurve([]lsh.Shape{{Bands: 20, Rows: 5}, {Bands: 5, Rows: 25}}, 0.8, 6*vg.Inch, 4*vg.Inch)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	for {
		if _, err := dec.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not well-formed XML: %v", err)
			}
			break
		}
	}
	for _, want := range []string{"<svg", "20 bands × 5 rows", "5 bands × 25 rows", "threshold 0.80"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}
