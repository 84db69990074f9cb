// Package words writes counts for people, the same way on every page, report and command:
// whole numbers with thousands separators (1,942) and a noun that agrees with its count
// ("1 removal", "0 removals", "2,136 documents"), never "removal(s)".
package words

import (
	"strconv"
	"strings"
)

// Thousands writes a whole number with thousands separators: 1,942; -12,345.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Count writes n with thousands separators and the words that agree with it:
// Count(1, "bad record was", "bad records were") is "1 bad record was", Count(14780,
// "more pair", "more pairs") "14,780 more pairs".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Thousands(n) + " " + many
}
