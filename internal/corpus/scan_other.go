//go:build !amd64

package corpus

var wideStringScan = false

func stringStopAVX2([]byte) (int, uint32) { panic("stringStopAVX2 without AVX2") }
