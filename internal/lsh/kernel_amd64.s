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

// One scalar lane of hybridAVX2: t = x*a + (b+1) (wrapping, x in AX), w = low 32 bits of
// t + (t >> 61), M = min(M, w): the shortcut of permuteQuick, eight instructions on the
// integer side while the vector side waits on its multiplier.
#define HYBRID_SCALAR(off, M) \
	MOVQ    AX, DX; \
	IMULQ   off(SI), DX; \
	ADDQ    off+32(SI), DX; \
	MOVQ    DX, DI; \
	SHRQ    $61, DI; \
	ADDL    DI, DX; \
	CMPL    DX, M; \
	CMOVLCS DX, M

// func hybridAVX2(xs []uint64, p *hybridPass)
// Requires len(xs) > 0. One pass over xs for 16 vector lanes (low32(a), low32(b)+8 at
// offsets 0 and 64; out at 192, 256, 320: for each lane over every x, the least and the
// second least L = low32(a)*x + low32(b)+8 mod 2^32 by VPMULLD, and an x reaching the
// least) and 4 scalar lanes (a at 128, b+1
// at 160; the least w out at 384 as uint64s). See permuteMinAVX2.
TEXT ·hybridAVX2(SB), NOSPLIT, $0-32
	MOVQ xs_base+0(FP), BX
	MOVQ xs_len+8(FP), R12
	MOVQ p+24(FP), SI

	VPCMPEQD Y15, Y15, Y15
	VMOVDQU  0(SI), Y0
	VMOVDQU  32(SI), Y1
	VMOVDQU  64(SI), Y2
	VMOVDQU  96(SI), Y3
	VMOVDQA  Y15, Y4
	VMOVDQA  Y15, Y5
	VMOVDQA  Y15, Y6
	VMOVDQA  Y15, Y7
	VPXOR    Y8, Y8, Y8
	VPXOR    Y9, Y9, Y9
	MOVL     $0xFFFFFFFF, R8
	MOVL     $0xFFFFFFFF, R9
	MOVL     $0xFFFFFFFF, R10
	MOVL     $0xFFFFFFFF, R11

hybridloop:
	VPBROADCASTD (BX), Y10
	MOVL         (BX), AX
	VPMULLD      Y10, Y0, Y11
	VPMULLD      Y10, Y1, Y12
	HYBRID_SCALAR(128, R8)
	VPADDD       Y2, Y11, Y11
	VPADDD       Y3, Y12, Y12
	VPMAXUD      Y4, Y11, Y13
	VPMAXUD      Y5, Y12, Y14
	HYBRID_SCALAR(136, R9)
	VPMINUD      Y13, Y6, Y6
	VPMINUD      Y14, Y7, Y7
	VPMINUD      Y11, Y4, Y4
	VPMINUD      Y12, Y5, Y5
	HYBRID_SCALAR(144, R10)
	VPCMPEQD     Y4, Y11, Y13
	VPCMPEQD     Y5, Y12, Y14
	VPBLENDVB    Y13, Y10, Y8, Y8
	VPBLENDVB    Y14, Y10, Y9, Y9
	HYBRID_SCALAR(152, R11)
	ADDQ         $8, BX
	DECQ         R12
	JNZ          hybridloop

	VMOVDQU Y4, 192(SI)
	VMOVDQU Y5, 224(SI)
	VMOVDQU Y6, 256(SI)
	VMOVDQU Y7, 288(SI)
	VMOVDQU Y8, 320(SI)
	VMOVDQU Y9, 352(SI)
	MOVQ    R8, 384(SI)
	MOVQ    R9, 392(SI)
	MOVQ    R10, 400(SI)
	MOVQ    R11, 408(SI)
	VZEROUPPER
	RET
