package main

import (
	"os"
	"runtime/debug"

	"github.com/flinkpreflight/preflight/internal/memmodel"
	"github.com/flinkpreflight/preflight/internal/procmem"
)

// limitMemory sets the Go runtime's soft memory limit so that the process stays within the
// memory model's bound for a file of size bytes (memmodel.ProcessBytes: 64 MiB + 4 × the size),
// unless the user set GOMEMLIMIT. Without a limit the collector lets the heap grow to twice what
// is live before collecting (GOGC=100), so the process would peak at about twice the model; with
// it, the collector runs earlier as the heap nears the bound. It is a soft limit: a check whose
// live data exceeds it still completes, with more collection work.
func limitMemory(size int64) {
	if size <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	// A check keeps about 2 × the file live, for the layout and the report.
	debug.SetMemoryLimit(memmodel.RuntimeLimit(memmodel.ProcessBytes(size), procmem.FileBacked(), 2*size))
}
