package lsh

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// XXH64 (seed 0, the hash of github.com/cespare/xxhash's Sum64) of two inputs of one
// length at a time. For one input its steps form a single chain of dependent multiplies,
// and the CPU waits on each; two independent chains side by side keep the multiplier
// busy. The fast scheme hashes its shingles in order of length (hashByLength), so that
// neighbours have equal lengths and take the same branches. TestXXH64Pair checks it
// against xxhash.Sum64 at every length it takes.

const (
	xxPrime1 = 11400714785074694791
	xxPrime2 = 14029467366897019727
	xxPrime3 = 1609587929392839161
	xxPrime4 = 9650029242287828579
	xxPrime5 = 2870177450012600261
	// The stripe's starting values, seed 0: prime1+prime2 and -prime1, modulo 2^64.
	xxInit1 uint64 = xxPrime1 + xxPrime2 - 1<<64
	xxInit4 uint64 = 1<<64 - xxPrime1
	xxEmpty uint64 = 0xef46db3751d8e999 // XXH64 of no bytes
)

func xxRound(acc, input uint64) uint64 {
	acc += input * xxPrime2
	return bits.RotateLeft64(acc, 31) * xxPrime1
}

func xxMerge(acc, v uint64) uint64 {
	acc ^= xxRound(0, v)
	return acc*xxPrime1 + xxPrime4
}

// load64, load32 and load8 read little-endian at p+off; the caller keeps them inside
// its slices.
func load64(p unsafe.Pointer, off uintptr) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, off))[:])
}

func load32(p unsafe.Pointer, off uintptr) uint64 {
	return uint64(binary.LittleEndian.Uint32((*[4]byte)(unsafe.Add(p, off))[:]))
}

func load8(p unsafe.Pointer, off uintptr) uint64 { return uint64(*(*byte)(unsafe.Add(p, off))) }

// xxh64Pair returns the XXH64 of a and of b, which must have one length, under 64 bytes
// (so the 32-byte stripe loop runs at most once). The reads go through unsafe pointers,
// each below the length checked on entry, because the bounds checks of two slices that
// the compiler cannot tell are equally long cost a sixth of the time.
func xxh64Pair(a, b []byte) (ha, hb uint64) {
	n := uintptr(len(a))
	if len(b) != len(a) || n >= 64 {
		panic("lsh: xxh64Pair needs two inputs of one length under 64 bytes")
	}
	if n == 0 {
		return xxEmpty, xxEmpty
	}
	pa, pb := unsafe.Pointer(unsafe.SliceData(a)), unsafe.Pointer(unsafe.SliceData(b))
	off := uintptr(0)
	if n >= 32 {
		a1, b1 := xxRound(xxInit1, load64(pa, 0)), xxRound(xxInit1, load64(pb, 0))
		a2, b2 := xxRound(xxPrime2, load64(pa, 8)), xxRound(xxPrime2, load64(pb, 8))
		a3, b3 := xxRound(0, load64(pa, 16)), xxRound(0, load64(pb, 16))
		a4, b4 := xxRound(xxInit4, load64(pa, 24)), xxRound(xxInit4, load64(pb, 24))
		ha = bits.RotateLeft64(a1, 1) + bits.RotateLeft64(a2, 7) + bits.RotateLeft64(a3, 12) + bits.RotateLeft64(a4, 18)
		hb = bits.RotateLeft64(b1, 1) + bits.RotateLeft64(b2, 7) + bits.RotateLeft64(b3, 12) + bits.RotateLeft64(b4, 18)
		ha, hb = xxMerge(ha, a1), xxMerge(hb, b1)
		ha, hb = xxMerge(ha, a2), xxMerge(hb, b2)
		ha, hb = xxMerge(ha, a3), xxMerge(hb, b3)
		ha, hb = xxMerge(ha, a4), xxMerge(hb, b4)
		off = 32
	} else {
		ha, hb = xxPrime5, xxPrime5
	}
	ha += uint64(n)
	hb += uint64(n)
	for ; off+8 <= n; off += 8 {
		ha ^= xxRound(0, load64(pa, off))
		hb ^= xxRound(0, load64(pb, off))
		ha = bits.RotateLeft64(ha, 27)*xxPrime1 + xxPrime4
		hb = bits.RotateLeft64(hb, 27)*xxPrime1 + xxPrime4
	}
	if off+4 <= n {
		ha ^= load32(pa, off) * xxPrime1
		hb ^= load32(pb, off) * xxPrime1
		ha = bits.RotateLeft64(ha, 23)*xxPrime2 + xxPrime3
		hb = bits.RotateLeft64(hb, 23)*xxPrime2 + xxPrime3
		off += 4
	}
	for ; off < n; off++ {
		ha ^= load8(pa, off) * xxPrime5
		hb ^= load8(pb, off) * xxPrime5
		ha = bits.RotateLeft64(ha, 11) * xxPrime1
		hb = bits.RotateLeft64(hb, 11) * xxPrime1
	}
	ha ^= ha >> 33
	hb ^= hb >> 33
	ha *= xxPrime2
	hb *= xxPrime2
	ha ^= ha >> 29
	hb ^= hb >> 29
	ha *= xxPrime3
	hb *= xxPrime3
	ha ^= ha >> 32
	hb ^= hb >> 32
	return ha, hb
}
