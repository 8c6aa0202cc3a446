// Package client is the Go client of the Preflight gRPC service, for platforms and autoscalers
// that integrate with a running preflightd. It dials (plain, TLS or mutual TLS), sends checks by URI
// or inline bytes, and streams local _metadata files through CheckRescaleUploadStream in fixed-size
// chunks so that neither side holds the whole file. It holds no analysis logic: answers come from
// the server.
package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/flinkpreflight/preflight/internal/pemfile"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// ChunkSize is the size of the chunks Upload sends: large enough to amortise per-message cost,
// far below gRPC's default 4 MiB receive limit.
const ChunkSize = 1 << 20

// Options says how to reach the server.
type Options struct {
	// Insecure dials without TLS (local daemons, tests).
	Insecure bool
	// CAFile verifies the server's certificate; empty uses the system roots.
	CAFile string
	// CertFile and KeyFile are the client's certificate for mutual TLS; both or neither.
	CertFile, KeyFile string
	// ServerName overrides the name checked against the server's certificate.
	ServerName string
}

// Client is a connection to preflightd. It is safe for concurrent use.
type Client struct {
	conn   *grpc.ClientConn
	api    pb.PreflightServiceClient
	health healthpb.HealthClient
}

// Dial connects to addr (host:port or any gRPC target). The connection is made lazily; ctx is
// accepted for API stability and checked before dialing.
func Dial(ctx context.Context, addr string, opts Options) (*Client, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	creds, err := transportCredentials(opts)
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(creds),
		// Reports can be large (per-subtask detail); the server bounds them, not the client.
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)),
	)
	if err != nil {
		return nil, fmt.Errorf("client: dial %s: %w", addr, err)
	}
	return New(conn), nil
}

// New wraps an existing connection (for example a bufconn in tests). Close closes it.
func New(conn *grpc.ClientConn) *Client {
	return &Client{conn: conn, api: pb.NewPreflightServiceClient(conn), health: healthpb.NewHealthClient(conn)}
}

