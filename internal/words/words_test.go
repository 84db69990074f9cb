package words

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

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

func TestClipQuoted(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("9", 900_000)
	got := ClipQuoted(strconv.Quote(long) + " is not a whole number")
	want := `"` + strings.Repeat("9", MaxQuoted) + `…" (900,000 characters) is not a whole number`
	if got != want {
		t.Fatalf("ClipQuoted of 900,000 digits = %.200q, want %q", got, want)
	}
	for _, short := range []string{`"abc" is not a whole number`, `item 3: "12x" is not a whole number`, `no quotes at all`} {
		if got := ClipQuoted(short); got != short {
			t.Errorf("ClipQuoted(%q) = %q: a short message must stay as it is", short, got)
		}
	}
	// Multi-byte characters and escapes are never cut in the middle.
	for _, v := range []string{strings.Repeat("é", 200), strings.Repeat(`a"`, 100), strings.Repeat("\x00", 100), strings.Repeat("\U0001F600", 60)} {
		got := ClipQuoted("value " + strconv.Quote(v) + " refused")
		if !utf8.ValidString(got) {
			t.Errorf("ClipQuoted cut a character: %q", got)
		}
		q := got[len("value "):strings.Index(got, `…"`)] + `"`
		if _, err := strconv.Unquote(q); err != nil {
			t.Errorf("ClipQuoted left a broken escape: %q (%v)", q, err)
		}
		if !strings.HasSuffix(got, " characters) refused") {
			t.Errorf("ClipQuoted(%.40q...) = %q: want the count of characters", v, got)
		}
	}
}
