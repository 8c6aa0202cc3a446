package findings

import (
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/rescale"
)

// TestCatalogCorrectionLabels pins the labels corrected against the upstream restore code
// (tools/upstream-classes/README.md): state, mode, assumption and version scope per entry.
func TestCatalogCorrectionLabels(t *testing.T) {
	cat := DefaultCatalog()
	for _, tc := range []struct {
		entry, state, mode, assumption, versions string
	}{
		{"streaming-file-writer", "max-part-counter", "UNION", MergeAll, ""},
		{"paimon-writer", "commit_user_state", "UNION", MergeAll, ""},
		{"paimon-committer", "commit_user_state", "UNION", MergeAll, ""},
		{"flink-kafka-producer", "next-transactional-id-hint", "UNION", MergeAll, ""},
		{"kafka-sink-writer", "writer_raw_states", "SPLIT_DISTRIBUTE", OrderDependent, "flink-connector-kafka 4.0.0 and later"},
		{"sink-v2-writer", "streaming_committer_raw_states", "SPLIT_DISTRIBUTE", MergeAll, ""},
		{"sink-v2-writer", "end_of_input_state", "SPLIT_DISTRIBUTE", MergeAll, ""},
		{"flink-agents-action-operator", "currentProcessingKeys", "UNION", UnionFilter, ""},
		{"flink-agents-action-operator", "recoveryMarker", "UNION", MergeAll, ""},
		{"flink-agents-action-operator", "identifier_state", "UNION", MergeAll, ""},
		{"iceberg-files-committer", "iceberg-flink-job-id", "SPLIT_DISTRIBUTE", FirstOnly, "iceberg 1.1.0 and later"},
		{"flink-cdc-paimon-sink-writer", "writer_raw_states", "SPLIT_DISTRIBUTE", FirstOnly, "flink-cdc 3.6.0 and later"},
	} {
		e := cat.Entry(tc.entry)
		var found bool
		for _, r := range e.StateRules(tc.state) {
			if r.Assumption != tc.assumption {
				continue
			}
			found = true
			scope := ""
			if r.Versions != nil {
				scope = r.Versions.String()
			}
			if r.Mode != tc.mode || scope != tc.versions {
				t.Errorf("%s %s %s: mode %q versions %q, want %q %q", tc.entry, tc.state, tc.assumption, r.Mode, scope, tc.mode, tc.versions)
			}
		}
		if !found {
			t.Errorf("%s: no %s rule for %s", tc.entry, tc.assumption, tc.state)
		}
	}
	if e := cat.Entry("flink-agents-action-operator"); e.Claims("currentProcessingKeysOpState") {
		t.Errorf("flink-agents still claims the Java field name currentProcessingKeysOpState")
	}
}

// TestCatalogClassAliases: the Flink 2.x `.legacy` names and the classes that really read a
// state find the same entries as the 1.x names.
func TestCatalogClassAliases(t *testing.T) {
	cat := DefaultCatalog()
	for _, tc := range []struct{ class, entry string }{
		{"org.apache.flink.streaming.api.functions.sink.TwoPhaseCommitSinkFunction", "two-phase-commit-sink"},
		{"org.apache.flink.streaming.api.functions.sink.legacy.TwoPhaseCommitSinkFunction", "two-phase-commit-sink"},
		{"org.apache.flink.streaming.api.functions.source.ContinuousFileMonitoringFunction", "continuous-file-monitoring"},
		{"org.apache.flink.streaming.api.functions.source.legacy.ContinuousFileMonitoringFunction", "continuous-file-monitoring"},
		{"org.apache.flink.connector.kafka.sink.KafkaSink", "kafka-sink-writer"},
		{"org.apache.flink.connector.kafka.sink.ExactlyOnceKafkaWriter", "kafka-sink-writer"},
		{"org.apache.flink.connector.file.table.stream.ProcTimeCommitTrigger", "table-partition-committer-process-time"},
		{"org.apache.flink.connector.file.table.stream.PartitionTimeCommitTrigger", "table-partition-committer-partition-time"},
		{"org.apache.flink.connector.kafka.sink.KafkaWriter", ""},
	} {
		got := cat.EntriesForClass(tc.class)
		switch {
		case tc.entry == "" && len(got) != 0:
			t.Errorf("%s: entries %v, want none", tc.class, got[0].ID)
		case tc.entry != "" && (len(got) != 1 || got[0].ID != tc.entry):
			t.Errorf("%s: %d entries, want %s", tc.class, len(got), tc.entry)
		}
	}
	if n := len(cat.EntriesForClass("org.apache.flink.connector.file.table.stream.PartitionCommitter")); n != 2 {
		t.Errorf("PartitionCommitter: %d entries, want both triggers' 2", n)
	}
}

