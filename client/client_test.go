package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/flinkpreflight/preflight/internal/testutil"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeServer records what an upload delivered, so the tests check the client's framing only.
type fakeServer struct {
	pb.UnimplementedPreflightServiceServer
	limit  int64 // answer RESOURCE_EXHAUSTED past this many bytes; 0 = no limit
	header *pb.UploadHeader
	chunks []int
	got    bytes.Buffer
}

func (f *fakeServer) CheckRescaleUploadStream(stream grpc.BidiStreamingServer[pb.CheckRescaleUploadStreamRequest, pb.CheckRescaleUploadStreamResponse]) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	f.header = first.GetHeader()
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			return stream.Send(&pb.CheckRescaleUploadStreamResponse{Piece: &pb.ReportPiece{Piece: &pb.ReportPiece_Report{Report: &pb.RescaleReport{
				Verdict:    pb.Verdict_VERDICT_ALLOW,
				Checkpoint: &pb.CheckpointSummary{SizeBytes: int64(f.got.Len())},
			}}}})
		}
		if err != nil {
			return err
		}
		f.chunks = append(f.chunks, len(msg.GetChunk()))
		f.got.Write(msg.GetChunk())
		if f.limit > 0 && int64(f.got.Len()) > f.limit {
			return status.Error(codes.ResourceExhausted, "too big")
		}
	}
}

func startFake(t *testing.T, f *fakeServer) *Client {
	t.Helper()
	return startFakeServer(t, f)
}

// startFakeServer serves srv on an in-memory listener and returns a client of it.
func startFakeServer(t *testing.T, srv pb.PreflightServiceServer) *Client {
	t.Helper()
	s := grpc.NewServer()
	pb.RegisterPreflightServiceServer(s, srv)
	hs := health.NewServer()
	hs.SetServingStatus(pb.PreflightService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s, hs)
	conn, _ := testutil.DialBufconn(t, s.Serve)
	c := New(conn)
	t.Cleanup(func() { c.Close(); s.Stop() })
	return c
}

func TestCheckFileChunksAndProgress(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), (5*ChunkSize/2)/16+3) // 2.5 chunks and a bit
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "_metadata"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path string }{
		{"file", filepath.Join(dir, "_metadata")},
		{"folder", dir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeServer{}
			c := startFake(t, f)
			var progress []int64
			rep, err := c.CheckFile(context.Background(), tc.path, &pb.RescalePlan{DefaultParallelism: 3}, nil, func(n int64) { progress = append(progress, n) })
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(f.got.Bytes(), data) {
				t.Fatalf("server got %d bytes, want %d identical", f.got.Len(), len(data))
			}
			if want := []int{ChunkSize, ChunkSize, len(data) - 2*ChunkSize}; !slices.Equal(f.chunks, want) {
				t.Errorf("chunks = %v, want %v", f.chunks, want)
			}
			if f.header.GetSizeBytes() != int64(len(data)) || f.header.GetPlan().GetDefaultParallelism() != 3 {
				t.Errorf("header = %v", f.header)
			}
			if n := len(progress); n != 3 || progress[n-1] != int64(len(data)) {
				t.Errorf("progress = %v", progress)
			}
			if rep.GetCheckpoint().GetSizeBytes() != int64(len(data)) {
				t.Errorf("report = %v", rep)
			}
		})
	}
}

// TestUploadServerRejectsEarly checks that a server refusing mid-stream surfaces its status, not
// the io.EOF that Send returns once the server has answered.
func TestUploadServerRejectsEarly(t *testing.T) {
	c := startFake(t, &fakeServer{limit: ChunkSize})
	_, err := c.Upload(context.Background(), bytes.NewReader(make([]byte, 8*ChunkSize)), &pb.UploadHeader{})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("err = %v, want ResourceExhausted", err)
	}
}

func TestHealth(t *testing.T) {
	c := startFake(t, &fakeServer{})
	if err := c.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestCheckFileMissing(t *testing.T) {
	c := startFake(t, &fakeServer{})
	_, err := c.CheckFile(context.Background(), filepath.Join(t.TempDir(), "nope"), nil, nil, nil)
	if !os.IsNotExist(err) {
		t.Fatalf("err = %v, want not-exist", err)
	}
}

func TestOptionsValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		ok   bool
	}{
		{"insecure", Options{Insecure: true}, true},
		{"system roots", Options{}, true},
		{"insecure with CA", Options{Insecure: true, CAFile: "ca.pem"}, false},
		{"cert without key", Options{CertFile: "c.pem"}, false},
		{"missing CA", Options{CAFile: filepath.Join(t.TempDir(), "none.pem")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Dial(context.Background(), "127.0.0.1:1", tc.opts)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if c != nil {
				c.Close()
			}
		})
	}
}

