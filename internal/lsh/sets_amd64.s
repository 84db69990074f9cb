#include "textflag.h"

// The set kernels of sets.go: equal positions of two signatures, and the overlap of
// two sorted sets of distinct values by blocks compared all against all. AVX2 only
// (no AVX-512), so that every machine with AVX2 runs the same code.

// func countEqual32AVX2(a, b *uint32, blocks int) int
// Counts the positions i < 16*blocks where a[i] == b[i]; blocks > 0. Each VPCMPEQD
// lane is 0 or -1, subtracted from two accumulators of eight lanes.
TEXT ·countEqual32AVX2(SB), NOSPLIT, $0-32
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ blocks+16(FP), CX
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5

eqloop:
	VMOVDQU  (SI), Y0
	VMOVDQU  32(SI), Y1
	VPCMPEQD (DI), Y0, Y0
	VPCMPEQD 32(DI), Y1, Y1
	VPSUBD   Y0, Y4, Y4
	VPSUBD   Y1, Y5, Y5
	ADDQ     $64, SI
	ADDQ     $64, DI
	DECQ     CX
	JNZ      eqloop

	VPADDD       Y5, Y4, Y4
	VEXTRACTI128 $1, Y4, X5
	VPADDD       X5, X4, X4
	VPSHUFD      $0x4E, X4, X5
	VPADDD       X5, X4, X4
	VPSHUFD      $0xB1, X4, X5
	VPADDD       X5, X4, X4
	VMOVD        X4, AX
	VZEROUPPER
	MOVQ         AX, ret+24(FP)
	RET

// func overlap32AVX2(a, b []uint32, need int) (n, i, j int)
// Merges a and b by blocks of eight while each has a block left: the two blocks are
// compared all against all (b's block turned within its 128-bit halves, then with its
// halves swapped: eight alignments cover the 64 pairs), the matches counted, and the
// block with the lesser last value passed (both when equal), as a merge passes a value.
// It stops early when need > 0 and the count cannot reach it (count plus the shorter
// remainder under need). n counts every value a and b share at a place before i in a or
// before j in b (some of them can lie in b[j:], with a[:i]); a[i:] and b[:j] share none.
TEXT ·overlap32AVX2(SB), NOSPLIT, $0-80
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), R8
	MOVQ b_base+24(FP), DI
	MOVQ b_len+32(FP), R9
	MOVQ need+48(FP), R10
	XORQ AX, AX
	XORQ BX, BX
	XORQ CX, CX
	SUBQ $8, R8 // i may start a block while i <= len(a)-8
	SUBQ $8, R9
	JS   done32
	CMPQ R8, $0
	JL   done32

loop32:
	CMPQ BX, R8
	JGT  done32
	CMPQ CX, R9
	JGT  done32
	VMOVDQU    (SI)(BX*4), Y0
	VMOVDQU    (DI)(CX*4), Y1
	VPCMPEQD   Y1, Y0, Y2
	VPSHUFD    $0x39, Y1, Y3
	VPCMPEQD   Y3, Y0, Y3
	VPOR       Y3, Y2, Y2
	VPSHUFD    $0x4E, Y1, Y3
	VPCMPEQD   Y3, Y0, Y3
	VPOR       Y3, Y2, Y2
	VPSHUFD    $0x93, Y1, Y3
	VPCMPEQD   Y3, Y0, Y3
	VPOR       Y3, Y2, Y2
	VPERM2I128 $0x01, Y1, Y1, Y1
	VPCMPEQD   Y1, Y0, Y3
	VPOR       Y3, Y2, Y2
	VPSHUFD    $0x39, Y1, Y3
	VPCMPEQD   Y3, Y0, Y3
	VPOR       Y3, Y2, Y2
	VPSHUFD    $0x4E, Y1, Y3
	VPCMPEQD   Y3, Y0, Y3
	VPOR       Y3, Y2, Y2
	VPSHUFD    $0x93, Y1, Y3
	VPCMPEQD   Y3, Y0, Y3
	VPOR       Y3, Y2, Y2
	VMOVMSKPS  Y2, DX
	POPCNTL    DX, DX
	ADDQ       DX, AX

	// Pass the block(s) with the lesser last value (unsigned).
	MOVL  28(SI)(BX*4), DX
	MOVL  28(DI)(CX*4), R11
	XORL  R12, R12
	XORL  R13, R13
	CMPL  DX, R11
	SETLS R12B
	SETCC R13B
	LEAQ  (BX)(R12*8), BX
	LEAQ  (CX)(R13*8), CX

	// Can the count still reach need? count + min(len(a)-i, len(b)-j) >= need.
	TESTQ   R10, R10
	JLE     loop32
	LEAQ    8(R8), DX
	SUBQ    BX, DX
	LEAQ    8(R9), R11
	SUBQ    CX, R11
	CMPQ    DX, R11
	CMOVQGT R11, DX
	ADDQ    AX, DX
	CMPQ    DX, R10
	JGE     loop32

