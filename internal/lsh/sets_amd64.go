package lsh

import "golang.org/x/sys/cpu"

// setsAVX2 says whether this CPU runs the set kernels of sets_amd64.s (AVX2 and POPCNT).
var setsAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasPOPCNT

//go:noescape
func countEqual32AVX2(a, b *uint32, blocks int) int

//go:noescape
func overlap32AVX2(a, b []uint32, need int) (n, i, j int)

//go:noescape
func overlap64AVX2(a, b []uint64, need int) (n, i, j int)

//go:noescape
func anyEqual64AVX2(a, b *uint64, blocks int) bool
