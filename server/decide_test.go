package server

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/flinkpreflight/preflight/internal/flinkrest/flinkresttest"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

const (
	vSourceChain = "45b0254a46cabbc3efeea5d2e170ea5b"
	vCompactOp   = "0d9ffb4f280d028d86dadba01ac205d7"
)

// decideHarness is an in-process server allowed to read testdata and call a fake Flink REST.
func decideHarness(t *testing.T, job flinkresttest.Job) (*harness, *flinkresttest.Server) {
	td := testdataDir(t)
	if job.CheckpointPath == "" {
		job.CheckpointPath = "file:" + filepath.Join(td, "compact-sink")
	}
	fake := flinkresttest.Start(t, job)
	h := startInProcess(t, Config{Allow: []string{td, fake.URL}})
	return h, fake
}

func TestDecideOverGRPC(t *testing.T) {
	for _, v := range flinkresttest.Versions {
		t.Run(v, func(t *testing.T) {
			h, fake := decideHarness(t, flinkresttest.Job{Version: v})
			ctx := context.Background()
			job := &pb.FlinkJob{RestUrl: fake.URL, JobId: flinkresttest.DefaultJobID}
			tests := []struct {
				name     string
				proposal map[string]int32
				want     pb.DecisionAction
			}{
				{"compact operator up", map[string]int32{vCompactOp: 8}, pb.DecisionAction_DECISION_ACTION_VETO},
				{"source chain up", map[string]int32{vSourceChain: 8}, pb.DecisionAction_DECISION_ACTION_APPROVE},
				{"compact operator down", map[string]int32{vCompactOp: 2}, pb.DecisionAction_DECISION_ACTION_APPROVE},
			}
			for _, tt := range tests {
				resp, err := h.c.Decide(ctx, &pb.DecideRequest{Job: job, ProposedParallelism: tt.proposal})
				if err != nil {
					t.Fatalf("%s: %v", tt.name, err)
				}
				if resp.GetAction() != tt.want || resp.GetFailed() {
					t.Fatalf("%s: %v", tt.name, protojson.Format(resp))
				}
				if resp.GetCheckpointChoice().GetCheckpointId() != 1742 || !strings.Contains(resp.GetCheckpointNote(), "checkpoint 1742") || !strings.HasSuffix(resp.GetCheckpoint(), "compact-sink/_metadata") {
					t.Errorf("%s: checkpoint %q note %q", tt.name, resp.GetCheckpoint(), resp.GetCheckpointNote())
				}
				if tt.want == pb.DecisionAction_DECISION_ACTION_VETO && (len(resp.GetVertices()) != 1 || resp.GetVertices()[0].GetFindingIds()[0] != "PF101" || resp.GetVertices()[0].GetParallelism() != 4) {
					t.Errorf("%s: %v", tt.name, resp.GetVertices())
				}
			}
		})
	}
}

func TestDecideFailurePolicy(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		job    flinkresttest.Job
		jobID  string
		policy pb.FailurePolicy
		want   pb.DecisionAction
		reason string
	}{
		{"unknown job, closed", flinkresttest.Job{}, "00000000000000000000000000000000", 0, pb.DecisionAction_DECISION_ACTION_VETO, "NOT_FOUND"},
		{"no checkpoint, open", flinkresttest.Job{NoCheckpoint: true}, "", pb.FailurePolicy_FAILURE_POLICY_FAIL_OPEN, pb.DecisionAction_DECISION_ACTION_APPROVE, "FAILED_PRECONDITION"},
		{"checkpoint outside allowlist, closed", flinkresttest.Job{CheckpointPath: "file:/etc/chk-1"}, "", pb.FailurePolicy_FAILURE_POLICY_FAIL_CLOSED, pb.DecisionAction_DECISION_ACTION_VETO, "PERMISSION_DENIED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, fake := decideHarness(t, tt.job)
			id := tt.jobID
			if id == "" {
				id = flinkresttest.DefaultJobID
			}
			resp, err := h.c.Decide(ctx, &pb.DecideRequest{Job: &pb.FlinkJob{RestUrl: fake.URL, JobId: id},
				ProposedParallelism: map[string]int32{vCompactOp: 8}, OnFailure: tt.policy})
			if err != nil {
				t.Fatal(err)
			}
			if !resp.GetFailed() || resp.GetAction() != tt.want || !strings.HasPrefix(resp.GetFailure(), tt.reason) {
				t.Fatalf("%v", protojson.Format(resp))
			}
		})
	}
	// REST unreachable: an allowed URL where nothing listens.
	h, fake := decideHarness(t, flinkresttest.Job{})
	url := fake.URL
	fake.Close()
	resp, err := h.c.Decide(ctx, &pb.DecideRequest{Job: &pb.FlinkJob{RestUrl: url, JobId: flinkresttest.DefaultJobID}, ProposedParallelism: map[string]int32{vCompactOp: 8}})
	if err != nil || !resp.GetFailed() || !strings.HasPrefix(resp.GetFailure(), "UNAVAILABLE") {
		t.Fatalf("%v %v", resp, err)
	}
}

