package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/memmodel"
	"github.com/flinkpreflight/preflight/internal/statefiles"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// service implements PreflightService on top of the engine. Limits, deadlines, logging and
// metrics of whole RPCs live in the interceptors; the handlers only fetch, decode and check.
type service struct {
	pb.UnimplementedPreflightServiceServer
	s *Server
}

func (v *service) CheckRescale(ctx context.Context, req *pb.CheckRescaleRequest) (*pb.CheckRescaleResponse, error) {
	return v.checkRescaleSending(ctx, req, nil)
}

// checkRescaleSending is CheckRescale; with send set and rows asked for (rowSender), the
// operators are sent as the engine converts them (checkSending) and the report has none.
func (v *service) checkRescaleSending(ctx context.Context, req *pb.CheckRescaleRequest, send func(*pb.ReportPiece) error) (*pb.CheckRescaleResponse, error) {
	// Job jars and catalog files are resolved first: their versions are part of the result key.
	ctx, err := v.s.withJobCode(ctx, req.GetOptions())
	if err != nil {
		return nil, err
	}
	resp, label, err := v.checkRescale(ctx, req, send)
	if err != nil || req.GetJob() != nil || req.GetCheckpoint().GetLatest() || !verifyFilesOn(req.GetOptions(), false) {
		return resp, err
	}
	res := v.s.verifyFiles(ctx, req.GetCheckpoint(), label, req.GetOptions(), false, statefiles.DefaultBudget)
	return &pb.CheckRescaleResponse{Report: withFiles(resp.GetReport(), res, req.GetOptions())}, nil
}

// checkRescale is checkRescaleSending without verify_files; it also returns the label of the file
// it read (for a URI, the _metadata's URI). A check sending its operators as they are converted
// bypasses the result cache (memo.go), which keeps whole reports: that path exists so that no
// whole report is built. Layouts are cached as for any check.
func (v *service) checkRescale(ctx context.Context, req *pb.CheckRescaleRequest, send func(*pb.ReportPiece) error) (*pb.CheckRescaleResponse, string, error) {
	if req.GetJob() != nil || req.GetCheckpoint().GetLatest() {
		resp, err := v.s.checkDiscovered(ctx, req, send) // autoscaler pre-flight (issue #11): server/decide.go
		return resp, "", err
	}
	send = rowSender(send, req.GetOptions())
	inPieces := send != nil
	// The same question about a file version checked within RevalidateInterval is answered from
	// the result cache without asking the source (memo.go). A question found there is valid
	// (only validated questions are memoized, and validity depends on nothing the key drops).
	var key *[]byte
	if !inPieces && memoizable(req) && v.s.cache.maxResultBytes > 0 {
		key = keyBufs.Get().(*[]byte)
		defer putKeyBuf(key)
		if id, ok := v.s.idents.fresh(req.GetCheckpoint().GetUri(), time.Now()); ok {
			// Operators named by uid or name are resolved against the cached layout of this
			// file version (memokey.go), when it is cached; using it keeps it cached.
			var l *checkpoint.Layout
			if needsLayout(req.GetPlan()) {
				if c, ok := v.s.cache.get(id.cacheKey); ok {
					l = c.layout
				}
			}
			if resp, ok := v.s.answerCached(ctx, key, id.cacheKey, id.uri, l, req); ok {
				return resp, id.uri, nil
			}
		}
	}
	// A plan or options out of bounds is refused before any byte is read.
	if err := engine.ValidateRequest(req.GetPlan(), req.GetOptions()); err != nil {
		return nil, "", toStatus(ctx, err)
	}
	layout, ref, mem, err := v.s.layoutOf(ctx, req.GetCheckpoint())
	if err != nil {
		return nil, "", toStatus(ctx, err)
	}
	defer mem.release()
	if key != nil && ref.cacheKey != "" {
		if resp, ok := v.s.answerCached(ctx, key, ref.cacheKey, ref.label, layout, req); ok {
			return resp, ref.label, nil
		}
	}
	if key != nil && ref.cacheKey != "" && len(*key) > 0 {
		// A first question: identical ones asked meanwhile share one computation (flight.go).
		resp, err := v.s.checkOnce(ctx, *key, layout, ref.label, req.GetPlan(), req.GetOptions())
		if err != nil {
			return nil, "", toStatus(ctx, err)
		}
		return resp, ref.label, nil
	}
	report, err := v.s.check(ctx, layout, ref.label, req.GetPlan(), req.GetOptions(), send)
	if err != nil {
		return nil, "", toStatus(ctx, err)
	}
	return &pb.CheckRescaleResponse{Report: report}, ref.label, nil
}

