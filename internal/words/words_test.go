package words

import "testing"

func TestCount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n         int
		one, many string
		want      string
	}{
		{0, "removal", "removals", "0 removals"},
		{1, "removal", "removals", "1 removal"},
		{2, "removal", "removals", "2 removals"},
		{999, "pair", "pairs", "999 pairs"},
		{1000, "pair", "pairs", "1,000 pairs"},
		{14780, "more pair", "more pairs", "14,780 more pairs"},
		{1234567, "document", "documents", "1,234,567 documents"},
		{-1, "step", "steps", "-1 steps"},
		{-12345, "step", "steps", "-12,345 steps"},
	} {
		if got := Count(tc.n, tc.one, tc.many); got != tc.want {
			t.Errorf("Count(%d, %q, %q) = %q, want %q", tc.n, tc.one, tc.many, got, tc.want)
		}
	}
}
