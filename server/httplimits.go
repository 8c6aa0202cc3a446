package server

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"time"

	"google.golang.org/grpc/peer"
)

// newHTTPServer is an http.Server with the listener limits: headers within ReadHeaderTimeout
// (slow-header clients are cut), idle keep-alive connections closed after IdleTimeout, headers
// at most MaxHeaderBytes. There is no server-wide ReadTimeout: routes bound their bodies
// themselves (withBodyDeadline for JSON, minRateBody for large uploads), since one total read
// time cannot suit both.
func (s *Server) newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: s.cfg.HTTPReadHeaderTimeout,
		IdleTimeout:       s.cfg.HTTPIdleTimeout,
		MaxHeaderBytes:    s.cfg.HTTPMaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// withRequestID gives every HTTP response an X-Request-Id, errors of the gateway and the mux
// included: the caller's own when it is well-formed, a new one otherwise. The ID is also put on
// the request, where the gateway passes it to the gRPC interceptors (one ID per call in the
// logs), and the caller's address is put in the context as the gRPC peer, for fairness.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !validRequestID(id) {
			id = newRequestID()
		}
		r.Header.Set(RequestIDHeader, id)
		w.Header().Set(RequestIDHeader, id)
		if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
			r = r.WithContext(peer.NewContext(r.Context(), &peer.Peer{Addr: net.TCPAddrFromAddrPort(ap)}))
		}
		next.ServeHTTP(w, r)
	})
}

// withBodyDeadline requires the whole request body within d of the handler's start: a client
// trickling bytes is cut at d however steadily it sends.
func withBodyDeadline(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The deadline stays after the handler: the server then cannot linger discarding the rest
		// of a trickled body, and it sets a fresh deadline for the connection's next request.
		// (Test recorders do not support deadlines; real connections do.)
		http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
		next.ServeHTTP(w, r)
	})
}

// withWriteIdle gives every write of a response (64 KiB of it at most) d to complete: a client
// that reads nothing of an answer (/v1/check:stream's lines) for d has its connection cut. The gRPC handler behind the
// gateway gives up its sends after SendIdleTimeout (sendWithin) and so frees the check's slot,
// but the gateway's goroutine would otherwise stay blocked writing, holding its piece, as long as
// the client keeps the connection. (The deadline stays after the handler, as withBodyDeadline's;
// the connection's next request sets a fresh one.)
func withWriteIdle(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		iw := &idleWriter{ResponseWriter: w, ctl: http.NewResponseController(w), d: d}
		iw.extend()
		next.ServeHTTP(iw, r)
	})
}

// idleWriter moves its connection's write deadline d ahead before every write.
type idleWriter struct {
	http.ResponseWriter
	ctl *http.ResponseController
	d   time.Duration
}

// extend moves the write deadline (test recorders do not support deadlines; real connections do).
func (w *idleWriter) extend() { w.ctl.SetWriteDeadline(time.Now().Add(w.d)) }

func (w *idleWriter) WriteHeader(code int) {
	w.extend()
	w.ResponseWriter.WriteHeader(code)
}

// Write writes p idleWriteChunk bytes at a time, each with a fresh deadline: a report's JSON
// comes in one write, which a slow but steady client may take longer than d to read.
func (w *idleWriter) Write(p []byte) (n int, err error) {
	for len(p) > 0 && err == nil {
		k := min(len(p), idleWriteChunk)
		w.extend()
		var m int
		m, err = w.ResponseWriter.Write(p[:k])
		n, p = n+m, p[k:]
	}
	return n, err
}

// idleWriteChunk is the progress a response must make within each idle time: 64 KiB in 30 s is
// about 2 KB/s.
const idleWriteChunk = 64 << 10

// FlushError flushes (http.ResponseController.Flush finds it).
func (w *idleWriter) FlushError() error {
	w.extend()
	return w.ctl.Flush()
}

// Unwrap lets http.ResponseController reach the connection's own writer.
func (w *idleWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// minRateBody bounds reading a large request body by progress rather than total time: the body
// must deliver at least minBytes every window (or the read fails and the connection's read
// deadline cuts the client), so a big file over a slow link succeeds and a stalled or trickling
// one does not hold the server. For routes taking raw uploads; JSON routes use withBodyDeadline.
func minRateBody(w http.ResponseWriter, r *http.Request, minBytes int64, window time.Duration) io.ReadCloser {
	rc := http.NewResponseController(w)
	b := &rateBody{rc: r.Body, ctl: rc, minBytes: minBytes, window: window}
	b.extend()
	return b
}

// errTooSlow is the read error of a body below its minimum rate.
var errTooSlow = errors.New("request body arrives below the minimum transfer rate")

type rateBody struct {
	rc       io.ReadCloser
	ctl      *http.ResponseController
	minBytes int64
	window   time.Duration
	got      int64 // bytes in the current window
}

// extend moves the read deadline one window ahead.
func (b *rateBody) extend() {
	b.got = 0
	b.ctl.SetReadDeadline(time.Now().Add(b.window))
}

func (b *rateBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.got += int64(n)
	if b.got >= b.minBytes {
		b.extend()
	}
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		err = errTooSlow
	}
	return n, err
}

// Close leaves the deadline: the server sets a fresh one for the connection's next request.
func (b *rateBody) Close() error { return b.rc.Close() }
