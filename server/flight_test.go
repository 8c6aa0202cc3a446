package server

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestFlightGroupPanic: a computation that panics gives every caller an error (singleflight
// alone would crash the process) and leaves no flight behind.
func TestFlightGroupPanic(t *testing.T) {
	var f flightGroup
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err, _ := f.do(context.Background(), "k", func(context.Context) (any, error) {
				for deadline := time.Now().Add(10 * time.Second); f.waiting() < 2 && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
				}
				panic("injected")
			})
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err == nil || !strings.Contains(err.Error(), "panic: injected") {
			t.Fatalf("caller: %v, want the panic as an error", err)
		}
	}
	if n := f.open(); n != 0 {
		t.Fatalf("%d flights left open", n)
	}
}
