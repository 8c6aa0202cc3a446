package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// writeMetadata writes m as dir/_metadata and returns the path.
func writeMetadata(t *testing.T, m *checkpoint.Metadata) string {
	t.Helper()
	var b bytes.Buffer
	if err := checkpoint.Write(&b, m); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "_metadata")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRestoreFlags: --restore-mode, --snapshot-time and --kafka-transaction-timeout reach the
// rules (PF191, PF193).
func TestRestoreFlags(t *testing.T) {
	agg := checkpoint.OperatorState{ID: checkpoint.OperatorIDFromUID("agg"), Parallelism: 1, MaxParallelism: 128}
	kg := &checkpoint.KeyGroupsStateHandle{Tag: 3, NumKeyGroups: 128, Offsets: make([]int64, 128),
		Delegate: &checkpoint.ByteStreamStateHandle{Name: "kg", Data: make([]byte, 64)}}
	agg.Subtasks = []checkpoint.SubtaskEntry{{State: &checkpoint.SubtaskState{ManagedKeyedState: &checkpoint.ChangelogStateBackendHandle{
		Tag: 14, NumKeyGroups: 128, Materialized: []checkpoint.KeyedStateHandle{kg}, StateHandleID: "c"}}}}
	changelog := writeMetadata(t, &checkpoint.Metadata{Version: 4, CheckpointID: 1, Operators: []checkpoint.OperatorState{agg}})

	producer := checkpoint.OperatorState{ID: checkpoint.OperatorIDFromUID("out"), Parallelism: 1, MaxParallelism: 128}
	producer.Subtasks = []checkpoint.SubtaskEntry{{State: &checkpoint.SubtaskState{ManagedOperatorState: checkpoint.OperatorStateSlot{Present: 1,
		Handle: &checkpoint.OperatorStateHandle{Tag: 4, States: []checkpoint.StateEntry{
			{Name: "state", Mode: checkpoint.SplitDistribute, Offsets: []int64{8}},
			{Name: "next-transactional-id-hint-v2", Mode: checkpoint.Union, Offsets: []int64{40}}},
			Delegate: &checkpoint.ByteStreamStateHandle{Name: "s", Data: make([]byte, 64)}}}}}}
	kafka := writeMetadata(t, &checkpoint.Metadata{Version: 4, CheckpointID: 1, Operators: []checkpoint.OperatorState{producer}})

	tests := []struct {
		name     string
		args     []string
		rule     string
		severity pb.Severity // UNSPECIFIED: the rule is silent
	}{
		{"no-claim", []string{changelog, "--flink-version", "1.20.1", "--restore-mode", "NO_CLAIM"}, "PF191", pb.Severity_SEVERITY_ERROR},
		{"claim", []string{changelog, "--flink-version", "1.20.1", "--restore-mode", "claim"}, "PF191", pb.Severity_SEVERITY_UNSPECIFIED},
		{"mode not given", []string{changelog, "--flink-version", "1.20.1"}, "PF191", pb.Severity_SEVERITY_WARNING},
		{"old snapshot", []string{kafka, "--snapshot-time", "2020-01-01T00:00:00Z"}, "PF193", pb.Severity_SEVERITY_WARNING},
		{"old snapshot, long timeout", []string{kafka, "--snapshot-time", "2020-01-01T00:00:00Z", "--kafka-transaction-timeout", "87600h"}, "PF193", pb.Severity_SEVERITY_UNSPECIFIED},
		{"snapshot time not given", []string{kafka}, "PF193", pb.Severity_SEVERITY_UNSPECIFIED},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, out, stderr := runCLI(t, append([]string{"check", "-o", "json"}, tt.args...)...)
			var r pb.RescaleReport
			if err := protojson.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("output is not a RescaleReport: %v\n%s\n%s", err, out, stderr)
			}
			got := pb.Severity_SEVERITY_UNSPECIFIED
			for _, f := range r.GetFindings() {
				if f.GetRuleId() == tt.rule {
					got = f.GetSeverity()
				}
			}
			if got != tt.severity {
				t.Errorf("%s: %v, want %v\n%s", tt.rule, got, tt.severity, out)
			}
		})
	}
}
