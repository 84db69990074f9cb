package corpus

import "golang.org/x/sys/cpu"

// wideStringScan: lineScanner.string takes 32 bytes at a time with AVX2 (stringStopAVX2),
// else 8 at a time in plain Go.
var wideStringScan = cpu.X86.HasAVX2 && cpu.X86.HasBMI1 && cpu.X86.HasBMI2

// stringStopAVX2 returns the index of the first quote, backslash or control byte of b in
// its whole 32-byte blocks, else the start of the incomplete last block; high is nonzero
// when a byte before that index is 0x80 or above. See scan_amd64.s.
//
//go:noescape
func stringStopAVX2(b []byte) (n int, high uint32)
