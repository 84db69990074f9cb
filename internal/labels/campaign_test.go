package labels

import (
	"math"
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	t.Parallel()
	cats := DefaultCategories
	pairs := []PairState{
		{ID: 1, Similarity: 0.95, Wanted: 1, Labels: []Label{{"ann", "label", "exact", true}}},
		{ID: 2, Similarity: 0.82, Wanted: 2, Labels: []Label{{"ann", "label", "minor", true}, {"bob", "label", "partial", false}}},
		{ID: 3, Similarity: 0.35, Wanted: 2, Labels: []Label{{"ann", "label", "different", false}, {"bob", "label", "different", false}}},
		{ID: 4, Similarity: 0.55, Wanted: 2, Labels: []Label{{"ann", "label", "minor", true}, {"bob", "label", "partial", false}, {"rev", "adjudication", "partial", false}}},
		{ID: 5, Similarity: 0.05, Wanted: 1},
		{ID: 6, Similarity: math.NaN(), Wanted: 2, Labels: []Label{{"ann", "label", "translation", false}}},
	}
	o := Summarize(pairs, cats, 10, 0.8)
	if o.Target != 10 || o.Given != 1+2+2+2+0+1 || o.Complete != 4 {
		t.Errorf("target %d given %d complete %d", o.Target, o.Given, o.Complete)
	}
	// Pair 2 disagrees (near the threshold); pair 4 disagreed but is adjudicated.
	if len(o.Disagreements) != 1 || o.Disagreements[0].PairID != 2 || math.Abs(o.Disagreements[0].Distance-0.02) > 1e-9 {
		t.Errorf("disagreements %+v", o.Disagreements)
	}
	// Coverage: exact in bin 9, partial (adjudicated) in bin 5, different in bin 3,
	// unlabeled in bin 0, translation not scored (last column).
	check := func(cat string, bin, want int) {
		t.Helper()
		row := len(cats)
		for i, c := range cats {
			if c.Key == cat {
				row = i
			}
		}
		if got := o.Coverage[row][bin]; got != want {
			t.Errorf("coverage[%s][%d] = %d; want %d", cat, bin, got, want)
		}
	}
	check("exact", 9, 1)
	check("partial", 5, 1)
	check("different", 3, 1)
	check("", 0, 1)
	check("translation", 10, 1)
	// Pair 2's tie (minor vs partial) resolves to the category listed first.
	if c, dup, _ := pairs[1].Resolved(cats); c != "minor" || !dup {
		t.Errorf("tie resolved to %s %v", c, dup)
	}
	// Agreement counts pairs 2, 3 and 4 (three units of two annotators each).
	if o.Agreement.Units != 3 || math.Abs(o.Agreement.PercentAgreement-1.0/3) > 1e-9 {
		t.Errorf("agreement %+v", o.Agreement)
	}
	if o.BinLabels[0] != "0.0–0.1" || o.BinLabels[9] != "0.9–1.0" {
		t.Errorf("bin labels %v", o.BinLabels)
	}
}

func TestCategoryListRoundTrip(t *testing.T) {
	t.Parallel()
	back, err := ParseCategories(FormatCategories(DefaultCategories))
	if err != nil {
		t.Fatal(err)
	}
	for i := range back {
		if back[i] != DefaultCategories[i] {
			t.Errorf("category %d: %+v; want %+v", i, back[i], DefaultCategories[i])
		}
	}
	for text, want := range map[string]string{
		"a | A | yes\nb | B | maybe": "line 2: duplicate must be yes, no or ask",
		"a | A | yes\na | B | no":    `line 2: key "a" is there twice`,
		"a | A | yes":                "needs 2 to 9 categories",
		"1 | one | yes\nb | B | no":  "line 1: a key cannot be a number",
		"a b | x | yes\nc | d | no":  "line 1: the key must be one short word",
	} {
		if _, err := ParseCategories(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCategories(%q) = %v; want %q", text, err, want)
		}
	}
}
