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

// func argminAVX2(xs []uint64, lo, bo, m1, m2, arg []uint32)
// Requires len(lo) == len(bo) == len(m1) == len(m2) == len(arg), a multiple of 16, and
// len(xs) > 0. For each lane j, over every x in xs (its low 32 bits): L = lo[j]*x + bo[j]
// mod 2^32 (VPMULLD, eight 32-bit lanes at a time), m1[j] = the least L, m2[j] = the
// second least (equal to m1[j] on a tie), arg[j] = an x whose L is m1[j]. Sixteen lanes
// (two vectors) per pass over xs; see permuteMinAVX2 for what the caller makes of them.
TEXT ·argminAVX2(SB), NOSPLIT, $0-144
	MOVQ xs_base+0(FP), SI
	MOVQ xs_len+8(FP), CX
	MOVQ lo_base+24(FP), R8
	MOVQ lo_len+32(FP), DX
	MOVQ bo_base+48(FP), R9
	MOVQ m1_base+72(FP), R10
	MOVQ m2_base+96(FP), R11
	MOVQ arg_base+120(FP), R13

	// Y15 = 2^32-1 in every lane: the empty minimum.
	VPCMPEQD Y15, Y15, Y15

argblock:
	CMPQ DX, $16
	JLT  argdone
	VMOVDQU (R8), Y0
	VMOVDQU 32(R8), Y1
	VMOVDQU (R9), Y2
	VMOVDQU 32(R9), Y3
	VMOVDQA Y15, Y4
	VMOVDQA Y15, Y5
	VMOVDQA Y15, Y6
	VMOVDQA Y15, Y7
	VPXOR   Y8, Y8, Y8
	VPXOR   Y9, Y9, Y9
	MOVQ    SI, BX
	MOVQ    CX, R12

argloop:
	VPBROADCASTD (BX), Y10
	VPMULLD      Y10, Y0, Y11 // L = lo*x + bo
	VPMULLD      Y10, Y1, Y12
	VPADDD       Y2, Y11, Y11
	VPADDD       Y3, Y12, Y12
	VPMAXUD      Y4, Y11, Y13 // m2 = min(m2, max(m1, L))
	VPMAXUD      Y5, Y12, Y14
	VPMINUD      Y13, Y6, Y6
	VPMINUD      Y14, Y7, Y7
	VPMINUD      Y11, Y4, Y4  // m1 = min(m1, L)
	VPMINUD      Y12, Y5, Y5
	VPCMPEQD     Y4, Y11, Y13 // arg = x where L == m1
	VPCMPEQD     Y5, Y12, Y14
	VPBLENDVB    Y13, Y10, Y8, Y8
	VPBLENDVB    Y14, Y10, Y9, Y9
	ADDQ         $8, BX
	DECQ         R12
	JNZ          argloop

	VMOVDQU Y4, (R10)
	VMOVDQU Y5, 32(R10)
	VMOVDQU Y6, (R11)
	VMOVDQU Y7, 32(R11)
	VMOVDQU Y8, (R13)
	VMOVDQU Y9, 32(R13)
	ADDQ    $64, R8
	ADDQ    $64, R9
	ADDQ    $64, R10
	ADDQ    $64, R11
	ADDQ    $64, R13
	SUBQ    $16, DX
	JMP     argblock

argdone:
	VZEROUPPER
	RET
