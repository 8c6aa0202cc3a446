package testutil

import (
	"sync"
	"time"
)

// SamplePeak calls sample at once, every 2 ms, and when stop is called; stop returns the largest
// value seen. Benchmarks use it for the peak of a memory gauge during an operation.
func SamplePeak(sample func() uint64) (stop func() uint64) {
	var peak uint64 // the goroutine's until it returns
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			peak = max(peak, sample())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return max(peak, sample())
	}
}
