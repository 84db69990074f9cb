package sweeprun

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestDecodeSnapshot: a stored snapshot decoded pair by pair is what decoding the list
// whole gives (null and the empty list included), and what is not a list of pairs,
// or is followed by more, is an error naming what is wrong.
func TestDecodeSnapshot(t *testing.T) {
	t.Parallel()
	var pairs []snapPair
	for i := range 50 {
		pairs = append(pairs, snapPair{ID: int64(i + 1), A: int64(i), B: int64(2*i + 1), Category: "minor {x}", Duplicate: i%3 == 0,
			Design: "jdraw", Stratum: fmt.Sprint(i % 4), FrameSize: 1000 * i, Origin: "import"})
	}
	full, err := json.Marshal(pairs)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{string(full), "[]", "null", " [ ] \n", `[{"id":7,"a":1,"b":2,"cat":"exact","dup":true}]`} {
		var want []snapPair
		if err := json.Unmarshal([]byte(text), &want); err != nil {
			t.Fatal(err)
		}
		got, err := decodeSnapshot(text)
		if err != nil || !slices.Equal(got, want) || (got == nil) != (want == nil) {
			t.Errorf("decodeSnapshot(%.40q) = %d pairs, %v; want %d pairs", text, len(got), err, len(want))
		}
	}
	for text, want := range map[string]string{
		"":                      "EOF",
		`{"id":1}`:              "not a list",
		`[{"id":1},`:            "pair 2",
		`[{"id":"one"}]`:        "pair 1",
		`[1]`:                   "pair 1",
		`[{"id":1}] [{"id":2}]`: "data after the list",
		`null x`:                "data after the list",
	} {
		if _, err := decodeSnapshot(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("decodeSnapshot(%q) = %v; want an error with %q", text, err, want)
		}
	}
}
