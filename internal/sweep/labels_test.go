package sweep

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/labels"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	human := func(who, cat string, dup bool) Label {
		return Label{Annotator: who, Kind: "label", Category: cat, Duplicate: dup}
	}
	adj := func(cat string, dup bool) Label {
		return Label{Annotator: "lead", Kind: Adjudication, Category: cat, Duplicate: dup}
	}
	rule := func(cat string, dup bool) Label {
		return Label{Annotator: "demo-rules", Kind: "label", Category: cat, Duplicate: dup, Rule: true}
	}
	cases := []struct {
		name string
		pair LabeledPair
		want Resolution
	}{
		{"adjudication over majority and rule",
			LabeledPair{Labels: []Label{human("a", "minor", true), human("b", "minor", true), rule("minor", true), adj("different", false)}},
			Resolution{Status: Counted, Source: FromAdjudication, Category: "different", Duplicate: false}},
		{"the last of two adjudications",
			LabeledPair{Labels: []Label{adj("minor", true), adj("partial", false)}},
			Resolution{Status: Counted, Source: FromAdjudication, Category: "partial", Duplicate: false}},
		{"majority over the rule",
			LabeledPair{Labels: []Label{rule("different", false), human("a", "minor", true), human("b", "exact", true), human("c", "different", false)}},
			Resolution{Status: Counted, Source: FromMajority, Category: "exact", Duplicate: true}},
		{"majority category is the commonest among the majority",
			LabeledPair{Labels: []Label{human("a", "minor", true), human("b", "format", true), human("c", "minor", true)}},
			Resolution{Status: Counted, Source: FromMajority, Category: "minor", Duplicate: true}},
		{"one human label is a majority",
			LabeledPair{Labels: []Label{human("a", "partial", false)}},
			Resolution{Status: Counted, Source: FromMajority, Category: "partial", Duplicate: false}},
		{"a tie falls to the rule label",
			LabeledPair{Labels: []Label{human("a", "minor", true), human("b", "different", false), rule("partial", false)}},
			Resolution{Status: Counted, Source: FromRule, Category: "partial", Duplicate: false}},
		{"a tie without a rule label is left out",
			LabeledPair{Labels: []Label{human("a", "minor", true), human("b", "different", false)}},
			Resolution{Status: Tied}},
		{"no human label: the rule label",
			LabeledPair{Labels: []Label{rule("exact", true)}},
			Resolution{Status: Counted, Source: FromRule, Category: "exact", Duplicate: true}},
		{"nothing",
			LabeledPair{},
			Resolution{Status: Unlabeled}},
		{"flagged, even adjudicated",
			LabeledPair{Flagged: true, Labels: []Label{adj("exact", true)}},
			Resolution{Status: Flagged}},
		{"skipped",
			LabeledPair{Skipped: true, Labels: []Label{rule("exact", true)}},
			Resolution{Status: Skipped}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Resolve(c.pair, labels.DefaultCategories); got != c.want {
				t.Errorf("Resolve = %+v; want %+v", got, c.want)
			}
		})
	}
}

func TestCategoryTieFollowsCampaignOrder(t *testing.T) {
	t.Parallel()
	p := LabeledPair{Labels: []Label{
		{Annotator: "a", Kind: "label", Category: "minor", Duplicate: true},
		{Annotator: "b", Kind: "label", Category: "format", Duplicate: true},
	}}
	if got := Resolve(p, labels.DefaultCategories); got.Category != "format" {
		t.Errorf("Resolve(minor vs format).Category = %q; want format (earlier in the default list)", got.Category)
	}
	reversed := []labels.Category{{Key: "minor"}, {Key: "format"}}
	if got := Resolve(p, reversed); got.Category != "minor" {
		t.Errorf("Resolve with minor listed first .Category = %q; want minor", got.Category)
	}
}

