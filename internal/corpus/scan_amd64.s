#include "textflag.h"

// func stringStopAVX2(b []byte) (n int, high uint32)
// Requires AVX2 and BMI1/BMI2. Scans b 32 bytes at a time for the first byte that is a
// quote, a backslash or below 0x20 (a byte that ends the plain run of a JSON string).
// n is its index, or the index of the first byte of the last incomplete 32-byte block
// when no full block holds one (the caller scans the rest). high is nonzero when some
// byte before n is 0x80 or above.
TEXT ·stringStopAVX2(SB), NOSPLIT, $0-36
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	XORQ AX, AX // i
	XORL DX, DX // high bytes seen

	MOVL         $0x22, R8
	MOVQ         R8, X1
	VPBROADCASTB X1, Y1 // '"'
	MOVL         $0x5c, R8
	MOVQ         R8, X2
	VPBROADCASTB X2, Y2 // '\\'
	MOVL         $0x1f, R8
	MOVQ         R8, X3
	VPBROADCASTB X3, Y3 // 0x1f

loop:
	LEAQ 32(AX), R8
	CMPQ R8, CX
	JGT  done
	VMOVDQU   (SI)(AX*1), Y0
	VPCMPEQB  Y0, Y1, Y4
	VPCMPEQB  Y0, Y2, Y5
	VPOR      Y4, Y5, Y4
	VPMINUB   Y0, Y3, Y5 // min(c, 0x1f) == c: c < 0x20
	VPCMPEQB  Y0, Y5, Y5
	VPOR      Y4, Y5, Y4
	VPMOVMSKB Y4, BX
	VPMOVMSKB Y0, R9
	TESTL     BX, BX
	JNE       found
	ORL       R9, DX
	MOVQ      R8, AX
	JMP       loop

found:
	TZCNTL BX, BX
	BZHIL  BX, R9, R9 // the high bits of the bytes before the stop
	ORL    R9, DX
	ADDQ   BX, AX

done:
	VZEROUPPER
	MOVQ AX, n+24(FP)
	MOVL DX, high+32(FP)
	RET
