package server

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/client"
	"github.com/flinkpreflight/preflight/internal/testutil"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
	"github.com/prometheus/client_golang/prometheus"
)

// testdataDir holds the example checkpoints the scenarios generator commits.
func testdataDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "compact-sink", "_metadata")); err != nil {
		t.Skipf("example checkpoints not generated: %v", err)
	}
	return dir
}

// corpusDir is the shared corpus of real Flink _metadata files; "" when absent (a clone without
// ../shared), in which case corpus cases are skipped.
func corpusDir() string {
	dir, err := filepath.Abs("../../shared/spec/fixtures/flink-metadata")
	if err != nil {
		return ""
	}
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}

// scenario is one check, run through every path.
type scenario struct {
	name string
	path string // the _metadata file
	plan *pb.RescalePlan
	opts *pb.CheckOptions
}

// checkScenarios are the README's demo plans plus, when present, every corpus file at its stored
// parallelism and at double it.
func checkScenarios(t testing.TB) []scenario {
	t.Helper()
	td := testdataDir(t)
	par := func(kv ...any) *pb.RescalePlan {
		p := &pb.RescalePlan{VertexParallelism: map[string]int32{}}
		for i := 0; i < len(kv); i += 2 {
			p.VertexParallelism[kv[i].(string)] = int32(kv[i+1].(int))
		}
		return p
	}
	cs := filepath.Join(td, "compact-sink", "_metadata")
	out := []scenario{
		{"compact-sink/compact-operator=8", cs, par("compact-operator", 8), nil},
		{"compact-sink/compact-operator=2", cs, par("compact-operator", 2), nil},
		{"compact-sink/compact-operator=4", cs, par("compact-operator", 4), nil},
		{"compact-sink/compact-coordinator=2", cs, par("compact-coordinator", 2), &pb.CheckOptions{FlinkVersion: "1.19.1", IncludeSubtasks: true}},
		{"kafka-orphan-union/default=8", filepath.Join(td, "kafka-orphan-union", "_metadata"), &pb.RescalePlan{DefaultParallelism: 8}, nil},
		{"max-parallelism/default=256", filepath.Join(td, "max-parallelism", "_metadata"), &pb.RescalePlan{DefaultParallelism: 256}, nil},
	}
	if dir := corpusDir(); dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "*.metadata"))
		sort.Strings(files)
		for _, f := range files {
			out = append(out,
				scenario{"corpus/" + filepath.Base(f) + "/stored", f, &pb.RescalePlan{}, nil},
				scenario{"corpus/" + filepath.Base(f) + "/default=3", f, &pb.RescalePlan{DefaultParallelism: 3}, nil})
		}
	}
	return out
}

// outcome is what a path answered, reduced to what must agree across paths: the report without
// its source label (a URI, an upload name or "inline"), or the status code and message.
type outcome struct {
	report *pb.RescaleReport
	code   string
	msg    string
}

func newOutcome(rep *pb.RescaleReport, err error) outcome {
	if err != nil {
		st := status.Convert(err)
		return outcome{code: st.Code().String(), msg: st.Message()}
	}
	rep = proto.Clone(rep).(*pb.RescaleReport)
	if rep.Checkpoint != nil {
		rep.Checkpoint.Source = ""
	}
	return outcome{report: rep, code: "OK"}
}

func (o outcome) String() string {
	if o.report == nil {
		return o.code + ": " + o.msg
	}
	return "OK: " + protojson.Format(o.report)
}

func (o outcome) equal(p outcome) bool {
	return o.code == p.code && o.msg == p.msg && proto.Equal(o.report, p.report)
}

// brief summarises an outcome for logs: verdict and rule IDs.
func (o outcome) brief() string {
	if o.report == nil {
		return o.code
	}
	var ids []string
	for _, f := range o.report.GetFindings() {
		ids = append(ids, f.GetRuleId())
	}
	return fmt.Sprintf("%s [%s]", o.report.GetVerdict(), strings.Join(ids, " "))
}

// post sends body to url as JSON and returns the answer's status and body; a transport error
// fails the test.
func post(t testing.TB, url string, body []byte) (int, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// syncBuffer collects logs written from handler goroutines.
type syncBuffer = testutil.SyncBuffer

// harness is an in-process server reached through bufconn.
type harness struct {
	s    *Server
	c    *client.Client
	logs *syncBuffer
	reg  *prometheus.Registry
}

// noLeaks checks, after every other cleanup, that the test left no goroutine behind.
func noLeaks(t *testing.T) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

func startInProcess(t *testing.T, cfg Config) *harness {
	t.Helper()
	h := &harness{logs: &syncBuffer{}, reg: prometheus.NewRegistry()}
	cfg.Registry = h.reg
	cfg.Logger = slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.s = s
	conn, served := testutil.DialBufconn(t, s.ServeGRPC,
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20))) // as client.Dial: reports can be large
	h.c = client.New(conn)
	t.Cleanup(func() {
		h.c.Close()
		s.Close()
		<-served
		if t.Failed() {
			t.Logf("server log:\n%s", h.logs.String())
		}
	})
	return h
}

func slogJSON(w *syncBuffer) *slog.Logger { return slog.New(slog.NewJSONHandler(w, nil)) }
