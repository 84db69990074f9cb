#include "textflag.h"

// func permuteMinAVX512(xs, a, b, acc []uint64)
// Requires len(a) == len(b) == len(acc), a multiple of 32, and len(xs) > 0.
TEXT ·permuteMinAVX512(SB), NOSPLIT, $0-96
	MOVQ xs_base+0(FP), SI
	MOVQ xs_len+8(FP), CX
	MOVQ a_base+24(FP), R8
	MOVQ a_len+32(FP), DX
	MOVQ b_base+48(FP), R9
	MOVQ acc_base+72(FP), R10

	MOVQ $0x1FFFFFFFFFFFFFFF, AX
	VPBROADCASTQ AX, Z31 // P = 2^61-1
	MOVQ $0xFFFFFFFF, AX
	VPBROADCASTQ AX, Z30 // low 32 bits

block:
	CMPQ DX, $32
	JLT  done
	VMOVDQU64 (R8), Z0
	VMOVDQU64 64(R8), Z1
	VMOVDQU64 128(R8), Z2
	VMOVDQU64 192(R8), Z3
	VMOVDQU64 (R9), Z4
	VMOVDQU64 64(R9), Z5
	VMOVDQU64 128(R9), Z6
	VMOVDQU64 192(R9), Z7
	VMOVDQU64 (R10), Z8
	VMOVDQU64 64(R10), Z9
	VMOVDQU64 128(R10), Z10
	VMOVDQU64 192(R10), Z11
	MOVQ SI, BX
	MOVQ CX, R12

inner:
	VPBROADCASTQ (BX), Z12

	// t = a*x + b (wrapping)
	VPMULLQ Z12, Z0, Z13
	VPMULLQ Z12, Z1, Z14
	VPMULLQ Z12, Z2, Z15
	VPMULLQ Z12, Z3, Z16
	VPADDQ  Z4, Z13, Z13
	VPADDQ  Z5, Z14, Z14
	VPADDQ  Z6, Z15, Z15
	VPADDQ  Z7, Z16, Z16

	// t = (t & P) + (t >> 61)
	VPSRLQ $61, Z13, Z17
	VPSRLQ $61, Z14, Z18
	VPSRLQ $61, Z15, Z19
	VPSRLQ $61, Z16, Z20
	VPANDQ Z31, Z13, Z13
	VPANDQ Z31, Z14, Z14
	VPANDQ Z31, Z15, Z15
	VPANDQ Z31, Z16, Z16
	VPADDQ Z17, Z13, Z13
	VPADDQ Z18, Z14, Z14
	VPADDQ Z19, Z15, Z15
	VPADDQ Z20, Z16, Z16

	// t = min(t, t-P): t-P wraps above t unless t >= P
	VPSUBQ  Z31, Z13, Z17
	VPSUBQ  Z31, Z14, Z18
	VPSUBQ  Z31, Z15, Z19
	VPSUBQ  Z31, Z16, Z20
	VPMINUQ Z17, Z13, Z13
	VPMINUQ Z18, Z14, Z14
	VPMINUQ Z19, Z15, Z15
	VPMINUQ Z20, Z16, Z16

	// acc = min(acc, t & 0xFFFFFFFF)
	VPANDQ  Z30, Z13, Z13
	VPANDQ  Z30, Z14, Z14
	VPANDQ  Z30, Z15, Z15
	VPANDQ  Z30, Z16, Z16
	VPMINUQ Z13, Z8, Z8
	VPMINUQ Z14, Z9, Z9
	VPMINUQ Z15, Z10, Z10
	VPMINUQ Z16, Z11, Z11

	ADDQ $8, BX
	DECQ R12
	JNZ  inner

	VMOVDQU64 Z8, (R10)
	VMOVDQU64 Z9, 64(R10)
	VMOVDQU64 Z10, 128(R10)
	VMOVDQU64 Z11, 192(R10)
	ADDQ $256, R8
	ADDQ $256, R9
	ADDQ $256, R10
	SUBQ $32, DX
	JMP  block

done:
	VZEROUPPER
	RET

