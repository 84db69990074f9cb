//go:build !amd64

package lsh

// The set kernels are amd64 assembly: none here.

var setsAVX2 = false

func countEqual32AVX2(a, b *uint32, blocks int) int { panic("lsh: countEqual32AVX2 without amd64") }

func overlap32AVX2(a, b []uint32, need int) (n, i, j int) { panic("lsh: overlap32AVX2 without amd64") }

func overlap64AVX2(a, b []uint64, need int) (n, i, j int) { panic("lsh: overlap64AVX2 without amd64") }

func anyEqual64AVX2(a, b *uint64, blocks int) bool { panic("lsh: anyEqual64AVX2 without amd64") }
