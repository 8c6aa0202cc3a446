package decision_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
	"github.com/flinkpreflight/preflight/internal/decision"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/flinkrest"
	"github.com/flinkpreflight/preflight/internal/placement"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

const (
	sourceChain = "45b0254a46cabbc3efeea5d2e170ea5b" // Source: orders -> streaming-writer
	coordinator = "d7b11ad20303f98d3eb37a5e0525fff8"
	compactOp   = "0d9ffb4f280d028d86dadba01ac205d7"
	committer   = "a004e297ed656c7b8e968e04069ca1a0" // PartitionCommitter -> Sink: end
)

func compactSink(t testing.TB) *checkpoint.Layout {
	t.Helper()
	return checkpointtest.File(t, "../../testdata/compact-sink/_metadata")
}

// job is the running job of testdata/compact-sink as Flink 1.x's REST API describes it.
func job() *flinkrest.Job {
	return &flinkrest.Job{ID: "a1b2c3d4e5f60718293a4b5c6d7e8f90", FlinkVersion: "1.20.1", Vertices: []flinkrest.Vertex{
		{ID: sourceChain, Name: "Source: orders -> streaming-writer", Parallelism: 4, MaxParallelism: 128, Operators: []string{"Source: orders", "streaming-writer"}},
		{ID: coordinator, Name: "compact-coordinator", Parallelism: 1, MaxParallelism: 1, Operators: []string{"compact-coordinator"}},
		{ID: compactOp, Name: "compact-operator", Parallelism: 4, MaxParallelism: 128, Operators: []string{"compact-operator"}},
		{ID: committer, Name: "PartitionCommitter -> Sink: end", Parallelism: 1, MaxParallelism: 1, Operators: []string{"PartitionCommitter", "Sink: end"}},
	}}
}

func TestDecide(t *testing.T) {
	l := compactSink(t)
	eng := engine.New()
	tests := []struct {
		name     string
		withJob  bool
		proposal map[string]int32
		align    bool
		want     pb.DecisionAction
		perVtx   map[string]pb.DecisionAction
		decided  map[string]int32
		ids      map[string]string
	}{
		{name: "compact operator scale-up is vetoed", withJob: true, proposal: map[string]int32{compactOp: 8},
			want: pb.DecisionAction_DECISION_ACTION_VETO, perVtx: map[string]pb.DecisionAction{compactOp: pb.DecisionAction_DECISION_ACTION_VETO}, ids: map[string]string{compactOp: "PF101"}},
		{name: "source chain scale-up is approved", withJob: true, proposal: map[string]int32{sourceChain: 8},
			want: pb.DecisionAction_DECISION_ACTION_APPROVE, decided: map[string]int32{sourceChain: 8}},
		{name: "scale-down of the compact operator is approved", withJob: true, proposal: map[string]int32{compactOp: 2},
			want: pb.DecisionAction_DECISION_ACTION_APPROVE, decided: map[string]int32{compactOp: 2}},
		{name: "mixed: veto wins overall", withJob: true, proposal: map[string]int32{compactOp: 8, sourceChain: 8},
			want: pb.DecisionAction_DECISION_ACTION_VETO, perVtx: map[string]pb.DecisionAction{compactOp: pb.DecisionAction_DECISION_ACTION_VETO, sourceChain: pb.DecisionAction_DECISION_ACTION_APPROVE}},
		{name: "without the job, keys are operator names", proposal: map[string]int32{"compact-operator": 8},
			want: pb.DecisionAction_DECISION_ACTION_VETO, ids: map[string]string{compactOp: "PF101"}},
		{name: "aligned: 6 does not divide 128", withJob: true, proposal: map[string]int32{sourceChain: 6}, align: true,
			want: pb.DecisionAction_DECISION_ACTION_ADJUST},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := decision.Input{Layout: l, Source: "testdata/compact-sink", Request: &pb.DecideRequest{ProposedParallelism: tt.proposal, AlignToKeyGroups: tt.align}}
			if tt.withJob {
				in.Job = job()
				in.Placement = placement.Place(l, in.Job)
			}
			resp, err := decision.Decide(context.Background(), eng, in)
			if err != nil {
				t.Fatal(err)
			}
			if resp.GetAction() != tt.want {
				t.Fatalf("action %v, want %v: %v", resp.GetAction(), tt.want, resp)
			}
			for _, v := range resp.GetVertices() {
				if a, ok := tt.perVtx[v.GetVertexId()]; ok && v.GetAction() != a {
					t.Errorf("%s: %v, want %v (%s)", v.GetVertexId(), v.GetAction(), a, v.GetReason())
				}
				if id, ok := tt.ids[v.GetVertexId()]; ok && !strings.Contains(strings.Join(v.GetFindingIds(), ","), id) {
					t.Errorf("%s: finding ids %v, want %s", v.GetVertexId(), v.GetFindingIds(), id)
				}
				if v.GetReason() == "" {
					t.Errorf("%s: no reason", v.GetVertexId())
				}
				t.Logf("%s %v → %d: %s", v.GetName(), v.GetAction(), v.GetParallelism(), v.GetReason())
			}
			for k, p := range tt.decided {
				if resp.GetParallelism()[k] != p {
					t.Errorf("decided %s = %d, want %d", k, resp.GetParallelism()[k], p)
				}
			}
			if tt.want == pb.DecisionAction_DECISION_ACTION_VETO && len(resp.GetParallelism()) != 0 {
				t.Errorf("veto with a parallelism map %v", resp.GetParallelism())
			}
			if tt.want == pb.DecisionAction_DECISION_ACTION_ADJUST {
				for _, v := range resp.GetVertices() {
					if v.GetAction() == pb.DecisionAction_DECISION_ACTION_ADJUST && (128%v.GetParallelism() != 0 || v.GetParallelism() <= v.GetCurrentParallelism()) {
						t.Errorf("adjusted to %d", v.GetParallelism())
					}
				}
			}
			// Deterministic and idempotent: the same input gives the same answer.
			again, err := decision.Decide(context.Background(), eng, in)
			if err != nil || again.String() != resp.String() {
				t.Errorf("second answer differs: %v", err)
			}
		})
	}
}