func TestResolveAll(t *testing.T) {
	t.Parallel()
	lab := func(id int64, a, b int, dup bool) LabeledPair {
		return LabeledPair{ID: id, A: a, B: b, Labels: []Label{{Annotator: "x", Kind: "label", Category: "minor", Duplicate: dup}}}
	}
	pairs := []LabeledPair{lab(1, 0, 1, true), lab(2, 3, 2, false), {ID: 3, A: 4, B: 5, Flagged: true}, {ID: 4, A: 6, B: 7, Skipped: true}, {ID: 5, A: 1, B: 2}}
	ls, err := ResolveAll(pairs, labels.DefaultCategories, 10)
	if err != nil {
		t.Fatal(err)
	}
	if ls.Counted != 2 || ls.Flagged != 1 || ls.Skipped != 1 || ls.Unlabeled != 1 || ls.Majority != 2 {
		t.Errorf("counts = %+v; want 2 counted (majority), 1 flagged, 1 skipped, 1 unlabeled", ls)
	}
	if p := ls.Pairs[1]; p.A != 2 || p.B != 3 {
		t.Errorf("pair 2 = (%d, %d); want (2, 3), smaller first", p.A, p.B)
	}
	reordered := []LabeledPair{pairs[4], pairs[1], pairs[3], pairs[0], pairs[2]}
	ls2, _ := ResolveAll(reordered, labels.DefaultCategories, 10)
	if ls2.Version != ls.Version {
		t.Errorf("Version changed with input order: %s vs %s", ls2.Version, ls.Version)
	}
	changed := append([]LabeledPair(nil), pairs...)
	changed[1] = lab(2, 3, 2, true)
	ls3, _ := ResolveAll(changed, labels.DefaultCategories, 10)
	if ls3.Version == ls.Version {
		t.Errorf("Version %s unchanged after a label changed", ls.Version)
	}
	more := append(append([]LabeledPair(nil), pairs...), lab(6, 8, 9, true))
	if ls4, _ := ResolveAll(more, labels.DefaultCategories, 10); ls4.Version == ls.Version || ls4.Counted != 3 {
		t.Errorf("after a new label: version %s (was %s), counted %d; want a new version, 3", ls4.Version, ls.Version, ls4.Counted)
	}

	for _, bad := range []LabeledPair{{ID: 7, A: 0, B: 10}, {ID: 7, A: -1, B: 2}, {ID: 7, A: 3, B: 3}} {
		_, err := ResolveAll(append(pairs[:2:2], bad), labels.DefaultCategories, 10)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != "pairs" || ie.Index != 2 {
			t.Errorf("ResolveAll with %+v = %v; want an InputError on pairs[2]", bad, err)
		}
	}
}

// TestVersionHashAsBefore: VersionHash gives the versions the sweeps stored before it
// (a hash of each pair's fields written one after the other, as this reference does),
// over the demo's counted pairs, so a stored sweep's version still compares equal.
func TestVersionHashAsBefore(t *testing.T) {
	d := loadDemo(t)
	ls, err := ResolveAll(d.design, labels.DefaultCategories, len(d.texts))
	if err != nil {
		t.Fatal(err)
	}
	sorted := slices.Clone(ls.Pairs)
	slices.SortFunc(sorted, func(x, y ResolvedPair) int {
		return cmp.Or(cmp.Compare(x.ID, y.ID), cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B))
	})
	h := sha256.New()
	var buf [8*3 + 1]byte
	for _, p := range sorted {
		binary.LittleEndian.PutUint64(buf[0:], uint64(p.ID))
		binary.LittleEndian.PutUint64(buf[8:], uint64(p.A))
		binary.LittleEndian.PutUint64(buf[16:], uint64(p.B))
		buf[24] = 0
		if p.Duplicate {
			buf[24] = 1
		}
		h.Write(buf[:])
		h.Write([]byte(p.Category))
		h.Write([]byte{0})
	}
	if want := "l" + hex.EncodeToString(h.Sum(nil)[:6]); ls.Version != want {
		t.Errorf("Version = %s; the hash as stored before is %s", ls.Version, want)
	}
	// Pairs out of id order (labelVersion sorts a copy of them only then) hash the same.
	shuffled := slices.Clone(ls.Pairs)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if v := labelVersion(shuffled); v != ls.Version || slices.IsSortedFunc(shuffled, func(x, y ResolvedPair) int { return cmp.Compare(x.ID, y.ID) }) {
		t.Errorf("labelVersion of the pairs shuffled = %s; in order %s", v, ls.Version)
	}
}