func TestDecideInvalid(t *testing.T) {
	h, fake := decideHarness(t, flinkresttest.Job{})
	ctx := context.Background()
	for name, req := range map[string]*pb.DecideRequest{
		"no proposal":      {Job: &pb.FlinkJob{RestUrl: fake.URL, JobId: flinkresttest.DefaultJobID}},
		"no source":        {ProposedParallelism: map[string]int32{vCompactOp: 8}},
		"bad job id":       {Job: &pb.FlinkJob{RestUrl: fake.URL, JobId: "nope"}, ProposedParallelism: map[string]int32{vCompactOp: 8}},
		"unknown key":      {Job: &pb.FlinkJob{RestUrl: fake.URL, JobId: flinkresttest.DefaultJobID}, ProposedParallelism: map[string]int32{"no-such-operator": 8}},
		"REST not allowed": {Job: &pb.FlinkJob{RestUrl: "http://127.0.0.2:1", JobId: flinkresttest.DefaultJobID}, ProposedParallelism: map[string]int32{vCompactOp: 8}},
	} {
		resp, err := h.c.Decide(ctx, req)
		if name == "REST not allowed" {
			// Outside the allowlist is the server refusing, answered by the failure policy.
			if err != nil || !resp.GetFailed() || !strings.HasPrefix(resp.GetFailure(), "PERMISSION_DENIED") {
				t.Errorf("%s: %v %v", name, resp, err)
			}
			continue
		}
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v %v", name, resp, err)
		}
	}
}

func TestCheckRescaleWithJob(t *testing.T) {
	h, fake := decideHarness(t, flinkresttest.Job{Version: "2.1"})
	ctx := context.Background()
	rep, err := h.c.Check(ctx, &pb.CheckRescaleRequest{Job: &pb.FlinkJob{RestUrl: fake.URL, JobId: flinkresttest.DefaultJobID},
		Plan: &pb.RescalePlan{VertexParallelism: map[string]int32{vCompactOp: 8}}})
	if err != nil {
		t.Fatal(err)
	}
	direct, err := h.c.Check(ctx, &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: filepath.Join(testdataDir(t), "compact-sink")}},
		Plan: &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": 8}}, Options: &pb.CheckOptions{FlinkVersion: "2.1.0"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.GetVerdict() != pb.Verdict_VERDICT_DENY || rep.GetVerdict() != direct.GetVerdict() || ruleIDs(rep) != ruleIDs(direct) {
		t.Fatalf("with job %v %s, direct %v %s", rep.GetVerdict(), ruleIDs(rep), direct.GetVerdict(), ruleIDs(direct))
	}
	if rep.GetCheckpointChoice().GetOrigin() != "flink-rest" || len(rep.GetJobVertices()) != 4 {
		t.Errorf("choice %v vertices %d", rep.GetCheckpointChoice(), len(rep.GetJobVertices()))
	}
	// With every subtask's rows, answered in pieces (the client's Check reads the stream), the
	// operators sent as they are converted (TestPiecesStreamedDuringCheck asks a job too).
	rows, err := h.c.Check(ctx, &pb.CheckRescaleRequest{Job: &pb.FlinkJob{RestUrl: fake.URL, JobId: flinkresttest.DefaultJobID},
		Plan: &pb.RescalePlan{VertexParallelism: map[string]int32{vCompactOp: 8}}, Options: &pb.CheckOptions{IncludeSubtasks: true}})
	if err != nil {
		t.Fatalf("job check with every subtask's rows: %v", err)
	}
	if len(rows.GetOperators()) != len(rep.GetOperators()) || len(rows.GetOperators()[0].GetSubtasks()) == 0 || ruleIDs(rows) != ruleIDs(rep) {
		t.Errorf("job check with rows: %d operators (want %d), %s (want %s)", len(rows.GetOperators()), len(rep.GetOperators()), ruleIDs(rows), ruleIDs(rep))
	}
	// Latest in a folder: testdata holds compact-sink among others, none named chk-N: NOT_FOUND.
	_, err = h.c.Check(ctx, &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: testdataDir(t)}, Latest: true}})
	if status.Code(err) != codes.NotFound {
		t.Errorf("latest in testdata: %v", err)
	}
}