// pieceServer answers CheckRescaleStream with the given pieces.
type pieceServer struct {
	pb.UnimplementedPreflightServiceServer
	pieces []*pb.ReportPiece
}

func (p *pieceServer) CheckRescaleStream(_ *pb.CheckRescaleStreamRequest, stream grpc.ServerStreamingServer[pb.CheckRescaleStreamResponse]) error {
	for _, piece := range p.pieces {
		if err := stream.Send(&pb.CheckRescaleStreamResponse{Piece: piece}); err != nil {
			return err
		}
	}
	return nil
}

// TestCheckJoinsPieces: the pages' operators in order, a continued operator's rows and old
// subtasks appended to
// the one before, the last piece's report; a stream without a report is an error.
func TestCheckJoinsPieces(t *testing.T) {
	page := func(continued bool, ops ...*pb.OperatorAssignment) *pb.ReportPiece {
		return &pb.ReportPiece{Piece: &pb.ReportPiece_Operators{Operators: &pb.OperatorPage{Operators: ops, Continued: continued}}}
	}
	sub := func(i int32) *pb.SubtaskAssignment { return &pb.SubtaskAssignment{Index: i} }
	report := &pb.ReportPiece{Piece: &pb.ReportPiece_Report{Report: &pb.RescaleReport{Verdict: pb.Verdict_VERDICT_DENY}}}
	for _, tc := range []struct {
		name    string
		pieces  []*pb.ReportPiece
		want    string // operator IDs and their subtask and old subtask counts
		wantErr string
	}{
		{"pages", []*pb.ReportPiece{page(false, &pb.OperatorAssignment{OperatorId: "a"}), page(false, &pb.OperatorAssignment{OperatorId: "b"}), report}, "a:0/0 b:0/0", ""},
		{"continued", []*pb.ReportPiece{
			page(false, &pb.OperatorAssignment{OperatorId: "a", Subtasks: []*pb.SubtaskAssignment{sub(0), sub(1)}}),
			page(true, &pb.OperatorAssignment{OperatorId: "a", Subtasks: []*pb.SubtaskAssignment{sub(2)}, OldSubtasks: []*pb.OldSubtaskState{{Index: 0}}}),
			page(true, &pb.OperatorAssignment{OperatorId: "a", OldSubtasks: []*pb.OldSubtaskState{{Index: 1}, {Index: 2}}}),
			page(false, &pb.OperatorAssignment{OperatorId: "b"}), report}, "a:3/3 b:0/0", ""},
		{"no report", []*pb.ReportPiece{page(false, &pb.OperatorAssignment{OperatorId: "a"})}, "", "ended before its report"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startFakeServer(t, &pieceServer{pieces: tc.pieces})
			rep, err := c.Check(context.Background(), &pb.CheckRescaleRequest{})
			if testutil.WantError(t, err, tc.wantErr) {
				return
			}
			var got []string
			for _, op := range rep.GetOperators() {
				got = append(got, fmt.Sprintf("%s:%d/%d", op.GetOperatorId(), len(op.GetSubtasks()), len(op.GetOldSubtasks())))
			}
			if strings.Join(got, " ") != tc.want || rep.GetVerdict() != pb.Verdict_VERDICT_DENY {
				t.Errorf("joined %q (%v), want %q", got, rep.GetVerdict(), tc.want)
			}
		})
	}
}

// endlessServer answers CheckRescaleStream with operator pages until the call ends, and says
// when it ended.
type endlessServer struct {
	pb.UnimplementedPreflightServiceServer
	ended chan struct{}
}

func (e *endlessServer) CheckRescaleStream(_ *pb.CheckRescaleStreamRequest, stream grpc.ServerStreamingServer[pb.CheckRescaleStreamResponse]) error {
	defer close(e.ended)
	page := &pb.ReportPiece{Piece: &pb.ReportPiece_Operators{Operators: &pb.OperatorPage{Operators: []*pb.OperatorAssignment{{OperatorId: "a"}}}}}
	for {
		if err := stream.Send(&pb.CheckRescaleStreamResponse{Piece: page}); err != nil {
			return err
		}
	}
}

// TestCheckInPiecesCallbackErrorEndsCall: when the callback refuses a piece, the call ends at once
// (the server's check is not left blocked on flow control until its deadline).
func TestCheckInPiecesCallbackErrorEndsCall(t *testing.T) {
	srv := &endlessServer{ended: make(chan struct{})}
	c := startFakeServer(t, srv)
	refused := errors.New("refused")
	err := c.CheckInPieces(context.Background(), &pb.CheckRescaleRequest{}, func(*pb.ReportPiece) error { return refused })
	if !errors.Is(err, refused) {
		t.Fatalf("CheckInPieces: %v, want the callback's error", err)
	}
	select {
	case <-srv.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the server's stream is still open 10 s after the callback's error")
	}
}
