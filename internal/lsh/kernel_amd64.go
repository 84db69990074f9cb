package lsh

import "golang.org/x/sys/cpu"

// hasAVX512 is true where the AVX-512 kernel can run (F for the 512-bit integer ops,
// DQ for VPMULLQ, the 64-bit lane multiply).
var hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ

// permuteMinAVX512 is permuteMinGeneric for len(a) a multiple of 32, 32 permutations
// (four 8-lane vectors) per pass over xs. Implemented in kernel_amd64.s.
//
//go:noescape
func permuteMinAVX512(xs, a, b, acc []uint64)

func permuteMin(xs, a, b, acc []uint64) {
	if hasAVX512 && len(xs) > 0 {
		n := len(a) &^ 31
		if n > 0 {
			permuteMinAVX512(xs, a[:n], b[:n], acc[:n])
		}
		if n < len(a) {
			permuteMinGeneric(xs, a[n:], b[n:], acc[n:])
		}
		return
	}
	permuteMinGeneric(xs, a, b, acc)
}
