package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// RequestIDHeader is the metadata key (and HTTP header) carrying the request ID: taken from the
// caller when present, generated otherwise, and always returned in the response header.
const RequestIDHeader = "x-request-id"

type requestIDKey struct{}

// logFieldsKey holds the request's *logFields: handlers add what they learn (source, verdict) and
// the one log line per RPC carries it.
type logFieldsKey struct{}

type logFields struct {
	mu    sync.Mutex
	attrs []slog.Attr
}

// addLog adds attributes to the request's log line.
func addLog(ctx context.Context, attrs ...slog.Attr) {
	if f, ok := ctx.Value(logFieldsKey{}).(*logFields); ok {
		f.mu.Lock()
		f.attrs = append(f.attrs, attrs...)
		f.mu.Unlock()
	}
}

// RequestID returns the request ID of a handler's context.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// The interceptors, outermost first, installed with grpc.ChainUnaryInterceptor and
// ChainStreamInterceptor, so that gRPC callers and the HTTP gateway (which calls through an
// in-process connection, inproc.go) pass the same chain:
//
//   - httpPeer: a call of the gateway carries the HTTP client's address, for fairness and logs;
//   - requestID: the ID (the caller's, or a new one) in the context and the response header;
//   - the log line: go-grpc-middleware's logging, one line per finished call (rpcLogger);
//   - metrics: preflight_rpc_requests_total and preflight_rpc_duration_seconds, which see the
//     final code of everything below, including recovered panics;
//   - recovery: go-grpc-middleware's, a panic becomes INTERNAL (recovered);
//   - deadline: RequestTimeout when the caller set none, MaxTimeout at most.
//
// Admission (memory and check slots, admission.go) happens inside the handlers, because what a
// request needs is known only once its size is, and a check slot is taken only once the file
// has arrived.
func (s *Server) unaryInterceptors() []grpc.UnaryServerInterceptor {
	return []grpc.UnaryServerInterceptor{
		httpPeerUnary, s.requestIDUnary,
		logging.UnaryServerInterceptor(s.rpcLogger(), s.rpcLogOptions()...),
		s.metricsUnary,
		recovery.UnaryServerInterceptor(recovery.WithRecoveryHandlerContext(s.recovered)),
		s.deadlineUnary,
	}
}

func (s *Server) streamInterceptors() []grpc.StreamServerInterceptor {
	return []grpc.StreamServerInterceptor{
		httpPeerStream, s.requestIDStream,
		logging.StreamServerInterceptor(s.rpcLogger(), s.rpcLogOptions()...),
		s.metricsStream,
		recovery.StreamServerInterceptor(recovery.WithRecoveryHandlerContext(s.recovered)),
		s.deadlineStream,
	}
}

// wrappedStream replaces a stream's context.
type wrappedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (w *wrappedStream) Context() context.Context { return w.ctx }

func requestID(ctx context.Context) string {
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		for _, v := range md.Get(RequestIDHeader) {
			if validRequestID(v) {
				return v
			}
		}
	}
	return newRequestID()
}

func newRequestID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// validRequestID accepts what proxies commonly send (UUIDs, hex, tokens) and nothing that could
// forge log lines.
func validRequestID(v string) bool {
	if v == "" || len(v) > 128 {
		return false
	}
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:", r)) {
			return false
		}
	}
	return true
}

// startRequest puts the request's ID and its log fields in ctx and the ID in the response header.
func startRequest(ctx context.Context, setHeader func(metadata.MD) error) context.Context {
	id := requestID(ctx)
	setHeader(metadata.Pairs(RequestIDHeader, id))
	ctx = context.WithValue(ctx, logFieldsKey{}, &logFields{})
	return context.WithValue(ctx, requestIDKey{}, id)
}

func (s *Server) requestIDUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	return handler(startRequest(ctx, func(md metadata.MD) error { return grpc.SetHeader(ctx, md) }), req)
}

func (s *Server) requestIDStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return handler(srv, &wrappedStream{ss, startRequest(ss.Context(), ss.SetHeader)})
}

