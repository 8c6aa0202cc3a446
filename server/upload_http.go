package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/flinkpreflight/preflight/internal/bytesize"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// UploadPath is the HTTP route that takes a raw `_metadata` as the request body. The plan and
// options are query parameters (see uploadHeader); the answer is CheckRescaleUploadResponse as JSON,
// the same as POST /v1/check answers.
const UploadPath = "/v1/check:upload"

// Defaults of the upload's slow-client guard.
const (
	// DefaultUploadMinRate is the slowest average rate an upload body may arrive at, after the grace.
	DefaultUploadMinRate = 64 << 10
	// DefaultUploadRateGrace is the time an upload gets before the rate counts (TLS, TCP slow start,
	// a client that opens the file late).
	DefaultUploadRateGrace = 10 * time.Second
	// uploadChunkBytes is the size of the chunks the body is handed to the upload handler in.
	uploadChunkBytes = 256 << 10
)

// registerUpload adds the upload route to mux.
// unreadBodyDiscardTime bounds how long net/http may read the rest of a refused upload.
const unreadBodyDiscardTime = 2 * time.Second

func (s *Server) registerUpload(mux *http.ServeMux) {
	errMux := runtime.NewServeMux() // the gateway's default marshaler and error format
	// Its answer is written under the same write-idle guard as the rest of /v1: a client that
	// uploads and never reads the answer does not hold it.
	mux.Handle(UploadPath, withWriteIdle(s.cfg.SendIdleTimeout, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serveUpload(errMux, w, r) })))
}

// serveUpload runs CheckRescaleUpload for an HTTP body: the same handler, interceptors (request
// ID, log line, metrics, deadline, concurrency slot) and limits as a gRPC upload. The body is never
// buffered: it is read in chunks while the decoder consumes them.
func (s *Server) serveUpload(gw *runtime.ServeMux, w http.ResponseWriter, r *http.Request) {
	_, out := runtime.MarshalerForRequest(gw, r)
	fail := func(httpCode int, err error) {
		st := status.Convert(err)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(httpCode)
		b, _ := protojson.Marshal(st.Proto())
		w.Write(b)
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		fail(http.StatusMethodNotAllowed, status.Errorf(codes.Unimplemented, "%s takes POST with the _metadata bytes as the body", UploadPath))
		return
	}
	header, err := uploadHeader(r.URL.Query())
	if err != nil {
		fail(http.StatusBadRequest, errInvalid("%s: %v", UploadPath, err))
		return
	}
	max := s.cfg.MaxUploadBytes
	if r.ContentLength > max {
		fail(http.StatusRequestEntityTooLarge, status.Errorf(codes.ResourceExhausted, "upload of %d bytes exceeds the limit of %d bytes (%s)", r.ContentLength, max, bytesize.Format(max)))
		return
	}
	if r.ContentLength > 0 {
		header.SizeBytes = r.ContentLength
	}
	ctx := r.Context()
	md := metadata.MD{}
	if id := r.Header.Get(RequestIDHeader); id != "" {
		md.Set(RequestIDHeader, id)
	}
	ctx = metadata.NewIncomingContext(ctx, md)
	if addr, err := net.ResolveTCPAddr("tcp", r.RemoteAddr); err == nil {
		ctx = peer.NewContext(ctx, &peer.Peer{Addr: addr})
	}
	st := &httpUploadStream{
		ctx:    ctx,
		w:      w,
		header: header,
		body: &rateReader{
			r:       r.Body,
			rc:      http.NewResponseController(w),
			minRate: s.cfg.UploadMinRate,
			grace:   s.cfg.UploadRateGrace,
			start:   time.Now(),
		},
		max: max,
	}
	// As on a gRPC stream, grpc.Method and grpc.SetHeader work on the context (the recovery
	// handler names the method).
	st.ctx = grpc.NewContextWithServerTransportStream(st.ctx, uploadTransport{st})
	info := &grpc.StreamServerInfo{FullMethod: pb.PreflightService_CheckRescaleUpload_FullMethodName, IsClientStream: true}
	err = chainStream(s.streamInterceptors())(s.svc, st, info, func(srv any, ss grpc.ServerStream) error {
		return srv.(*service).CheckRescaleUpload(&grpc.GenericServerStream[pb.CheckRescaleUploadRequest, pb.CheckRescaleUploadResponse]{ServerStream: ss})
	})
	if r.Context().Err() != nil {
		// net/http cancels the request as soon as a body read fails, so the handler may return
		// (Canceled) before its receiving goroutine has recorded why the read failed (too slow:
		// 408). A read in flight returns at once then; wait for it before telling the cases apart.
		st.body.mu.Lock()
		//lint:ignore SA2001 the empty critical section waits for the read in flight
		st.body.mu.Unlock()
	}
	switch {
	case st.body.eof.Load():
		st.body.rc.SetReadDeadline(time.Time{})
	case st.body.slow.Load() != nil:
		// Too slow: close the connection after the answer instead of waiting for the rest.
		w.Header().Set("Connection", "close")
		st.body.rc.SetReadDeadline(time.Now())
	default:
		// Refused before the end (too large, malformed): net/http discards up to 256 KiB of the
		// rest before answering, so that a client still sending reads the answer instead of a
		// broken pipe, and closes the connection when more remains. The discard gets a short
		// deadline, so a client that stops sending holds nothing.
		st.body.rc.SetReadDeadline(time.Now().Add(unreadBodyDiscardTime))
	}
	switch {
	case st.tooLarge.Load():
		fail(http.StatusRequestEntityTooLarge, err)
	case st.body.slow.Load() != nil:
		fail(http.StatusRequestTimeout, status.Error(codes.DeadlineExceeded, *st.body.slow.Load()))
	case refusalHTTPCode(err) != 0:
		// Admission's refusal, by its type: 413 if it can never fit, 429 if it may later.
		fail(refusalHTTPCode(err), err)
	case err != nil:
		runtime.HTTPError(ctx, gw, out, w, r, err)
	case st.resp == nil:
		fail(http.StatusInternalServerError, status.Error(codes.Internal, "upload handler returned no report"))
	default:
		b, merr := out.Marshal(st.resp)
		if merr != nil {
			fail(http.StatusInternalServerError, status.Error(codes.Internal, merr.Error()))
			return
		}
		w.Header().Set("Content-Type", out.ContentType(st.resp))
		w.Write(b)
	}
}

