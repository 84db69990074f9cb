//go:build !amd64

package lsh

// The AVX-512 paths of text preparation are amd64 assembly: none here.

var wideBlocks, wideHash, narrowBlocks = false, false, false

func block64AVX512(src, dst *byte, mode uint64, carry bool) (n int, spaces uint64, flags uint64) {
	panic("lsh: block64AVX512 without amd64")
}

func xxh64x8(t *byte, s, n *[8]int64, out *[8]uint64, mask uint64) {
	panic("lsh: xxh64x8 without amd64")
}

func block32AVX2(src, dst *byte, mode uint64) (spaces uint32, high uint32) {
	panic("lsh: block32AVX2 without amd64")
}
