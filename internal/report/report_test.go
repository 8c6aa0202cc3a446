package report

import (
	"bytes"
	"strings"
	"testing"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

func sampleReport() *pb.RescaleReport {
	subtasks := []*pb.SubtaskAssignment{}
	for i := int32(0); i < 40; i++ {
		s := &pb.SubtaskAssignment{Index: i, Elements: 1, StateBytes: 100, BytesBefore: -1}
		if i < 4 {
			s.BytesBefore = 100
		} else {
			s.Elements, s.StateBytes = 0, 0
		}
		subtasks = append(subtasks, s)
	}
	return &pb.RescaleReport{
		Verdict:    pb.Verdict_VERDICT_DENY,
		Checkpoint: &pb.CheckpointSummary{FormatVersion: 5, WrittenBy: "2.0", Source: "x/_metadata", SnapshotName: "Savepoint", SavepointFormat: "CANONICAL"},
		Findings: []*pb.Finding{{RuleId: "PF101", Title: "empty", Severity: pb.Severity_SEVERITY_ERROR, OperatorId: "0d9ffb4f280d028d86dadba01ac205d7",
			OperatorName: "compact-operator", StateName: "expired-files", AffectedSubtasks: []int32{4, 5, 6, 7}, Message: "boom | pipe", Remediation: "set sink.parallelism",
			References: []string{"FLINK-31689"}}},
		SafeParallelism: []*pb.SafeParallelism{{VertexId: "0d9f", VertexName: "compact-operator", Requested: 40, Below: 4}},
		Operators: []*pb.OperatorAssignment{{OperatorId: "0d9ffb4f280d028d86dadba01ac205d7", Name: "compact-operator", OldParallelism: 4, NewParallelism: 40,
			MaxParallelism: 128, States: []*pb.StateAssignment{{Name: "expired-files", Mode: "SPLIT_DISTRIBUTE", Elements: 4}}, Subtasks: subtasks}},
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"VERDICT: DENY", "PF101", "new subtasks 4-7", "Fix: set sink.parallelism", "Refs: FLINK-31689",
		"requested 40; below: 4; above: none", "4 → 40", "← empty", "subtasks shown"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	if rows := strings.Count(out, "→ "); rows > maxChartRows+2 {
		t.Errorf("chart has %d rows for 40 subtasks; want it summarised", rows)
	}
}

func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"## Flink Preflight: **DENY**", `boom \| pipe`, "| compact-operator | 40 | 4 | none |"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

func TestWriteJSONIsStable(t *testing.T) {
	var a, b bytes.Buffer
	if err := WriteJSON(&a, sampleReport()); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() || !strings.Contains(a.String(), "\n  \"verdict\": \"VERDICT_DENY\"") {
		t.Errorf("unstable or unexpected JSON:\n%s", a.String())
	}
}

// TestClusterLineVersion: without a Flink version the line says so once, without nested
// "unknown (unknown (…))".
func TestClusterLineVersion(t *testing.T) {
	for _, tc := range []struct {
		c    *pb.ClassloadingSummary
		want string
	}{
		{&pb.ClassloadingSummary{FlinkVersionSource: "not given: the newest rules apply", ResolveOrder: "child-first"}, "Flink version not given: the newest rules apply, child-first"},
		{&pb.ClassloadingSummary{FlinkVersion: "1.19.1", FlinkVersionSource: "given", ResolveOrder: "child-first"}, "Flink 1.19.1 (given), child-first"},
	} {
		if got := clusterLine(tc.c); !strings.HasPrefix(got, tc.want) {
			t.Errorf("clusterLine = %q, want it to start with %q", got, tc.want)
		}
	}
}