// One chain of the AVX2 kernel: permutations lanes [off, off+4) against the broadcast x in
// X: t = a*x + b (a*x = a_lo*x + (a_hi*x)<<32 mod 2^64, exact since x < 2^32), r = (t & P)
// + (t >> 61), then r+1 where r >= P (its low 32 bits are those of r-P), and ACC =
// min(ACC, low 32 bits of r) by VPMINUD: ACC's high halves are zero, so they stay zero.
#define AVX2_CHAIN(X, AHI, ACC, off, T0, T1) \
	VPMULUDQ off(R8), X, T0; \
	VPMULUDQ AHI, X, T1; \
	VPSLLQ   $32, T1, T1; \
	VPADDQ   T1, T0, T0; \
	VPADDQ   off(R9), T0, T0; \
	VPSRLQ   $61, T0, T1; \
	VPAND    Y15, T0, T0; \
	VPADDQ   T1, T0, T0; \
	VPCMPGTQ Y14, T0, T1; \
	VPSUBQ   T1, T0, T0; \
	VPMINUD  T0, ACC, ACC

// All four chains of a block for one x.
#define AVX2_X(X) \
	AVX2_CHAIN(X, Y4, Y0, 0, Y9, Y10); \
	AVX2_CHAIN(X, Y5, Y1, 32, Y11, Y12); \
	AVX2_CHAIN(X, Y6, Y2, 64, Y9, Y10); \
	AVX2_CHAIN(X, Y7, Y3, 96, Y11, Y12)

// One chain of the AVX2 kernel's fast pass, 8 instructions where AVX2_CHAIN takes 11:
// t' = a*x + (b+1) with b+1 from the frame, and ACC = min(ACC, w), w the low 32 bits of
// t' + (t' >> 61): the mask and the final subtraction of P are left out. With t = a*x + b
// and v = (t mod P) & 0xFFFFFFFF the true value: where the reduction of t needs no
// subtraction ((t & P) + (t >> 61) < P), w = v+1 mod 2^32, so w = 0 for v = 2^32-1 and
// w >= 8 otherwise unless v < 7; where it needs one (t & P == P, or (t & P) + (t >> 61)
// >= P), v is 0 to 7 and w is 0 to 7 too. So when a block's minimum w is 8 or more, no
// lane met a value of the second kind or v = 2^32-1, and min v = min w - 1 exactly;
// otherwise the block is done again by AVX2_CHAIN (about 8 chances in 2^32 per shingle
// and lane).
#define AVX2_FAST_CHAIN(X, AHI, ACC, off, T0, T1) \
	VPMULUDQ off(R8), X, T0; \
	VPMULUDQ AHI, X, T1; \
	VPSLLQ   $32, T1, T1; \
	VPADDQ   T1, T0, T0; \
	VPADDQ   off(SP), T0, T0; \
	VPSRLQ   $61, T0, T1; \
	VPADDQ   T1, T0, T0; \
	VPMINUD  T0, ACC, ACC

#define AVX2_FAST_X(X) \
	AVX2_FAST_CHAIN(X, Y4, Y0, 0, Y9, Y10); \
	AVX2_FAST_CHAIN(X, Y5, Y1, 32, Y11, Y12); \
	AVX2_FAST_CHAIN(X, Y6, Y2, 64, Y9, Y10); \
	AVX2_FAST_CHAIN(X, Y7, Y3, 96, Y11, Y12)

// func permuteMinAVX2(xs, a, b, acc []uint64)
// Requires len(a) == len(b) == len(acc), a multiple of 16, len(xs) > 0, and every acc
// value below 2^32. Sixteen permutations (four 4-lane vectors) per pass over xs, two
// shingles per loop turn: the fast pass (AVX2_FAST_CHAIN) for each block of 16, and the
// exact one (AVX2_CHAIN) for the rare block the fast pass cannot vouch for. The frame
// holds the block's b+1.
TEXT ·permuteMinAVX2(SB), NOSPLIT, $128-96
	MOVQ xs_base+0(FP), SI
	MOVQ xs_len+8(FP), CX
	MOVQ a_base+24(FP), R8
	MOVQ a_len+32(FP), DX
	MOVQ b_base+48(FP), R9
	MOVQ acc_base+72(FP), R10

