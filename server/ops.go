package server

import (
	"errors"
	"net"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// newOpsHandler serves what probes and scrapers need, and nothing else: /healthz (liveness: the
// process answers, also while draining, so that a drain is not mistaken for a hang), /readyz
// (readiness: 503 while draining) and /metrics. It is served in plain HTTP on its own listener
// (--ops-addr) because kubelet probes and Prometheus scrapes carry no client certificate when
// the API listeners require one.
func (s *Server) newOpsHandler(reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return withRequestID(mux)
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		http.Error(w, "draining", http.StatusServiceUnavailable)
		return
	}
	w.Write([]byte("ok\n"))
}

// OpsHandler serves /healthz, /readyz and /metrics (see ServeOpsListener).
func (s *Server) OpsHandler() http.Handler { return s.opsH }

// ServeOpsListener serves OpsHandler on l in plain HTTP, never TLS, until Shutdown. Bind it to
// an address only the cluster's probes and scrapers reach.
func (s *Server) ServeOpsListener(l net.Listener) error {
	srv := s.newHTTPServer(s.opsH)
	if !s.track(srv) {
		return http.ErrServerClosed
	}
	err := srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
