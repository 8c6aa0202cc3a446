package findings

import (
	"strings"
	"testing"
	"time"

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
	}{
		{"producer, default timeout + 1s", producer, time.Hour + time.Second, 0, false, true},
		{"producer, default timeout - 1s", producer, time.Hour - time.Second, 0, false, false},
		{"producer, exactly the timeout", producer, time.Hour, 0, false, false},
		{"producer, 15 min timeout + 1s", producer, 15*time.Minute + time.Second, 15 * time.Minute, false, true},
		{"producer, 15 min timeout - 1s", producer, 15*time.Minute - time.Second, 15 * time.Minute, false, false},
		{"producer, 2 h timeout, 90 min old", producer, 90 * time.Minute, 2 * time.Hour, false, false},
		{"producer, snapshot time unknown", producer, 48 * time.Hour, 0, true, false},
		{"KafkaSink writer", sink, 2 * time.Hour, 0, false, true},
		{"KafkaSink committer", committer, 2 * time.Hour, 0, false, true},
		{"FileSink writer", fileSink, 2 * time.Hour, 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{KafkaTransactionTimeout: tt.timeout, SnapshotTime: taken, Now: taken.Add(tt.age)}
			if tt.noTime {
				opts.SnapshotTime = time.Time{}
			}
			fs := byRule(check(t, layoutOf(t, 5, tt.op), rescale.Plan{}, nil, opts), "PF193")
			if !tt.fires {
				if len(fs) != 0 {
					t.Fatalf("want silence, got %+v", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Severity != Warning || fs[0].OperatorUID != tt.op.uid {
				t.Fatalf("got %+v, want one WARNING on %s", fs, tt.op.uid)
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