// answerCached builds the result key of req for a file version (l: its layout, when at hand)
// into *key and looks it up. On a miss *key keeps the key, for the flight that computes it.
func (s *Server) answerCached(ctx context.Context, key *[]byte, cacheKey, label string, l *checkpoint.Layout, req *pb.CheckRescaleRequest) (*pb.CheckRescaleResponse, bool) {
	b, err := appendResultKey((*key)[:0], cacheKey, label, codeKey(ctx), l, req.GetPlan(), req.GetOptions())
	if err != nil {
		*key = (*key)[:0]
		return nil, false
	}
	*key = b
	return s.cachedResult(ctx, b)
}

func (v *service) InspectCheckpoint(ctx context.Context, req *pb.InspectCheckpointRequest) (*pb.InspectCheckpointResponse, error) {
	layout, label, mem, err := v.s.layout(ctx, req.GetCheckpoint())
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	defer mem.release()
	addLog(ctx, slog.String("source", label), slog.Int64("metadata_bytes", layout.Size))
	resp, err := v.s.cfg.Engine.InspectLayout(ctx, layout, label)
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return resp, nil
}

// CheckRescaleUpload decodes while receiving: the chunks feed the decoder through an io.Reader,
// so memory stays at one chunk plus the layout whatever the file size. Receiving holds memory
// from the budget (estimated from the header's size_bytes, grown as bytes arrive when the size
// is unknown) but no check slot: the slot is taken once the whole file has arrived, for the
// simulation only, so slow or stalled senders cannot occupy the slots. A client that sends no
// message for UploadIdleTimeout is cut off. (A slow reader of CheckRescaleUploadStream's answer
// in pieces does hold the slot while its check waits to send, for SendIdleTimeout at most without
// progress.)
func (v *service) CheckRescaleUpload(stream grpc.ClientStreamingServer[pb.CheckRescaleUploadRequest, pb.CheckRescaleUploadResponse]) error {
	report, err := v.uploadReport(stream, nil)
	if err != nil {
		return err
	}
	return stream.SendAndClose(&pb.CheckRescaleUploadResponse{Report: report})
}

// CheckRescaleStream is CheckRescale answered in pieces (pieces.go). With include_subtasks or
// subtask_operators (rowSender) the operators are sent as the engine converts them
// (Server.checkSending), so that the daemon never holds the whole report: every subtask of a
// UNION operator lists every old subtask, rows many times the file's size (bench/README.md,
// "Subtask detail streamed end to end"). A client that reads nothing for SendIdleTimeout is cut
// off (sendWithin).
func (v *service) CheckRescaleStream(req *pb.CheckRescaleStreamRequest, stream grpc.ServerStreamingServer[pb.CheckRescaleStreamResponse]) error {
	send, done := v.s.sendWithin(stream.Context(), func(p *pb.ReportPiece) error {
		return stream.Send(&pb.CheckRescaleStreamResponse{Piece: p})
	})
	defer done()
	resp, err := v.checkRescaleSending(stream.Context(), &pb.CheckRescaleRequest{
		Checkpoint: req.GetCheckpoint(), Plan: req.GetPlan(), Options: req.GetOptions(), Job: req.GetJob()}, send)
	if err != nil {
		return err
	}
	return sendPieces(resp.GetReport(), send)
}

// rowSender is send for a check answered in pieces that sends its operators as they are
// converted (checkSending): one that asks for every subtask of all operators or of some (rows
// that can outgrow the file many times), and not for chart rows, chosen once every operator is
// seen. Otherwise nil: the operators are kept in the report and sent from it, in pages.
func rowSender(send func(*pb.ReportPiece) error, opts *pb.CheckOptions) func(*pb.ReportPiece) error {
	if (opts.GetIncludeSubtasks() || len(opts.GetSubtaskOperators()) > 0) && !engine.ChartRowsOnly(opts) {
		return send
	}
	return nil
}

// CheckRescaleUploadStream is CheckRescaleUpload answered in pieces (pieces.go), the operators
// sent as they are converted with include_subtasks or subtask_operators, and a client that reads
// nothing for SendIdleTimeout cut off (as CheckRescaleStream).
func (v *service) CheckRescaleUploadStream(stream grpc.BidiStreamingServer[pb.CheckRescaleUploadStreamRequest, pb.CheckRescaleUploadStreamResponse]) error {
	send, done := v.s.sendWithin(stream.Context(), func(p *pb.ReportPiece) error {
		return stream.Send(&pb.CheckRescaleUploadStreamResponse{Piece: p})
	})
	defer done()
	report, err := v.uploadReport(uploadStreamRequests{stream}, send)
	if err != nil {
		return err
	}
	return sendPieces(report, send)
}

