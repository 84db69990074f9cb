package labels

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dedupstudio/dedupstudio/internal/lsh"
)

func join(spans []Span, keep func(Op) bool) string {
	var sb strings.Builder
	for _, s := range spans {
		if keep(s.Op) {
			sb.WriteString(s.Text)
		}
	}
	return sb.String()
}

func TestCompareKeepsTextAndMarksChanges(t *testing.T) {
	t.Parallel()
	a := "Copyright (c) 2019 Jane Doe\n\nPermission is hereby granted, free of charge, to any person"
	b := "Copyright (c) 2023 John Roe\n\nPermission is hereby granted, free of charge, to any person"
	c := Compare(a, b)
	sharedLeft, sharedRight := Shared(a, b, lsh.Norm{Lower: true}, 3)
	all := func(Op) bool { return true }
	if join(c.Left, all) != a || join(c.Right, all) != b {
		t.Fatal("the sides do not reproduce the documents")
	}
	if got := join(c.Left, func(o Op) bool { return o == Removed }); !strings.Contains(got, "2019") || !strings.Contains(got, "Jane") || strings.Contains(got, "Permission") {
		t.Errorf("removed text %q", got)
	}
	if got := join(c.Right, func(o Op) bool { return o == Added }); !strings.Contains(got, "2023") || !strings.Contains(got, "Roe") {
		t.Errorf("added text %q", got)
	}
	unified := join(c.Unified, func(o Op) bool { return o != Added })
	if unified != a {
		t.Errorf("unified minus additions is not the left document: %q", unified)
	}
	if got := join(sharedLeft, func(o Op) bool { return o == Same }); !strings.Contains(got, "Permission is hereby granted") || strings.Contains(got, "2019") {
		t.Errorf("shared shingles on the left: %q", got)
	}
	if join(sharedRight, all) != b {
		t.Error("shared view does not reproduce the right document")
	}
}

// A 200 KB document pair compares in well under the page budget.
func TestCompareLongDocuments(t *testing.T) {
	t.Parallel()
	var a, b strings.Builder
	for i := range 30_000 {
		w := "word" + string(rune('a'+i%26)) + " "
		a.WriteString(w)
		if i%500 == 0 {
			b.WriteString("changed ")
		} else {
			b.WriteString(w)
		}
	}
	c := Compare(a.String(), b.String())
	if l, _ := Shared(a.String(), b.String(), lsh.Norm{Lower: true}, 5); join(l, func(Op) bool { return true }) != a.String() {
		t.Fatal("long shared view altered")
	}
	if join(c.Left, func(Op) bool { return true }) != a.String() {
		t.Fatal("long left side altered")
	}
	if len(c.Left) < 50 {
		t.Errorf("only %d spans for 60 scattered changes", len(c.Left))
	}
}

// BenchmarkCompare measures the pair page's work on two real-sized 200 KB documents that
// differ in scattered words: the word diff and the shared-shingle marking.
func BenchmarkCompare(b *testing.B) {
	var x, y strings.Builder
	for i := range 30_000 {
		w := fmt.Sprintf("w%d ", i%997)
		x.WriteString(w)
		if i%300 == 0 {
			y.WriteString("changed ")
		} else {
			y.WriteString(w)
		}
	}
	b.Run("diff-200KB", func(b *testing.B) {
		b.SetBytes(int64(x.Len() + y.Len()))
		for b.Loop() {
			Compare(x.String(), y.String())
		}
	})
	b.Run("shared-200KB", func(b *testing.B) {
		b.SetBytes(int64(x.Len() + y.Len()))
		for b.Loop() {
			Shared(x.String(), y.String(), lsh.Norm{Lower: true}, 5)
		}
	})
}
