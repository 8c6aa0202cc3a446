package findings

import (
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

func TestKafkaPoolingDownscaleRule(t *testing.T) {
	sink := tOp{name: "Sink: KafkaSink-events Writer", uid: "kafka-events-writer", p: 4, states: []tState{splitState("writer_raw_states", 1, 1, 1, 1)}}
	fileSink := tOp{name: "Sink: files Writer", uid: "files", p: 4, states: []tState{splitState("writer_raw_states", 1, 1, 1, 1)}}
	tests := []struct {
		name      string
		op        tOp
		newP      int
		connector string
		want      string // "" = silent; else a text the message holds
		stopped   bool   // the snapshot is a stop-with-savepoint
	}{
		{"4 -> 3 on 4.0.0", sink, 3, "4.0.0", "which includes 4.0.0", false},
		{"4 -> 2 on 5.0.0 (unfixed)", sink, 2, "5.0.0", "scaled down from 4 to 2", false},
		{"4 -> 3 on 3.4.0 (no POOLING)", sink, 3, "3.4.0", "", false},
		{"4 -> 3, connector unknown", sink, 3, "", "assumed affected", false},
		{"4 -> 4", sink, 4, "4.0.1", "", false},
		{"4 -> 5 (scale-up)", sink, 5, "4.0.1", "", false},
		{"FileSink 4 -> 2", fileSink, 2, "4.0.1", "", false},
		{"4 -> 2 from a stop-with-savepoint", sink, 2, "4.0.1", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{}
			if tt.connector != "" {
				opts.ConnectorVersions = map[string]string{kafkaConnector: tt.connector}
			}
			l := layoutOf(t, 5, tt.op)
			if tt.stopped {
				l.Properties = &checkpoint.CheckpointProperties{Savepoint: true, Name: "Suspend Savepoint", PostCheckpointAct: "SUSPEND"}
			}
			fs := byRule(check(t, l, rescale.Plan{Parallelism: par(tt.op.uid, tt.newP)}, nil, opts), "PF194")
			if tt.want == "" {
				if len(fs) != 0 {
					t.Fatalf("want silence, got %+v", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Severity != Warning || fs[0].OperatorUID != tt.op.uid {
				t.Fatalf("got %+v, want one WARNING on %s", fs, tt.op.uid)
			}
			for _, s := range []string{tt.want, "FLINK-40626", "POOLING", "read_committed"} {
				if !strings.Contains(fs[0].Message, s) {
					t.Errorf("message lacks %q: %s", s, fs[0].Message)
				}
			}
		})
	}
}
