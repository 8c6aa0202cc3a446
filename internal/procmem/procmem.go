// Package procmem reads what the kernel says about this process's memory, for the Go soft
// memory limits of the CLI and the daemon (internal/memmodel.RuntimeLimit).
package procmem

import (
	"os"
	"strconv"
	"strings"
)

// statm is read by FileBacked; a variable so that tests can point it at fixtures.
var statm = "/proc/self/statm"

// FileBacked is the process's resident memory backed by files (its binary's code and data
// pages): /proc/self/statm's third field, in pages. The Go runtime does not count these pages,
// but resident set size does. 0 where it cannot be read.
func FileBacked() int64 {
	b, err := os.ReadFile(statm)
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b))
	if len(fields) < 3 {
		return 0
	}
	pages, err := strconv.ParseInt(fields[2], 10, 64)
	if err != nil || pages < 0 {
		return 0
	}
	return pages * int64(os.Getpagesize())
}
