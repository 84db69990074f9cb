#include "textflag.h"

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

// One shingle x (a uint32 at (BX)) for one 16-lane group of passAVX512: L = lo*x + bo
// (bo = low32(b)+8, all mod 2^32), m2 = min(m2, max(m1, L)), the lanes where L < m1 take
// x as their arg (a masked broadcast), m1 = min(m1, L).
#define ROUND512(LO, BO, M1, M2, ARG, T, U, K) \
	VPMULLD.BCST (BX), LO, T; \
	VPADDD       BO, T, T; \
	VPMAXUD      M1, T, U; \
	VPCMPUD      $1, M1, T, K; \
	VPMINUD      U, M2, M2; \
	VPMINUD      T, M1, M1; \
	VPBROADCASTD (BX), K, ARG

// Loads lanes [16g, 16g+16) of a (at R8) and b (at R9) for group g at byte offset OFF =
// 128g, masked by the bytes of mask (R11) at bits 16g and 16g+8, into LO = low32(a) and
// BO = low32(b)+8 (Z29 holds 8 in every lane). Z20-Z23 are scratch.
#define LOAD512(OFF, SH, LO, BO) \
	MOVQ         R11, AX; \
	SHRQ         $SH, AX; \
	KMOVB        AX, K1; \
	SHRQ         $8, AX; \
	KMOVB        AX, K2; \
	VMOVDQU64.Z  OFF(R8), K1, Z20; \
	VMOVDQU64.Z  OFF+64(R8), K2, Z21; \
	VMOVDQU64.Z  OFF(R9), K1, Z22; \
	VMOVDQU64.Z  OFF+64(R9), K2, Z23; \
	VPMOVQD      Z20, Y20; \
	VPMOVQD      Z21, Y21; \
	VPMOVQD      Z22, Y22; \
	VPMOVQD      Z23, Y23; \
	VINSERTI64X4 $1, Y21, Z20, LO; \
	VINSERTI64X4 $1, Y23, Z22, BO; \
	VPADDD       Z29, BO, BO

// acc = min(acc, the exact permuted value of x) for the 8 lanes at byte offset OFF of a,
// b and acc, x the zero-extended dwords of XS (a Y register), masked by K1. Z30 = P,
// Z31 = 0xFFFFFFFF in every qword; Z20-Z24 are scratch.
#define EXACT512(OFF, XS) \
	VPMOVZXDQ   XS, Z20; \
	VMOVDQU64.Z OFF(R8), K1, Z21; \
	VMOVDQU64.Z OFF(R9), K1, Z22; \
	VMOVDQU64.Z OFF(R10), K1, Z23; \
	VPMULLQ     Z20, Z21, Z21; \
	VPADDQ      Z22, Z21, Z21; \
	VPSRLQ      $61, Z21, Z24; \
	VPANDQ      Z30, Z21, Z21; \
	VPADDQ      Z24, Z21, Z21; \
	VPSUBQ      Z30, Z21, Z24; \
	VPMINUQ     Z24, Z21, Z21; \
	VPANDQ      Z31, Z21, Z21; \
	VPMINUQ     Z21, Z23, Z23; \
	VMOVDQU64   Z23, K1, OFF(R10)

// The end of group g of passAVX512 (registers M1, M2, ARG and ARGY its low half, byte offset OFF = 128g, shift
// SH = 16g): its lanes whose minimum the low 32 bits cannot vouch for (m1 < 8 or m2-m1 <
// 7) are ORed into DI at bit 16g, and every other lane's acc takes the exact value of its
// arg. (A lane in DI gets the value of its arg too: a value some x reaches, so no less
// than the true minimum, which the caller computes.)
#define FINISH512(OFF, SH, M1, M2, ARG, ARGY) \
	VPSUBD         M1, M2, Z25; \
	VPCMPUD        $1, Z28, M1, K3; \
	VPCMPUD        $1, Z27, Z25, K4; \
	KORW           K3, K4, K3; \
	KMOVW          K3, AX; \
	SHLQ           $SH, AX; \
	ORQ            AX, DI; \
	MOVQ           R11, AX; \
	SHRQ           $SH, AX; \
	KMOVB          AX, K1; \
	EXACT512(OFF, ARGY); \
	SHRQ           $8, AX; \
	KMOVB          AX, K1; \
	VEXTRACTI64X4  $1, ARG, Y26; \
	EXACT512(OFF+64, Y26)

