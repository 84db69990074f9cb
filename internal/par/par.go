// Package par runs a loop over [0, n) on every CPU in chunks: the one helper the engine
// (internal/lsh) and the sweep share for work whose items differ in cost.
package par

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// Chunks calls fn(lo, hi) for consecutive chunks of [0, n) of size chunk (the last one
// shorter), on up to GOMAXPROCS goroutines, each taking the next chunk when it is done
// with one (so uneven chunks balance). It stops handing out chunks once ctx is done and
// returns ctx.Err(); fn is never called concurrently on overlapping ranges.
func Chunks(ctx context.Context, n, chunk int, fn func(lo, hi int)) error {
	if n == 0 {
		return ctx.Err()
	}
	chunk = max(chunk, 1)
	workers := min(runtime.GOMAXPROCS(0), (n+chunk-1)/chunk)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				lo := int(next.Add(int64(chunk))) - chunk
				if lo >= n {
					return
				}
				fn(lo, min(lo+chunk, n))
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}
