package findings

import (
	"strings"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

func TestKafkaTxnTimeoutRule(t *testing.T) {
	taken := time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC)
	producer := tOp{name: "orders-out", uid: "orders-out", p: 2, states: []tState{splitState("state", 1, 1),
		unionState("next-transactional-id-hint-v2", 1, 0)}}
	sink := tOp{name: "Sink: KafkaSink-events Writer", uid: "kafka-events-writer", p: 2, states: []tState{splitState("writer_raw_states", 1, 1)}}
	committer := tOp{name: "Sink: events Committer", uid: "kafka-events-committer", p: 2, states: []tState{splitState("streaming_committer_raw_states", 1, 1)}}
	fileSink := tOp{name: "Sink: files Writer", uid: "files", p: 2, states: []tState{splitState("writer_raw_states", 1, 1)}}
	tests := []struct {
		name    string
		op      tOp
		age     time.Duration
		timeout time.Duration
		noTime  bool
		fires   bool
		props   *checkpoint.CheckpointProperties
		want    Severity // when it fires; SeverityUnspecified = Warning
	}{
		{"producer, default timeout + 1s", producer, time.Hour + time.Second, 0, false, true, nil, 0},
		{"producer, default timeout - 1s", producer, time.Hour - time.Second, 0, false, false, nil, 0},
		{"producer, exactly the timeout", producer, time.Hour, 0, false, false, nil, 0},
		{"producer, 15 min timeout + 1s", producer, 15*time.Minute + time.Second, 15 * time.Minute, false, true, nil, 0},
		{"producer, 15 min timeout - 1s", producer, 15*time.Minute - time.Second, 15 * time.Minute, false, false, nil, 0},
		{"producer, 2 h timeout, 90 min old", producer, 90 * time.Minute, 2 * time.Hour, false, false, nil, 0},
		{"producer, snapshot time unknown", producer, 48 * time.Hour, 0, true, false, nil, 0},
		{"KafkaSink writer", sink, 2 * time.Hour, 0, false, true, nil, 0},
		{"KafkaSink committer", committer, 2 * time.Hour, 0, false, true, nil, 0},
		{"FileSink writer", fileSink, 2 * time.Hour, 0, false, false, nil, 0},
		{"stop-with-savepoint (suspend)", producer, 2 * time.Hour, 0, false, true,
			&checkpoint.CheckpointProperties{Savepoint: true, Name: "Suspend Savepoint", PostCheckpointAct: "SUSPEND"}, Info},
		{"stop-with-savepoint (terminate)", sink, 2 * time.Hour, 0, false, true,
			&checkpoint.CheckpointProperties{Savepoint: true, Name: "Terminate Savepoint", PostCheckpointAct: "TERMINATE"}, Info},
		{"savepoint, job kept running", producer, 2 * time.Hour, 0, false, true,
			&checkpoint.CheckpointProperties{Savepoint: true, Name: "Savepoint", PostCheckpointAct: "NONE"}, Warning},
		{"checkpoint", producer, 2 * time.Hour, 0, false, true,
			&checkpoint.CheckpointProperties{Name: "Checkpoint", SharingStrategy: "FORWARD_BACKWARD"}, Warning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{KafkaTransactionTimeout: tt.timeout, SnapshotTime: taken, Now: taken.Add(tt.age)}
			if tt.noTime {
				opts.SnapshotTime = time.Time{}
			}
			l := layoutOf(t, 5, tt.op)
			l.Properties = tt.props
			fs := byRule(check(t, l, rescale.Plan{}, nil, opts), "PF193")
			if !tt.fires {
				if len(fs) != 0 {
					t.Fatalf("want silence, got %+v", fs)
				}
				return
			}
			want := tt.want
			if want == SeverityUnspecified {
				want = Warning
			}
			if len(fs) != 1 || fs[0].Severity != want || fs[0].OperatorUID != tt.op.uid {
				t.Fatalf("got %+v, want one %v on %s", fs, want, tt.op.uid)
			}
			for _, s := range []string{"FLINK-8086", "FLINK-23839", tt.op.uid, "2026-12-05T06:00:00Z", "ProducerFencedException"} {
				if !strings.Contains(fs[0].Message, s) {
					t.Errorf("message lacks %q: %s", s, fs[0].Message)
				}
			}
			if (tt.timeout == 0) != strings.Contains(fs[0].Message, "--kafka-transaction-timeout") {
				t.Errorf("default timeout note: %s", fs[0].Message)
			}
		})
	}
}
