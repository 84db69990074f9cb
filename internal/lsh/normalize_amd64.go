package lsh

import "golang.org/x/sys/cpu"

// wideBlocks says whether this CPU takes the normalizer's 64-byte ASCII blocks
// (block64AVX512): AVX-512 BW for byte masks, VBMI2 for VPCOMPRESSB, BMI2 for PEXT.
var wideBlocks = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VBMI2 && cpu.X86.HasBMI2 && cpu.X86.HasPOPCNT

// block64AVX512 applies the ASCII steps to 64 bytes: see normalize_amd64.s.
//
//go:noescape
func block64AVX512(src, dst *byte, mode uint64, carry bool) (n int, spaces uint64, flags uint64)