// func passAVX512(xs []uint64, a, b, acc *uint64, mask uint64, groups int) (bad uint64)
// Requires len(xs) > 0, groups = 1..4 and mask the lanes [0, n) of a, b and acc (n <=
// 16*groups). See permuteMinAVX512.
TEXT ·passAVX512(SB), NOSPLIT, $0-72
	MOVQ xs_base+0(FP), SI
	MOVQ xs_len+8(FP), CX
	MOVQ a+24(FP), R8
	MOVQ b+32(FP), R9
	MOVQ acc+40(FP), R10
	MOVQ mask+48(FP), R11
	MOVQ groups+56(FP), DX

	MOVL         $8, AX
	VPBROADCASTD AX, Z29
	VMOVDQA64    Z29, Z28             // 8: m1 below it has an L at the top
	MOVL         $7, AX
	VPBROADCASTD AX, Z27              // 7: the least gap to the second least
	MOVQ         $0x1FFFFFFFFFFFFFFF, AX
	VPBROADCASTQ AX, Z30              // P = 2^61-1
	MOVQ         $0xFFFFFFFF, AX
	VPBROADCASTQ AX, Z31              // low 32 bits

	LOAD512(0, 0, Z0, Z4)
	LOAD512(128, 16, Z1, Z5)
	LOAD512(256, 32, Z2, Z6)
	LOAD512(384, 48, Z3, Z7)
	VPTERNLOGD $0xFF, Z8, Z8, Z8
	VMOVDQA64  Z8, Z9
	VMOVDQA64  Z8, Z10
	VMOVDQA64  Z8, Z11
	VMOVDQA64  Z8, Z12
	VMOVDQA64  Z8, Z13
	VMOVDQA64  Z8, Z14
	VMOVDQA64  Z8, Z15
	VPBROADCASTD (SI), Z16 // the first x: arg is always an x of xs
	VMOVDQA64    Z16, Z17
	VMOVDQA64    Z16, Z18
	VMOVDQA64    Z16, Z19

	MOVQ SI, BX
	CMPQ DX, $4
	JEQ  loop4
	CMPQ DX, $3
	JEQ  loop3
	CMPQ DX, $2
	JEQ  loop2

loop1:
	ROUND512(Z0, Z4, Z8, Z12, Z16, Z20, Z24, K1)
	ADDQ $8, BX
	DECQ CX
	JNZ  loop1
	JMP  finish

loop2:
	ROUND512(Z0, Z4, Z8, Z12, Z16, Z20, Z24, K1)
	ROUND512(Z1, Z5, Z9, Z13, Z17, Z21, Z25, K2)
	ADDQ $8, BX
	DECQ CX
	JNZ  loop2
	JMP  finish

loop3:
	ROUND512(Z0, Z4, Z8, Z12, Z16, Z20, Z24, K1)
	ROUND512(Z1, Z5, Z9, Z13, Z17, Z21, Z25, K2)
	ROUND512(Z2, Z6, Z10, Z14, Z18, Z22, Z26, K3)
	ADDQ $8, BX
	DECQ CX
	JNZ  loop3
	JMP  finish

loop4:
	ROUND512(Z0, Z4, Z8, Z12, Z16, Z20, Z24, K1)
	ROUND512(Z1, Z5, Z9, Z13, Z17, Z21, Z25, K2)
	ROUND512(Z2, Z6, Z10, Z14, Z18, Z22, Z26, K3)
	ROUND512(Z3, Z7, Z11, Z15, Z19, Z23, Z27, K4)
	ADDQ $8, BX
	DECQ CX
	JNZ  loop4

finish:
	MOVL         $7, AX
	VPBROADCASTD AX, Z27 // loop4 used it as scratch
	XORQ         DI, DI
	FINISH512(0, 0, Z8, Z12, Z16, Y16)
	FINISH512(128, 16, Z9, Z13, Z17, Y17)
	FINISH512(256, 32, Z10, Z14, Z18, Y18)
	FINISH512(384, 48, Z11, Z15, Z19, Y19)
	ANDQ R11, DI
	MOVQ DI, bad+64(FP)
	VZEROUPPER
	RET
