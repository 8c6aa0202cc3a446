package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// newHTTPHandler builds the HTTP face: the generated grpc-gateway handlers registered in process
// (no loopback connection, so no second TLS setup), behind the same interceptor chain as gRPC.
func (s *Server) newHTTPHandler(reg *prometheus.Registry) (http.Handler, error) {
	gw := runtime.NewServeMux(
		runtime.WithIncomingHeaderMatcher(func(k string) (string, bool) {
			if strings.EqualFold(k, RequestIDHeader) {
				return RequestIDHeader, true
			}
			return runtime.DefaultHeaderMatcher(k)
		}),
		runtime.WithOutgoingHeaderMatcher(func(k string) (string, bool) {
			if k == RequestIDHeader {
				return "X-Request-Id", true
			}
			return runtime.MetadataHeaderPrefix + k, true
		}),
	)
	if err := pb.RegisterPreflightServiceHandlerServer(context.Background(), gw, &gatewayService{s: s}); err != nil {
		return nil, err
	}
	// JSON is ~4/3 the size of the bytes it carries (base64 inline metadata).
	bodyLimit := int64(s.cfg.maxRecvMsgBytes()) * 4 / 3
	mux := http.NewServeMux()
	limited := http.MaxBytesHandler(gw, bodyLimit)
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		// Refuse an announced oversize body with the code gRPC callers get for it; a chunked one
		// is cut by MaxBytesHandler (the gateway then answers 400).
		if r.ContentLength > bodyLimit {
			_, out := runtime.MarshalerForRequest(gw, r)
			err := status.Errorf(codes.ResourceExhausted, "request body of %d bytes exceeds the limit of %d bytes; use CheckRescaleUpload over gRPC", r.ContentLength, bodyLimit)
			runtime.HTTPError(r.Context(), gw, out, w, r, err)
			return
		}
		limited.ServeHTTP(w, r)
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(openAPI)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	})
	return mux, nil
}

// gatewayService runs gateway calls through the gRPC interceptor chain, so HTTP callers get the
// same request IDs, logs, metrics, deadlines and concurrency limit.
type gatewayService struct {
	pb.UnimplementedPreflightServiceServer
	s *Server
}

var _ pb.PreflightServiceServer = (*gatewayService)(nil)

func (g *gatewayService) CheckRescale(ctx context.Context, req *pb.CheckRescaleRequest) (*pb.CheckRescaleResponse, error) {
	resp, err := g.s.unary(ctx, req, &grpc.UnaryServerInfo{Server: g.s.svc, FullMethod: pb.PreflightService_CheckRescale_FullMethodName},
		func(ctx context.Context, req any) (any, error) {
			return g.s.svc.CheckRescale(ctx, req.(*pb.CheckRescaleRequest))
		})
	if err != nil {
		return nil, err
	}
	return resp.(*pb.CheckRescaleResponse), nil
}

func (g *gatewayService) InspectCheckpoint(ctx context.Context, req *pb.InspectCheckpointRequest) (*pb.InspectCheckpointResponse, error) {
	resp, err := g.s.unary(ctx, req, &grpc.UnaryServerInfo{Server: g.s.svc, FullMethod: pb.PreflightService_InspectCheckpoint_FullMethodName},
		func(ctx context.Context, req any) (any, error) {
			return g.s.svc.InspectCheckpoint(ctx, req.(*pb.InspectCheckpointRequest))
		})
	if err != nil {
		return nil, err
	}
	return resp.(*pb.InspectCheckpointResponse), nil
}

// CheckRescaleUpload has no HTTP mapping; it is here to satisfy the interface.
func (g *gatewayService) CheckRescaleUpload(stream grpc.ClientStreamingServer[pb.CheckRescaleUploadRequest, pb.CheckRescaleUploadResponse]) error {
	return g.s.svc.CheckRescaleUpload(stream)
}