// chainStream composes the server's stream interceptors for the raw HTTP upload, which presents
// its request body as a server stream in process (httpUploadStream) instead of calling through
// the gateway's gRPC connection: its refusals (413 before the body, 408 for a too-slow body, the
// discard of an unread rest) are decided on the HTTP connection itself.
func chainStream(ints []grpc.StreamServerInterceptor) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		h := handler
		for i := len(ints) - 1; i >= 0; i-- {
			ic, next := ints[i], h
			h = func(srv any, ss grpc.ServerStream) error { return ic(srv, ss, info, next) }
		}
		return h(srv, ss)
	}
}

// uploadHeader reads the plan and options of an HTTP upload from its query string. Unknown
// parameters are refused, so that a typo ("paralelism") cannot silently check the wrong plan.
//
//	set=KEY=P                 per-vertex parallelism (repeatable; KEY as in RescalePlan.vertex_parallelism)
//	parallelism=N             default parallelism of every other vertex
//	flinkVersion=1.19.1       the restoring cluster's Flink version
//	failOn=error|warning|info lowest severity that makes the verdict DENY
//	frameSize=10MiB           pekko/akka.framesize
//	inlineThreshold=20KiB     execution.checkpointing.data-inline-threshold
//	jobmanagerMemory=2GiB     JobManager heap
//	allowNonRestoredState=true
//	includeSubtasks=true      per-subtask detail of every subtask
//	chartSubtasks=true        per-subtask detail of the charted operators only (CheckOptions.chart_subtasks)
//	subtaskOperator=ID        every subtask of this operator (repeatable; CheckOptions.subtask_operators)
//	jobJarUri=URI             job jar whose restore code is analyzed (repeatable; CheckOptions.job_jar_uris)
//	catalogUri=URI            catalog file added to the server's (repeatable; CheckOptions.catalog_uris)
//	name=LABEL                label for logs and the report
func uploadHeader(q url.Values) (*pb.UploadHeader, error) {
	h := &pb.UploadHeader{Plan: &pb.RescalePlan{}, Options: &pb.CheckOptions{}}
	for key, vals := range q {
		for _, v := range vals {
			if err := applyUploadParam(h, key, v); err != nil {
				return nil, err
			}
		}
	}
	return h, nil
}

