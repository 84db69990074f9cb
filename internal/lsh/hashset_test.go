package lsh

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// sortedSet against a comparison sort and Compact: sizes on both sides of the small
// path and of powers of two, repeats of every kind, and values chosen to share their
// top bits (one bucket holding everything), as a hostile text's hashes could.
func TestSortedSet(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 9))
	h := &Hasher{}
	kinds := map[string]func(n int) []uint64{
		"uniform": func(n int) []uint64 {
			s := make([]uint64, n)
			for i := range s {
				s[i] = rng.Uint64()
			}
			return s
		},
		"repeats": func(n int) []uint64 {
			pool := make([]uint64, 1+rng.IntN(max(1, n/3)))
			for i := range pool {
				pool[i] = rng.Uint64()
			}
			s := make([]uint64, n)
			for i := range s {
				s[i] = pool[rng.IntN(len(pool))]
			}
			return s
		},
		"one value": func(n int) []uint64 { return slices.Repeat([]uint64{rng.Uint64()}, n) },
		"shared top bits": func(n int) []uint64 {
			s := make([]uint64, n)
			top := rng.Uint64() &^ (1<<40 - 1)
			for i := range s {
				s[i] = top | rng.Uint64N(1<<40)
			}
			return s
		},
		"two interleaved": func(n int) []uint64 {
			a, b := rng.Uint64()>>1, rng.Uint64()>>1|1<<63-1
			s := make([]uint64, n)
			for i := range s {
				s[i] = a
				if i%2 == 1 {
					s[i] = b
				}
			}
			return s
		},
		"small and zero": func(n int) []uint64 {
			s := make([]uint64, n)
			for i := range s {
				s[i] = rng.Uint64N(5)
			}
			return s
		},
	}
	for name, gen := range kinds {
		for _, n := range []int{0, 1, 2, 15, 16, 17, 63, 64, 65, 127, 128, 129, 1000, 1 << 12, 5000, 70_000} {
			in := gen(n)
			want := slices.Compact(slices.Sorted(slices.Values(in)))
			got := h.sortedSet(slices.Clone(in))
			if !slices.Equal(got, want) {
				t.Fatalf("%s, n=%d: %d values, want %d (first difference at %d)", name, n, len(got), len(want), firstDiff(got, want))
			}
			if cap(got) != len(got) {
				t.Fatalf("%s, n=%d: capacity %d for %d values: a kept set would waste the rest", name, n, cap(got), len(got))
			}
		}
	}
}

func firstDiff(a, b []uint64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
