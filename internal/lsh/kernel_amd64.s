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

// func permuteMinAVX2(xs, a, b, acc []uint64)
// Requires len(a) == len(b) == len(acc), a multiple of 16, len(xs) > 0, and every acc
// value below 2^32. Sixteen permutations (four 4-lane vectors) per pass over xs, two
// shingles per loop turn.
TEXT ·permuteMinAVX2(SB), NOSPLIT, $0-96
	MOVQ xs_base+0(FP), SI
	MOVQ xs_len+8(FP), CX
	MOVQ a_base+24(FP), R8
	MOVQ a_len+32(FP), DX
	MOVQ b_base+48(FP), R9
	MOVQ acc_base+72(FP), R10

	MOVQ         $0x1FFFFFFFFFFFFFFF, AX
	MOVQ         AX, X15
	VPBROADCASTQ X15, Y15 // P = 2^61-1
	MOVQ         $0x1FFFFFFFFFFFFFFE, AX
	MOVQ         AX, X14
	VPBROADCASTQ X14, Y14 // P-1

avx2block:
	CMPQ    DX, $16
	JLT     avx2done
	VMOVDQU (R10), Y0
	VMOVDQU 32(R10), Y1
	VMOVDQU 64(R10), Y2
	VMOVDQU 96(R10), Y3
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
	JZ      avx2odd

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
