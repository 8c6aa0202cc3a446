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

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
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

// The interceptors, outermost first: observe (request ID, log, RPC metrics) sees the final code
// of everything below it, including recovered panics; recover turns a panic into INTERNAL;
// deadline bounds the request. Admission (memory and check slots, admission.go) happens inside
// the handlers, because what a request needs is known only once its size is, and a check slot is
// taken only once the file has arrived.
func (s *Server) unaryInterceptors() []grpc.UnaryServerInterceptor {
	return []grpc.UnaryServerInterceptor{s.observeUnary, s.recoverUnary, s.deadlineUnary}
}

func (s *Server) streamInterceptors() []grpc.StreamServerInterceptor {
	return []grpc.StreamServerInterceptor{s.observeStream, s.recoverStream, s.deadlineStream}
}

// chainUnary composes interceptors into one, for the HTTP gateway, which calls the service in
// process and must pass the same limits as gRPC callers.
func chainUnary(ints []grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		h := handler
		for i := len(ints) - 1; i >= 0; i-- {
			ic, next := ints[i], h
			h = func(ctx context.Context, req any) (any, error) { return ic(ctx, req, info, next) }
		}
		return h(ctx, req)
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

func (s *Server) begin(ctx context.Context, setHeader func(metadata.MD) error) (context.Context, string) {
	id := requestID(ctx)
	setHeader(metadata.Pairs(RequestIDHeader, id))
	ctx = context.WithValue(ctx, logFieldsKey{}, &logFields{})
	return context.WithValue(ctx, requestIDKey{}, id), id
}

func (s *Server) end(ctx context.Context, method, id string, start time.Time, err error) {
	code := status.Code(err)
	d := time.Since(start)
	s.metrics.rpcs.WithLabelValues(method, code.String()).Inc()
	s.metrics.rpcSeconds.WithLabelValues(method).Observe(d.Seconds())
	level := slog.LevelInfo
	switch code {
	case codes.OK, codes.Canceled, codes.InvalidArgument, codes.NotFound, codes.PermissionDenied, codes.ResourceExhausted, codes.DeadlineExceeded:
	default:
		level = slog.LevelError
	}
	if strings.HasPrefix(method, "/grpc.") { // health and reflection: not worth a line each
		level = slog.LevelDebug
	}
	attrs := []slog.Attr{
		slog.String("request_id", id), slog.String("method", method), slog.String("code", code.String()),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		attrs = append(attrs, slog.String("peer", p.Addr.String()))
	}
	if f, ok := ctx.Value(logFieldsKey{}).(*logFields); ok {
		f.mu.Lock()
		attrs = append(attrs, f.attrs...)
		f.mu.Unlock()
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", status.Convert(err).Message()))
	}
	s.log.LogAttrs(ctx, level, "rpc", attrs...)
}

func (s *Server) observeUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	ctx, id := s.begin(ctx, func(md metadata.MD) error { return grpc.SetHeader(ctx, md) })
	resp, err := handler(ctx, req)
	s.end(ctx, info.FullMethod, id, start, err)
	return resp, err
}

func (s *Server) observeStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	start := time.Now()
	ctx, id := s.begin(ss.Context(), ss.SetHeader)
	err := handler(srv, &wrappedStream{ss, ctx})
	s.end(ctx, info.FullMethod, id, start, err)
	return err
}

// recovered logs a panic with its stack and answers INTERNAL: one bad request must not take the
// daemon (and every other caller's check) down.
func (s *Server) recovered(ctx context.Context, method string, p any, errp *error) {
	s.log.ErrorContext(ctx, "panic", slog.String("request_id", RequestID(ctx)), slog.String("method", method),
		slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
	*errp = status.Errorf(codes.Internal, "internal error (request %s)", RequestID(ctx))
}

func (s *Server) recoverUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp = nil
			s.recovered(ctx, info.FullMethod, p, &err)
		}
	}()
	return handler(ctx, req)
}

func (s *Server) recoverStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.recovered(ss.Context(), info.FullMethod, p, &err)
		}
	}()
	return handler(srv, ss)
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
