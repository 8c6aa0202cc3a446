package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/flinkpreflight/preflight/internal/memmodel"
)

// limitMemory sets the Go runtime's soft memory limit so that the process stays within the
// memory model's bound for a file of size bytes (memmodel.ProcessBytes: 64 MiB + 4 × the size), unless the user set GOMEMLIMIT. Without a limit
// the collector lets the heap grow to twice what is live before collecting (GOGC=100), so the
// process would peak at about twice the model; with it, the collector runs earlier as the heap
// nears the bound. The runtime's limit counts the memory Go allocates, not the pages of the
// binary mapped from its file (tens of MiB with the cloud SDKs' code and tables), so those
// are taken off the bound. It is a soft limit: a check whose live data exceeds it still
// completes, with more collection work.
func limitMemory(size int64) {
	if size <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	// Some of the bound stays for what is resident outside the runtime's count (libc, page
	// tables) and for the collector's lag behind a soft limit: 4 MiB and a sixteenth, since a
	// fixed margin alone fell short on a million operators (bench/README.md, "Operator-heavy
	// files met").
	bound := memmodel.ProcessBytes(size)
	limit := bound - mappedFileBytes() - 4<<20 - bound/16
	// Leave the collector room above what a check keeps live (about 2 × the file for the
	// layout and the report) even where the binary's pages take most of the constant.
	debug.SetMemoryLimit(max(limit, 16<<20+2*size))
}

// mappedFileBytes is the process's resident memory backed by files (its binary's code and data
// pages): /proc/self/statm's third field, in pages. 0 where it cannot be read.
func mappedFileBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
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