// uploadStreamRequests reads CheckRescaleUploadStream's messages as CheckRescaleUpload's (the
// same header and chunks), so that both share one upload handler.
type uploadStreamRequests struct {
	grpc.BidiStreamingServer[pb.CheckRescaleUploadStreamRequest, pb.CheckRescaleUploadStreamResponse]
}

func (u uploadStreamRequests) Recv() (*pb.CheckRescaleUploadRequest, error) {
	m, err := u.BidiStreamingServer.Recv()
	if err != nil {
		return nil, err
	}
	switch x := m.GetMessage().(type) {
	case *pb.CheckRescaleUploadStreamRequest_Header:
		return &pb.CheckRescaleUploadRequest{Message: &pb.CheckRescaleUploadRequest_Header{Header: x.Header}}, nil
	case *pb.CheckRescaleUploadStreamRequest_Chunk:
		return &pb.CheckRescaleUploadRequest{Message: &pb.CheckRescaleUploadRequest_Chunk{Chunk: x.Chunk}}, nil
	}
	return &pb.CheckRescaleUploadRequest{}, nil
}

// uploadStream is what an upload handler reads: the client side of CheckRescaleUpload or
// CheckRescaleUploadStream.
type uploadStream interface {
	Context() context.Context
	Recv() (*pb.CheckRescaleUploadRequest, error)
}

// uploadReport receives an upload, decoding while it arrives, and checks it. With send set and
// rows asked for (rowSender), the operators are sent as they are converted and the report has none.
func (v *service) uploadReport(stream uploadStream, send func(*pb.ReportPiece) error) (*pb.RescaleReport, error) {
	ctx := stream.Context()
	rx := v.s.receive(ctx, stream)
	defer rx.stop()
	first, err := rx.next()
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	h := first.GetHeader()
	if h == nil {
		return nil, errInvalid("the first message of an upload must be the header")
	}
	// Refused before the file is received, not after it has been decoded.
	if err := engine.ValidateRequest(h.GetPlan(), h.GetOptions()); err != nil {
		return nil, toStatus(ctx, err)
	}
	ctx, err = v.s.withJobCode(ctx, h.GetOptions())
	if err != nil {
		return nil, err
	}
	max := v.s.cfg.MaxUploadBytes
	size := h.GetSizeBytes()
	switch {
	case size < 0:
		return nil, errInvalid("upload header: size_bytes %d is negative", size)
	case size > max:
		return nil, toStatus(ctx, &limitError{fmt.Sprintf("upload of %d bytes exceeds the limit of %d bytes", size, max)})
	}
	label := h.GetName()
	if label == "" {
		label = "upload"
	}
	mem, err := v.s.adm.acquire(ctx, false, memmodel.RequestBytes(size), true)
	if err != nil {
		return nil, err
	}
	defer mem.release()
	v.s.metrics.receiving.Inc()
	r := &uploadReader{rx: rx, max: max, announced: size, mem: mem, m: v.s.metrics}
	// No size hint: the header's size is the client's claim until the bytes arrive, and the
	// hint lets the decoder allocate before they do.
	layout, err := v.s.decode(ctx, r, label, 0)
	if err == nil {
		// The decoder may stop before the end (nothing after the trailer matters); read the rest
		// so the byte limit and the announced size hold for the whole upload and the client's
		// CloseSend completes.
		_, err = io.Copy(io.Discard, r)
	}
	v.s.metrics.receiving.Dec()
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	mem.received()
	report, err := v.s.check(ctx, layout, label, h.GetPlan(), h.GetOptions(), rowSender(send, h.GetOptions()))
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	if verifyFilesOn(h.GetOptions(), false) {
		// The bytes are gone and name no folder: say so rather than pass the files.
		report = withFiles(report, &statefiles.Result{Err: errUploadNotVerified}, h.GetOptions())
	}
	return report, nil
}

// uploadReader presents the chunks of an upload as a stream of bytes, enforcing the size limit,
// the announced size and the memory budget as they arrive.
type uploadReader struct {
	rx        *receiver
	max       int64
	announced int64 // size_bytes of the header; 0: unknown
	mem       *grant
	m         *metrics
	n         int64
	buf       []byte
	err       error // sticky
}

