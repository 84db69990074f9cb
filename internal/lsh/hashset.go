package lsh

import (
	"math/bits"
	"slices"
)

// sortedSet returns the distinct values of s, sorted, in a new slice of exactly their
// number (a set is often kept for long: no spare capacity). s holds 64-bit hashes, so
// their top bits spread them evenly: two counting passes (LSD radix on the top 2b bits,
// 2^b <= len(s)) leave them sorted by those bits, where distinct values rarely tie, and
// an insertion pass finishes the few that do. Repeats of a shingle end side by side.
// Values chosen to share their top bits (a hostile text's) would make the insertion
// pass quadratic: past 8 moves a value it hands over to a comparison sort, so no input
// costs more than n log n. s is the caller's buffer; its order changes.
func (h *Hasher) sortedSet(s []uint64) []uint64 {
	n := len(s)
	if n == 0 {
		return nil
	}
	if n < 64 {
		slices.Sort(s)
		s = slices.Compact(s)
		out := make([]uint64, len(s))
		copy(out, s)
		return out
	}
	b := min(bits.Len(uint(n))-1, 16)
	hiShift, loShift, mask := 64-b, 64-2*b, uint64(1)<<b-1
	count := resize(h.count, 2<<b)
	h.count = count
	lo, hi := count[:1<<b], count[1<<b:]
	for _, v := range s {
		lo[v>>loShift&mask]++
		hi[v>>hiShift]++
	}
	var sumLo, sumHi int32
	for d := range lo {
		lo[d], sumLo = sumLo, sumLo+lo[d]
		hi[d], sumHi = sumHi, sumHi+hi[d]
	}
	tmp := slices.Grow(h.sorted[:0], n)[:n]
	h.sorted = tmp
	for _, v := range s {
		d := v >> loShift & mask
		tmp[lo[d]] = v
		lo[d]++
	}
	for _, v := range tmp {
		d := v >> hiShift
		s[hi[d]] = v
		hi[d]++
	}
	if !insertionSortUpTo(s, 8*n) {
		slices.Sort(s)
	}
	// The distinct values, branch-free: each value is written, and kept when it differs
	// from the one before (sorted: repeats are side by side).
	k, prev := 1, s[0]
	for _, v := range s[1:] {
		s[k] = v
		k += b2i(v != prev)
		prev = v
	}
	out := make([]uint64, k)
	copy(out, s[:k])
	return out
}

// insertionSortUpTo sorts s by insertion unless that takes more than moves moves; it
// reports whether it finished (s is then sorted; otherwise only reordered).
func insertionSortUpTo(s []uint64, moves int) bool {
	for i := 1; i < len(s); i++ {
		v := s[i]
		j := i
		for ; j > 0 && s[j-1] > v; j-- {
			s[j] = s[j-1]
		}
		s[j] = v
		if moves -= i - j; moves < 0 {
			return false
		}
	}
	return true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
