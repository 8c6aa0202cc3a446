package findings

import (
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
	corpustest "github.com/flinkpreflight/preflight/internal/corpus"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// sourceLayout writes a FLIP-27 source (SourceReaderState on each of 2 subtasks) whose
// coordinator state is a source coordinator envelope with the given serde and enumerator
// serializer versions.
func sourceLayout(t *testing.T, uid string, serde, enum int32) *checkpoint.Layout {
	t.Helper()
	coord := binary.BigEndian.AppendUint32(nil, uint32(serde))
	coord = binary.BigEndian.AppendUint32(coord, uint32(enum))
	coord = binary.BigEndian.AppendUint32(coord, 5)
	coord = append(coord, 0, 0, 0, 0, 1) // no partitions, initial discovery finished
	op := checkpoint.OperatorState{Name: uid, UID: uid, ID: checkpoint.OperatorIDFromUID(uid), Parallelism: 2, MaxParallelism: 128}
	op.CoordinatorState = &checkpoint.ByteStreamStateHandle{Name: op.ID.String(), Data: coord}
	for i := 0; i < 2; i++ {
		h := &checkpoint.OperatorStateHandle{Tag: 4, States: []checkpoint.StateEntry{{Name: "SourceReaderState", Mode: checkpoint.SplitDistribute, Offsets: []int64{8}}},
			Delegate: &checkpoint.ByteStreamStateHandle{Name: "r", Data: make([]byte, 24)}}
		op.Subtasks = append(op.Subtasks, checkpoint.SubtaskEntry{Index: int32(i), State: &checkpoint.SubtaskState{
			ManagedOperatorState: checkpoint.OperatorStateSlot{Present: 1, Handle: h}}})
	}
	return checkpointtest.Layout(t, &checkpoint.Metadata{Version: 5, CheckpointID: 3, Operators: []checkpoint.OperatorState{op}})
}

func TestKafkaEnumStateRule(t *testing.T) {
	tests := []struct {
		name      string
		uid       string
		serde     int32
		enum      int32
		connector string // "" = not given
		want      Severity
	}{
		{"v3 read by 4.0.1", "kafka-source", 1, 3, "4.0.1", Error},
		{"v3 read by 5.0.0", "kafka-source", 1, 3, "5.0.0", SeverityUnspecified},
		{"v3 read by 4.0.1-2.0 (build suffix)", "kafka-source", 1, 3, "4.0.1-2.0", Error},
		{"v2 read by 3.0.2", "kafka-source", 1, 2, "3.0.2", Error},
		{"v2 read by 3.1.0", "kafka-source", 1, 2, "3.1.0", SeverityUnspecified},
		{"v2 read by 3.1.0-1.18", "kafka-source", 1, 2, "3.1.0-1.18", SeverityUnspecified},
		{"v1 read by Flink 1.12's built-in connector", "kafka-source", 0, 1, "1.12.7", Error},
		{"v1 read by 1.13.0", "kafka-source", 1, 1, "1.13.0", SeverityUnspecified},
		{"v3, connector not given", "kafka-source", 1, 3, "", SeverityUnspecified},
		{"v3 in a source not named Kafka", "orders", 1, 3, "4.0.0", Warning},
		{"not a Kafka version (4)", "kafka-source", 1, 4, "3.0.0", SeverityUnspecified},
		{"unknown coordinator serde 2", "kafka-source", 2, 3, "3.0.0", SeverityUnspecified},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{}
			if tt.connector != "" {
				opts.ConnectorVersions = map[string]string{kafkaConnector: tt.connector}
			}
			fs := byRule(check(t, sourceLayout(t, tt.uid, tt.serde, tt.enum), rescale.Plan{}, nil, opts), "PF192")
			if tt.want == SeverityUnspecified {
				if len(fs) != 0 {
					t.Fatalf("want silence, got %+v", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Severity != tt.want || fs[0].OperatorUID != tt.uid {
				t.Fatalf("got %+v, want one %v finding on %s", fs, tt.want, tt.uid)
			}
			for _, s := range []string{"FLINK-38453", "serializer version", "flink-connector-kafka " + tt.connector, "only supports version up to"} {
				if !strings.Contains(fs[0].Message, s) {
					t.Errorf("message lacks %q: %s", s, fs[0].Message)
				}
			}
		})
	}
}

// TestKafkaEnumStateRuleCorpus runs the rule on flink-connector-kafka's own migration
// savepoints (KafkaSourceMigrationITCase: enumerator state versions 1, 2 and 3).
func TestKafkaEnumStateRuleCorpus(t *testing.T) {
	dir := filepath.Join(corpustest.Dir(), "apache__flink-connector-kafka", "flink-connector-kafka", "src", "test", "resources", "kafka-source-savepoint")
	tests := []struct {
		folder    string
		connector string
		fires     bool
	}{
		{"enum1-split0/savepoint-3c7c0a-07c49f841952", "3.0.0", false},
		{"enum2-split0/savepoint-de9fd4-35f289091a1b", "3.0.2", true},
		{"enum2-split0/savepoint-de9fd4-35f289091a1b", "3.1.0", false},
		{"enum3-split0/savepoint-246fa1-85f387ecce0c", "4.0.1", true},
		{"enum3-split0/savepoint-246fa1-85f387ecce0c", "5.0.0", false},
	}
	for _, tt := range tests {
		l := checkpointtest.CorpusFile(t, filepath.Join(dir, tt.folder, "_metadata"))
		fs := byRule(check(t, l, rescale.Plan{}, nil, Options{ConnectorVersions: map[string]string{kafkaConnector: tt.connector}}), "PF192")
		if fired := len(fs) == 1 && fs[0].Severity == Error; fired != tt.fires {
			t.Errorf("%s with %s: %+v, want fired=%v", tt.folder, tt.connector, fs, tt.fires)
		}
	}
}
