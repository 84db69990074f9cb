package sweep

import (
	"slices"
	"testing"
)

// The binner's memo of candidate bins: what it returns is what was remembered, the keys
// it does not hold come back with their places, and past its bound it keeps the pairs of
// the highest bins.
func TestBinMemo(t *testing.T) {
	b := &binner{memo: sortedMemo[uint8]{bound: 4}}
	b.remember([]uint64{pairKey(1, 2), pairKey(1, 5), pairKey(3, 4)}, []uint8{7, 2, 9})
	keys := []uint64{pairKey(0, 1), pairKey(1, 2), pairKey(1, 3), pairKey(3, 4)}
	out, missing, at := b.known(keys)
	if want := []uint8{0, 7, 0, 9}; !slices.Equal(out, want) {
		t.Fatalf("known bins %v, want %v", out, want)
	}
	if want := []uint64{pairKey(0, 1), pairKey(1, 3)}; !slices.Equal(missing, want) || !slices.Equal(at, []int32{0, 2}) {
		t.Fatalf("missing %x at %v, want %x at [0 2]", missing, at, want)
	}
	// One place left: of the two new pairs, the one of the higher bin is kept.
	b.remember(missing, []uint8{1, 5})
	want := []uint64{pairKey(1, 2), pairKey(1, 3), pairKey(1, 5), pairKey(3, 4)}
	if !slices.Equal(b.memo.keys, want) || !slices.Equal(b.memo.vals, []uint8{7, 5, 2, 9}) {
		t.Fatalf("memo %x %v, want %x [7 5 2 9]", b.memo.keys, b.memo.vals, want)
	}
	b.remember([]uint64{pairKey(8, 9)}, []uint8{11})
	if len(b.memo.keys) != 4 {
		t.Fatalf("memo grew past its bound: %d pairs", len(b.memo.keys))
	}
}
