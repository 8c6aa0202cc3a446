package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server's Prometheus series: RPC-level (every method, gRPC and HTTP alike, since
// the gateway runs through the same interceptors) and domain-level.
type metrics struct {
	rpcs         *prometheus.CounterVec   // method, code
	rpcSeconds   *prometheus.HistogramVec // method
	inflight     prometheus.Gauge
	verdicts     *prometheus.CounterVec // verdict
	decodedBytes prometheus.Counter
	decodeSecs   prometheus.Histogram
	cache        *prometheus.CounterVec // result: hit, shared, miss
	results      *prometheus.CounterVec // result: hit, miss (memo.go)
	// Admission (admission.go) and uploads.
	memReserved      prometheus.Gauge
	memBudget        prometheus.Gauge
	cacheBytes       prometheus.Gauge
	resultCacheBytes prometheus.Gauge
	queued           prometheus.Gauge
	receiving        prometheus.Gauge
	uploadEnds       *prometheus.CounterVec // reason: idle, size-mismatch
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		rpcs: counterVec("preflight_rpc_requests_total", "RPCs handled, by full method and gRPC code.", "method", "code"),
		rpcSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "preflight_rpc_duration_seconds", Help: "RPC latency, by full method.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"method"}),
		inflight: gauge("preflight_checks_in_flight", "Checks holding a concurrency slot."),
		verdicts: counterVec("preflight_verdicts_total", "Reports returned, by verdict.", "verdict"),
		decodedBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "preflight_metadata_decoded_bytes_total", Help: "Bytes of _metadata decoded (cache hits excluded).",
		}),
		decodeSecs: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "preflight_metadata_decode_seconds", Help: "Time to read and decode one _metadata into a layout.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}),
		cache: counterVec("preflight_layout_cache_requests_total", "Layout lookups by URI, by result: hit (cached), shared (joined a decode in flight), miss (decoded).", "result"),
	}
	m.memReserved = gauge("preflight_memory_reserved_bytes", "Memory reserved by requests under the memory budget (estimates; cached layouts excluded).")
	m.memBudget = gauge("preflight_memory_budget_bytes", "The memory budget (--memory-budget).")
	m.cacheBytes = gauge("preflight_layout_cache_bytes", "Measured bytes of the cached layouts.")
	m.results = counterVec("preflight_result_cache_requests_total", "CheckRescale answers looked up in the result cache (by URI), by result: hit (answered from the cache), miss (checked), shared (answered by the check an identical question in flight ran).", "result")
	m.resultCacheBytes = gauge("preflight_result_cache_bytes", "Counted bytes of the cached CheckRescale answers (they share the layout cache's bytes and the memory budget).")
	m.queued = gauge("preflight_admission_waiting", "Requests waiting for a check slot or memory.")
	m.receiving = gauge("preflight_uploads_receiving", "CheckRescaleUpload streams still receiving the file.")
	m.uploadEnds = counterVec("preflight_uploads_refused_total", "Uploads the server ended, by reason: idle (no message within --upload-idle-timeout), size-mismatch (bytes differ from the header's size_bytes).", "reason")
	reg.MustRegister(m.memReserved, m.memBudget, m.cacheBytes, m.resultCacheBytes, m.results, m.queued, m.receiving, m.uploadEnds)
	reg.MustRegister(m.rpcs, m.rpcSeconds, m.inflight, m.verdicts, m.decodedBytes, m.decodeSecs, m.cache)
	return m
}

func gauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}
