package logtest

import (
	"strings"
	"sync"
	"testing"
)

// Writers on many goroutines each land whole, and the reader sees them all.
func TestBufferConcurrentWriters(t *testing.T) {
	t.Parallel()
	var b Buffer
	log := b.Logger()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			log.Info("request", "n", i)
			_ = b.String()
		})
	}
	wg.Wait()
	if got := strings.Count(b.String(), "msg=request"); got != 20 {
		t.Errorf("%d log lines; want 20:\n%s", got, b.String())
	}
}
