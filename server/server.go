// Package server assembles preflightd: the PreflightService over the engine, and around it
// everything that belongs to serving rather than to checking (the etcd model): gRPC health with
// draining, reflection, interceptors (panic recovery, request IDs and JSON logs, deadlines, a
// bound on concurrent checks, Prometheus metrics), receive and upload size limits, TLS and mutual
// TLS, the source allowlist, an LRU cache of decoded layouts, and an HTTP listener with the
// grpc-gateway JSON API, /metrics, /openapi.json and /healthz. Handlers never enforce limits
// themselves, and the server never analyses anything: that is the engine's job.
//
// # Where things are
//
// The files fall into five groups; a change usually stays in one.
//
//   - Transport, how requests arrive and answers leave: server.go (assembly, listeners, TLS),
//     interceptors.go (request IDs, logs, deadlines, panics), http.go, inproc.go and
//     jsonbody.go (the JSON gateway), httplimits.go, upload_http.go (the raw-body upload),
//     pieces.go (answers in pieces), web.go and web/ (the page), ops.go (health, metrics
//     endpoints), errors.go (how errors become statuses).
//   - The service, what each RPC does with the engine: service.go (CheckRescale and its
//     streams, Inspect), decide.go, lifecycle.go (diff, trend, prune), classpath.go,
//     verifyfiles.go, jobcode.go (job jars and catalogs), flinkadmission.go (the Kubernetes
//     admission webhook).
//   - Admission, what a request may use: admission.go (check slots and the memory budget),
//     refusal.go (the typed refusals each transport maps), checkmem.go (a check's reservation,
//     from internal/memmodel), bodybudget.go (JSON bodies), memsize.go and memlimit.go (the
//     daemon's soft memory limit from the container's).
//   - Caching, what is computed once: cache.go (decoded layouts and answers under one byte
//     count), lru.go, memo.go and memokey.go (answers by result key), flight.go and
//     memoflight.go (one computation for identical questions at once).
//   - Operations: config.go (every setting and its default), metrics.go, version.go.
package server

