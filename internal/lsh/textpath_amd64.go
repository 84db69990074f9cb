package lsh

import "golang.org/x/sys/cpu"

// The AVX-512 paths of text preparation, taken where the CPU has what they need (Go's
// GODEBUG=cpu.avx512f=off turns them off, with the avx512 kernel, to measure a machine
// without AVX-512). The tests check each against the definitions and run the reference
// checks without them too (TestFastPathWithoutAVX512).

// wideBlocks says whether this CPU takes the normalizer's 64-byte ASCII blocks
// (block64AVX512): AVX-512 BW for byte masks, VBMI2 for VPCOMPRESSB, BMI2 for PEXT.
var wideBlocks = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VBMI2 && cpu.X86.HasBMI2 && cpu.X86.HasPOPCNT

// block64AVX512 applies the ASCII steps to 64 bytes: see normalize_amd64.s.
//
//go:noescape
func block64AVX512(src, dst *byte, mode uint64, carry bool) (n int, spaces uint64, flags uint64)

// wideHash says whether this CPU hashes shingles eight at a time (xxh64x8): AVX-512 F
// and DQ (VPMULLQ).
var wideHash = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ

// xxh64x8 hashes up to eight inputs at once: see xxh64_amd64.s.
//
//go:noescape
func xxh64x8(t *byte, s, n *[8]int64, out *[8]uint64, mask uint64)

// narrowBlocks says whether this CPU takes the normalizer's 32-byte ASCII blocks
// (block32AVX2) where it takes no 64-byte ones.
var narrowBlocks = cpu.X86.HasAVX2

// block32AVX2 applies the ASCII steps to 32 bytes: see normalize_amd64.s.
//
//go:noescape
func block32AVX2(src, dst *byte, mode uint64) (spaces uint32, high uint32)
