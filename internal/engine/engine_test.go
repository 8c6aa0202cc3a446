package engine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/placement"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../../testdata/" + name + "/_metadata")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCheck(t *testing.T) {
	compact := readTestdata(t, "compact-sink")
	tests := []struct {
		name        string
		plan        *pb.RescalePlan
		opts        *pb.CheckOptions
		wantVerdict pb.Verdict
		wantRule    string
		wantSafe    *pb.SafeParallelism
	}{
		{"scale-up denies", &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": 8}}, nil,
			pb.Verdict_VERDICT_DENY, "PF101", &pb.SafeParallelism{Requested: 8, Below: 4}},
		{"scale-down warns", &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": 2}}, nil,
			pb.Verdict_VERDICT_ALLOW_WITH_WARNINGS, "PF102", nil},
		{"unchanged allows", &pb.RescalePlan{}, nil, pb.Verdict_VERDICT_ALLOW, "", nil},
		{"warnings deny at a lower fail level", &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": 2}},
			&pb.CheckOptions{FailLevel: pb.Severity_SEVERITY_WARNING}, pb.Verdict_VERDICT_DENY, "PF102", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := New().Check(context.Background(), Request{Input: Input{Reader: bytes.NewReader(compact), Source: "compact-sink"}, Plan: tt.plan, Options: tt.opts})
			if err != nil {
				t.Fatal(err)
			}
			if rep.GetVerdict() != tt.wantVerdict {
				t.Errorf("verdict %v, want %v; findings %v", rep.GetVerdict(), tt.wantVerdict, rep.GetFindings())
			}
			if tt.wantRule != "" && (len(rep.GetFindings()) == 0 || rep.GetFindings()[0].GetRuleId() != tt.wantRule) {
				t.Errorf("first finding %v, want rule %s", rep.GetFindings(), tt.wantRule)
			}
			if tt.wantSafe != nil {
				if len(rep.GetSafeParallelism()) != 1 {
					t.Fatalf("safe parallelism %v, want one entry", rep.GetSafeParallelism())
				}
				s := rep.GetSafeParallelism()[0]
				if s.GetRequested() != tt.wantSafe.GetRequested() || s.GetBelow() != tt.wantSafe.GetBelow() || s.GetAbove() != tt.wantSafe.GetAbove() {
					t.Errorf("safe parallelism %v, want %v", s, tt.wantSafe)
				}
			}
			if got := rep.GetCheckpoint(); got.GetFormatVersion() != 5 || got.GetSnapshotKind() != "savepoint" || got.GetSource() != "compact-sink" {
				t.Errorf("checkpoint summary %v", got)
			}
		})
	}
}

func TestCheckSubtaskDetail(t *testing.T) {
	rep, err := New().Check(context.Background(), Request{Input: Input{Reader: bytes.NewReader(readTestdata(t, "compact-sink"))},
		Plan: &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": 8}}, Options: &pb.CheckOptions{IncludeSubtasks: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range rep.GetOperators() {
		if op.GetUid() != "compact-operator" {
			continue
		}
		if len(op.GetSubtasks()) != 8 {
			t.Fatalf("%d subtasks, want 8", len(op.GetSubtasks()))
		}
		for i, s := range op.GetSubtasks() {
			wantEmpty := i >= 4
			if (s.GetElements() == 0) != wantEmpty {
				t.Errorf("subtask %d has %d elements; empty expected: %v", i, s.GetElements(), wantEmpty)
			}
			if wantEmpty != (s.GetBytesBefore() < 0) {
				t.Errorf("subtask %d bytes before %d", i, s.GetBytesBefore())
			}
		}
		return
	}
	t.Fatal("compact-operator not in the report")
}

func TestErrors(t *testing.T) {
	compact := readTestdata(t, "compact-sink")
	var formatErr *checkpoint.FormatError
	var planErr *PlanError
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name  string
		ctx   context.Context
		input []byte
		plan  *pb.RescalePlan
		check func(error) bool
	}{
		{"malformed", context.Background(), compact[:100], nil, func(err error) bool { return errors.As(err, &formatErr) && formatErr.Offset > 0 }},
		{"unknown key", context.Background(), compact, &pb.RescalePlan{VertexParallelism: map[string]int32{"no-such-operator": 3}}, func(err error) bool { return errors.As(err, &planErr) }},
		{"negative parallelism", context.Background(), compact, &pb.RescalePlan{DefaultParallelism: -1}, func(err error) bool { return errors.As(err, &planErr) }},
		{"cancelled", cancelled, compact, nil, func(err error) bool { return errors.Is(err, context.Canceled) }},
	}
	// The API's detail and the CLI's text mode (chart rows) fail alike.
	details := map[string]SubtaskDetail{"as asked": SubtasksAsAsked, "for chart": SubtasksForChart}
	for _, tt := range tests {
		for name, detail := range details {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				_, err := New().Check(tt.ctx, Request{Input: Input{Reader: bytes.NewReader(tt.input)}, Plan: tt.plan, Detail: detail})
				if err == nil || !tt.check(err) {
					t.Errorf("error %v (%T) is not the expected kind", err, err)
				}
			})
		}
	}
}

// TestCheckRequestMisuse: a Request without a checkpoint, with two, or streaming the operators
// of a job check (which checks twice) is refused, not guessed at.
func TestCheckRequestMisuse(t *testing.T) {
	compact := readTestdata(t, "compact-sink")
	l, err := New().ReadLayout(context.Background(), Input{Reader: bytes.NewReader(compact)})
	if err != nil {
		t.Fatal(err)
	}
	each := func(*pb.OperatorAssignment) {}
	tests := []struct {
		name string
		req  Request
		want error
	}{
		{"no checkpoint", Request{}, errNoCheckpoint},
		{"stream and layout", Request{Input: Input{Reader: bytes.NewReader(compact)}, Layout: l}, errNoCheckpoint},
		{"streamed job", Request{Layout: l, Each: each, Placement: &placement.Result{}}, errStreamedJob},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New().Check(context.Background(), tt.req); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestCheckDecodedLikeStream: a decoded layout and its stream give the same report.
func TestCheckDecodedLikeStream(t *testing.T) {
	compact := readTestdata(t, "compact-sink")
	l, err := New().ReadLayout(context.Background(), Input{Reader: bytes.NewReader(compact)})
	if err != nil {
		t.Fatal(err)
	}
	plan := func() *pb.RescalePlan {
		return &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": 8}}
	}
	opts := &pb.CheckOptions{ChartSubtasks: true}
	byStream, err := New().Check(context.Background(), Request{Input: Input{Reader: bytes.NewReader(compact), Source: "x"}, Plan: plan(), Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	byLayout, err := New().Check(context.Background(), Request{Layout: l, Source: "x", Plan: plan(), Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(byStream, byLayout) {
		t.Errorf("reports differ:\nstream %v\nlayout %v", byStream, byLayout)
	}
}

func TestInspect(t *testing.T) {
	resp, err := New().Inspect(context.Background(), Input{Reader: bytes.NewReader(readTestdata(t, "compact-sink")), Source: "x"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, op := range resp.GetOperators() {
		if op.GetUid() == "compact-operator" {
			found = true
			if op.GetCatalogEntry() == "" || len(op.GetStates()) != 1 || op.GetStates()[0].GetName() != "expired-files" ||
				op.GetStates()[0].GetElements() != 4 || op.GetStates()[0].GetSubtasks() != 4 {
				t.Errorf("compact-operator described as %v", op)
			}
		}
	}
	if !found {
		t.Error("compact-operator missing")
	}
}
