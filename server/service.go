package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"google.golang.org/grpc"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/engine"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// service implements PreflightService on top of the engine. Limits, deadlines, logging and
// metrics of whole RPCs live in the interceptors; the handlers only fetch, decode and check.
type service struct {
	pb.UnimplementedPreflightServiceServer
	s *Server
}

func (v *service) CheckRescale(ctx context.Context, req *pb.CheckRescaleRequest) (*pb.CheckRescaleResponse, error) {
	if req.GetJob() != nil || req.GetCheckpoint().GetLatest() {
		return v.s.checkDiscovered(ctx, req) // autoscaler pre-flight (issue #11): server/decide.go
	}
	layout, label, err := v.s.layout(ctx, req.GetCheckpoint())
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	report, err := v.s.check(ctx, layout, label, req.GetPlan(), req.GetOptions())
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.CheckRescaleResponse{Report: report}, nil
}

func (v *service) InspectCheckpoint(ctx context.Context, req *pb.InspectCheckpointRequest) (*pb.InspectCheckpointResponse, error) {
	layout, label, err := v.s.layout(ctx, req.GetCheckpoint())
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	addLog(ctx, slog.String("source", label), slog.Int64("metadata_bytes", layout.Size))
	return v.s.cfg.Engine.InspectLayout(layout, label), nil
}

// CheckRescaleUpload decodes while receiving: the chunks feed the decoder through an io.Reader,
// so memory stays at one chunk plus the layout whatever the file size.
func (v *service) CheckRescaleUpload(stream grpc.ClientStreamingServer[pb.CheckRescaleUploadRequest, pb.CheckRescaleUploadResponse]) error {
	ctx := stream.Context()
	first, err := stream.Recv()
	if err != nil {
		return toStatus(ctx, err)
	}
	h := first.GetHeader()
	if h == nil {
		return errInvalid("the first message of an upload must be the header")
	}
	max := v.s.cfg.MaxUploadBytes
	if h.GetSizeBytes() > max {
		return toStatus(ctx, &limitError{fmt.Sprintf("upload of %d bytes exceeds the limit of %d bytes", h.GetSizeBytes(), max)})
	}
	label := h.GetName()
	if label == "" {
		label = "upload"
	}
	r := &uploadReader{stream: stream, max: max}
	layout, err := v.s.decode(ctx, r, label)
	if err == nil {
		// The decoder may stop before the end (nothing after the trailer matters); read the rest
		// so the byte limit holds for the whole upload and the client's CloseSend completes.
		_, err = io.Copy(io.Discard, r)
	}
	if err != nil {
		return toStatus(ctx, err)
	}
	report, err := v.s.check(ctx, layout, label, h.GetPlan(), h.GetOptions())
	if err != nil {
		return toStatus(ctx, err)
	}
	return stream.SendAndClose(&pb.CheckRescaleUploadResponse{Report: report})
}

// uploadReader presents the chunks of an upload as a stream of bytes.
type uploadReader struct {
	stream grpc.ClientStreamingServer[pb.CheckRescaleUploadRequest, pb.CheckRescaleUploadResponse]
	max    int64
	n      int64
	buf    []byte
	err    error // sticky
}

func (u *uploadReader) Read(p []byte) (int, error) {
	for len(u.buf) == 0 {
		if u.err != nil {
			return 0, u.err
		}
		msg, err := u.stream.Recv()
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
		if u.n > u.max {
			u.err = &limitError{fmt.Sprintf("upload exceeds the limit of %d bytes", u.max)}
			u.buf = nil
			return 0, u.err
		}
	}
	n := copy(p, u.buf)
	u.buf = u.buf[n:]
	return n, nil
}

