package main

import (
	"os"
	"runtime/debug"
)

// Memory model of an in-process check (internal/engine's package doc): the peak is about a
// constant plus a multiple of the _metadata size. memoryBase and memoryPerFileByte are that
// bound, 64 MiB + 4 × the file size.
const (
	memoryBase        = 64 << 20
	memoryPerFileByte = 4
)

// limitMemory sets the Go runtime's soft memory limit to the memory model's bound for a file of
// size bytes, unless the user set GOMEMLIMIT. Without a limit the collector lets the heap grow
// to twice what is live before collecting (GOGC=100), so the process would peak at about twice
// the model; with it, the collector runs earlier as the heap nears the bound. It is a soft
// limit: a check whose live data exceeds it still completes, with more collection work.
func limitMemory(size int64) {
	if size <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(memoryBase + memoryPerFileByte*size)
}