func applyUploadParam(h *pb.UploadHeader, key, v string) error {
	size := func(dst *int64) error {
		n, err := bytesize.Parse(v)
		if err != nil {
			return fmt.Errorf("%s: %v", key, err)
		}
		*dst = n
		return nil
	}
	boolean := func(dst *bool) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s=%q: want true or false", key, v)
		}
		*dst = b
		return nil
	}
	switch key {
	case "set":
		k, p, ok := strings.Cut(v, "=")
		k = strings.TrimSpace(k)
		n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
		if !ok || k == "" || err != nil || n < 0 {
			return fmt.Errorf("set=%q: want KEY=PARALLELISM, e.g. set=compact-operator=8", v)
		}
		if h.Plan.VertexParallelism == nil {
			h.Plan.VertexParallelism = map[string]int32{}
		}
		h.Plan.VertexParallelism[k] = int32(n)
	case "parallelism":
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return fmt.Errorf("parallelism=%q: want a whole number (0 keeps each operator's)", v)
		}
		h.Plan.DefaultParallelism = int32(n)
	case "flinkVersion":
		h.Options.FlinkVersion = v
	case "failOn":
		switch strings.ToLower(v) {
		case "error", "":
			h.Options.FailLevel = pb.Severity_SEVERITY_ERROR
		case "warning":
			h.Options.FailLevel = pb.Severity_SEVERITY_WARNING
		case "info":
			h.Options.FailLevel = pb.Severity_SEVERITY_INFO
		default:
			return fmt.Errorf("failOn=%q: want error, warning or info", v)
		}
	case "frameSize":
		return size(&h.Options.RpcFrameSizeBytes)
	case "inlineThreshold":
		return size(&h.Options.InlineStateThresholdBytes)
	case "jobmanagerMemory":
		return size(&h.Options.JobmanagerMemoryBytes)
	case "allowNonRestoredState":
		return boolean(&h.Options.AllowNonRestoredState)
	case "includeSubtasks":
		return boolean(&h.Options.IncludeSubtasks)
	case "chartSubtasks":
		return boolean(&h.Options.ChartSubtasks)
	case "subtaskOperator":
		h.Options.SubtaskOperators = append(h.Options.SubtaskOperators, v)
	case "jobJarUri":
		h.Options.JobJarUris = append(h.Options.JobJarUris, v)
	case "catalogUri":
		h.Options.CatalogUris = append(h.Options.CatalogUris, v)
	case "name":
		h.Name = v
	default:
		return fmt.Errorf("unknown query parameter %q (known: set, parallelism, flinkVersion, failOn, frameSize, inlineThreshold, jobmanagerMemory, allowNonRestoredState, includeSubtasks, chartSubtasks, subtaskOperator, jobJarUri, catalogUri, name)", key)
	}
	return nil
}

// httpUploadStream presents an HTTP request as a CheckRescaleUpload stream: the header from the
// query string first, then the body in chunks.
type httpUploadStream struct {
	ctx      context.Context
	w        http.ResponseWriter
	header   *pb.UploadHeader
	sent     bool // the header went out
	body     *rateReader
	buf      []byte
	n, max   int64
	tooLarge atomic.Bool // read by serveUpload while a receiving goroutine may still write
	resp     *pb.CheckRescaleUploadResponse
}

func (h *httpUploadStream) Context() context.Context { return h.ctx }

// SetHeader carries the response metadata the interceptors set (the request ID) to HTTP headers.
func (h *httpUploadStream) SetHeader(md metadata.MD) error {
	for _, id := range md.Get(RequestIDHeader) {
		h.w.Header().Set("X-Request-Id", id)
	}
	return nil
}

func (h *httpUploadStream) SendHeader(md metadata.MD) error { return h.SetHeader(md) }

// uploadTransport is the grpc.ServerTransportStream of an HTTP upload.
type uploadTransport struct{ h *httpUploadStream }

func (u uploadTransport) Method() string {
	return pb.PreflightService_CheckRescaleUpload_FullMethodName
}
func (u uploadTransport) SetHeader(md metadata.MD) error  { return u.h.SetHeader(md) }
func (u uploadTransport) SendHeader(md metadata.MD) error { return u.h.SetHeader(md) }
func (u uploadTransport) SetTrailer(metadata.MD) error    { return nil }
func (h *httpUploadStream) SetTrailer(metadata.MD)        {}

