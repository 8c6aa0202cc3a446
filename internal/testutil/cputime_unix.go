//go:build unix

package testutil

import (
	"syscall"
	"time"
)

// CPUTime returns the process's user + system CPU time: on a shared, loaded machine it measures
// the work a benchmark does better than wall time, which other load inflates.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