func (u *uploadReader) Read(p []byte) (int, error) {
	for len(u.buf) == 0 {
		if u.err != nil {
			return 0, u.err
		}
		msg, err := u.rx.next()
		if err == io.EOF && u.n == 0 {
			err = errInvalid("empty upload: no _metadata bytes were sent")
		}
		if err == io.EOF && u.announced > 0 && u.n != u.announced {
			u.m.uploadEnds.WithLabelValues("size-mismatch").Inc()
			err = errInvalid("upload ended after %d bytes; its header announced size_bytes %d", u.n, u.announced)
		}
		if err != nil {
			u.err = err // io.EOF at the client's CloseSend
			return 0, err
		}
		if msg.GetHeader() != nil {
			u.err = errInvalid("upload: a second header after %d bytes", u.n)
			return 0, u.err
		}
		u.buf = msg.GetChunk()
		u.n += int64(len(u.buf))
		switch {
		case u.n > u.max:
			u.err = &limitError{fmt.Sprintf("upload exceeds the limit of %d bytes", u.max)}
		case u.announced > 0 && u.n > u.announced:
			u.m.uploadEnds.WithLabelValues("size-mismatch").Inc()
			u.err = errInvalid("upload sent more than the %d bytes its header announced (size_bytes)", u.announced)
		case u.announced == 0 && memmodel.RequestBytes(u.n) > u.mem.mem:
			// Unknown size: reserve ahead in steps of 1 MiB of file.
			u.err = u.mem.grow(memmodel.RequestBytes(u.n + 1<<20))
		}
		if u.err != nil {
			u.buf = nil
			return 0, u.err
		}
	}
	n := copy(p, u.buf)
	u.buf = u.buf[n:]
	return n, nil
}

// receiver reads an upload's messages in its own goroutine, so that the handler can stop waiting
// for a client that sends nothing: gRPC's Recv cannot be interrupted, but returning from the
// handler ends the stream, which ends the Recv.
type receiver struct {
	ctx  context.Context
	msgs chan recvResult
	done chan struct{}
	idle time.Duration
	m    *metrics
}

type recvResult struct {
	msg *pb.CheckRescaleUploadRequest
	err error
}

