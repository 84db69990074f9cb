package lsh

// maxHash is the value of an empty signature position: datasketch's _max_hash.
const maxHash = 0xFFFFFFFF

// permuteMinGeneric folds the base hashes xs (32-bit values in uint64 lanes) into acc:
// acc[i] = min(acc[i], ((a[i]*x + b[i]) mod 2^61-1) & 0xFFFFFFFF) for every x.
// The product wraps in uint64 before the reduction, as datasketch (numpy uint64) and
// Milvus (C++ uint64_t) both do; (t & P) + (t >> 61), minus P once if needed, is t mod P.
func permuteMinGeneric(xs, a, b, acc []uint64) {
	b = b[:len(a)]
	acc = acc[:len(a)]
	i := 0
	// Four permutations at a time so each x is loaded once per four multiply chains.
	for ; i+4 <= len(a); i += 4 {
		a0, a1, a2, a3 := a[i], a[i+1], a[i+2], a[i+3]
		b0, b1, b2, b3 := b[i], b[i+1], b[i+2], b[i+3]
		m0, m1, m2, m3 := acc[i], acc[i+1], acc[i+2], acc[i+3]
		for _, x := range xs {
			m0 = min(m0, permute(a0, b0, x))
			m1 = min(m1, permute(a1, b1, x))
			m2 = min(m2, permute(a2, b2, x))
			m3 = min(m3, permute(a3, b3, x))
		}
		acc[i], acc[i+1], acc[i+2], acc[i+3] = m0, m1, m2, m3
	}
	for ; i < len(a); i++ {
		m := acc[i]
		for _, x := range xs {
			m = min(m, permute(a[i], b[i], x))
		}
		acc[i] = m
	}
}

func permute(a, b, x uint64) uint64 {
	t := a*x + b
	t = (t & mersenne61) + (t >> 61)
	if t >= mersenne61 {
		t -= mersenne61
	}
	return t & maxHash
}
