package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flinkpreflight/preflight/internal/scenarios"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// fieldViolation returns the field a BadRequest detail names, or "".
func fieldViolation(err error) string {
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok && len(br.GetFieldViolations()) > 0 {
			return br.GetFieldViolations()[0].GetField()
		}
	}
	return ""
}

// TestValidationAtTheEdge: requests outside Flink's bounds are INVALID_ARGUMENT naming the field
// and the bound (through CheckRescale and CheckRescaleUpload alike), files Flink could not have
// written are INVALID_ARGUMENT with the offset, and a future Flink version is allowed with PF116.
func TestValidationAtTheEdge(t *testing.T) {
	noLeaks(t)
	td := testdataDir(t)
	good := readFile(t, filepath.Join(td, "compact-sink", "_metadata"))
	h := startInProcess(t, Config{Allow: []string{td}})
	ctx := context.Background()

	// compact-sink is format 5: the first operator's name and uid precede its ID.
	hugeMaxP := bytes.Clone(good)
	uidAt := 24 + 2 + int(binary.BigEndian.Uint16(hugeMaxP[24:]))
	maxPAt := uidAt + 2 + int(binary.BigEndian.Uint16(hugeMaxP[uidAt:])) + 16 + 4
	binary.BigEndian.PutUint32(hugeMaxP[maxPAt:], 1<<20)
	pAboveMaxP := bytes.Clone(good)
	storedMaxP := binary.BigEndian.Uint32(good[maxPAt:])
	binary.BigEndian.PutUint32(pAboveMaxP[maxPAt-4:], storedMaxP+1)

	tests := []struct {
		name      string
		metadata  []byte
		plan      *pb.RescalePlan
		opts      *pb.CheckOptions
		wantField string // BadRequest field, or "" for a MetadataFormatError
		wantMsg   string
		wantOff   int64 // MetadataFormatError offset
	}{
		{"default parallelism MaxInt32", good, &pb.RescalePlan{DefaultParallelism: 2147483647}, nil, "plan.default_parallelism", "outside 1..32768", 0},
		{"default parallelism negative", good, &pb.RescalePlan{DefaultParallelism: -5}, nil, "plan.default_parallelism", "outside 1..32768", 0},
		{"parallelism zero", good, &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": 0}}, nil, "plan.vertex_parallelism", "outside 1..32768", 0},
		{"parallelism above the bound", good, &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": 32769}}, nil, "plan.vertex_parallelism", "outside 1..32768", 0},
		{"max parallelism above the bound", good, &pb.RescalePlan{MaxParallelism: map[string]*pb.MaxParallelism{"compact-operator": {Value: 65536}}}, nil, "plan.max_parallelism", "outside 1..32768", 0},
		{"unknown mapper", good, &pb.RescalePlan{InputChannelMappers: map[string]pb.SubtaskMapper{"compact-operator": 77}}, nil, "plan.input_channel_mappers", "unknown subtask mapper", 0},
		{"flink version abc", good, nil, &pb.CheckOptions{FlinkVersion: "abc"}, "options.flink_version", "not a Flink version", 0},
		{"unknown fail level", good, nil, &pb.CheckOptions{FailLevel: 9}, "options.fail_level", "unknown severity", 0},
		{"trailing bytes", append(bytes.Clone(good), 0, 0, 0), nil, nil, "", "after the end", int64(len(good))},
		{"stored max parallelism above the bound", hugeMaxP, nil, nil, "", "max parallelism outside 1..32768", int64(maxPAt)},
		{"stored parallelism above max parallelism", pAboveMaxP, nil, nil, "", "is not smaller or equal to max parallelism", int64(maxPAt - 4)},
	}
	for _, tt := range tests {
		for _, path := range []string{"inline", "upload"} {
			t.Run(tt.name+"/"+path, func(t *testing.T) {
				var err error
				if path == "inline" {
					_, err = h.c.Check(ctx, inlineReq(tt.metadata, tt.plan, tt.opts))
				} else {
					_, err = h.c.Upload(ctx, bytes.NewReader(tt.metadata), &pb.UploadHeader{Plan: tt.plan, Options: tt.opts})
				}
				if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), tt.wantMsg) {
					t.Fatalf("err = %v, want INVALID_ARGUMENT with %q", err, tt.wantMsg)
				}
				if tt.wantField != "" {
					if f := fieldViolation(err); f != tt.wantField {
						t.Errorf("BadRequest field %q, want %q", f, tt.wantField)
					}
					return
				}
				if fe := formatDetail(t, err); fe.GetOffset() != tt.wantOff || fe.GetField() == "" {
					t.Errorf("detail %v, want offset %d and a field", fe, tt.wantOff)
				}
			})
		}
	}
	t.Run("future Flink version", func(t *testing.T) {
		rep, err := h.c.Check(ctx, inlineReq(good, nil, &pb.CheckOptions{FlinkVersion: "3.4.0"}))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range rep.GetFindings() {
			found = found || (f.GetRuleId() == "PF116" && f.GetSeverity() == pb.Severity_SEVERITY_INFO)
		}
		if !found || rep.GetVerdict() == pb.Verdict_VERDICT_DENY {
			t.Errorf("verdict %v, findings %v: want an INFO PF116", rep.GetVerdict(), rep.GetFindings())
		}
	})
}