// TestCatalogVersionBoundaries: each corrected, version-dependent entry fires on one side of its
// version boundary and is silent on the other; with the version unknown it fires and says so.
func TestCatalogVersionBoundaries(t *testing.T) {
	committer := func(states ...tState) tOp {
		return tOp{name: "PartitionCommitter", uid: "partition-committer", p: 1, maxP: 1, states: states}
	}
	iceberg := func(jobIDs, files int) tOp {
		return tOp{name: "IcebergFilesCommitter", uid: "iceberg-committer", p: 1, maxP: 1, states: []tState{
			splitState("iceberg-flink-job-id", jobIDs), splitState("iceberg-files-committer-state", files)}}
	}
	cdc := tOp{name: "PaimonSink: Writer", uid: "paimon-sink", p: 2, states: []tState{splitState("writer_raw_states", 1, 1)}}
	kafka := tOp{name: "KafkaSink: Writer", uid: "kafka-sink", p: 2, states: []tState{splitState("writer_raw_states", 1, 1)}}
	for _, tc := range []struct {
		name       string
		op         tOp
		p          int
		flink      string
		connectors map[string]string
		rule       string
		want       int    // findings of rule for the op's entry
		note       string // in the first finding's message
	}{
		{"proc-time trigger 1.19.1", committer(splitState("pending-partitions-with-time", 0)), 1, "1.19.1", nil, "PF101", 1, "includes 1.19.1"},
		{"proc-time trigger 2.0", committer(splitState("pending-partitions-with-time", 0)), 1, "2.0.0", nil, "PF101", 1, "no fix known"},
		{"proc-time trigger 1.11", committer(splitState("pending-partitions-with-time", 0)), 1, "1.11.3", nil, "PF101", 0, ""},
		{"proc-time trigger unknown", committer(splitState("pending-partitions-with-time", 0)), 1, "", nil, "PF101", 1, "Flink version is unknown"},
		{"partition-time trigger 1.15", committer(splitState("pending-partitions", 0), splitState("checkpoint-id-to-watermark", 0)), 1, "1.15.0", nil, "PF101", 2, "FLINK-38735"},
		{"partition-time trigger 1.11", committer(splitState("pending-partitions", 0), splitState("checkpoint-id-to-watermark", 0)), 1, "1.11.3", nil, "PF101", 0, ""},
		{"iceberg 1.0.0 empty", iceberg(0, 0), 1, "", map[string]string{"iceberg": "1.0.0"}, "PF101", 2, "includes 1.0.0"},
		{"iceberg 1.1.0 empty", iceberg(0, 0), 1, "", map[string]string{"iceberg": "1.1.0"}, "PF101", 0, ""},
		{"iceberg unknown empty", iceberg(0, 0), 1, "", nil, "PF101", 2, "--connector-version iceberg=VERSION"},
		{"iceberg 1.1.0 two job ids", iceberg(2, 1), 1, "", map[string]string{"iceberg": "1.1.0"}, "PF102", 1, "iceberg 1.1.0 and later, which includes 1.1.0"},
		{"iceberg 1.0.0 two job ids", iceberg(2, 1), 1, "", map[string]string{"iceberg": "1.0.0"}, "PF102", 0, ""},
		{"flink-cdc 3.6.0 scale-up", cdc, 4, "", map[string]string{"flink-cdc": "3.6.0"}, "PF101", 1, "includes 3.6.0"},
		{"flink-cdc 3.7.0 scale-up", cdc, 4, "", map[string]string{"flink-cdc": "3.7.0"}, "PF101", 0, ""},
		{"flink-cdc 3.5.0 scale-up", cdc, 4, "", map[string]string{"flink-cdc": "3.5.0"}, "PF101", 0, ""},
		{"flink-cdc unknown scale-up", cdc, 4, "", nil, "PF101", 1, "flink-cdc version is unknown"},
		{"flink-cdc 3.7.0 scale-down", cdc, 1, "", map[string]string{"flink-cdc": "3.7.0"}, "PF102", 1, "same commit user"},
		{"flink-cdc 3.5.0 scale-down", cdc, 1, "", map[string]string{"flink-cdc": "3.5.0"}, "PF102", 0, ""},
		{"kafka sink 4.0.0", kafka, 4, "", map[string]string{"flink-connector-kafka": "4.0.0"}, "PF104", 1, "includes 4.0.0"},
		{"kafka sink 3.4.0", kafka, 4, "", map[string]string{"flink-connector-kafka": "3.4.0"}, "PF104", 0, ""},
		{"kafka sink unknown", kafka, 4, "", nil, "PF104", 1, "flink-connector-kafka version is unknown"},
	} {
		l := layoutOf(t, 5, tc.op)
		rep := check(t, l, rescale.Plan{DefaultParallelism: tc.p}, nil, Options{FlinkVersion: tc.flink, ConnectorVersions: tc.connectors})
		fs := byRule(rep, tc.rule)
		if len(fs) != tc.want {
			t.Errorf("%s: %d %s findings, want %d:\n%s", tc.name, len(fs), tc.rule, tc.want, dump(rep))
			continue
		}
		if tc.want > 0 && !strings.Contains(fs[0].Message, tc.note) {
			t.Errorf("%s: %s message %q, want %q", tc.name, tc.rule, fs[0].Message, tc.note)
		}
	}
}

