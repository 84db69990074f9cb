//go:build !amd64

package lsh

var hasAVX512 = false

func permuteMin(xs, a, b, acc []uint64) { permuteMinGeneric(xs, a, b, acc) }
