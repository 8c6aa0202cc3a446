package server

// DaemonBaselineBytes is the daemon's own memory outside the budget: binary, runtime, gRPC and
// HTTP servers, idle connections (measured at rest: bench/README.md, "Figures behind constants").
const DaemonBaselineBytes = 64 << 20

// DaemonGCPercent is the GOGC preflightd runs with when it sets the soft memory limit itself
// (and GOGC is not set): the limit bounds the heap, so collecting less often costs no memory
// beyond it.
const DaemonGCPercent = 400

// SoftMemoryLimit is the Go soft memory limit for a daemon with the given memory budget (0: the
// default budget): the budget plus DaemonBaselineBytes, never above 90% of the container's
// limit. The budget counts live bytes; without a soft limit the collector lets the heap grow to
// twice what is live (GOGC=100), and RSS ends far above the budget (bench/README.md, "Figures
// behind constants"). With it the collector works harder near the limit instead; it is soft, so
// a check whose estimate was low still completes.
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
