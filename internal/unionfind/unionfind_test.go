package unionfind

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestUnionKeepsRoot(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		before   [][2]int32 // unions done first
		a, b     int32
		keep     int32
		gone     int32
		ok       bool
		wantSets int
	}{
		{"equal sizes keep a's root", nil, 3, 1, 3, 1, true, 4},
		{"equal sizes keep a's root, other order", nil, 1, 3, 1, 3, true, 4},
		{"larger set's root stays", [][2]int32{{4, 2}}, 0, 2, 4, 0, true, 3},
		{"larger set's root stays when it is b's", [][2]int32{{0, 1}, {0, 2}}, 4, 2, 0, 4, true, 2},
		{"one set already", [][2]int32{{0, 1}}, 1, 0, 0, 0, false, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := New(5)
			for _, u := range tt.before {
				f.Union(u[0], u[1])
			}
			keep, gone, ok := f.Union(tt.a, tt.b)
			if keep != tt.keep || gone != tt.gone || ok != tt.ok {
				t.Errorf("Union(%d, %d) = %d, %d, %v; want %d, %d, %v", tt.a, tt.b, keep, gone, ok, tt.keep, tt.gone, tt.ok)
			}
			if got := f.Find(tt.a); got != tt.keep {
				t.Errorf("Find(%d) = %d; want %d", tt.a, got, tt.keep)
			}
			if got := f.Sets(); got != tt.wantSets {
				t.Errorf("Sets() = %d; want %d", got, tt.wantSets)
			}
		})
	}
}

func TestEmpty(t *testing.T) {
	t.Parallel()
	for _, f := range []*Forest{New(0), {}} {
		if f.Len() != 0 || f.Sets() != 0 || f.Multi() != 0 || f.Largest() != 0 || len(f.IDs()) != 0 {
			t.Errorf("empty forest: Len %d Sets %d Multi %d Largest %d IDs %v; want all zero", f.Len(), f.Sets(), f.Multi(), f.Largest(), f.IDs())
		}
	}
	if f := New(1); f.Sets() != 1 || f.Largest() != 1 || f.Multi() != 0 {
		t.Errorf("New(1): Sets %d Largest %d Multi %d; want 1 1 0", f.Sets(), f.Largest(), f.Multi())
	}
}

// naive is the reference: a label per element, relabelled in full on every union.
type naive []int32

func (l naive) union(a, b int32) {
	from, to := l[a], l[b]
	for i := range l {
		if l[i] == from {
			l[i] = to
		}
	}
}

// counts returns the reference's set count, sets of two or more, the largest set, the
// size of each element's set and each element's smallest set-mate.
func (l naive) counts() (sets, multi, largest int, size, ids []int32) {
	bySet := map[int32][]int32{}
	for i, s := range l {
		bySet[s] = append(bySet[s], int32(i))
	}
	size, ids = make([]int32, len(l)), make([]int32, len(l))
	for _, m := range bySet {
		if len(m) >= 2 {
			multi++
		}
		largest = max(largest, len(m))
		for _, x := range m {
			size[x], ids[x] = int32(len(m)), slices.Min(m)
		}
	}
	return len(bySet), multi, largest, size, ids
}

// TestAgainstReference runs seeded random unions (and splits of whole sets) on forests
// of several sizes and checks every count and every element's set against the naive
// reference after each step.
func TestAgainstReference(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 7, 60, 300} {
		r := rand.New(rand.NewPCG(uint64(n), 21))
		f, ref := New(n), make(naive, n)
		for i := range ref {
			ref[i] = int32(i)
		}
		largestSeen := 1
		for step := range 3 * n {
			if step%17 == 16 { // split one whole set back into singletons
				x := int32(r.IntN(n))
				var members []int32
				for i, s := range ref {
					if s == ref[x] {
						members = append(members, int32(i))
					}
				}
				f.Split(members)
				for _, m := range members {
					ref[m] = m
				}
			} else {
				a, b := int32(r.IntN(n)), int32(r.IntN(n))
				same := ref[a] == ref[b]
				keep, gone, ok := f.Union(a, b)
				if ok == same {
					t.Fatalf("n=%d step %d: Union(%d, %d) ok = %v; want %v", n, step, a, b, ok, !same)
				}
				if ok && (f.Find(gone) != keep || f.Find(a) != keep || f.Find(b) != keep) {
					t.Fatalf("n=%d step %d: after Union(%d, %d) = %d, %d: Find(a, b, gone) = %d, %d, %d; want all %d",
						n, step, a, b, keep, gone, f.Find(a), f.Find(b), f.Find(gone), keep)
				}
				ref.union(a, b)
			}
			sets, multi, largest, size, ids := ref.counts()
			largestSeen = max(largestSeen, largest)
			if f.Sets() != sets || f.Multi() != multi || f.Largest() != largestSeen {
				t.Fatalf("n=%d step %d: Sets, Multi, Largest = %d, %d, %d; want %d, %d, %d",
					n, step, f.Sets(), f.Multi(), f.Largest(), sets, multi, largestSeen)
			}
			if got := f.IDs(); !slices.Equal(got, ids) {
				t.Fatalf("n=%d step %d: IDs() = %v; want %v", n, step, got, ids)
			}
			for x := range int32(n) {
				if got := f.Size(x); got != size[x] {
					t.Fatalf("n=%d step %d: Size(%d) = %d; want %d", n, step, x, got, size[x])
				}
			}
		}
	}
}

func BenchmarkUnionFind(b *testing.B) {
	const n = 1 << 16
	r := rand.New(rand.NewPCG(1, 2))
	edges := make([][2]int32, n)
	for i := range edges {
		edges[i] = [2]int32{int32(r.IntN(n)), int32(r.IntN(n))}
	}
	b.ReportAllocs()
	for b.Loop() {
		f := New(n)
		for _, e := range edges {
			f.Union(e[0], e[1])
		}
		_ = f.IDs()
	}
}