func (s *Server) receive(ctx context.Context, stream uploadStream) *receiver {
	r := &receiver{ctx: ctx, msgs: make(chan recvResult), done: make(chan struct{}), idle: s.cfg.UploadIdleTimeout, m: s.metrics}
	go func() {
		for {
			msg, err := stream.Recv()
			select {
			case r.msgs <- recvResult{msg, err}:
			case <-r.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return r
}

// next is the next message, io.EOF after the client's CloseSend, or an error: the stream's, the
// context's, or DEADLINE_EXCEEDED after UploadIdleTimeout without a message.
func (r *receiver) next() (*pb.CheckRescaleUploadRequest, error) {
	t := time.NewTimer(r.idle)
	defer t.Stop()
	select {
	case res := <-r.msgs:
		return res.msg, res.err
	case <-r.ctx.Done():
		return nil, r.ctx.Err()
	case <-t.C:
		r.m.uploadEnds.WithLabelValues("idle").Inc()
		return nil, status.Errorf(codes.DeadlineExceeded, "upload idle: no message for %v (--upload-idle-timeout)", r.idle)
	}
}

func (r *receiver) stop() { close(r.done) }

// layout returns the decoded layout of a request's checkpoint, from the cache when the source
// can tell that the file has not changed, with the memory the request holds for it (release it
// after the check).
func (s *Server) layout(ctx context.Context, src *pb.CheckpointSource) (*checkpoint.Layout, string, *grant, error) {
	l, ref, mem, err := s.layoutOf(ctx, src)
	return l, ref.label, mem, err
}

// layoutRef names the file a layout was read from: the report's label and, for a URI whose
// source can tell versions apart, the version's cache key.
type layoutRef struct {
	label    string
	cacheKey string
}

// layoutOf is layout, also returning the file's cache key. A URI whose version was checked within
// RevalidateInterval and whose layout is cached is served without asking the source.
func (s *Server) layoutOf(ctx context.Context, src *pb.CheckpointSource) (*checkpoint.Layout, layoutRef, *grant, error) {
	switch x := src.GetSource().(type) {
	case *pb.CheckpointSource_Metadata:
		n := int64(len(x.Metadata))
		if n > s.cfg.MaxInlineBytes {
			return nil, layoutRef{}, nil, &limitError{fmt.Sprintf("inline metadata of %d bytes exceeds the limit of %d bytes; use CheckRescaleUpload", n, s.cfg.MaxInlineBytes)}
		}
		mem, err := s.adm.acquire(ctx, false, memmodel.RequestBytes(n), false)
		if err != nil {
			return nil, layoutRef{}, nil, err
		}
		l, err := s.decode(ctx, bytes.NewReader(x.Metadata), "inline", int64(len(x.Metadata)))
		if err != nil {
			mem.release()
			return nil, layoutRef{}, nil, err
		}
		return l, layoutRef{label: "inline"}, mem, nil
	case *pb.CheckpointSource_Uri:
		if id, ok := s.idents.fresh(x.Uri, time.Now()); ok && s.cfg.CacheEntries >= 0 {
			if v, ok := s.cache.get(id.cacheKey); ok {
				mem, err := s.adm.acquire(ctx, false, memmodel.CachedRequestBytes(v.bytes), false)
				if err != nil {
					return nil, layoutRef{}, nil, err
				}
				s.metrics.cache.WithLabelValues("hit").Inc()
				return v.layout, layoutRef{label: id.uri, cacheKey: id.cacheKey}, mem, nil
			}
		}
		checked := time.Now()
		obj, err := s.sources.Open(ctx, x.Uri)
		if err != nil {
			s.idents.forget(x.Uri)
			addLog(ctx, slog.String("source_error", err.Error()))
			return nil, layoutRef{}, nil, err
		}
		src := newSharedSource(obj)
		defer src.release()
		s.idents.record(x.Uri, sourceIdentity{uri: obj.URI, cacheKey: obj.CacheKey, checked: checked})
		ref := layoutRef{label: obj.URI, cacheKey: obj.CacheKey}
		need := memmodel.RequestBytes(obj.Size)
		if v, ok := s.cache.get(obj.CacheKey); ok {
			need = memmodel.CachedRequestBytes(v.bytes)
		}
		mem, err := s.adm.acquire(ctx, false, need, false)
		if err != nil {
			return nil, layoutRef{}, nil, err
		}
		var r io.Reader = obj
		if obj.Size < 0 {
			r = &growingReader{r: obj, mem: mem}
		}
		l, err := s.cachedLayout(ctx, obj.CacheKey, func(ctx context.Context) (*checkpoint.Layout, error) {
			if !src.hold() {
				return nil, errSourceGone
			}
			defer src.release()
			return s.decode(ctx, r, obj.URI, obj.Size)
		})
		if err != nil {
			addLog(ctx, slog.String("source_error", err.Error()))
			mem.release()
			return nil, layoutRef{}, nil, err
		}
		return l, ref, mem, nil
	}
	return nil, layoutRef{}, nil, errInvalid("checkpoint: set uri or metadata")
}

// growingReader grows a memory grant as a source of unknown size (an http response without
// Content-Length) yields bytes.
type growingReader struct {
	r   io.Reader
	mem *grant
	n   int64
}

func (g *growingReader) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	g.n += int64(n)
	if memmodel.RequestBytes(g.n) > g.mem.mem {
		if gerr := g.mem.grow(memmodel.RequestBytes(g.n + 1<<20)); gerr != nil {
			return n, gerr
		}
	}
	return n, err
}

// cachedLayout returns the layout cached under key, or decodes it once however many requests
// ask for it at the same time (flightGroup): an autoscaler probing several parallelisms against
// one 168 MB checkpoint in parallel costs one decode. The decode runs with the source of the
// request that started it, which hands the source over (sharedSource); when that request left
// before the decode could take it, the others find errSourceGone and decode with their own.
func (s *Server) cachedLayout(ctx context.Context, key string, decode func(context.Context) (*checkpoint.Layout, error)) (*checkpoint.Layout, error) {
	if key == "" || s.cfg.CacheEntries < 0 {
		return decode(ctx)
	}
	for {
		if v, ok := s.cache.get(key); ok {
			s.metrics.cache.WithLabelValues("hit").Inc()
			return v.layout, nil
		}
		v, err, ran := s.flights.do(ctx, "layout\x00"+key, func(ctx context.Context) (any, error) {
			if v, ok := s.cache.get(key); ok { // a flight may have landed since the first look
				return layoutHit{v.layout}, nil
			}
			l, err := decode(ctx)
			if err != nil {
				return nil, err
			}
			s.adm.cachePut(key, cacheValue{l, l.RetainedBytes()})
			return l, nil
		})
		switch {
		case errors.Is(err, errSourceGone) && !ran:
			continue // the request that started the decode left before it read; this one has not
		case err != nil:
			return nil, err
		}
		if hit, ok := v.(layoutHit); ok {
			s.metrics.cache.WithLabelValues("hit").Inc()
			return hit.l, nil
		}
		if ran {
			s.metrics.cache.WithLabelValues("miss").Inc()
		} else {
			s.metrics.cache.WithLabelValues("shared").Inc()
		}
		return v.(*checkpoint.Layout), nil
	}
}

// layoutHit is a layout a flight found cached when it started.
type layoutHit struct{ l *checkpoint.Layout }

// errSourceGone is a decode whose request closed its source before the decode could take it.
var errSourceGone = errors.New("the request that started the decode has left")

// sharedSource closes a source once neither its request nor a decode started with it reads it:
// a shared decode goes on after its request has left (flightGroup).
type sharedSource struct {
	mu    sync.Mutex
	users int // 1 (the request) + decodes holding it; 0: closed
	c     io.Closer
}

func newSharedSource(c io.Closer) *sharedSource { return &sharedSource{users: 1, c: c} }

// hold takes the source for a decode, false when it is already closed.
func (s *sharedSource) hold() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users == 0 {
		return false
	}
	s.users++
	return true
}

// release gives the source back; the last user closes it.
func (s *sharedSource) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users--; s.users == 0 {
		s.c.Close()
	}
}

