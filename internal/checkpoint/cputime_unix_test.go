//go:build unix

package checkpoint

import (
	"syscall"
	"time"
)

// processCPU returns the user + system CPU time of the process: on a shared, loaded machine it
// measures the work a benchmark does better than wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