// layout returns the decoded layout of a request's checkpoint, from the cache when the source
// can tell that the file has not changed.
func (s *Server) layout(ctx context.Context, src *pb.CheckpointSource) (*checkpoint.Layout, string, error) {
	switch x := src.GetSource().(type) {
	case *pb.CheckpointSource_Metadata:
		if n := int64(len(x.Metadata)); n > s.cfg.MaxInlineBytes {
			return nil, "", &limitError{fmt.Sprintf("inline metadata of %d bytes exceeds the limit of %d bytes; use CheckRescaleUpload", n, s.cfg.MaxInlineBytes)}
		}
		l, err := s.decode(ctx, bytes.NewReader(x.Metadata), "inline")
		return l, "inline", err
	case *pb.CheckpointSource_Uri:
		obj, err := s.sources.Open(ctx, x.Uri)
		if err != nil {
			return nil, "", err
		}
		defer obj.Close()
		l, err := s.cachedLayout(ctx, obj.CacheKey, func(ctx context.Context) (*checkpoint.Layout, error) {
			return s.decode(ctx, obj, obj.URI)
		})
		return l, obj.URI, err
	}
	return nil, "", errInvalid("checkpoint: set uri or metadata")
}

// cachedLayout returns the layout cached under key, or decodes it once however many requests
// ask for it at the same time: an autoscaler probing several parallelisms against one 168 MB
// checkpoint in parallel costs one decode. Requests that find a decode in flight wait for it;
// if that decode dies of its own caller's cancellation, the next waiter decodes with its own
// source instead of inheriting a cancellation that is not its own.
func (s *Server) cachedLayout(ctx context.Context, key string, decode func(context.Context) (*checkpoint.Layout, error)) (*checkpoint.Layout, error) {
	if key == "" || s.cfg.CacheEntries < 0 {
		return decode(ctx)
	}
	if l, ok := s.cache.get(key); ok {
		s.metrics.cache.WithLabelValues("hit").Inc()
		return l, nil
	}
	for {
		s.flightMu.Lock()
		if l, ok := s.cache.get(key); ok { // a flight may have landed since the first look
			s.flightMu.Unlock()
			s.metrics.cache.WithLabelValues("hit").Inc()
			return l, nil
		}
		f, waiting := s.flights[key]
		if !waiting {
			f = &flight{done: make(chan struct{})}
			s.flights[key] = f
		}
		s.flightMu.Unlock()
		if !waiting {
			// Leader: decode in this goroutine, with this request's context and source.
			s.metrics.cache.WithLabelValues("miss").Inc()
			f.layout, f.err = decode(ctx)
			f.ctxErr = f.err != nil && ctx.Err() != nil
			if f.err == nil {
				s.cache.put(key, f.layout)
			}
			s.flightMu.Lock()
			delete(s.flights, key)
			s.flightMu.Unlock()
			close(f.done)
			return f.layout, f.err
		}
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if f.err == nil {
			s.metrics.cache.WithLabelValues("shared").Inc()
			return f.layout, nil
		}
		if f.ctxErr {
			continue // the leader gave up; this request has not
		}
		return nil, f.err
	}
}

// flight is a decode in progress that other requests for the same key wait for.
type flight struct {
	done   chan struct{}
	layout *checkpoint.Layout
	err    error
	ctxErr bool // the leader's context ended: its error says nothing about the file
}

// decode runs the engine's decoder over r, recording bytes and time. A read error of r (a source
// failure, the upload limit, a broken stream) wins over the FormatError the decoder reports for it.
func (s *Server) decode(ctx context.Context, r io.Reader, label string) (*checkpoint.Layout, error) {
	start := time.Now()
	cr := &countingReader{r: r}
	l, err := s.cfg.Engine.ReadLayout(ctx, engine.Input{Reader: cr, Source: label})
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

func (s *Server) check(ctx context.Context, l *checkpoint.Layout, label string, plan *pb.RescalePlan, opts *pb.CheckOptions) (*pb.RescaleReport, error) {
	addLog(ctx, slog.String("source", label), slog.Int64("metadata_bytes", l.Size))
	report, err := s.cfg.Engine.CheckLayout(ctx, l, label, plan, opts)
	if err != nil {
		return nil, err
	}
	addLog(ctx, slog.String("verdict", report.GetVerdict().String()), slog.Int("findings", len(report.GetFindings())))
	s.metrics.verdicts.WithLabelValues(report.GetVerdict().String()).Inc()
	return report, nil
}