func transportCredentials(opts Options) (credentials.TransportCredentials, error) {
	if opts.Insecure {
		if opts.CAFile != "" || opts.CertFile != "" || opts.KeyFile != "" {
			return nil, errors.New("client: Insecure excludes CAFile, CertFile and KeyFile")
		}
		return insecure.NewCredentials(), nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: opts.ServerName}
	if opts.CAFile != "" {
		pool, err := pemfile.CertPool(opts.CAFile, "client: CA file")
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if (opts.CertFile == "") != (opts.KeyFile == "") {
		return nil, errors.New("client: CertFile and KeyFile go together")
	}
	if opts.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(opts.CertFile, opts.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("client: client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return credentials.NewTLS(cfg), nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Conn returns the underlying connection (for reflection or custom stubs).
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// CatalogDisagreementHeader is the response header (binary metadata, one value each) in which
// the server names where the analysis of a check's job jars labels a state otherwise than a
// catalog entry for the same class; the analysis is used. Read it with WithHeader.
const CatalogDisagreementHeader = "preflight-catalog-disagreement-bin"

type headerKey struct{}

// WithHeader returns a context under which Check, Upload, CheckFile and Decide store the
// server's response header in *md.
func WithHeader(ctx context.Context, md *metadata.MD) context.Context {
	return context.WithValue(ctx, headerKey{}, md)
}

// callOptions are the call options ctx asks for (WithHeader).
func callOptions(ctx context.Context) []grpc.CallOption {
	if md, ok := ctx.Value(headerKey{}).(*metadata.MD); ok {
		return []grpc.CallOption{grpc.Header(md)}
	}
	return nil
}

// Check checks a plan against a checkpoint named by URI or given inline. It asks
// CheckRescaleStream, so no message of the answer exceeds about 1 MiB however large the report
// (every subtask of a high parallelism, a hundred thousand operators), and joins the pieces.
func (c *Client) Check(ctx context.Context, req *pb.CheckRescaleRequest) (*pb.RescaleReport, error) {
	var j Joiner
	if err := c.CheckInPieces(ctx, req, j.Add); err != nil {
		return nil, err
	}
	return j.Report(), nil
}

// CheckInPieces is Check handing each piece of the answer to fn as it arrives, in order, instead
// of joining them: pages of operators, pages of findings (a page marked continued begins with
// more of the last item of the page before: its subtasks and old_subtasks, or state_names and
// operator_ids), and
// last the report without its operators and findings. A caller that writes the pieces out holds
// one at a time whatever the report's size. fn's error ends the call with it.
func (c *Client) CheckInPieces(callerCtx context.Context, req *pb.CheckRescaleRequest, fn func(*pb.ReportPiece) error) error {
	// A child context so that an early return (fn's error) cancels the stream: left open, it would
	// hold the server's check until the deadline.
	ctx, cancel := context.WithCancel(callerCtx)
	defer cancel()
	stream, err := c.api.CheckRescaleStream(ctx, &pb.CheckRescaleStreamRequest{
		Checkpoint: req.GetCheckpoint(), Plan: req.GetPlan(), Options: req.GetOptions(), Job: req.GetJob()}, callOptions(callerCtx)...)
	if err != nil {
		return err
	}
	return receivePieces(stream.Recv, fn)
}

// receivePieces hands the pieces of a report (ReportPiece) to fn up to the last one, the report,
// and reads on to the end of the stream.
func receivePieces[M interface{ GetPiece() *pb.ReportPiece }](recv func() (M, error), fn func(*pb.ReportPiece) error) error {
	for {
		m, err := recv()
		if errors.Is(err, io.EOF) {
			return errors.New("client: the server's answer ended before its report")
		}
		if err != nil {
			return err
		}
		p := m.GetPiece()
		if err := fn(p); err != nil {
			return err
		}
		if p.GetReport() != nil {
			// The report is the last piece; reading on to the end of the stream completes the
			// call (its header and trailer reach the caller's call options).
			if _, err := recv(); !errors.Is(err, io.EOF) {
				if err == nil {
					err = errors.New("client: the server's answer goes on after its report")
				}
				return err
			}
			return nil
		}
	}
}

// Joiner joins a report answered in pieces (its Add is a callback of CheckInPieces and
// UploadInPieces): the pages' operators and findings in order, an item continued over several
// pages merged into one, and the last piece's report.
type Joiner struct {
	ops      []*pb.OperatorAssignment
	findings []*pb.Finding
	rep      *pb.RescaleReport
}

// Report is the joined report; nil before the last piece.
func (j *Joiner) Report() *pb.RescaleReport { return j.rep }

// Add joins the next piece.
func (j *Joiner) Add(p *pb.ReportPiece) error {
	switch {
	case p.GetReport() != nil:
		j.rep = p.GetReport()
		j.rep.Operators, j.rep.Findings = j.ops, j.findings
	case p.GetOperators() != nil:
		page := p.GetOperators()
		j.ops = joinPage(j.ops, page.GetOperators(), page.GetContinued(), func(last, next *pb.OperatorAssignment) {
			last.Subtasks = append(last.Subtasks, next.GetSubtasks()...)
			last.OldSubtasks = append(last.OldSubtasks, next.GetOldSubtasks()...)
		})
	case p.GetFindings() != nil:
		page := p.GetFindings()
		j.findings = joinPage(j.findings, page.GetFindings(), page.GetContinued(), func(last, next *pb.Finding) {
			last.StateNames = append(last.StateNames, next.GetStateNames()...)
			last.OperatorIds = append(last.OperatorIds, next.GetOperatorIds()...)
		})
	}
	return nil
}

// joinPage appends a page's items to all; the first continues the last of all when continued.
func joinPage[T any](all, page []T, continued bool, merge func(last, next T)) []T {
	for i, it := range page {
		if i == 0 && continued && len(all) > 0 {
			merge(all[len(all)-1], it)
			continue
		}
		all = append(all, it)
	}
	return all
}

// Inspect describes a checkpoint.
func (c *Client) Inspect(ctx context.Context, req *pb.InspectCheckpointRequest) (*pb.InspectCheckpointResponse, error) {
	return c.api.InspectCheckpoint(ctx, req)
}

// Health returns nil when the server reports SERVING for the Preflight service.
func (c *Client) Health(ctx context.Context) error {
	resp, err := c.health.Check(ctx, &healthpb.HealthCheckRequest{Service: pb.PreflightService_ServiceDesc.ServiceName})
	if err != nil {
		return err
	}
	if s := resp.GetStatus(); s != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("client: server is %s", s)
	}
	return nil
}

// Upload streams r through CheckRescaleUploadStream: the header, then ChunkSize chunks. Memory use is one
// chunk whatever the file size.
func (c *Client) Upload(ctx context.Context, r io.Reader, header *pb.UploadHeader) (*pb.RescaleReport, error) {
	return c.upload(ctx, r, header, nil)
}

// UploadInPieces is Upload handing each piece of the answer to fn as it arrives (see
// CheckInPieces) instead of joining them.
func (c *Client) UploadInPieces(ctx context.Context, r io.Reader, header *pb.UploadHeader, fn func(*pb.ReportPiece) error) error {
	return c.uploadPieces(ctx, r, header, nil, fn)
}

func (c *Client) upload(ctx context.Context, r io.Reader, header *pb.UploadHeader, progress func(int64)) (*pb.RescaleReport, error) {
	var j Joiner
	if err := c.uploadPieces(ctx, r, header, progress, j.Add); err != nil {
		return nil, err
	}
	return j.Report(), nil
}

func (c *Client) uploadPieces(callerCtx context.Context, r io.Reader, header *pb.UploadHeader, progress func(int64), fn func(*pb.ReportPiece) error) error {
	// A child context so that an early return (read error) cancels the stream instead of leaking it.
	ctx, cancel := context.WithCancel(callerCtx)
	defer cancel()
	stream, err := c.api.CheckRescaleUploadStream(ctx, callOptions(callerCtx)...)
	if err != nil {
		return err
	}
	if header == nil {
		header = &pb.UploadHeader{}
	}
	if err := stream.Send(&pb.CheckRescaleUploadStreamRequest{Message: &pb.CheckRescaleUploadStreamRequest_Header{Header: header}}); err != nil {
		return recvStatus(stream, err)
	}
	buf := make([]byte, ChunkSize)
	var sent int64
	for {
		n, rerr := io.ReadFull(r, buf)
		if n > 0 {
			// Send copies into the transport before returning, so buf can be reused.
			if err := stream.Send(&pb.CheckRescaleUploadStreamRequest{Message: &pb.CheckRescaleUploadStreamRequest_Chunk{Chunk: buf[:n]}}); err != nil {
				return recvStatus(stream, err)
			}
			sent += int64(n)
			if progress != nil {
				progress(sent)
			}
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			// The caller gave up while we were reading: report it as gRPC would. Ask the caller's
			// context: a child learns of its parent's end only after the parent's Done closed,
			// which may be what woke the reader.
			if cerr := callerCtx.Err(); cerr != nil {
				return status.FromContextError(cerr).Err()
			}
			return fmt.Errorf("client: read upload: %w", rerr)
		}
	}
	if err := stream.CloseSend(); err != nil {
		return err
	}
	return receivePieces(stream.Recv, fn)
}

// recvStatus turns a failed Send into the server's status: gRPC reports io.EOF from Send when the
// server has already answered (for example RESOURCE_EXHAUSTED past the upload limit), and the real
// error is only available from RecvMsg.
func recvStatus(stream grpc.BidiStreamingClient[pb.CheckRescaleUploadStreamRequest, pb.CheckRescaleUploadStreamResponse], sendErr error) error {
	if !errors.Is(sendErr, io.EOF) {
		return sendErr
	}
	for {
		if _, err := stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return sendErr
			}
			return err
		}
	}
}

// CheckFile streams a local _metadata file, or the _metadata of a checkpoint folder, through
// CheckRescaleUploadStream. progress, if not nil, is called with the bytes sent so far after each chunk.
func (c *Client) CheckFile(ctx context.Context, path string, plan *pb.RescalePlan, opts *pb.CheckOptions, progress func(sent int64)) (*pb.RescaleReport, error) {
	f, size, err := OpenMetadata(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	header := &pb.UploadHeader{Plan: plan, Options: opts, SizeBytes: size, Name: f.Name()}
	return c.upload(ctx, f, header, progress)
}

// OpenMetadata opens path, or path/_metadata when path is a folder, and returns its size.
func OpenMetadata(path string) (*os.File, int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if fi.IsDir() {
		path = filepath.Join(path, "_metadata")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	fi, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if fi.IsDir() {
		f.Close()
		return nil, 0, fmt.Errorf("client: %s is a directory", path)
	}
	return f, fi.Size(), nil
}
