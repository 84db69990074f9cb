// Package memtest measures what a piece of work holds on the heap, for the tests that
// pin a streaming reader's memory (a large import, a large results file). It is
// imported by test files only.
package memtest

import (
	"runtime"
	"sync/atomic"
	"time"
)

// HeapPeak samples the heap in use every millisecond until stop is called, which
// returns the highest value seen. Collect garbage before starting it, so the peak is
// the work's own.
func HeapPeak() (stop func() uint64) {
	var peak atomic.Uint64
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-ended
		return peak.Load()
	}
}