func TestFailurePolicy(t *testing.T) {
	req := &pb.DecideRequest{ProposedParallelism: map[string]int32{compactOp: 8, sourceChain: 6}}
	closed := decision.Failed(req, "UNAVAILABLE", errors.New("flink rest unreachable"))
	if closed.GetAction() != pb.DecisionAction_DECISION_ACTION_VETO || !closed.GetFailed() || len(closed.GetParallelism()) != 0 || len(closed.GetVertices()) != 2 {
		t.Fatalf("fail-closed: %v", closed)
	}
	req.OnFailure = pb.FailurePolicy_FAILURE_POLICY_FAIL_OPEN
	open := decision.Failed(req, "UNAVAILABLE", errors.New("flink rest unreachable"))
	if open.GetAction() != pb.DecisionAction_DECISION_ACTION_APPROVE || open.GetParallelism()[sourceChain] != 6 || !strings.Contains(open.GetFailure(), "UNAVAILABLE") {
		t.Fatalf("fail-open: %v", open)
	}
}

func TestNoProposal(t *testing.T) {
	_, err := decision.Decide(context.Background(), engine.New(), decision.Input{Layout: compactSink(t), Request: &pb.DecideRequest{}})
	if !errors.Is(err, decision.ErrNoProposal) {
		t.Fatal(err)
	}
}

// TestDecideVetoesMissingFiles: a verify_files finding at or above the fail level vetoes every
// vertex (no parallelism restores without the files); one below it changes nothing.
func TestDecideVetoesMissingFiles(t *testing.T) {
	l := compactSink(t)
	eng := engine.New()
	missing := &pb.Finding{RuleId: "PF210", Severity: pb.Severity_SEVERITY_ERROR, Message: "3 of 10,000 state files the checkpoint references are missing: `a`. The restore fails."}
	unverified := &pb.Finding{RuleId: "PF211", Severity: pb.Severity_SEVERITY_WARNING, Message: "Cannot verify 1 of 10,000 state files."}
	for _, c := range []struct {
		name  string
		fs    []*pb.Finding
		fail  pb.Severity
		want  pb.DecisionAction
		ids   string
		inMsg string
	}{
		{"missing files veto", []*pb.Finding{missing}, pb.Severity_SEVERITY_UNSPECIFIED, pb.DecisionAction_DECISION_ACTION_VETO, "PF210", "are missing: `a`; no parallelism restores"},
		{"a warning does not veto", []*pb.Finding{unverified}, pb.Severity_SEVERITY_UNSPECIFIED, pb.DecisionAction_DECISION_ACTION_APPROVE, "", "without findings"},
		{"a warning vetoes at fail level warning", []*pb.Finding{unverified}, pb.Severity_SEVERITY_WARNING, pb.DecisionAction_DECISION_ACTION_VETO, "PF211", "Cannot verify"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, err := decision.Decide(context.Background(), eng, decision.Input{Layout: l, Source: "compact-sink",
				Request:      &pb.DecideRequest{ProposedParallelism: map[string]int32{sourceChain: 2}, Options: &pb.CheckOptions{FailLevel: c.fail}},
				Files:        &pb.FileVerification{Summary: "summary"},
				FileFindings: c.fs})
			if err != nil {
				t.Fatal(err)
			}
			v := resp.GetVertices()[0]
			if resp.GetAction() != c.want || strings.Join(v.GetFindingIds(), ",") != c.ids || !strings.Contains(v.GetReason(), c.inMsg) || resp.GetFileVerification().GetSummary() != "summary" {
				t.Fatalf("decision %v, vertex %v", resp.GetAction(), v)
			}
			if c.want == pb.DecisionAction_DECISION_ACTION_VETO && (len(resp.GetParallelism()) != 0 || v.GetParallelism() != v.GetCurrentParallelism()) {
				t.Errorf("a veto keeps the current parallelism and sends an empty map: %v, %v", resp.GetParallelism(), v)
			}
		})
	}
}