avx2block:
	CMPQ DX, $16
	JLT  avx2done

	// Y14 = 1 in each lane; Y15 = 2^32-1, the fast pass's empty minimum (high halves zero).
	MOVQ         $1, AX
	MOVQ         AX, X14
	VPBROADCASTQ X14, Y14
	MOVQ         $0xFFFFFFFF, AX
	MOVQ         AX, X15
	VPBROADCASTQ X15, Y15

	// b+1 (wrapping) into the frame.
	VPADDQ  (R9), Y14, Y9
	VPADDQ  32(R9), Y14, Y10
	VPADDQ  64(R9), Y14, Y11
	VPADDQ  96(R9), Y14, Y12
	VMOVDQU Y9, 0(SP)
	VMOVDQU Y10, 32(SP)
	VMOVDQU Y11, 64(SP)
	VMOVDQU Y12, 96(SP)

	VMOVDQA Y15, Y0
	VMOVDQA Y15, Y1
	VMOVDQA Y15, Y2
	VMOVDQA Y15, Y3
	VMOVDQU (R8), Y4
	VMOVDQU 32(R8), Y5
	VMOVDQU 64(R8), Y6
	VMOVDQU 96(R8), Y7
	VPSRLQ  $32, Y4, Y4 // a_hi
	VPSRLQ  $32, Y5, Y5
	VPSRLQ  $32, Y6, Y6
	VPSRLQ  $32, Y7, Y7
	MOVQ    SI, BX
	MOVQ    CX, R12
	SHRQ    $1, R12
	JZ      fastodd

fastpair:
	VPBROADCASTQ (BX), Y8
	VPBROADCASTQ 8(BX), Y13
	AVX2_FAST_X(Y8)
	AVX2_FAST_X(Y13)
	ADDQ $16, BX
	DECQ R12
	JNZ  fastpair

fastodd:
	TESTQ $1, CX
	JZ    fastcheck
	VPBROADCASTQ (BX), Y8
	AVX2_FAST_X(Y8)

fastcheck:
	// Every lane's minimum w must be 8 or more: max(w, 8) == w in each low half (the high
	// halves are zero on both sides).
	VPMINUD      Y0, Y1, Y9
	VPMINUD      Y2, Y9, Y9
	VPMINUD      Y3, Y9, Y9
	MOVQ         $8, AX
	MOVQ         AX, X10
	VPBROADCASTQ X10, Y10
	VPMAXUD      Y10, Y9, Y11
	VPCMPEQD     Y9, Y11, Y11
	VPMOVMSKB    Y11, AX
	NOTL         AX
	TESTL        AX, AX
	JNZ          exactblock

	// acc = min(acc, w - 1)
	VPSUBQ  Y14, Y0, Y0
	VPSUBQ  Y14, Y1, Y1
	VPSUBQ  Y14, Y2, Y2
	VPSUBQ  Y14, Y3, Y3
	VPMINUD (R10), Y0, Y0
	VPMINUD 32(R10), Y1, Y1
	VPMINUD 64(R10), Y2, Y2
	VPMINUD 96(R10), Y3, Y3
	JMP     avx2store

exactblock:
	// The block again, exactly, from acc as it was (not yet stored).
	MOVQ         $0x1FFFFFFFFFFFFFFF, AX
	MOVQ         AX, X15
	VPBROADCASTQ X15, Y15 // P = 2^61-1
	MOVQ         $0x1FFFFFFFFFFFFFFE, AX
	MOVQ         AX, X14
	VPBROADCASTQ X14, Y14 // P-1
	VMOVDQU      (R10), Y0
	VMOVDQU      32(R10), Y1
	VMOVDQU      64(R10), Y2
	VMOVDQU      96(R10), Y3
	MOVQ         SI, BX
	MOVQ         CX, R12
	SHRQ         $1, R12
	JZ           avx2odd

avx2pair:
	VPBROADCASTQ (BX), Y8
	VPBROADCASTQ 8(BX), Y13
	AVX2_X(Y8)
	AVX2_X(Y13)
	ADDQ $16, BX
	DECQ R12
	JNZ  avx2pair

avx2odd:
	TESTQ $1, CX
	JZ    avx2store
	VPBROADCASTQ (BX), Y8
	AVX2_X(Y8)

avx2store:
	VMOVDQU Y0, (R10)
	VMOVDQU Y1, 32(R10)
	VMOVDQU Y2, 64(R10)
	VMOVDQU Y3, 96(R10)
	ADDQ    $128, R8
	ADDQ    $128, R9
	ADDQ    $128, R10
	SUBQ    $16, DX
	JMP     avx2block

avx2done:
	VZEROUPPER
	RET
