package cancel_test

import (
	"context"
	"testing"

	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/cancel/canceltest"
)

// BenchmarkCheck is the per-iteration cost the loops pay: a nil flag (no deadline) and a live
// one (one atomic load).
func BenchmarkCheck(b *testing.B) {
	canceltest.Overhead(b, func(b *testing.B, ctx context.Context) {
		f, release := cancel.Watch(ctx)
		defer release()
		for b.Loop() {
			f.Check()
		}
	})
}