// TestCatalogCorrectionsSilent: states the catalog mislabelled or missed no longer produce
// findings where the upstream code copes (Paimon's and flink-agents' all-equal union states,
// StreamingFileSink's part counter) and flink-agents is identified by its real state name.
func TestCatalogCorrectionsSilent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		op    tOp
		p     int
		entry string
	}{
		{"paimon writer scale-down", tOp{name: "Writer", uid: "paimon-writer", p: 4, states: []tState{
			unionState("paimon_store_sink_write_state", 1, 1, 1, 1), unionState("commit_user_state", 1, 1, 1, 1)}}, 2, "paimon-writer"},
		{"paimon committer scale-up", tOp{name: "Committer", uid: "paimon-committer", p: 2, states: []tState{
			unionState("commit_user_state", 1, 1), splitState("streaming_committer_raw_states", 1, 1)}}, 4, "paimon-committer"},
		{"streaming file sink scale-down", tOp{name: "Sink", uid: "streaming-writer", p: 4, states: []tState{
			splitState("bucket-states", 1, 1, 1, 1), unionState("max-part-counter", 1, 1, 1, 1)}}, 2, "streaming-file-writer"},
		{"flink-agents scale-down", tOp{name: "action-execute-operator", uid: "agents", p: 4, states: []tState{
			unionState("currentProcessingKeys", 1, 1, 1, 1), unionState("identifier_state", 1, 1, 1, 1), unionState("recoveryMarker", 1, 0, 0, 0)}}, 2, "flink-agents-action-operator"},
	} {
		l := layoutOf(t, 5, tc.op)
		rep := check(t, l, rescale.Plan{DefaultParallelism: tc.p}, nil, Options{})
		if got := Identify(&l.Operators[0], DefaultCatalog()); got == nil || got.ID != tc.entry {
			t.Errorf("%s: identified as %v, want %s", tc.name, got, tc.entry)
		}
		for _, id := range []string{"PF101", "PF102", "PF103"} {
			if fs := byRule(rep, id); len(fs) != 0 {
				t.Errorf("%s: unexpected %s:\n%s", tc.name, id, dump(rep))
			}
		}
	}
}
