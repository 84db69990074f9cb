#include "textflag.h"

// func block64AVX512(src, dst *byte, mode uint64, carry bool) (n int, spaces uint64, flags uint64)
// Requires AVX-512F/BW/VBMI2 and BMI2, 64 bytes readable at src and writable at dst.
// mode: 1 lower A-Z, 2 fold digits to '0', 4 collapse white space. carry: a white space
// byte at the start is dropped (nothing written before it). Flags out: 1 ok (every byte
// ASCII; else nothing is written and n is the index of the first non-ASCII byte), 2 the
// last byte is white space, 4 some byte is not white space. See stepper.block64.
TEXT ·block64AVX512(SB), NOSPLIT, $0-56
	MOVQ src+0(FP), SI
	MOVQ dst+8(FP), DI
	MOVQ mode+16(FP), R8

	VMOVDQU8 (SI), Z0
	VPMOVB2M Z0, K1
	KMOVQ    K1, AX
	TESTQ    AX, AX
	JNE      notascii

	TESTQ $2, R8
	JEQ   nodigits
	MOVL         $'0', AX
	VPBROADCASTB AX, Z1
	VPSUBB       Z1, Z0, Z2
	MOVL         $10, AX
	VPBROADCASTB AX, Z3
	VPCMPUB      $1, Z3, Z2, K2 // c-'0' < 10
	VMOVDQU8     Z1, K2, Z0

nodigits:
	TESTQ $1, R8
	JEQ   nolower
	MOVL         $'A', AX
	VPBROADCASTB AX, Z1
	VPSUBB       Z1, Z0, Z2
	MOVL         $26, AX
	VPBROADCASTB AX, Z3
	VPCMPUB      $1, Z3, Z2, K2 // c-'A' < 26
	MOVL         $0x20, AX
	VPBROADCASTB AX, Z1
	VPADDB       Z1, Z0, K2, Z0

nolower:
	TESTQ $4, R8
	JNE   collapse
	VMOVDQU8 Z0, (DI)
	MOVQ     $64, n+32(FP)
	MOVQ     $0, spaces+40(FP)
	MOVQ     $5, flags+48(FP) // ok, and an ASCII block with no white space class
	VZEROUPPER
	RET

collapse:
	// ws: \t..\r and ' ', each made a ' '.
	MOVL         $'\t', AX
	VPBROADCASTB AX, Z1
	VPSUBB       Z1, Z0, Z2
	MOVL         $5, AX
	VPBROADCASTB AX, Z3
	VPCMPUB      $1, Z3, Z2, K2 // c-'\t' < 5
	MOVL         $' ', AX
	VPBROADCASTB AX, Z1
	VPCMPEQB     Z1, Z0, K3
	KORQ         K2, K3, K2
	VMOVDQU8     Z1, K2, Z0
	KMOVQ        K2, BX // ws

	// drop: white space after white space (or at the start, with carry), and the white
	// space run that ends the block (its space is owed, not written).
	MOVQ    BX, CX
	SHLQ    $1, CX
	MOVBQZX carry+24(FP), DX
	ORQ     DX, CX
	ANDQ    BX, CX // ws after ws
	MOVQ    BX, DX
	NOTQ    DX     // not ws
	XORQ    R9, R9 // flags
	TESTQ   DX, DX
	JEQ     allws
	ORQ     $4, R9 // something not white space
	BSRQ    DX, R10
	CMPQ    R10, $63
	JEQ     keep
	ORQ     $2, R9 // ends with white space
	INCQ    R10
	MOVQ    $-1, R11
	SHLXQ   R10, R11, R11 // the bytes after the last one that is not white space
	ORQ     R11, CX
	JMP     keep

allws:
	MOVQ $-1, CX
	ORQ  $2, R9

keep:
	NOTQ        CX // keep
	KMOVQ       CX, K4
	VPCOMPRESSB Z0, K4, Z1
	VMOVDQU8    Z1, (DI)
	POPCNTQ     CX, AX
	MOVQ        AX, n+32(FP)
	ANDQ        CX, BX        // kept white space
	PEXTQ       CX, BX, BX    // at its place in the output
	MOVQ        BX, spaces+40(FP)
	ORQ         $1, R9
	MOVQ        R9, flags+48(FP)
	VZEROUPPER
	RET

notascii:
	TZCNTQ AX, AX
	MOVQ   AX, n+32(FP)
	MOVQ   $0, spaces+40(FP)
	MOVQ   $0, flags+48(FP)
	VZEROUPPER
	RET

// func block32AVX2(src, dst *byte, mode uint64) (spaces uint32, high uint32)
// Requires AVX2; 32 bytes readable at src and writable at dst. The steps of mode (1 lower
// A-Z, 2 fold digits to '0', 4 white space to ' ') on 32 bytes, written to dst whatever
// they are; spaces has a bit per white space byte (mode 4), high one per byte from 0x80.
// The caller decides what to keep (stepper.block32).
TEXT ·block32AVX2(SB), NOSPLIT, $0-32
	MOVQ src+0(FP), SI
	MOVQ dst+8(FP), DI
	MOVQ mode+16(FP), DX

	VMOVDQU   (SI), Y0
	VPMOVMSKB Y0, AX
	MOVL      AX, high+28(FP)
	XORL      BX, BX

	// Signed byte compares: a byte from 0x80 is negative, in no range below.
	TESTQ $2, DX
	JEQ   nodigits32
	MOVL         $'/', CX
	VMOVD        CX, X1
	VPBROADCASTB X1, Y1
	MOVL         $':', CX
	VMOVD        CX, X2
	VPBROADCASTB X2, Y2
	VPCMPGTB     Y1, Y0, Y3 // c > '/'
	VPCMPGTB     Y0, Y2, Y4 // ':' > c
	VPAND        Y3, Y4, Y3
	MOVL         $'0', CX
	VMOVD        CX, X5
	VPBROADCASTB X5, Y5
	VPBLENDVB    Y3, Y5, Y0, Y0

nodigits32:
	TESTQ $1, DX
	JEQ   nolower32
	MOVL         $'@', CX
	VMOVD        CX, X1
	VPBROADCASTB X1, Y1
	MOVL         $'[', CX
	VMOVD        CX, X2
	VPBROADCASTB X2, Y2
	VPCMPGTB     Y1, Y0, Y3 // c > '@'
	VPCMPGTB     Y0, Y2, Y4 // '[' > c
	VPAND        Y3, Y4, Y3
	MOVL         $0x20, CX
	VMOVD        CX, X5
	VPBROADCASTB X5, Y5
	VPAND        Y5, Y3, Y3
	VPOR         Y3, Y0, Y0

nolower32:
	TESTQ $4, DX
	JEQ   nospace32
	MOVL         $8, CX
	VMOVD        CX, X1
	VPBROADCASTB X1, Y1
	MOVL         $14, CX
	VMOVD        CX, X2
	VPBROADCASTB X2, Y2
	VPCMPGTB     Y1, Y0, Y3 // c > 8
	VPCMPGTB     Y0, Y2, Y4 // 14 > c: '\t'..'\r'
	VPAND        Y3, Y4, Y3
	MOVL         $' ', CX
	VMOVD        CX, X5
	VPBROADCASTB X5, Y5
	VPCMPEQB     Y5, Y0, Y4
	VPOR         Y4, Y3, Y3
	VPBLENDVB    Y3, Y5, Y0, Y0
	VPMOVMSKB    Y3, BX

nospace32:
	VMOVDQU Y0, (DI)
	MOVL    BX, spaces+24(FP)
	VZEROUPPER
	RET
