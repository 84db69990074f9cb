//go:build !amd64

package lsh

// wideBlocks is false: the 64-byte ASCII blocks are amd64 assembly.
var wideBlocks = false

func block64AVX512(src, dst *byte, mode uint64, carry bool) (n int, spaces uint64, flags uint64) {
	panic("lsh: block64AVX512 on " + "a build without it")
}
