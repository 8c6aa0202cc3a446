package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
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
		if l, ok := s.cache.get(obj.CacheKey); ok {
			s.metrics.cache.WithLabelValues("hit").Inc()
			return l, obj.URI, nil
		}
		s.metrics.cache.WithLabelValues("miss").Inc()
		l, err := s.decode(ctx, obj, obj.URI)
		if err != nil {
			return nil, "", err
		}
		s.cache.put(obj.CacheKey, l)
		return l, obj.URI, nil
	}
	return nil, "", errInvalid("checkpoint: set uri or metadata")
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
	report, err := s.cfg.Engine.CheckLayout(ctx, l, label, plan, opts)
	if err != nil {
		return nil, err
	}
	s.metrics.verdicts.WithLabelValues(report.GetVerdict().String()).Inc()
	return report, nil
}
