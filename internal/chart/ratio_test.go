package chart

import (
	"math"
	"strings"
	"testing"
)

// The rate-ratio chart renders typical, empty and degenerate inputs, marks each group
// for scripts, keeps its values in the CSV, and refuses what is not a ratio.
func TestRateRatios(t *testing.T) {
	t.Parallel()
	typical := RateRatios{Groups: []RatioGroup{
		{Name: "npm", Ratio: 3.2, Lo: 2.1, Hi: 4.9, N: 200, Flagged: true, Note: "60% removed"},
		{Name: "debian", Ratio: 0.4, Lo: 0.3, Hi: 0.55, N: 800, Flagged: true},
		{Name: "spdx", Ratio: 1.1, Lo: 0.6, Hi: 1.9, N: 100},
		{Name: "none removed", Ratio: 0, Lo: 0.001, Hi: 0.9, N: 20},
		{Name: "no comparison", Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), N: 3},
		{Name: "huge", Ratio: 250, Lo: 40, Hi: 1500, N: 5, Flagged: true},
	}}
	for name, rr := range map[string]RateRatios{"typical": typical, "empty": {}, "one": {Groups: typical.Groups[:1]}} {
		t.Run(name, func(t *testing.T) {
			f, err := rr.Figure()
			if err != nil {
				t.Fatalf("Figure() = %v", err)
			}
			for _, sz := range []Size{{}, {Width: 390}} {
				svg, err := f.SVG(sz)
				if err != nil {
					t.Fatalf("SVG(%+v) = %v", sz, err)
				}
				checkSVG(t, svg, f.Title())
				if got := strings.Count(string(svg), `class="group"`); got != len(rr.Groups) {
					t.Errorf("SVG has %d group hooks; want %d", got, len(rr.Groups))
				}
			}
			sz := Size{Width: 400, Height: 300, Scale: 1}
			p, err := f.PNG(sz)
			if err != nil {
				t.Fatalf("PNG = %v", err)
			}
			checkPNG(t, p, sz)
			recs := readCSV(t, f)
			if len(recs) != len(rr.Groups)+1 {
				t.Errorf("CSV has %d records; want %d", len(recs), len(rr.Groups)+1)
			}
		})
	}
	for _, bad := range []RateRatios{
		{Groups: []RatioGroup{{Name: "", Ratio: 1}}},
		{Groups: []RatioGroup{{Name: "a", Ratio: 1}, {Name: "a", Ratio: 2}}},
		{Groups: []RatioGroup{{Name: "a", Ratio: -1}}},
		{Groups: []RatioGroup{{Name: "a", Ratio: 1, Hi: math.Inf(1)}}},
	} {
		if _, err := bad.Figure(); err == nil {
			t.Errorf("Figure(%+v) = nil error; want a refusal", bad.Groups)
		}
	}
}
