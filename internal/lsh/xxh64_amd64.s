#include "textflag.h"

DATA xxc<>+0(SB)/8, $0x9E3779B185EBCA87  // P1
DATA xxc<>+8(SB)/8, $0xC2B2AE3D27D4EB4F  // P2
DATA xxc<>+16(SB)/8, $0x165667B19E3779F9 // P3
DATA xxc<>+24(SB)/8, $0x85EBCA77C2B2AE63 // P4
DATA xxc<>+32(SB)/8, $0x27D4EB2F165667C5 // P5
GLOBL xxc<>(SB), RODATA|NOPTR, $40

DATA one<>+0(SB)/8, $1
GLOBL one<>(SB), RODATA|NOPTR, $8

// ROUND0: DST = xxRound(0, X) = rotl(X*P2, 31) * P1 (Z10 = P1, Z11 = P2).
#define ROUND0(X, DST) \
	VPMULLQ Z11, X, DST; \
	VPROLQ  $31, DST, DST; \
	VPMULLQ Z10, DST, DST

// ROUNDACC: V = xxRound(V, X) = rotl(V + X*P2, 31) * P1; T is scratch.
#define ROUNDACC(V, X, T) \
	VPMULLQ Z11, X, T; \
	VPADDQ  T, V, V; \
	VPROLQ  $31, V, V; \
	VPMULLQ Z10, V, V

// MERGE: H = xxMerge(H, V) = (H ^ xxRound(0, V)) * P1 + P4; T is scratch.
#define MERGE(H, V, T) \
	ROUND0(V, T); \
	VPXORQ  T, H, H; \
	VPMULLQ Z10, H, H; \
	VPADDQ  Z13, H, H

// func xxh64x8(t *byte, s, n *[8]int64, out *[8]uint64, mask uint64)
// For each lane j of mask: out[j] = XXH64 (seed 0) of the n[j] < 64 bytes at t+s[j],
// the steps of xxh64Pair with the lanes' lengths apart: each step runs on the lanes it
// applies to (mask registers). Reads up to 7 bytes past a lane's end: the caller leaves
// 8 bytes readable after every input. Requires AVX-512F and DQ.
TEXT ·xxh64x8(SB), NOSPLIT, $0-40
	MOVQ t+0(FP), SI
	MOVQ s+8(FP), AX
	MOVQ n+16(FP), BX
	MOVQ out+24(FP), DI
	MOVQ mask+32(FP), CX
	KMOVB CX, K7

	VMOVDQU64.Z (AX), K7, Z0 // starts
	VMOVDQU64.Z (BX), K7, Z1 // lengths
	VPBROADCASTQ xxc<>+0(SB), Z10
	VPBROADCASTQ xxc<>+8(SB), Z11
	VPBROADCASTQ xxc<>+16(SB), Z12
	VPBROADCASTQ xxc<>+24(SB), Z13
	VPBROADCASTQ xxc<>+32(SB), Z14
	MOVQ $8, AX
	VPBROADCASTQ AX, Z15
	MOVQ $32, AX
	VPBROADCASTQ AX, Z18
	MOVQ $0xFFFFFFFF, AX
	VPBROADCASTQ AX, Z19

	VMOVDQA64 Z14, Z3    // h = P5 (inputs under 32 bytes)
	VPXORQ    Z2, Z2, Z2 // off = 0

	// Inputs of 32 bytes or more: one stripe of four accumulators.
	VPCMPUQ  $5, Z18, Z1, K7, K1 // n >= 32
	KORTESTB K1, K1
	JEQ      nostripe
	KMOVB    K1, K2
	VPGATHERQQ 0(SI)(Z0*1), K2, Z21
	KMOVB    K1, K2
	VPGATHERQQ 8(SI)(Z0*1), K2, Z22
	KMOVB    K1, K2
	VPGATHERQQ 16(SI)(Z0*1), K2, Z23
	KMOVB    K1, K2
	VPGATHERQQ 24(SI)(Z0*1), K2, Z24
	VPADDQ   Z10, Z11, Z25     // v1 = P1+P2
	ROUNDACC(Z25, Z21, Z29)
	VMOVDQA64 Z11, Z26         // v2 = P2
	ROUNDACC(Z26, Z22, Z29)
	VPXORQ   Z27, Z27, Z27     // v3 = 0
	ROUNDACC(Z27, Z23, Z29)
	VPXORQ   Z28, Z28, Z28
	VPSUBQ   Z10, Z28, Z28     // v4 = -P1
	ROUNDACC(Z28, Z24, Z29)
	VPROLQ   $1, Z25, Z4
	VPROLQ   $7, Z26, Z5
	VPADDQ   Z5, Z4, Z4
	VPROLQ   $12, Z27, Z5
	VPADDQ   Z5, Z4, Z4
	VPROLQ   $18, Z28, Z5
	VPADDQ   Z5, Z4, Z4
	MERGE(Z4, Z25, Z29)
	MERGE(Z4, Z26, Z29)
	MERGE(Z4, Z27, Z29)
	MERGE(Z4, Z28, Z29)
	VMOVDQA64 Z4, K1, Z3
	VMOVDQA64 Z18, K1, Z2 // off = 32

