package par

import (
	"context"
	"sync/atomic"
	"testing"
)

// TestChunksCoverEveryIndexOnce checks that the chunks tile [0, n) exactly, for sizes
// that do and do not divide n, and a chunk of 0 taken as 1.
func TestChunksCoverEveryIndexOnce(t *testing.T) {
	for _, c := range []struct{ n, chunk int }{{0, 4}, {1, 4}, {10, 3}, {1000, 7}, {1000, 1000}, {5, 0}} {
		seen := make([]atomic.Int32, c.n)
		if err := Chunks(context.Background(), c.n, c.chunk, func(lo, hi int) {
			if hi-lo > max(c.chunk, 1) || lo >= hi {
				t.Errorf("n %d chunk %d: chunk [%d, %d)", c.n, c.chunk, lo, hi)
			}
			for i := lo; i < hi; i++ {
				seen[i].Add(1)
			}
		}); err != nil {
			t.Fatal(err)
		}
		for i := range seen {
			if v := seen[i].Load(); v != 1 {
				t.Fatalf("n %d chunk %d: index %d done %d times", c.n, c.chunk, i, v)
			}
		}
	}
}

// TestChunksStopWhenCancelled: a cancelled context hands out no chunk and is reported.
func TestChunksStopWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var calls atomic.Int32
	err := Chunks(ctx, 100, 1, func(lo, hi int) { calls.Add(1) })
	if err != context.Canceled || calls.Load() != 0 {
		t.Errorf("cancelled: err %v, %d calls; want context.Canceled and none", err, calls.Load())
	}
}