// decode runs the engine's decoder over r (size: its expected length, 0 unknown), recording
// bytes and time. A read error of r (a source
// failure, the upload limit, a broken stream) wins over the FormatError the decoder reports for it.
func (s *Server) decode(ctx context.Context, r io.Reader, label string, size int64) (*checkpoint.Layout, error) {
	start := time.Now()
	cr := &countingReader{r: r}
	l, err := s.cfg.Engine.ReadLayout(ctx, engine.Input{Reader: cr, Source: label, Size: size})
	s.metrics.decodedBytes.Add(float64(cr.n))
	if err != nil {
		if cr.err != nil && cr.err != io.EOF {
			return nil, cr.err
		}
		return nil, err
	}
	s.metrics.decodeSecs.Observe(time.Since(start).Seconds())
	return l, nil
}

type countingReader struct {
	r   io.Reader
	n   int64
	err error // first error other than io.EOF
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

// check simulates and applies the rules, holding a check slot (waiting for one at most QueueWait).
func (s *Server) check(ctx context.Context, l *checkpoint.Layout, label string, plan *pb.RescalePlan, opts *pb.CheckOptions, send func(*pb.ReportPiece) error) (*pb.RescaleReport, error) {
	addLog(ctx, slog.String("source", label), slog.Int64("metadata_bytes", l.Size))
	report, err := s.checkReport(ctx, l, label, plan, opts, send)
	if err != nil {
		return nil, err
	}
	addLog(ctx, slog.String("verdict", report.GetVerdict().String()), slog.Int("findings", len(report.GetFindings())))
	s.metrics.verdicts.WithLabelValues(report.GetVerdict().String()).Inc()
	return report, nil
}

// checkSending runs the engine on req; with send, the operators go to send in pages as they are
// converted (engine.Request.Pieces, operatorPager) and the report returned has none.
func (s *Server) checkSending(ctx context.Context, req engine.Request, send func(*pb.ReportPiece) error) (*pb.RescaleReport, error) {
	if send == nil {
		return s.engine(ctx).Check(ctx, req)
	}
	ops := operatorPager(send, streamedPieceBytes)
	req.Pieces = ops.add
	report, err := s.engine(ctx).Check(ctx, req)
	if err == nil {
		err = ops.flush()
	}
	return report, err
}

// checkReport is check without the request's log fields and metrics: a check slot and the engine
// (checkSending). With send, the check slot is held while a page waits for the client to read
// (stream.Send's flow control), as it is while any check runs, but for SendIdleTimeout at most:
// send is the handler's sendWithin, whose error for a client that reads nothing ends the check.
func (s *Server) checkReport(ctx context.Context, l *checkpoint.Layout, label string, plan *pb.RescalePlan, opts *pb.CheckOptions, send func(*pb.ReportPiece) error) (*pb.RescaleReport, error) {
	slot, err := s.acquireCheck(ctx, l, plan, opts, send != nil)
	if err != nil {
		return nil, err
	}
	defer slot.release()
	return s.checkSending(ctx, engine.Request{Layout: l, Source: label, Plan: plan, Options: opts}, send)
}