// SendMsg receives the handler's answer (SendAndClose); it is written after the handler returns.
func (h *httpUploadStream) SendMsg(m any) error {
	resp, ok := m.(*pb.CheckRescaleUploadResponse)
	if !ok {
		return status.Errorf(codes.Internal, "upload: unexpected response %T", m)
	}
	h.resp = resp
	return nil
}

// RecvMsg hands out the header, then chunks of the body, then io.EOF. The stream's context
// bounds every read: its deadline becomes the connection's read deadline too.
func (h *httpUploadStream) RecvMsg(m any) error {
	req, ok := m.(*pb.CheckRescaleUploadRequest)
	if !ok {
		return status.Errorf(codes.Internal, "upload: unexpected request %T", m)
	}
	if !h.sent {
		h.sent = true
		req.Message = &pb.CheckRescaleUploadRequest_Header{Header: h.header}
		return nil
	}
	// A fresh buffer per chunk: the upload handler may receive the next message on another
	// goroutine while the decoder still reads this one.
	h.buf = make([]byte, uploadChunkBytes)
	if err := h.ctx.Err(); err != nil {
		return err
	}
	deadline, _ := h.ctx.Deadline()
	n, err := h.body.read(h.buf, deadline)
	if n > 0 {
		h.n += int64(n)
		if h.n > h.max {
			h.tooLarge.Store(true)
		}
		// A fresh slice per message: the handler may hold the previous chunk until it asks
		// for the next one, but never longer, so one buffer is reused safely.
		req.Message = &pb.CheckRescaleUploadRequest_Chunk{Chunk: h.buf[:n]}
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	if err != io.EOF && h.body.slow.Load() == nil && h.ctx.Err() != nil {
		return h.ctx.Err()
	}
	return err
}

// rateReader reads an upload body, failing it when it arrives slower than minRate on average
// after grace: a slow-loris client cannot hold a check slot for the whole request timeout by
// trickling bytes, while a large upload over a slow but honest link gets all the time it needs.
// The rule is enforced with the connection's read deadline, so a stalled client is cut without
// waiting for its next byte.
type rateReader struct {
	r       io.Reader
	rc      *http.ResponseController
	minRate int64 // bytes per second; <= 0 disables the guard
	grace   time.Duration
	start   time.Time
	n       int64
	mu      sync.Mutex             // held by read, so that serveUpload can wait for one in flight
	pending error                  // an error that came with the last bytes
	eof     atomic.Bool            // the body was read to its end
	slow    atomic.Pointer[string] // set when the rate guard cut the body
}

// due is the moment the bytes read so far stop being enough for the minimum rate.
func (r *rateReader) due() time.Time {
	return r.start.Add(r.grace + time.Duration(float64(r.n)/float64(r.minRate)*float64(time.Second)))
}

func (r *rateReader) read(p []byte, ctxDeadline time.Time) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var dl time.Time
	if r.minRate > 0 {
		// A read returns as soon as any bytes arrive, so the deadline is simply the moment the
		// average so far would fall below the minimum rate.
		dl = r.due()
	}
	if !ctxDeadline.IsZero() && (dl.IsZero() || ctxDeadline.Before(dl)) {
		dl = ctxDeadline
	}
	if !dl.IsZero() {
		// Not every ResponseWriter supports deadlines (httptest's does not): then the context
		// deadline still ends the request, only without cutting a blocked read.
		_ = r.rc.SetReadDeadline(dl)
	}
	if r.pending != nil {
		return 0, r.pending
	}
	n, err := r.r.Read(p)
	for n == 0 && err == nil {
		n, err = r.r.Read(p)
	}
	r.n += int64(n)
	if err == io.EOF {
		r.eof.Store(true)
	}
	if err != nil && err != io.EOF && errors.Is(err, os.ErrDeadlineExceeded) {
		if r.minRate > 0 && !time.Now().Before(r.due()) {
			msg := fmt.Sprintf("upload too slow: %d bytes in %s, below the minimum of %s/s (after a %s grace)",
				r.n, time.Since(r.start).Round(time.Millisecond), bytesize.Format(r.minRate), r.grace)
			r.slow.Store(&msg)
			err = status.Error(codes.DeadlineExceeded, msg)
		} else {
			err = context.DeadlineExceeded
		}
	}
	if n > 0 && err != nil {
		// Hand out the bytes first; the error comes with the next read.
		r.pending, err = err, nil
	}
	return n, err
}
