package lsh

import (
	"math/bits"

	"golang.org/x/sys/cpu"
)

// archKernels are the SIMD kernels of kernel_amd64.s.
func archKernels() []kernel {
	avx512 := kernel{name: "avx512", fn: permuteMinAVX512}
	// F for the 512-bit integer ops, DQ for VPMULLQ (the 64-bit lane multiply) and KMOVB.
	if !cpu.X86.HasAVX512F || !cpu.X86.HasAVX512DQ {
		avx512.missing = "this CPU lacks AVX-512F or AVX-512DQ"
	}
	avx2 := kernel{name: "avx2", fn: permuteMinAVX2}
	if !cpu.X86.HasAVX2 {
		avx2.missing = "this CPU lacks AVX2"
	}
	return []kernel{avx512, avx2}
}

// permuteMinAVX512 is the AVX2 kernel's arithmetic (see permuteMinAVX2) in 16-lane
// vectors, for any len(a): passes of up to 64 permutations, four vectors, over xs, each
// lane tracking the least and the second least L+8 by VPMULLD and an x reaching the
// least (a masked broadcast); at the end of the pass, in the same assembly, the lanes
// that the low 32 bits vouch for take their x's exact value (VPMULLQ), and the others
// come back as a bit mask to be computed again the long way. The lanes beyond len(a) of
// the last pass are masked off, so no generic tail is left.
func permuteMinAVX512(xs, a, b, acc []uint64) {
	k := len(a)
	b = b[:k]
	acc = acc[:k]
	for v := 0; v < k; v += 64 {
		n := min(64, k-v)
		bad := passAVX512(xs, &a[v], &b[v], &acc[v], ^uint64(0)>>(64-n), (n+15)/16)
		for bad != 0 {
			j := v + bits.TrailingZeros64(bad)
			bad &= bad - 1
			permuteMinExact(xs, a[j:j+1], b[j:j+1], acc[j:j+1])
		}
	}
}

// passAVX512 is one pass of permuteMinAVX512 over xs for the lanes of mask (bit i: a[i],
// b[i], acc[i]; only those are read or written) in groups of 16 lanes: it updates acc
// where the low 32 bits vouch for the minimum and returns the lanes where they do not.
//
//go:noescape
func passAVX512(xs []uint64, a, b, acc *uint64, mask uint64, groups int) (bad uint64)

// permuteMinAVX2 is the AVX2 kernel, for any len(a). AVX2 has no 64-bit multiply-low,
// and on CPUs that split 256-bit operations in two (Zen 1) the full arithmetic is bound
// by the vector multiplier. But the value kept, v = ((a*x + b) mod 2^64 mod P) &
// 0xFFFFFFFF, differs from the low 32 bits of the sum, L = low32(a)*x + low32(b) mod
// 2^32, by little: with t = a*x + b mod 2^64, v = L + (t >> 61) exactly whenever L <
// 2^32-8 (the reduction needs no final subtraction of P and the sum does not wrap), so
// v is L plus 0 to 7. The vector lanes therefore track only L, one VPMULLD per eight
// permutations: its least value m1, the second least m2 and an x reaching m1, with L
// taken as L+8 mod 2^32 so that values at the top wrap round to the bottom. Where m1 >=
// 8 (no x has L >= 2^32-8) and m2 >= m1+7 (every other x has v >= L >= m1+7 >= v of the
// argmin), the minimum over xs is v of that one x, computed exactly; any other lane
// (about 15n in 2^32 for n shingles) is computed again the long way. While the vector
// side waits on its multiplier, the integer side takes four more permutations per pass
// with permuteQuick's shortcut (its least value w, exact as w-1 when w >= 8).
func permuteMinAVX2(xs, a, b, acc []uint64) {
	k := len(a)
	b = b[:k]
	acc = acc[:k]
	// passes of 16 vector lanes and up to 4 scalar ones: the most lanes hybridAVX2 can
	// cover with every pass's vector lanes full; what is left goes to the generic kernel.
	passes := min((k+hybridLanes-1)/hybridLanes, k/16)
	scalar := min(k-16*passes, 4*passes)
	var p hybridPass
	for pass := range passes {
		v := 16 * pass
		for j := range 16 {
			p.lo[j] = uint32(a[v+j])
			p.bo[j] = uint32(b[v+j]) + 8
		}
		s0 := 16*passes + 4*pass            // this pass's first scalar lane
		ns := max(0, min(4, scalar-4*pass)) // how many it has
		for j := range 4 {
			l := v // a spare slot repeats vector lane v; its result is not used
			if j < ns {
				l = s0 + j
			}
			p.sa[j], p.sb[j] = a[l], b[l]+1
		}
		hybridAVX2(xs, &p)
		for j := range 16 {
			if p.m1[j] >= 8 && p.m2[j]-p.m1[j] >= 7 {
				acc[v+j] = min(acc[v+j], uint64(permute(a[v+j], b[v+j], uint64(p.arg[j]))))
				continue
			}
			permuteMinExact(xs, a[v+j:v+j+1], b[v+j:v+j+1], acc[v+j:v+j+1])
		}
		for j := range ns {
			l := s0 + j
			if w := p.sm[j]; w >= 8 {
				acc[l] = min(acc[l], w-1)
				continue
			}
			permuteMinExact(xs, a[l:l+1], b[l:l+1], acc[l:l+1])
		}
	}
	if rest := 16*passes + scalar; rest < k {
		permuteMinGeneric(xs, a[rest:], b[rest:], acc[rest:])
	}
}

// hybridLanes is how many lanes one hybridAVX2 pass covers: 16 by vector, 4 by scalar.
const hybridLanes = 20

// hybridPass is hybridAVX2's parameters and results; the assembly knows its offsets.
type hybridPass struct {
	lo, bo      [16]uint32 // vector lanes: low32(a), low32(b)+8
	sa, sb      [4]uint64  // scalar lanes: a, b+1
	m1, m2, arg [16]uint32 // vector lanes out: least, second least L+8, an x reaching it
	sm          [4]uint64  // scalar lanes out: the least w
}

// hybridAVX2 is one pass of permuteMinAVX2 over xs: for p's 16 vector lanes, the least
// and second least L+8 and an x reaching the least; for its 4 scalar lanes, on the
// integer units, the least w of permuteQuick.
//
//go:noescape
func hybridAVX2(xs []uint64, p *hybridPass)
