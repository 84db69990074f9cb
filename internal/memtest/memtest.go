// Package memtest measures what a piece of work holds on the heap, for the tests that
// pin a streaming reader's memory (a large import, a large results file). It is
// imported by test files only.
package memtest

import (
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"
)

// SoftLimit sets the runtime's soft memory limit to limit bytes until the test ends. A
// peak of heap in use counts garbage not yet collected as well as what the work holds,
// and on a loaded machine the collector runs late: a reader that holds 20 MB showed 55 MB
// at load 8. Under a soft limit below a test's bar the collector keeps garbage under it,
// so the peak measures what the work holds; a reader that holds more than the limit goes
// over it all the same.
func SoftLimit(t testing.TB, limit int64) {
	old := debug.SetMemoryLimit(limit)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
}

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