nostripe:
	VPADDQ Z1, Z3, Z3 // h += n

loop8: // while off+8 <= n: h = rotl(h ^ xxRound(0, 8 bytes), 27) * P1 + P4
	VPADDQ   Z15, Z2, Z5
	VPCMPUQ  $2, Z1, Z5, K7, K1 // off+8 <= n
	KORTESTB K1, K1
	JEQ      four
	VPADDQ   Z2, Z0, Z6
	KMOVB    K1, K2
	VPGATHERQQ 0(SI)(Z6*1), K2, Z7
	ROUND0(Z7, Z8)
	VPXORQ   Z3, Z8, Z8
	VPROLQ   $27, Z8, Z8
	VPMULLQ  Z10, Z8, Z8
	VPADDQ   Z13, Z8, Z8
	VMOVDQA64 Z8, K1, Z3
	VMOVDQA64 Z5, K1, Z2
	JMP      loop8

four: // the last n&7 bytes, read at once at off = n &^ 7: 4 of them if there are, then one at a time
	VPSUBQ   Z2, Z1, Z5     // r = n - off, 0..7
	VPTESTMQ Z5, Z5, K7, K1 // r > 0
	KORTESTB K1, K1
	JEQ      avalanche
	VPADDQ   Z2, Z0, Z6
	KMOVB    K1, K2
	VPGATHERQQ 0(SI)(Z6*1), K2, Z7 // the tail bytes, low first
	MOVQ     $4, AX
	VPBROADCASTQ AX, Z16
	VPCMPUQ  $5, Z16, Z5, K7, K1 // r >= 4: h = rotl(h ^ (4 bytes)*P1, 23) * P2 + P3
	VPANDQ   Z19, Z7, Z8
	VPMULLQ  Z10, Z8, Z8
	VPXORQ   Z3, Z8, Z8
	VPROLQ   $23, Z8, Z8
	VPMULLQ  Z11, Z8, Z8
	VPADDQ   Z12, Z8, Z8
	VMOVDQA64 Z8, K1, Z3
	VPSRLQ   $32, Z7, K1, Z7
	VPSUBQ   Z16, Z5, K1, Z5
	MOVQ     $0xFF, AX
	VPBROADCASTQ AX, Z20

loop1: // while r > 0: h = rotl(h ^ byte*P5, 11) * P1
	VPTESTMQ Z5, Z5, K7, K1
	KORTESTB K1, K1
	JEQ      avalanche
	VPANDQ   Z20, Z7, Z8
	VPMULLQ  Z14, Z8, Z8
	VPXORQ   Z3, Z8, Z8
	VPROLQ   $11, Z8, Z8
	VPMULLQ  Z10, Z8, Z8
	VMOVDQA64 Z8, K1, Z3
	VPSRLQ   $8, Z7, Z7
	VPSUBQ.BCST one<>(SB), Z5, K1, Z5
	JMP      loop1

avalanche:
	VPSRLQ  $33, Z3, Z4
	VPXORQ  Z4, Z3, Z3
	VPMULLQ Z11, Z3, Z3
	VPSRLQ  $29, Z3, Z4
	VPXORQ  Z4, Z3, Z3
	VPMULLQ Z12, Z3, Z3
	VPSRLQ  $32, Z3, Z4
	VPXORQ  Z4, Z3, Z3
	VMOVDQU64 Z3, K7, (DI)
	VZEROUPPER
	RET
