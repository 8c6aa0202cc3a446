//go:build !unix

package testutil

import "time"

// CPUTime is unknown here; benchmarks then report no CPU-time metrics.
func CPUTime() time.Duration { return 0 }