// rpcLogOptions shape the middleware's line to the documented one: request_id, method (the full
// gRPC method), code, duration_ms, peer, what the handler added (source, verdict, ...), error.
// Codes a caller causes log at INFO, the others at ERROR.
func (s *Server) rpcLogOptions() []logging.Option {
	return []logging.Option{
		logging.WithLogOnEvents(logging.FinishCall),
		logging.WithDisableLoggingFields(logging.SystemTag[0], logging.ComponentFieldKey, logging.ServiceFieldKey, logging.MethodFieldKey, logging.MethodTypeFieldKey),
		logging.WithLevels(func(code codes.Code) logging.Level {
			switch code {
			case codes.OK, codes.Canceled, codes.InvalidArgument, codes.NotFound, codes.PermissionDenied, codes.ResourceExhausted, codes.DeadlineExceeded:
				return logging.LevelInfo
			}
			return logging.LevelError
		}),
		logging.WithDurationField(func(d time.Duration) logging.Fields {
			return logging.Fields{"duration_ms", float64(d.Microseconds()) / 1000}
		}),
		logging.WithErrorFields(func(err error) logging.Fields {
			return logging.Fields{"error", status.Convert(err).Message()}
		}),
		logging.WithFieldsFromContextAndCallMeta(func(ctx context.Context, c interceptors.CallMeta) logging.Fields {
			f := logging.Fields{"request_id", RequestID(ctx), "method", c.FullMethod()}
			if lf, ok := ctx.Value(logFieldsKey{}).(*logFields); ok {
				lf.mu.Lock()
				for _, a := range lf.attrs {
					f = append(f, a.Key, a.Value.Any())
				}
				lf.mu.Unlock()
			}
			return f
		}),
	}
}

// rpcLogger writes the middleware's lines with the server's slog logger, as "rpc" lines with
// our field names; health and reflection calls at DEBUG (not worth a line each).
func (s *Server) rpcLogger() logging.Logger {
	return logging.LoggerFunc(func(ctx context.Context, level logging.Level, _ string, fields ...any) {
		attrs := make([]slog.Attr, 0, len(fields)/2)
		for i := 0; i+1 < len(fields); i += 2 {
			k, _ := fields[i].(string)
			switch k {
			case "grpc.code":
				k = "code"
			case "peer.address":
				k = "peer"
			case "method":
				if m, _ := fields[i+1].(string); strings.HasPrefix(m, "/grpc.") {
					level = logging.LevelDebug
				}
			case "grpc.start_time", "grpc.request.deadline", "grpc.error":
				continue // the error's message is "error"; times are the log line's own
			}
			attrs = append(attrs, slog.Any(k, fields[i+1]))
		}
		s.log.LogAttrs(ctx, slog.Level(level), "rpc", attrs...)
	})
}

func (s *Server) observe(method string, start time.Time, err error) {
	code := status.Code(err)
	s.metrics.rpcs.WithLabelValues(method, code.String()).Inc()
	s.metrics.rpcSeconds.WithLabelValues(method).Observe(time.Since(start).Seconds())
}

func (s *Server) metricsUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := handler(ctx, req)
	s.observe(info.FullMethod, start, err)
	return resp, err
}

func (s *Server) metricsStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	start := time.Now()
	err := handler(srv, ss)
	s.observe(info.FullMethod, start, err)
	return err
}

// recovered logs a panic with its stack and answers INTERNAL: one bad request must not take the
// daemon (and every other caller's check) down.
func (s *Server) recovered(ctx context.Context, p any) error {
	method, _ := grpc.Method(ctx)
	s.log.ErrorContext(ctx, "panic", slog.String("request_id", RequestID(ctx)), slog.String("method", method),
		slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
	return status.Errorf(codes.Internal, "internal error (request %s)", RequestID(ctx))
}

// withDeadline applies RequestTimeout when the caller set no deadline and caps any deadline at
// MaxTimeout, so that a forgotten client cannot hold a slot forever.
func (s *Server) withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); !ok {
		return context.WithTimeout(ctx, s.cfg.RequestTimeout)
	} else if time.Until(dl) > s.cfg.MaxTimeout {
		return context.WithTimeout(ctx, s.cfg.MaxTimeout)
	}
	return ctx, func() {}
}

func (s *Server) deadlineUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if !isCheck(info.FullMethod) {
		return handler(ctx, req)
	}
	ctx, cancel := s.withDeadline(ctx)
	defer cancel()
	return handler(ctx, req)
}

func (s *Server) deadlineStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if !isCheck(info.FullMethod) {
		return handler(srv, ss)
	}
	ctx, cancel := s.withDeadline(ss.Context())
	defer cancel()
	return handler(srv, &wrappedStream{ss, ctx})
}

// isCheck tells Preflight's own methods from health and reflection, which are never limited.
func isCheck(method string) bool {
	return strings.HasPrefix(method, "/"+pb.PreflightService_ServiceDesc.ServiceName+"/")
}
