// Package unionfind is the disjoint-set forest behind every connected-components step in
// Dedup Studio: the sweep's clusters per threshold, the cluster policies over a
// dataset's accepted pairs, and the clusters of an engine's imported results.
//
// Elements are the int32 indexes 0..n-1. Union joins by size (the root of the larger set
// stays the root; on equal sizes, the root of Union's first argument stays) and Find
// halves paths, so a run of m operations costs O(m α(n)), in practice constant per
// operation. The forest counts its sets, the sets of two or more, and the largest set
// as unions come in, so a caller that reads them after every edge pays nothing extra.
//
// Which root wins is part of the contract: callers key per-cluster state by root and
// hand it on when two sets merge (Union returns both roots for that). IDs gives a
// root-independent name, the smallest element of each set.
package unionfind

// Forest is a disjoint-set forest over the elements 0..n-1; the zero value is an empty
// forest. It is not safe for concurrent use.
type Forest struct {
	parent  []int32
	size    []int32 // meaningful at roots only
	sets    int
	multi   int // sets of two or more
	largest int
}

// New returns a forest of n sets of one element each.
func New(n int) *Forest {
	f := &Forest{parent: make([]int32, n), size: make([]int32, n), sets: n, largest: min(n, 1)}
	for i := range f.parent {
		f.parent[i] = int32(i)
		f.size[i] = 1
	}
	return f
}

// Len returns the number of elements, n of New.
func (f *Forest) Len() int { return len(f.parent) }

// Find returns the root of x's set. It shortens the path it walks (path halving), so it
// writes to the forest.
func (f *Forest) Find(x int32) int32 {
	p := f.parent
	for p[x] != x {
		p[x] = p[p[x]]
		x = p[x]
	}
	return x
}

// Union joins the sets of a and b and returns the root that stays (keep) and the root
// joined under it (gone): the root of the larger set, or of a's on equal sizes. ok is
// false, and keep == gone, when a and b were one set already.
func (f *Forest) Union(a, b int32) (keep, gone int32, ok bool) {
	ra, rb := f.Find(a), f.Find(b)
	if ra == rb {
		return ra, rb, false
	}
	if f.size[ra] < f.size[rb] {
		ra, rb = rb, ra
	}
	if f.size[ra] >= 2 {
		f.multi--
	}
	if f.size[rb] >= 2 {
		f.multi--
	}
	f.parent[rb] = ra
	f.size[ra] += f.size[rb]
	f.multi++
	f.sets--
	f.largest = max(f.largest, int(f.size[ra]))
	return ra, rb, true
}

// Size returns the number of elements in x's set.
func (f *Forest) Size(x int32) int32 { return f.size[f.Find(x)] }

// Sets returns the number of sets.
func (f *Forest) Sets() int { return f.sets }

// Multi returns the number of sets of two elements or more: the clusters that remove
// something.
func (f *Forest) Multi() int { return f.multi }

// Largest returns the size of the largest set there has been since New (Split does not
// lower it).
func (f *Forest) Largest() int { return f.largest }

// Split makes every element of xs a set of its own again, in time proportional to
// len(xs) rather than n: for a caller that clusters one component at a time with a
// stricter rule. xs must be whole sets (every member of each set it touches, each once);
// otherwise the forest is corrupt.
func (f *Forest) Split(xs []int32) {
	for _, x := range xs {
		if f.parent[x] == x {
			f.sets--
			if f.size[x] >= 2 {
				f.multi--
			}
		}
	}
	for _, x := range xs {
		f.parent[x], f.size[x] = x, 1
	}
	f.sets += len(xs)
}

// IDs returns each element's set id, the smallest element of its set: a name for each
// set that does not depend on the order of the unions.
func (f *Forest) IDs() []int32 {
	n := len(f.parent)
	smallest := make([]int32, n)
	for i := range smallest {
		smallest[i] = -1
	}
	out := make([]int32, n)
	for i := range n {
		r := f.Find(int32(i))
		if smallest[r] < 0 {
			smallest[r] = int32(i)
		}
		out[i] = smallest[r]
	}
	return out
}
