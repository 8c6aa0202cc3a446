package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/flinkpreflight/preflight/internal/buildinfo"
)

// registerBuildInfo exports preflight_build_info{version,revision,goversion} = 1, the usual
// Prometheus way to tell which build each replica runs (join it onto other series by instance).
func registerBuildInfo(reg prometheus.Registerer) {
	bi := buildinfo.Get()
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "preflight_build_info",
		Help:        "Always 1; the labels say which build of preflightd is running.",
		ConstLabels: prometheus.Labels{"version": bi.Version, "revision": bi.ShortRevision(), "goversion": bi.GoVersion},
	})
	g.Set(1)
	reg.MustRegister(g)
}
