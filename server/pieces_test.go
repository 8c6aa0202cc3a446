package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	promtest "github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/client"
	"github.com/flinkpreflight/preflight/internal/flinkrest/flinkresttest"
	"github.com/flinkpreflight/preflight/internal/scenarios"
	"github.com/flinkpreflight/preflight/internal/scenarios/scenariotest"
	"github.com/flinkpreflight/preflight/internal/testutil"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// unionDoubled writes a synthetic job with a union operator at parallelism oldP and starts a
// server of cfg that may read it; req checks it at twice the parallelism with every subtask's
// detail. job is a running job (a fake Flink REST API, the operator its one vertex) whose latest
// checkpoint is the file.
func unionDoubled(t *testing.T, oldP int, cfg Config) (h *harness, path string, req *pb.CheckRescaleRequest, job *pb.FlinkJob) {
	t.Helper()
	dir := t.TempDir()
	// In a checkpoint folder of its own, so that a check of the job's latest checkpoint finds it.
	path = filepath.Join(dir, "chk-1", "_metadata")
	file, l := scenariotest.SyntheticLayout(t, scenarios.SyntheticUnion(oldP))
	testutil.WriteFile(t, path, file)
	op := l.Operators[0]
	fake := flinkresttest.Start(t, flinkresttest.Job{Version: "2.1", CheckpointPath: "file:" + filepath.Dir(path),
		Vertices: []flinkresttest.Vertex{{ID: op.ID.String(), Operators: []string{op.Name}, Parallelism: oldP, MaxParallelism: op.MaxParallelism}}})
	cfg.Allow = []string{dir, fake.URL}
	h = startInProcess(t, cfg)
	req = &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: path}},
		Plan: &pb.RescalePlan{DefaultParallelism: int32(2 * oldP)}, Options: &pb.CheckOptions{IncludeSubtasks: true}}
	return h, path, req, &pb.FlinkJob{RestUrl: fake.URL, JobId: flinkresttest.DefaultJobID}
}