done32:
	VZEROUPPER
	MOVQ AX, n+56(FP)
	MOVQ BX, i+64(FP)
	MOVQ CX, j+72(FP)
	RET

// func overlap64AVX2(a, b []uint64, need int) (n, i, j int)
// overlap32AVX2 for 64-bit values: blocks of four, b's block turned across the whole
// register (VPERMQ) for the four alignments.
TEXT ·overlap64AVX2(SB), NOSPLIT, $0-80
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), R8
	MOVQ b_base+24(FP), DI
	MOVQ b_len+32(FP), R9
	MOVQ need+48(FP), R10
	XORQ AX, AX
	XORQ BX, BX
	XORQ CX, CX
	SUBQ $4, R8
	SUBQ $4, R9
	JS   done64
	CMPQ R8, $0
	JL   done64

loop64:
	CMPQ BX, R8
	JGT  done64
	CMPQ CX, R9
	JGT  done64
	VMOVDQU   (SI)(BX*8), Y0
	VMOVDQU   (DI)(CX*8), Y1
	VPCMPEQQ  Y1, Y0, Y2
	VPERMQ    $0x39, Y1, Y3
	VPCMPEQQ  Y3, Y0, Y3
	VPOR      Y3, Y2, Y2
	VPERMQ    $0x4E, Y1, Y3
	VPCMPEQQ  Y3, Y0, Y3
	VPOR      Y3, Y2, Y2
	VPERMQ    $0x93, Y1, Y3
	VPCMPEQQ  Y3, Y0, Y3
	VPOR      Y3, Y2, Y2
	VMOVMSKPD Y2, DX
	POPCNTL   DX, DX
	ADDQ      DX, AX

	MOVQ  24(SI)(BX*8), DX
	MOVQ  24(DI)(CX*8), R11
	XORL  R12, R12
	XORL  R13, R13
	CMPQ  DX, R11
	SETLS R12B
	SETCC R13B
	LEAQ  (BX)(R12*4), BX
	LEAQ  (CX)(R13*4), CX

	TESTQ   R10, R10
	JLE     loop64
	LEAQ    4(R8), DX
	SUBQ    BX, DX
	LEAQ    4(R9), R11
	SUBQ    CX, R11
	CMPQ    DX, R11
	CMOVQGT R11, DX
	ADDQ    AX, DX
	CMPQ    DX, R10
	JGE     loop64

done64:
	VZEROUPPER
	MOVQ AX, n+56(FP)
	MOVQ BX, i+64(FP)
	MOVQ CX, j+72(FP)
	RET

// func anyEqual64AVX2(a, b *uint64, blocks int) bool
// Reports whether a[i] == b[i] for some i < 4*blocks; blocks > 0.
TEXT ·anyEqual64AVX2(SB), NOSPLIT, $0-25
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ blocks+16(FP), CX

anyloop:
	VMOVDQU  (SI), Y0
	VPCMPEQQ (DI), Y0, Y1
	VPTEST   Y1, Y1
	JNZ      anyfound
	ADDQ     $32, SI
	ADDQ     $32, DI
	DECQ     CX
	JNZ      anyloop
	VZEROUPPER
	MOVB     $0, ret+24(FP)
	RET

anyfound:
	VZEROUPPER
	MOVB $1, ret+24(FP)
	RET
