package main

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/flinkrest/flinkresttest"
	"github.com/flinkpreflight/preflight/internal/testutil"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// optionsRecorder is a PreflightService that records the options of the checks it is asked for
// and refuses them: what the CLI asks the server for is what these tests read.
type optionsRecorder struct {
	pb.UnimplementedPreflightServiceServer
	mu   sync.Mutex
	last *pb.CheckOptions
}

func (r *optionsRecorder) record(o *pb.CheckOptions) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = proto.Clone(o).(*pb.CheckOptions)
	return status.Error(codes.Unavailable, "recorded")
}

func (r *optionsRecorder) CheckRescaleStream(req *pb.CheckRescaleStreamRequest, _ grpc.ServerStreamingServer[pb.CheckRescaleStreamResponse]) error {
	return r.record(req.GetOptions())
}

func (r *optionsRecorder) CheckRescaleUploadStream(s grpc.BidiStreamingServer[pb.CheckRescaleUploadStreamRequest, pb.CheckRescaleUploadStreamResponse]) error {
	m, err := s.Recv()
	if err != nil {
		return err
	}
	return r.record(m.GetHeader().GetOptions())
}

func (r *optionsRecorder) options() *pb.CheckOptions {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// The text report of --flink-rest and --latest through --server asks for the chart's rows
// (chart_subtasks), as a plain check does, not for every subtask; JSON asks for rows only with
// --subtasks.
func TestServerAskedForChartRowsOnly(t *testing.T) {
	rec := &optionsRecorder{}
	gs := grpc.NewServer()
	pb.RegisterPreflightServiceServer(gs, rec)
	addr := testutil.ServeLoopback(t, gs.Serve, gs.Stop)

	dir := compactSinkDir(t)
	b, err := os.ReadFile(filepath.Join(dir, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "chk-1742"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "chk-1742", "_metadata"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	fake := flinkresttest.Start(t, flinkresttest.Job{Version: "2.1", CheckpointPath: "file:" + dir})
	ways := map[string][]string{
		"checkpoint": {"check", filepath.Join(dir, "_metadata")},
		"latest":     {"check", root, "--latest"},
		"flink-rest": {"check", "--flink-rest", fake.URL, "--job", flinkresttest.DefaultJobID},
	}
	for way, args := range ways {
		for _, tt := range []struct {
			extra                []string
			wantChart, wantEvery bool
		}{
			{nil, true, false},
			{[]string{"-o", "json"}, false, false},
			{[]string{"-o", "json", "--subtasks"}, false, true},
			{[]string{"--subtasks"}, false, true},
		} {
			call := append(append(append([]string{}, args...), "-p", "8", "--server", addr, "--insecure"), tt.extra...)
			rec.last = nil
			if code, _, stderr := runCLI(t, call...); code == exitAllow || rec.options() == nil {
				t.Fatalf("%s %v: exit %d, no request recorded; stderr %s", way, tt.extra, code, stderr)
			}
			o := rec.options()
			if o.GetChartSubtasks() != tt.wantChart || o.GetIncludeSubtasks() != tt.wantEvery {
				t.Errorf("%s %v: chart_subtasks %v include_subtasks %v, want %v %v", way, tt.extra,
					o.GetChartSubtasks(), o.GetIncludeSubtasks(), tt.wantChart, tt.wantEvery)
			}
		}
	}
}
