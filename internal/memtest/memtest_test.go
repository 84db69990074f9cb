package memtest

import (
	"runtime"
	"testing"
	"time"
)

var sink []byte

// A 64 MiB buffer held while sampling shows in the peak; the peak is at least what was
// in use when sampling started.
func TestHeapPeakSeesAnAllocation(t *testing.T) {
	runtime.GC()
	stop := HeapPeak()
	sink = make([]byte, 64<<20)
	for i := range sink {
		sink[i] = byte(i)
	}
	time.Sleep(20 * time.Millisecond)
	peak := stop()
	sink = nil
	if peak < 64<<20 {
		t.Errorf("HeapPeak() = %d MiB while 64 MiB was held; want at least 64", peak>>20)
	}
}
