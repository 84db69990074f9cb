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

// permuteMinAVX2 is the kernel for len(a) a multiple of 16: 16 permutations (four 4-lane
// vectors) per pass over xs, two shingles per loop turn. AVX2 has no 64-bit multiply-low;
// since x < 2^32, a*x mod 2^64 is a_lo*x + (a_hi*x)<<32, two VPMULUDQ.
//
//go:noescape
func permuteMinAVX2(xs, a, b, acc []uint64)
