// Package percent writes rates, fractions of 1, as percentages for people: the pages,
// the charts, the command line and the reports say 93.1% the same way. An undefined rate
// (NaN: nothing to divide by) is "n/a" everywhere but where a page shows a dash in an
// empty cell.
package percent

import (
	"math"
	"strconv"
)

// Format writes rate as a percentage: 100*rate as strconv.FormatFloat writes it with fmt
// and prec, then "%". Format(0.9312, 'f', 1) is "93.1%", Format(0.01, 'g', 3) is "1%",
// Format(0.0025, 'g', 3) is "0.25%". NaN is "n/a".
func Format(rate float64, fmt byte, prec int) string {
	if math.IsNaN(rate) {
		return "n/a"
	}
	return strconv.FormatFloat(100*rate, fmt, prec, 64) + "%"
}

// Short writes rate with the digits a label needs to tell it from its neighbours and
// no more: whole percents from 10% (and 0%), one decimal from 1%, two significant digits
// below ("93%", "4.2%", "0.37%"). NaN is "n/a".
func Short(rate float64) string {
	switch a := math.Abs(100 * rate); {
	case a == 0 || a >= 10:
		return Format(rate, 'f', 0)
	case a >= 1:
		return Format(rate, 'f', 1)
	}
	return Format(rate, 'g', 2)
}
