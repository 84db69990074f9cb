package percent

import (
	"math"
	"testing"
)

func TestFormat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rate float64
		fmt  byte
		prec int
		want string
	}{
		{0.9312, 'f', 1, "93.1%"},
		{1, 'f', 1, "100.0%"},
		{0, 'f', 1, "0.0%"},
		{0.07, 'f', 1, "7.0%"}, // 100*0.07 is 7.000000000000001
		{0.01, 'g', 3, "1%"},
		{0.0025, 'g', 3, "0.25%"},
		{0.123456, 'g', 3, "12.3%"},
		{-0.05, 'f', 0, "-5%"},
		{math.NaN(), 'f', 1, "n/a"},
	} {
		if got := Format(tc.rate, tc.fmt, tc.prec); got != tc.want {
			t.Errorf("Format(%v, %q, %d) = %q; want %q", tc.rate, tc.fmt, tc.prec, got, tc.want)
		}
	}
}

func TestShort(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rate float64
		want string
	}{
		{0.93, "93%"}, {0.1, "10%"}, {0, "0%"}, {0.042, "4.2%"}, {0.01, "1.0%"},
		{0.0037, "0.37%"}, {0.0002, "0.02%"}, {math.NaN(), "n/a"},
	} {
		if got := Short(tc.rate); got != tc.want {
			t.Errorf("Short(%v) = %q; want %q", tc.rate, got, tc.want)
		}
	}
}
