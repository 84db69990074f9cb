package lsh

import "golang.org/x/sys/cpu"

// archKernels are the SIMD kernels of kernel_amd64.s, fastest first.
func archKernels() []kernel {
	avx512 := kernel{name: "avx512", block: 32, fn: permuteMinAVX512}
	// F for the 512-bit integer ops, DQ for VPMULLQ (the 64-bit lane multiply).
	if !cpu.X86.HasAVX512F || !cpu.X86.HasAVX512DQ {
		avx512.missing = "this CPU lacks AVX-512F or AVX-512DQ"
	}
	avx2 := kernel{name: "avx2", block: 16, fn: permuteMinAVX2}
	if !cpu.X86.HasAVX2 {
		avx2.missing = "this CPU lacks AVX2"
	}
	return []kernel{avx512, avx2}
}

// permuteMinAVX512 is the kernel for len(a) a multiple of 32: 32 permutations (four
// 8-lane vectors) per pass over xs, a*x by VPMULLQ.
//
//go:noescape
func permuteMinAVX512(xs, a, b, acc []uint64)

// argBlock is how many permutations permuteMinAVX2 hands argminAVX2 at a time: its
// scratch arrays live on the stack.
const argBlock = 64

// permuteMinAVX2 is the kernel for len(a) a multiple of 16. AVX2 has no 64-bit
// multiply-low, and on CPUs that split 256-bit operations in two (Zen 1) its 32x32->64
// multiply (VPMULUDQ) is the bottleneck of the full arithmetic, two per four lanes. But
// the value kept, v = ((a*x + b) mod 2^64 mod P) & 0xFFFFFFFF, differs from the low 32
// bits of the sum, L = low32(a)*x + low32(b) mod 2^32, by little: with t = a*x + b mod
// 2^64, v = L + (t >> 61) exactly whenever L < 2^32-8 (the reduction then needs no
// final subtraction of P and the sum does not wrap), so v is L plus 0 to 7. argminAVX2
// therefore tracks, per permutation, only L (one VPMULLD per eight lanes): its least
// value m1, the second least m2 and an x reaching m1, with L taken as L+8 mod 2^32 so
// that values at the top wrap round to the bottom. Where m1 >= 8 (no x has L >= 2^32-8)
// and m2 >= m1+8 (every other x has v >= L > m1+7 >= v of the argmin), the minimum
// over xs is v of that one x, computed exactly; any other lane (about 16n in 2^32 for
// n shingles) is computed again the long way.
func permuteMinAVX2(xs, a, b, acc []uint64) {
	var lo, bo, m1, m2, arg [argBlock]uint32
	b = b[:len(a)]
	acc = acc[:len(a)]
	for i := 0; i < len(a); i += argBlock {
		n := min(argBlock, len(a)-i)
		for j := range n {
			lo[j] = uint32(a[i+j])
			bo[j] = uint32(b[i+j]) + 8
		}
		argminAVX2(xs, lo[:n], bo[:n], m1[:n], m2[:n], arg[:n])
		for j := range n {
			if m1[j] >= 8 && m2[j]-m1[j] >= 8 {
				acc[i+j] = min(acc[i+j], uint64(permute(a[i+j], b[i+j], uint64(arg[j]))))
				continue
			}
			permuteMinExact(xs, a[i+j:i+j+1], b[i+j:i+j+1], acc[i+j:i+j+1])
		}
	}
}

// argminAVX2 is the pass of permuteMinAVX2 over xs: for lanes j in multiples of 16, m1[j]
// and m2[j] are the least and second least of lo[j]*x + bo[j] mod 2^32 over x in xs (the
// low 32 bits of each), arg[j] an x reaching m1[j].
//
//go:noescape
func argminAVX2(xs []uint64, lo, bo, m1, m2, arg []uint32)
