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
		rpcs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "preflight_rpc_requests_total", Help: "RPCs handled, by full method and gRPC code.",
		}, []string{"method", "code"}),
		rpcSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "preflight_rpc_duration_seconds", Help: "RPC latency, by full method.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"method"}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "preflight_checks_in_flight", Help: "Checks holding a concurrency slot.",
		}),
		verdicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "preflight_verdicts_total", Help: "Reports returned, by verdict.",
		}, []string{"verdict"}),
		decodedBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "preflight_metadata_decoded_bytes_total", Help: "Bytes of _metadata decoded (cache hits excluded).",
		}),
		decodeSecs: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "preflight_metadata_decode_seconds", Help: "Time to read and decode one _metadata into a layout.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}),
		cache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "preflight_layout_cache_requests_total", Help: "Layout lookups by URI, by result: hit (cached), shared (joined a decode in flight), miss (decoded).",
		}, []string{"result"}),
	}
	m.memReserved = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "preflight_memory_reserved_bytes", Help: "Memory reserved by requests under the memory budget (estimates; cached layouts excluded).",
	})
	m.memBudget = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "preflight_memory_budget_bytes", Help: "The memory budget (--memory-budget).",
	})
	m.cacheBytes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "preflight_layout_cache_bytes", Help: "Measured bytes of the cached layouts.",
	})
	m.results = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "preflight_result_cache_requests_total", Help: "CheckRescale answers looked up in the result cache (by URI), by result: hit (answered from the cache), miss (checked), shared (answered by the check an identical question in flight ran).",
	}, []string{"result"})
	m.resultCacheBytes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "preflight_result_cache_bytes", Help: "Counted bytes of the cached CheckRescale answers (they share the layout cache's bytes and the memory budget).",
	})
	m.queued = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "preflight_admission_waiting", Help: "Requests waiting for a check slot or memory.",
	})
	m.receiving = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "preflight_uploads_receiving", Help: "CheckRescaleUpload streams still receiving the file.",
	})
	m.uploadEnds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "preflight_uploads_refused_total", Help: "Uploads the server ended, by reason: idle (no message within --upload-idle-timeout), size-mismatch (bytes differ from the header's size_bytes).",
	}, []string{"reason"})
	reg.MustRegister(m.memReserved, m.memBudget, m.cacheBytes, m.resultCacheBytes, m.results, m.queued, m.receiving, m.uploadEnds)
	reg.MustRegister(m.rpcs, m.rpcSeconds, m.inflight, m.verdicts, m.decodedBytes, m.decodeSecs, m.cache)
	return m
}

func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}
