package server

import "github.com/flinkpreflight/preflight/internal/memmodel"

// DaemonBaselineBytes is the daemon's own memory outside the budget: binary, runtime, gRPC and
// HTTP servers, idle connections (measured at rest: bench/README.md, "Figures behind constants").
const DaemonBaselineBytes = 64 << 20

// DaemonGCPercent is the GOGC preflightd runs with when it sets the soft memory limit itself
// (and GOGC is not set): the limit bounds the heap, so collecting less often costs no memory
// beyond it.
const DaemonGCPercent = 400

// SoftMemoryLimit is the Go soft memory limit for a daemon with the given memory budget (0: the
// default budget) when its requests and caches hold all of it: the budget plus
// DaemonBaselineBytes, never above 90% of the container's limit. The budget counts live bytes;
// without a soft limit the collector lets the heap grow to twice what is live (GOGC=100), and RSS
// ends far above the budget (bench/README.md, "Figures behind constants"). With it the collector
// works harder near the limit instead; it is soft, so a check whose estimate was low still
// completes. MemoryLimiter lowers the limit to what is reserved at the time.
func SoftMemoryLimit(budget int64) int64 {
	if budget <= 0 {
		budget = DefaultMemoryBudget()
	}
	limit := budget + DaemonBaselineBytes
	if c, _ := ContainerMemoryLimit(); c > 0 {
		limit = min(limit, c/10*9)
	}
	return limit
}

// MemoryLimiter keeps the Go soft memory limit at what the daemon may hold now: its baseline
// plus what admission has reserved for requests and cached layouts and answers, as the CLI's
// limit is its process bound for the one file it checks (memmodel.RuntimeLimit, less the pages
// mapped from the binary). A limit fixed at the whole budget lets the heap of a daemon serving
// one small request grow to GOGC × what is live, several times that request's estimate; this one
// lets DaemonGCPercent apply only while there is room under what is reserved. Use it as
// Config.OnReserved.
type MemoryLimiter struct {
	fileBacked func() int64      // resident pages mapped from files (procmem.FileBacked)
	set        func(int64) int64 // debug.SetMemoryLimit
	most       int64             // SoftMemoryLimit: the limit with the whole budget reserved
	file       int64             // fileBacked when the limit was last set
	current    int64             // the limit last set
}

// NewMemoryLimiter returns a limiter for a daemon with the given budget that reads its binary's
// resident pages with fileBacked and sets limits with set, and sets the limit of a daemon with
// nothing reserved.
func NewMemoryLimiter(budget int64, fileBacked func() int64, set func(int64) int64) *MemoryLimiter {
	m := &MemoryLimiter{fileBacked: fileBacked, set: set, most: SoftMemoryLimit(budget), file: fileBacked()}
	m.current = m.Limit(0)
	set(m.current)
	return m
}

// Limit is the soft limit with reserved bytes held by requests and caches, which are what the
// daemon keeps live beyond its runtime at rest.
func (m *MemoryLimiter) Limit(reserved int64) int64 {
	return min(m.most, memmodel.RuntimeLimit(DaemonBaselineBytes+reserved, m.file, reserved))
}

// Follow sets the limit for reserved bytes when it moves by more than a sixteenth: the margin
// Limit leaves (memmodel.RuntimeLimit) absorbs smaller moves, and a daemon answering many small
// requests does not reset the collector's goal at each. The binary's resident pages are read
// again then (/proc/self/statm, under admission's lock), as they grow while code runs for the
// first time: read at most once a second instead, the limit lagged that growth and the daemon's
// peak rose (bench/README.md, "The daemon within 64 MiB + 4 × the file on subtask detail").
// Calls must not overlap (admission makes them under its lock).
func (m *MemoryLimiter) Follow(reserved int64) {
	if d := m.Limit(reserved) - m.current; d <= m.current/16 && -d <= m.current/16 {
		return
	}
	m.file = m.fileBacked()
	m.current = m.Limit(reserved)
	m.set(m.current)
}