// TestValidationHTTP: the JSON gateway refuses numbers that do not fit the API's int32 (before
// anything narrows them) and values outside Flink's bounds, with 400.
func TestValidationHTTP(t *testing.T) {
	noLeaks(t)
	td := testdataDir(t)
	h := startInProcess(t, Config{Allow: []string{td}})
	uri := filepath.Join(td, "compact-sink")
	tests := []struct {
		name    string
		body    string
		wantMsg string
	}{
		{"wraps to 3 in int32", `{"checkpoint":{"uri":"` + uri + `"},"plan":{"defaultParallelism":4294967299}}`, ""},
		{"per-vertex wraps", `{"checkpoint":{"uri":"` + uri + `"},"plan":{"parallelism":{"compact-operator":4294967299}}}`, ""},
		{"fraction", `{"checkpoint":{"uri":"` + uri + `"},"plan":{"defaultParallelism":2.5}}`, ""},
		{"MaxInt32", `{"checkpoint":{"uri":"` + uri + `"},"plan":{"defaultParallelism":2147483647}}`, "outside 1..32768"},
		{"zero per vertex", `{"checkpoint":{"uri":"` + uri + `"},"plan":{"parallelism":{"compact-operator":0}}}`, "outside 1..32768"},
		{"flink version", `{"checkpoint":{"uri":"` + uri + `"},"options":{"flinkVersion":"abc"}}`, "not a Flink version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/v1/check", strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			h.s.HTTPHandler().ServeHTTP(rec, req)
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), tt.wantMsg) {
				t.Errorf("HTTP %d %s; want 400 with %q", rec.Code, rec.Body.String(), tt.wantMsg)
			}
		})
	}
}

// TestDeadlineManyStateNames is the bounded-work promise: a request whose checkpoint holds one
// subtask with a very large number of state names answers DEADLINE_EXCEEDED (or its result)
// within a second of its deadline, whichever stage (upload, decode, simulation, rules, report)
// the deadline falls in.
func TestDeadlineManyStateNames(t *testing.T) {
	noLeaks(t)
	h := startInProcess(t, Config{})
	tests := []struct {
		names    int
		deadline time.Duration
	}{
		{200_000, time.Second},
		{1_000_000, 5 * time.Second}, // issue #10: answered within 7 s
	}
	for _, tt := range tests {
		var b bytes.Buffer
		gen := time.Now()
		if err := scenarios.WriteManyStateNames(&b, tt.names); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d names written in %v", tt.names, time.Since(gen))
		ctx, cancel := context.WithTimeout(context.Background(), tt.deadline)
		start := time.Now()
		_, err := h.c.Upload(ctx, bytes.NewReader(b.Bytes()), &pb.UploadHeader{Plan: &pb.RescalePlan{DefaultParallelism: 3}})
		took := time.Since(start)
		cancel()
		t.Logf("%d names (%d bytes), deadline %v: %v after %v", tt.names, b.Len(), tt.deadline, status.Code(err), took)
		if err != nil && status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("%d names: %v, want DEADLINE_EXCEEDED or a result", tt.names, err)
		}
		if took > tt.deadline+2*time.Second {
			t.Errorf("%d names: answered %v after the start, deadline %v", tt.names, took, tt.deadline)
		}
	}
	// The server's handlers must have stopped too, not only the clients' waits: each logs its
	// RPC when it returns, with its duration.
	var durations []float64
	for wait := time.Now(); len(durations) < len(tests) && time.Since(wait) < 10*time.Second; time.Sleep(50 * time.Millisecond) {
		durations = durations[:0]
		for _, line := range strings.Split(h.logs.String(), "\n") {
			var e struct {
				Method   string  `json:"method"`
				Duration float64 `json:"duration_ms"`
			}
			if json.Unmarshal([]byte(line), &e) == nil && strings.Contains(e.Method, "/CheckRescaleUpload") {
				durations = append(durations, e.Duration)
			}
		}
	}
	if len(durations) != len(tests) {
		t.Fatalf("%d of %d upload handlers returned", len(durations), len(tests))
	}
	for i, tt := range tests {
		t.Logf("%d names: the server's handler returned after %.0f ms", tt.names, durations[i])
		if d := time.Duration(durations[i] * float64(time.Millisecond)); d > tt.deadline+2*time.Second {
			t.Errorf("%d names: the server's handler ran %v, deadline %v", tt.names, d, tt.deadline)
		}
	}
}

// TestUploadPlanRefusedBeforeBody: a header whose plan is out of bounds is answered with
// INVALID_ARGUMENT while the client has sent no byte of the file, so nobody receives (and
// budgets memory for) a file that could never be checked.
func TestUploadPlanRefusedBeforeBody(t *testing.T) {
	noLeaks(t)
	h := startInProcess(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream, err := pb.NewPreflightServiceClient(h.c.Conn()).CheckRescaleUpload(ctx)
	if err != nil {
		t.Fatal(err)
	}
	header := &pb.UploadHeader{SizeBytes: 1 << 20, Plan: &pb.RescalePlan{DefaultParallelism: 40000}}
	if err := stream.Send(&pb.CheckRescaleUploadRequest{Message: &pb.CheckRescaleUploadRequest_Header{Header: header}}); err != nil {
		t.Fatal(err)
	}
	// RecvMsg waits for the server's answer without closing the client's side: had the server
	// waited for the announced 1 MiB first, this would block until the deadline.
	var resp pb.CheckRescaleUploadResponse
	err = stream.RecvMsg(&resp)
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "outside 1..32768") {
		t.Fatalf("err = %v, want INVALID_ARGUMENT naming 1..32768 before the body", err)
	}
}