// TestReportInPieces (issue #29): a union operator at parallelism 1536 restored at 3072 with
// every subtask's detail is a report of 9 MiB (4096 → 8192, 64 MiB, with PREFLIGHT_BIG=1). Through CheckRescaleStream and
// CheckRescaleUploadStream, a client that accepts no message over gRPC's default 4 MiB gets the
// same report as CheckRescale answers in one message; every piece stays under pieceBytes plus a
// row, and over HTTP (/v1/check:stream) every line under 4 MiB.
func TestReportInPieces(t *testing.T) {
	oldP := 1536
	if os.Getenv("PREFLIGHT_BIG") == "1" {
		oldP = 4096
	}
	h, path, req, _ := unionDoubled(t, oldP, Config{})
	ctx := context.Background()

	whole, err := pb.NewPreflightServiceClient(dialHarness(t, h, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))).CheckRescale(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	size := proto.Size(whole.GetReport())
	if size <= 4<<20 {
		t.Fatalf("the report is %d bytes: too small to need pieces", size)
	}
	small := client.New(dialHarness(t, h)) // gRPC's default limit: no message over 4 MiB
	for name, check := range map[string]func() (*pb.RescaleReport, error){
		"uri":    func() (*pb.RescaleReport, error) { return small.Check(ctx, req) },
		"upload": func() (*pb.RescaleReport, error) { return small.CheckFile(ctx, path, req.Plan, req.Options, nil) },
	} {
		got, err := check()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got.Checkpoint.Source, whole.Report.Checkpoint.Source = "", "" // an upload names its file otherwise
		if !proto.Equal(got, whole.GetReport()) {
			t.Errorf("%s: the joined report differs from CheckRescale's", name)
		}
	}
	var pieces int
	if err := sendPieces(whole.GetReport(), func(p *pb.ReportPiece) error {
		pieces++
		if n := proto.Size(p); n > pieceBytes+64<<10 {
			t.Errorf("piece %d: %d bytes", pieces, n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// As the daemon streams it (the operators as the engine converts them).
	stream, err := pb.NewPreflightServiceClient(dialHarness(t, h)).CheckRescaleStream(ctx, &pb.CheckRescaleStreamRequest{
		Checkpoint: req.Checkpoint, Plan: req.Plan, Options: req.Options})
	if err != nil {
		t.Fatal(err)
	}
	streamed := 0
	for {
		m, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if streamed++; proto.Size(m) > pieceBytes+64<<10 {
			t.Errorf("streamed piece %d: %d bytes", streamed, proto.Size(m))
		}
	}
	if st, err := os.Stat(path); err == nil {
		t.Logf("%d → %d: _metadata %d bytes, report %d bytes in %d pieces (%d streamed)", oldP, 2*oldP, st.Size(), size, pieces, streamed)
	}

	base := serveHarnessHTTP(t, h)
	body, _ := protojson.Marshal(req)
	resp, err := http.Post(base+"/v1/check:stream", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	lines, longest := 0, 0
	for dec.More() {
		var line json.RawMessage
		if err := dec.Decode(&line); err != nil {
			t.Fatal(err)
		}
		lines, longest = lines+1, max(longest, len(line))
		if strings.Contains(string(line), `"error"`) {
			t.Fatalf("HTTP stream error: %.300s", line)
		}
	}
	if lines != streamed || longest > 4<<20 {
		t.Errorf("HTTP: %d lines (want %d), the longest %d bytes", lines, streamed, longest)
	}
}

// dialHarness connects to h's gRPC server with opts.
func dialHarness(t *testing.T, h *harness, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	conn, _ := testutil.DialBufconn(t, h.s.ServeGRPC, opts...)
	return conn
}

// piecesOf answers CheckRescaleStream with sendPieces of a fixed report.
type piecesOf struct {
	pb.UnimplementedPreflightServiceServer
	rep *pb.RescaleReport
}

func (p piecesOf) CheckRescaleStream(_ *pb.CheckRescaleStreamRequest, stream grpc.ServerStreamingServer[pb.CheckRescaleStreamResponse]) error {
	return sendPieces(p.rep, func(piece *pb.ReportPiece) error { return stream.Send(&pb.CheckRescaleStreamResponse{Piece: piece}) })
}

// TestPiecesRoundTrip: reports of every shape that outgrows one message (many operators, one
// operator with very many subtasks, many findings, one finding with very many state names)
// reach a client that accepts no message over 4 MiB, equal to what was sent.
func TestPiecesRoundTrip(t *testing.T) {
	many := func(n int, f func(i int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	var ops []*pb.OperatorAssignment
	for i := range 20_000 {
		ops = append(ops, &pb.OperatorAssignment{OperatorId: fmt.Sprintf("%032x", i), Name: "op", NewParallelism: 2})
	}
	big := &pb.OperatorAssignment{OperatorId: "big", Name: "big"}
	for i := range 30_000 {
		big.Subtasks = append(big.Subtasks, &pb.SubtaskAssignment{Index: int32(i), States: []*pb.SubtaskStateShare{{Name: "offsets", Mode: "UNION", Elements: 4096, Bytes: 1 << 20}}})
		big.OldSubtasks = append(big.OldSubtasks, &pb.OldSubtaskState{Index: int32(i), Bytes: 100})
	}
	var findings []*pb.Finding
	for i := range 20_000 {
		findings = append(findings, &pb.Finding{RuleId: "PF170", OperatorId: fmt.Sprintf("%032x", i), Message: strings.Repeat("m", 200)})
	}
	names := &pb.Finding{RuleId: "PF170", OperatorId: "big", StateName: "s0", StateNames: many(300_000, func(i int) string { return fmt.Sprintf("state-%07d", i) })}
	for _, tc := range []struct {
		name string
		rep  *pb.RescaleReport
	}{
		{"empty", &pb.RescaleReport{Verdict: pb.Verdict_VERDICT_ALLOW}},
		{"many operators", &pb.RescaleReport{Operators: ops}},
		{"one operator with many subtasks", &pb.RescaleReport{Operators: []*pb.OperatorAssignment{ops[0], big, ops[1]}}},
		{"many findings", &pb.RescaleReport{Findings: findings, Verdict: pb.Verdict_VERDICT_DENY}},
		{"one finding with many names", &pb.RescaleReport{Findings: []*pb.Finding{findings[0], names, findings[1]}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := joinedReport(t, piecesOf{rep: tc.rep})
			if !proto.Equal(got, tc.rep) {
				t.Errorf("joined report differs: %d operators, %d findings, want %d, %d",
					len(got.GetOperators()), len(got.GetFindings()), len(tc.rep.GetOperators()), len(tc.rep.GetFindings()))
			}
		})
	}
}

// TestOperatorPagerJoinsParts: the parts engine.Request.Pieces hands on (an operator's rows, then
// its old subtasks, each continued over several parts), paged by operatorPager at any page size,
// join on the client into the operators they came from.
func TestOperatorPagerJoinsParts(t *testing.T) {
	rows := func(from, to int) (out []*pb.SubtaskAssignment) {
		for i := from; i < to; i++ {
			out = append(out, &pb.SubtaskAssignment{Index: int32(i), FromOldSubtasks: []int32{0, int32(i)}})
		}
		return out
	}
	old := func(from, to int) (out []*pb.OldSubtaskState) {
		for i := from; i < to; i++ {
			out = append(out, &pb.OldSubtaskState{Index: int32(i), Bytes: 100, States: []*pb.SubtaskStateShare{{Name: "offsets", Mode: "UNION"}}})
		}
		return out
	}
	type part struct {
		op        *pb.OperatorAssignment
		continued bool
	}
	parts := func() []part {
		return []part{
			{&pb.OperatorAssignment{OperatorId: "a", Name: "a", Subtasks: rows(0, 3)}, false},
			{&pb.OperatorAssignment{OperatorId: "a", Subtasks: rows(3, 5), OldSubtasks: old(0, 2)}, true},
			{&pb.OperatorAssignment{OperatorId: "a", OldSubtasks: old(2, 6)}, true},
			{&pb.OperatorAssignment{OperatorId: "a", OldSubtasks: old(6, 7)}, true},
			{&pb.OperatorAssignment{OperatorId: "b", Name: "b", OldSubtasks: old(0, 1)}, false},
			{&pb.OperatorAssignment{OperatorId: "b", OldSubtasks: old(1, 3)}, true},
		}
	}
	want := []*pb.OperatorAssignment{
		{OperatorId: "a", Name: "a", Subtasks: rows(0, 5), OldSubtasks: old(0, 7)},
		{OperatorId: "b", Name: "b", OldSubtasks: old(0, 3)},
	}
	for _, limit := range []int{1, 40, 120, 1 << 20} {
		var j client.Joiner
		pages := 0
		ops := operatorPager(func(p *pb.ReportPiece) error { pages++; return j.Add(p) }, limit)
		for _, p := range parts() {
			if err := ops.add(p.op, p.continued); err != nil {
				t.Fatal(err)
			}
		}
		if err := ops.flush(); err != nil {
			t.Fatal(err)
		}
		if err := j.Add(&pb.ReportPiece{Piece: &pb.ReportPiece_Report{Report: &pb.RescaleReport{}}}); err != nil {
			t.Fatal(err)
		}
		if got := j.Report().GetOperators(); !proto.Equal(&pb.RescaleReport{Operators: got}, &pb.RescaleReport{Operators: want}) {
			t.Errorf("pages of %d bytes (%d pages): joined %v", limit, pages, got)
		}
	}
}

// TestPiecesStreamedDuringCheck: with include_subtasks, CheckRescaleStream and
// CheckRescaleUploadStream send the first operators while the check still runs (it ends, and
// counts its verdict, only after its last operator is sent): a client that has read one piece
// and reads no more within gRPC's flow-control window (64 KiB here) holds the check back, so the
// daemon never holds the whole report (4 MB of rows for union 1024 → 2048). Once read to the
// end, the pieces join into CheckRescale's report.
func TestPiecesStreamedDuringCheck(t *testing.T) {
	h, path, req, job := unionDoubled(t, 1024, Config{})
	ctx := context.Background()
	unary := pb.NewPreflightServiceClient(dialHarness(t, h, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20))))
	whole, err := unary.CheckRescale(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	wholeJob, err := unary.CheckRescale(ctx, &pb.CheckRescaleRequest{Job: job, Plan: req.Plan, Options: req.Options})
	if err != nil {
		t.Fatal(err)
	}
	if len(wholeJob.GetReport().GetJobVertices()) != 1 || len(wholeJob.GetReport().GetOperators()) != 1 {
		t.Fatalf("the job's check: %d vertices, %d operators", len(wholeJob.GetReport().GetJobVertices()), len(wholeJob.GetReport().GetOperators()))
	}
	if n := proto.Size(whole.GetReport()); n < 2<<20 {
		t.Fatalf("the report is %d bytes: too small to outgrow the flow-control window many times", n)
	}
	verdicts := func() float64 { return promtest.ToFloat64(h.s.metrics.verdicts.WithLabelValues("VERDICT_ALLOW")) }
	for name, check := range smallWindowChecks(t, h, path, req, job) {
		before := verdicts()
		var pieces []*pb.ReportPiece
		err := check(func(p *pb.ReportPiece) error {
			if len(pieces) == 0 {
				if p.GetOperators() == nil {
					t.Errorf("%s: the first piece is not operators: %v", name, p)
				}
				// Reading no more: the daemon cannot send the rest, so its check cannot end.
				time.Sleep(100 * time.Millisecond)
				if verdicts() != before {
					t.Errorf("%s: the check ended before its first piece was read", name)
				}
			}
			pieces = append(pieces, p)
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if verdicts() != before+1 {
			t.Errorf("%s: %v verdicts counted after the check, want %v", name, verdicts(), before+1)
		}
		got, want := joinedReport(t, fixedPieces{pieces: pieces}), whole.GetReport()
		if name == "job" {
			want = wholeJob.GetReport()
		} else {
			got.Checkpoint.Source = want.Checkpoint.Source // an upload names its file otherwise
			got.CheckpointChoice = nil                     // the latest checkpoint is the file
		}
		if !proto.Equal(got, want) {
			t.Errorf("%s: the joined report differs from CheckRescale's", name)
		}
	}
}

// joinedReport is the report the Go client joins, as it does, from what srv's CheckRescaleStream
// answers.
func joinedReport(t *testing.T, srv pb.PreflightServiceServer) *pb.RescaleReport {
	t.Helper()
	s := grpc.NewServer()
	pb.RegisterPreflightServiceServer(s, srv)
	defer s.Stop()
	conn, _ := testutil.DialBufconn(t, s.Serve)
	c := client.New(conn)
	defer c.Close()
	rep, err := c.Check(context.Background(), &pb.CheckRescaleRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// fixedPieces answers CheckRescaleStream with the same pieces.
type fixedPieces struct {
	pb.UnimplementedPreflightServiceServer
	pieces []*pb.ReportPiece
}

func (f fixedPieces) CheckRescaleStream(_ *pb.CheckRescaleStreamRequest, stream grpc.ServerStreamingServer[pb.CheckRescaleStreamResponse]) error {
	for _, p := range f.pieces {
		if err := stream.Send(&pb.CheckRescaleStreamResponse{Piece: p}); err != nil {
			return err
		}
	}
	return nil
}

// smallWindowChecks are req asked by URI, as its folder's latest checkpoint and by uploading path through a client of a fixed 64 KiB
// flow-control window (gRPC's estimate of the bandwidth-delay product would grow it to MiBs), its
// answer's pieces handed to fn.
func smallWindowChecks(t *testing.T, h *harness, path string, req *pb.CheckRescaleRequest, job *pb.FlinkJob) map[string]func(fn func(*pb.ReportPiece) error) error {
	small := client.New(dialHarness(t, h, grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10)))
	ctx := context.Background()
	return map[string]func(fn func(*pb.ReportPiece) error) error{
		"uri": func(fn func(*pb.ReportPiece) error) error { return small.CheckInPieces(ctx, req, fn) },
		"latest": func(fn func(*pb.ReportPiece) error) error {
			latest := &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: filepath.Dir(filepath.Dir(path))}, Latest: true}
			return small.CheckInPieces(ctx, &pb.CheckRescaleRequest{Checkpoint: latest, Plan: req.Plan, Options: req.Options}, fn)
		},
		"job": func(fn func(*pb.ReportPiece) error) error {
			return small.CheckInPieces(ctx, &pb.CheckRescaleRequest{Job: job, Plan: req.Plan, Options: req.Options}, fn)
		},
		"upload": func(fn func(*pb.ReportPiece) error) error {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			return small.UploadInPieces(ctx, f, &pb.UploadHeader{Plan: req.Plan, Options: req.Options}, fn)
		},
	}
}

// TestPiecesStalledReader: a client that reads one piece of an answer in pieces and then nothing
// holds its check's slot for SendIdleTimeout at most (here 200 ms, with one slot and no result
// cache): another check waiting for the slot then runs, and the stalled client, once it reads
// on, gets the pieces sent before and DEADLINE_EXCEEDED naming --send-idle-timeout; the
// request's log says why it ended.
func TestPiecesStalledReader(t *testing.T) {
	h, path, req, job := unionDoubled(t, 1024, Config{SendIdleTimeout: 200 * time.Millisecond, MaxConcurrent: 1, QueueWait: 10 * time.Second, ResultCacheBytes: -1})
	ctx := context.Background()
	other := &pb.CheckRescaleRequest{Checkpoint: req.Checkpoint, Plan: req.Plan}
	checks := smallWindowChecks(t, h, path, req, job)
	for name, check := range checks {
		pieces := 0
		err := check(func(p *pb.ReportPiece) error {
			if pieces++; pieces == 1 {
				// Reading no more until another check has had the only slot.
				start := time.Now()
				if _, err := h.c.Check(ctx, other); err != nil {
					t.Errorf("%s: a check waiting for the stalled one's slot: %v", name, err)
				} else if d := time.Since(start); d > 5*time.Second {
					t.Errorf("%s: a check waited %v for the stalled one's slot", name, d)
				}
			}
			return nil
		})
		if status.Code(err) != codes.DeadlineExceeded || !strings.Contains(status.Convert(err).Message(), "--send-idle-timeout") {
			t.Errorf("%s: the stalled client got %v after %d pieces, want DEADLINE_EXCEEDED naming --send-idle-timeout", name, err, pieces)
		}
	}
	if n := strings.Count(h.logs.String(), `"ended":"send-idle"`); n != len(checks) {
		t.Errorf("%d requests logged as ended by send-idle, want %d", n, len(checks))
	}
}
