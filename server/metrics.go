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
	reg.MustRegister(m.rpcs, m.rpcSeconds, m.inflight, m.verdicts, m.decodedBytes, m.decodeSecs, m.cache)
	return m
}

func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}
