//go:build !unix

package checkpoint

import "time"

// processCPU is unknown here; benchmarks then report no CPU-time metrics.
func processCPU() time.Duration { return 0 }
