package engine

//lint:file-ignore SA1019 the deprecated plan.parallelism is tested on purpose

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// TestValidateRequest: values outside Flink's bounds or the API's enums are refused before any
// work, naming the field, the key and the bound; the edges of the valid range pass.
func TestValidateRequest(t *testing.T) {
	tests := []struct {
		name      string
		plan      *pb.RescalePlan
		opts      *pb.CheckOptions
		wantField string // "" = valid
		wantMsg   string
	}{
		{"empty", nil, nil, "", ""},
		{"default 0 keeps", &pb.RescalePlan{DefaultParallelism: 0}, nil, "", ""},
		{"default 1", &pb.RescalePlan{DefaultParallelism: 1}, nil, "", ""},
		{"default at the bound", &pb.RescalePlan{DefaultParallelism: 32768}, nil, "", ""},
		{"default above the bound", &pb.RescalePlan{DefaultParallelism: 32769}, nil, "default_parallelism", "outside 1..32768"},
		{"default MaxInt32", &pb.RescalePlan{DefaultParallelism: 2147483647}, nil, "default_parallelism", "outside 1..32768"},
		{"default negative", &pb.RescalePlan{DefaultParallelism: -1}, nil, "default_parallelism", "outside 1..32768"},
		{"per-vertex 0", &pb.RescalePlan{VertexParallelism: map[string]int32{"op": 0}}, nil, "vertex_parallelism", "outside 1..32768"},
		{"per-vertex MinInt32", &pb.RescalePlan{VertexParallelism: map[string]int32{"op": -2147483648}}, nil, "vertex_parallelism", "outside 1..32768"},
		{"per-vertex above", &pb.RescalePlan{VertexParallelism: map[string]int32{"a": 4, "op": 40000}}, nil, "vertex_parallelism", `"op"`},
		{"deprecated name merged", &pb.RescalePlan{Parallelism: map[string]int32{"op": 40000}}, nil, "vertex_parallelism", `"op"`},
		{"deprecated name agrees", &pb.RescalePlan{Parallelism: map[string]int32{"op": 4}, VertexParallelism: map[string]int32{"op": 4}}, nil, "", ""},
		{"deprecated name disagrees", &pb.RescalePlan{Parallelism: map[string]int32{"op": 4}, VertexParallelism: map[string]int32{"op": 8}}, nil, "parallelism", "is 4 in parallelism (the deprecated name) and 8 in vertex_parallelism"},
		{"max parallelism 0", &pb.RescalePlan{MaxParallelism: map[string]*pb.MaxParallelism{"op": {Value: 0}}}, nil, "max_parallelism", "outside 1..32768"},
		{"max parallelism above", &pb.RescalePlan{MaxParallelism: map[string]*pb.MaxParallelism{"op": {Value: 65536}}}, nil, "max_parallelism", "outside 1..32768"},
		{"max parallelism at the bound", &pb.RescalePlan{MaxParallelism: map[string]*pb.MaxParallelism{"op": {Value: 32768}}}, nil, "", ""},
		{"unknown mapper", &pb.RescalePlan{InputChannelMappers: map[string]pb.SubtaskMapper{"op": 42}}, nil, "input_channel_mappers", "unknown subtask mapper 42"},
		{"known mapper", &pb.RescalePlan{OutputChannelMappers: map[string]pb.SubtaskMapper{"op": pb.SubtaskMapper_SUBTASK_MAPPER_RANGE}}, nil, "", ""},
		{"flink version abc", nil, &pb.CheckOptions{FlinkVersion: "abc"}, "flink_version", "not a Flink version"},
		{"flink version 1", nil, &pb.CheckOptions{FlinkVersion: "1"}, "flink_version", "not a Flink version"},
		{"flink version released", nil, &pb.CheckOptions{FlinkVersion: "1.19.1"}, "", ""},
		{"connector version", nil, &pb.CheckOptions{ConnectorVersions: map[string]string{"iceberg": "1.4.3"}}, "", ""},
		{"connector version bad", nil, &pb.CheckOptions{ConnectorVersions: map[string]string{"iceberg": "x.y"}}, "connector_versions", "iceberg=x.y"},
		{"flink version future", nil, &pb.CheckOptions{FlinkVersion: "3.4.0"}, "", ""},
		{"negative frame size", nil, &pb.CheckOptions{RpcFrameSizeBytes: -1}, "rpc_frame_size_bytes", "negative"},
		{"negative jm memory", nil, &pb.CheckOptions{JobmanagerMemoryBytes: -5}, "jobmanager_memory_bytes", "negative"},
		{"unknown fail level", nil, &pb.CheckOptions{FailLevel: 99}, "fail_level", "unknown severity"},
		{"restore mode NO_CLAIM", nil, &pb.CheckOptions{RestoreMode: "NO_CLAIM"}, "", ""},
		{"restore mode legacy", nil, &pb.CheckOptions{RestoreMode: "legacy"}, "", ""},
		{"restore mode unknown", nil, &pb.CheckOptions{RestoreMode: "steal"}, "restore_mode", "want claim, no-claim or legacy"},
		{"negative transaction timeout", nil, &pb.CheckOptions{KafkaTransactionTimeoutMs: -1}, "kafka_transaction_timeout_ms", "negative"},
		{"snapshot time", nil, &pb.CheckOptions{SnapshotTime: "2026-12-05T06:00:00+01:00"}, "", ""},
		{"snapshot time malformed", nil, &pb.CheckOptions{SnapshotTime: "2026-12-05 06:00"}, "snapshot_time", "RFC 3339"},
		{"subtask operator", nil, &pb.CheckOptions{SubtaskOperators: []string{"0D9FFB4F280D028D86DADBA01AC205D7"}}, "", ""},
		{"subtask operator not an ID", nil, &pb.CheckOptions{SubtaskOperators: []string{"compact-operator"}}, "subtask_operators", "32 hex digits"},
		{"too many subtask operators", nil, &pb.CheckOptions{SubtaskOperators: make([]string, MaxSubtaskOperators+1)}, "subtask_operators", "at most 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateRequest(tt.plan, tt.opts)
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var pe *PlanError
			var oe *OptionsError
			field := ""
			switch {
			case errors.As(err, &pe):
				field = pe.Field
			case errors.As(err, &oe):
				field = oe.Field
			}
			if field != tt.wantField || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("got %v (field %q), want field %q with %q", err, field, tt.wantField, tt.wantMsg)
			}
		})
	}
}

// unreadable fails the test if the engine reads it: invalid requests are refused first.
type unreadable struct{ t *testing.T }

func (u unreadable) Read([]byte) (int, error) {
	u.t.Error("the checkpoint was read for a request that is invalid anyway")
	return 0, errors.New("unreadable")
}

func TestCheckValidatesBeforeReading(t *testing.T) {
	_, err := New().Check(context.Background(), Request{Input: Input{Reader: unreadable{t}},
		Plan: &pb.RescalePlan{DefaultParallelism: 2147483647}})
	var pe *PlanError
	if !errors.As(err, &pe) {
		t.Fatalf("got %v", err)
	}
	// And a check of a decoded layout, which the server runs on cached layouts, validates too.
	l, err := New().ReadLayout(context.Background(), Input{Reader: bytes.NewReader(readTestdata(t, "compact-sink"))})
	if err != nil {
		t.Fatal(err)
	}
	_, err = New().Check(context.Background(), Request{Layout: l, Source: "x", Options: &pb.CheckOptions{FlinkVersion: "abc"}})
	var oe *OptionsError
	if !errors.As(err, &oe) || oe.Field != "flink_version" {
		t.Fatalf("got %v", err)
	}
}
