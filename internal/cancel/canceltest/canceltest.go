// Package canceltest checks, in tests, that a long CPU-bound computation stops when its caller
// gives up: under a context that ended before the call and under a deadline that passes during
// it, the computation must return the context's error, and soon. The packages whose loops watch
// a cancel.Flag (rescale, findings, engine) share it, and Overhead, the benchmark of what watching
// costs.
package canceltest

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Stops runs run twice, as subtests: under a context cancelled before the call (want
// context.Canceled) and under one whose deadline passes after deadline (want
// context.DeadlineExceeded). Each run must return that error within limit; choose run's input so
// that an uninterrupted run takes well over limit, and limit generously (the machine is shared).
// run checks its own partial results with t.
func Stops(t *testing.T, deadline, limit time.Duration, run func(t *testing.T, ctx context.Context) error) {
	t.Helper()
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"cancelled before", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled},
		{"deadline during the run", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), deadline)
		}, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := tc.ctx()
			defer cancel()
			start := time.Now()
			err := run(t, ctx)
			if d := time.Since(start); d > limit {
				t.Errorf("returned %v after the start (deadline %v, limit %v)", d, deadline, limit)
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
		})
	}
}

// Overhead runs bench as two sub-benchmarks: under a context without a deadline (a watched loop
// gets a nil flag) and under a live one that never ends during the run (one atomic load per
// check), so that the two costs stand side by side.
func Overhead(b *testing.B, bench func(b *testing.B, ctx context.Context)) {
	live, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, bc := range []struct {
		name string
		ctx  context.Context
	}{{"no-deadline", context.Background()}, {"live-context", live}} {
		b.Run(bc.name, func(b *testing.B) { bench(b, bc.ctx) })
	}
}