func ruleIDs(r *pb.RescaleReport) string {
	var ids []string
	for _, f := range r.GetFindings() {
		ids = append(ids, f.GetRuleId())
	}
	return strings.Join(ids, ",")
}

func TestDecideOverHTTP(t *testing.T) {
	h, fake := decideHarness(t, flinkresttest.Job{})
	srv := httptest.NewServer(h.s.HTTPHandler())
	defer srv.Close()
	body := `{"job":{"restUrl":"` + fake.URL + `","jobId":"` + flinkresttest.DefaultJobID + `"},"proposedParallelism":{"` + vCompactOp + `":8,"` + vSourceChain + `":8}}`
	code, b := post(t, srv.URL+"/v1/decide", []byte(body))
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	var out pb.DecideResponse
	if err := protojson.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.GetAction() != pb.DecisionAction_DECISION_ACTION_VETO || len(out.GetVertices()) != 2 || !strings.Contains(string(b), `"action":"DECISION_ACTION_VETO"`) {
		t.Fatalf("%s", b)
	}
}

// BenchmarkDecideVsCheck compares Decide with CheckRescale on a cached checkpoint (named by
// URI, so the layout cache answers after the first call), both in-process over bufconn.
func BenchmarkDecideVsCheck(b *testing.B) {
	td, err := filepath.Abs("../testdata")
	if err != nil {
		b.Fatal(err)
	}
	uri := filepath.Join(td, "compact-sink")
	s, err := New(Config{Allow: []string{td}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	src := &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: uri}}
	b.Run("CheckRescale", func(b *testing.B) {
		req := &pb.CheckRescaleRequest{Checkpoint: src, Plan: &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": 8}}}
		for b.Loop() {
			if _, err := s.svc.CheckRescale(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Decide", func(b *testing.B) {
		req := &pb.DecideRequest{Checkpoint: src, ProposedParallelism: map[string]int32{"compact-operator": 8}}
		for b.Loop() {
			if _, err := s.svc.Decide(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("DecideAligned", func(b *testing.B) {
		req := &pb.DecideRequest{Checkpoint: src, ProposedParallelism: map[string]int32{"compact-operator": 8, "streaming-writer": 6}, AlignToKeyGroups: true}
		for b.Loop() {
			if _, err := s.svc.Decide(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Decide answers within the caller's deadline: a Flink REST slower than the deadline gives the
// failure policy's answer (DEADLINE_EXCEEDED), not a transport error.
func TestDecideWithinDeadline(t *testing.T) {
	h, fake := decideHarness(t, flinkresttest.Job{Delay: 5 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	resp, err := h.c.Decide(ctx, &pb.DecideRequest{Job: &pb.FlinkJob{RestUrl: fake.URL, JobId: flinkresttest.DefaultJobID},
		ProposedParallelism: map[string]int32{vCompactOp: 8}, OnFailure: pb.FailurePolicy_FAILURE_POLICY_FAIL_OPEN})
	if err != nil {
		t.Fatalf("after %v: %v", time.Since(start), err)
	}
	if !resp.GetFailed() || resp.GetAction() != pb.DecisionAction_DECISION_ACTION_APPROVE || !strings.HasPrefix(resp.GetFailure(), "DEADLINE_EXCEEDED") {
		t.Fatalf("%v", protojson.Format(resp))
	}
}
