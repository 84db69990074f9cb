package lsh

// The comparisons a sweep makes billions of times: equal positions of two signatures
// (Estimate) and the overlap of two sorted sets (ExactJaccard). Each has a plain Go
// definition and, on amd64 with AVX2, a kernel of sets_amd64.s that gives the same
// count (TestSetKernels compares them on random and real sets).

// Agreement counts the positions where two signatures hold the same value (Estimate
// without the division); b is read to len(a). The generic loop is branch-free:
// agreement is a coin flip at J near 1/2.
func Agreement(a, b Signature) int {
	b = b[:len(a)]
	eq, i := 0, 0
	if setsAVX2 && len(a) >= 16 {
		blocks := len(a) / 16
		eq, i = countEqual32AVX2(&a[0], &b[0], blocks), blocks*16
	}
	for ; i < len(a); i++ {
		eq += b2i(a[i] == b[i])
	}
	return eq
}

// Overlap32 counts the values two sorted sets of distinct values share. With need > 0
// it may stop as soon as the count cannot reach need, and then returns a number under
// need: the count so far plus the most the values not read could add.
func Overlap32(a, b []uint32, need int) int {
	n, i, j := 0, 0, 0
	if setsAVX2 {
		n, i, j = overlap32AVX2(a, b, need)
	}
	return mergeOverlap(a, b, need, n, i, j)
}

// Overlap64 is Overlap32 for 64-bit values (shingle hashes).
func Overlap64(a, b []uint64, need int) int {
	n, i, j := 0, 0, 0
	if setsAVX2 {
		n, i, j = overlap64AVX2(a, b, need)
	}
	return mergeOverlap(a, b, need, n, i, j)
}

// mergeOverlap goes on from a[i:] and b[j:], n values shared before them, with a merge
// that is branch-free (the next value is chosen with comparisons turned into increments:
// on mixed sets about three times faster than a branching one) and checks every 64 steps
// whether need can still be reached.
func mergeOverlap[T uint32 | uint64](a, b []T, need, n, i, j int) int {
	for i < len(a) && j < len(b) {
		if need > 0 {
			if reach := n + min(len(a)-i, len(b)-j); reach < need {
				return reach
			}
		}
		stop := min(len(a)-i, len(b)-j, 64)
		for range stop {
			x, y := a[i], b[j]
			n += b2i(x == y)
			i += b2i(x <= y)
			j += b2i(y <= x)
		}
	}
	return n
}

// anyEqual64 reports whether a and b hold the same value at some position; len(b) >=
// len(a). Candidate generation asks it for every pair a band proposes: did an earlier
// band propose the pair already?
func anyEqual64(a, b []uint64) bool {
	b = b[:len(a)]
	i := 0
	if setsAVX2 && len(a) >= 4 {
		blocks := len(a) / 4
		if anyEqual64AVX2(&a[0], &b[0], blocks) {
			return true
		}
		i = blocks * 4
	}
	for ; i < len(a); i++ {
		if a[i] == b[i] {
			return true
		}
	}
	return false
}
