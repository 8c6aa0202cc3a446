package findings

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// DefaultKafkaTransactionTimeout is the transaction.timeout.ms that FlinkKafkaProducer and
// KafkaSinkBuilder set when the job does not (one hour).
const DefaultKafkaTransactionTimeout = time.Hour

// kafkaTxnTimeout is PF193.
var kafkaTxnTimeout = RuleMeta{
	ID:       "PF193",
	Title:    "Exactly-once Kafka sink restored from a snapshot older than the transaction timeout",
	Severity: Warning,
	Grading: "INFO when _metadata says the snapshot is a stop-with-savepoint (suspend or terminate): the sink committed " +
		"its transactions when the job stopped, unless the stop failed.",
	Cause: "An exactly-once Kafka sink (FlinkKafkaProducer, KafkaSink) commits the transactions of a checkpoint after the " +
		"checkpoint completes, and on restore commits again those the snapshot lists as pending. Once the snapshot is older " +
		"than transaction.timeout.ms (1 hour unless the job sets it; the broker caps it at transaction.max.timeout.ms, 15 " +
		"minutes by default) the broker has aborted every transaction left open and fenced its producer (KAFKA-6119). If " +
		"they were not committed before the job stopped, the restore does not fail: Flink logs ProducerFencedException or " +
		"InvalidTxnStateException (\"Unable to commit recovered transaction ... most likely signals data loss\"; since 1.4.0, " +
		"FLINK-8086, reworded by FLINK-23839 in 1.14.0), discards them and continues, and their records are lost. Flink's " +
		"docs: \"If the time between Flink application crash and completed restart is larger than Kafka's transaction " +
		"timeout there will be data loss\". The snapshot's age comes from --snapshot-time (or the _metadata object's " +
		"modification time); without it the rule is silent.",
	Remedies: []Remedy{{Text: "Restore from a snapshot younger than the transaction timeout if there is one; otherwise check " +
		"the sink's output for the gap after this snapshot and replay it (rewind the source). For the future set " +
		"transaction.timeout.ms (and the brokers' transaction.max.timeout.ms) above the longest expected downtime plus the " +
		"checkpoint interval; tell Preflight the value with --kafka-transaction-timeout."}},
	References: []string{"https://issues.apache.org/jira/browse/FLINK-8086", "https://issues.apache.org/jira/browse/FLINK-23839",
		"https://nightlies.apache.org/flink/flink-docs-stable/docs/connectors/datastream/kafka/#fault-tolerance",
		"https://issues.apache.org/jira/browse/KAFKA-6119"},
}

func init() { register(&Rule{meta: &kafkaTxnTimeout, check: checkKafkaTxnTimeout}) }

// checkKafkaTxnTimeout (PF193): a Kafka sink's transactions pending in the snapshot are older than
// the transaction timeout.
func checkKafkaTxnTimeout(c *Context) []Finding {
	if c.Options.SnapshotTime.IsZero() || c.Layout == nil {
		return nil
	}
	now := c.Options.Now
	if now.IsZero() {
		now = time.Now()
	}
	timeout, timeoutText := c.Options.KafkaTransactionTimeout, ""
	if timeout <= 0 {
		timeout, timeoutText = DefaultKafkaTransactionTimeout, " (the connector's default; give the job's value with --kafka-transaction-timeout)"
	}
	age := now.Sub(c.Options.SnapshotTime)
	if age <= timeout {
		return nil
	}
	sev, stopped := Warning, ""
	if stopWithSavepoint(c.Layout) {
		sev, stopped = Info, " This snapshot is a stop-with-savepoint, after which the sink commits its transactions, so only a stop that failed after the savepoint leaves any open."
	}
	var out []Finding
	c.operators(func(_ *rescale.VertexAssignment, op *rescale.OperatorAssignment) {
		sink := kafkaSinkKind(c, op)
		if sink == "" {
			return
		}
		f := c.finding(&kafkaTxnTimeout, sev, op)
		f.Message = fmt.Sprintf("%s is a Kafka sink (%s). The snapshot was taken %s ago (%s), longer than the transaction "+
			"timeout of %s%s. If the sink is exactly-once and the transactions this snapshot lists were not committed before "+
			"the job stopped, the broker has aborted them: the restore succeeds with a ProducerFencedException or "+
			"InvalidTxnStateException warning and their records are lost (FLINK-8086, FLINK-23839).%s",
			upperFirst(opLabel(op, c.Entry(op))), sink, age.Round(time.Second), c.Options.SnapshotTime.UTC().Format(time.RFC3339),
			timeout, timeoutText, stopped)
		f.Remediation = kafkaTxnTimeout.remedy("")
		f.References = kafkaTxnTimeout.refs()
		out = append(out, f)
	})
	return out
}

// kafkaSinkKind names the Kafka sink whose transactional state op holds, or "": FlinkKafkaProducer
// by its transactional-id hint state, KafkaSink by the sink-v2 writer or committer state of an
// operator the catalog or its name or uid identify as Kafka's.
func kafkaSinkKind(c *Context, op *rescale.OperatorAssignment) string {
	names := layoutStateNames(op.Layout)
	if slices.Contains(names, "next-transactional-id-hint-v2") || slices.Contains(names, "next-transactional-id-hint") {
		return "FlinkKafkaProducer"
	}
	if !slices.Contains(names, "writer_raw_states") && !slices.Contains(names, "streaming_committer_raw_states") {
		return ""
	}
	if e := c.Entry(op); e != nil && e.ID == "kafka-sink-writer" {
		return "KafkaSink"
	}
	if strings.Contains(strings.ToLower(op.Name+" "+op.UID+" "+op.Layout.Name+" "+op.Layout.UID), "kafka") {
		return "KafkaSink"
	}
	return ""
}

// stopWithSavepoint reports whether _metadata's properties (format 4+) say the snapshot is a
// savepoint that suspended or terminated the job: its sinks committed their transactions when
// the job stopped.
func stopWithSavepoint(l *checkpoint.Layout) bool {
	p := l.Properties
	return p != nil && p.Savepoint && (p.PostCheckpointAct == "SUSPEND" || p.PostCheckpointAct == "TERMINATE")
}