import (
	"context"
	"crypto/tls"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/flinkpreflight/preflight/internal/pemfile"
	"github.com/flinkpreflight/preflight/internal/source"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// openAPI is proto/preflight/v1/preflight.swagger.json; a test keeps the copy identical.
//
//go:embed openapi.json
var openAPI []byte

// Server is an assembled preflightd.
type Server struct {
	cfg     Config
	log     *slog.Logger
	grpc    *grpc.Server
	health  *health.Server
	sources *source.Opener
	cache   *layoutCache
	encoded sync.Map // wire bytes of cached answers (memo.go)
	idents  *sourceIdentities
	// flights are the decodes and answers in progress that identical requests share (flight.go).
	flights flightGroup
	// code holds the analyses of job jars and the engines built with them (jobcode.go).
	code *codeCaches
	// flightHook, when set (tests), runs in a flight's goroutine before its check.
	flightHook func(ctx context.Context)
	metrics    *metrics
	adm        *admission
	svc        *service
	inproc     *inprocListener  // the gRPC server's pipe for the HTTP gateway (inproc.go)
	gwConn     *grpc.ClientConn // the gateway's connection to it
	httpH      http.Handler
	opsH       http.Handler
	tls        *tls.Config

	draining atomic.Bool
	mu       sync.Mutex
	httpSrvs []*http.Server
}

// New assembles a server; it listens nowhere until Serve.
func New(cfg Config) (*Server, error) {
	cfg.setDefaults()
	s := &Server{log: cfg.Logger}
	s.cfg = cfg
	s.flights.timeout, s.flights.onPanic = cfg.MaxTimeout, s.recovered
	s.cache = newLayoutCache(cfg.CacheEntries, cfg.CacheBytes)
	s.cache.maxResultBytes = cfg.ResultCacheBytes
	s.cache.onEvictResult = func(r *memoResult) { s.encoded.Delete(r.resp) }
	s.idents = newSourceIdentities(cfg.RevalidateInterval)
	s.code = newCodeCaches()
	reg := cfg.Registry
	if reg == nil {
		reg = newRegistry()
	}
	s.metrics = newMetrics(reg)
	s.metrics.memBudget.Set(float64(cfg.MemoryBudget))
	s.adm = newAdmission(&s.cfg, s.cache, s.metrics)
	registerBuildInfo(reg)
	var err error
	s.sources, err = source.New(source.Config{Allow: cfg.Allow, EnableHTTP: cfg.EnableHTTPSources, MaxBytes: cfg.MaxUploadBytes, UpstreamTimeout: cfg.UpstreamTimeout})
	if err != nil {
		return nil, err
	}
	if s.tls, err = loadTLS(cfg); err != nil {
		s.sources.Close()
		return nil, err
	}
	var netCreds credentials.TransportCredentials
	if s.tls != nil {
		netCreds = credentials.NewTLS(s.tls)
	}
	s.grpc = grpc.NewServer(
		grpc.ChainUnaryInterceptor(s.unaryInterceptors()...),
		grpc.ChainStreamInterceptor(s.streamInterceptors()...),
		grpc.MaxRecvMsgSize(cfg.maxRecvMsgBytes()),
		// Cached answers go out as the bytes they were encoded to once (memo.go).
		grpc.ForceServerCodecV2(newResultCodec(&s.encoded)),
		// Stop and GracefulStop return only when handlers have: sources are closed after that.
		grpc.WaitForHandlers(true),
		grpc.Creds(newServerCreds(netCreds)),
	)
	s.svc = &service{s: s}
	pb.RegisterPreflightServiceServer(s.grpc, s.svc)
	s.health = health.NewServer()
	healthpb.RegisterHealthServer(s.grpc, s.health)
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.health.SetServingStatus(pb.PreflightService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	reflection.Register(s.grpc)
	// The gateway's pipe is served from the start: HTTP may be served before (or without) gRPC.
	s.inproc = newInprocListener()
	go s.grpc.Serve(s.inproc)
	if s.gwConn, err = dialInproc(s.inproc); err != nil {
		s.grpc.Stop()
		s.sources.Close()
		return nil, err
	}
	if s.httpH, err = s.newHTTPHandler(reg); err != nil {
		s.gwConn.Close()
		s.grpc.Stop()
		s.sources.Close()
		return nil, err
	}
	s.opsH = s.newOpsHandler(reg)
	return s, nil
}

func loadTLS(cfg Config) (*tls.Config, error) {
	if cfg.TLSCertFile == "" && cfg.TLSKeyFile == "" {
		if cfg.TLSClientCAFile != "" {
			return nil, errors.New("server: a client CA needs a server certificate and key")
		}
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
	if err != nil {
		return nil, fmt.Errorf("server: TLS certificate: %w", err)
	}
	t := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if cfg.TLSClientCAFile != "" {
		pool, err := pemfile.CertPool(cfg.TLSClientCAFile, "server: client CA")
		if err != nil {
			return nil, err
		}
		t.ClientCAs = pool
		t.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return t, nil
}

// Config is the configuration in effect, defaults applied.
func (s *Server) Config() Config { return s.cfg }

// GRPCServer is the assembled gRPC server (for in-process listeners such as bufconn).
func (s *Server) GRPCServer() *grpc.Server { return s.grpc }

// HTTPHandler serves the JSON API, /metrics, /openapi.json, /healthz and /readyz.
func (s *Server) HTTPHandler() http.Handler { return s.httpH }

// ServeGRPC serves gRPC on l until Shutdown.
func (s *Server) ServeGRPC(l net.Listener) error { return s.grpc.Serve(l) }

// ServeHTTPListener serves HTTPHandler on l (with TLS when configured) until Shutdown.
func (s *Server) ServeHTTPListener(l net.Listener) error {
	srv := s.newHTTPServer(s.httpH)
	if !s.track(srv) {
		return http.ErrServerClosed
	}
	if s.tls != nil {
		l = tls.NewListener(l, s.tls)
	}
	err := srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// track registers srv for Shutdown and Close; false once draining.
func (s *Server) track(srv *http.Server) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining.Load() {
		return false
	}
	s.httpSrvs = append(s.httpSrvs, srv)
	return true
}

// Shutdown drains: health turns NOT_SERVING (gRPC and /healthz) for DrainDelay, then the servers
// stop taking new work and wait for in-flight requests up to ShutdownTimeout (or ctx), after
// which remaining RPCs are cancelled.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.draining.Store(true)
	srvs := s.httpSrvs
	s.mu.Unlock()
	s.health.Shutdown()
	s.log.Info("draining", slog.Duration("delay", s.cfg.DrainDelay), slog.Duration("timeout", s.cfg.ShutdownTimeout))
	select {
	case <-time.After(s.cfg.DrainDelay):
	case <-ctx.Done():
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ShutdownTimeout)
	defer cancel()
	var wg sync.WaitGroup
	var httpErr error
	wg.Go(func() {
		for _, srv := range srvs {
			if err := srv.Shutdown(ctx); err != nil {
				srv.Close()
				httpErr = err
			}
		}
	})
	stopped := make(chan struct{})
	go func() { s.grpc.GracefulStop(); close(stopped) }()
	var err error
	select {
	case <-stopped:
	case <-ctx.Done():
		s.log.Warn("shutdown timeout: cancelling in-flight RPCs")
		s.grpc.Stop()
		<-stopped
		err = ctx.Err()
	}
	wg.Wait()
	s.gwConn.Close()
	s.sources.Close()
	if err == nil {
		err = httpErr
	}
	s.log.Info("stopped")
	return err
}

// Close stops at once (tests).
func (s *Server) Close() {
	s.draining.Store(true)
	s.grpc.Stop()
	s.mu.Lock()
	for _, srv := range s.httpSrvs {
		srv.Close()
	}
	s.mu.Unlock()
	s.gwConn.Close()
	s.sources.Close()
}
