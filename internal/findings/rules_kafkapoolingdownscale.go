package findings

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/rescale"
	"github.com/flinkpreflight/preflight/internal/units"
)

// kafkaPoolingDownscale is PF194.
var kafkaPoolingDownscale = RuleMeta{
	ID:       "PF194",
	Title:    "KafkaSink scaled down: transactions of removed subtasks may stay open (POOLING naming)",
	Severity: Warning,
	Cause: "flink-connector-kafka 4.0.0 added TransactionNamingStrategy.POOLING (FLINK-34554), which reuses transactional " +
		"ids and aborts lingering transactions by listing them (TransactionAbortStrategy LISTING) instead of probing ids. " +
		"After a scale-down a new subtask takes over the ids of several old ones, but opens new transactions only under " +
		"its first owned subtask id: a transaction left ONGOING under a secondary owned id (e.g. by a recovery from an " +
		"older checkpoint, whose re-commit is fenced) is never reused or aborted. It pins the partitions' last stable " +
		"offset, so read_committed consumers stall, without any error in Flink, until transaction.timeout.ms expires " +
		"(FLINK-40626, unfixed in every release; apache/flink-connector-kafka#314). The INCREMENTING strategy (the " +
		"default, and 3.x) probes the ids of removed subtasks (j % newParallelism, FLINK-23854) and is not affected; " +
		"_metadata does not tell the two apart, so the finding is conditional. After a stop-with-savepoint (the " +
		"_metadata properties say SUSPEND or TERMINATE) every transaction was committed and the rule is silent.",
	Remedies: []Remedy{{Text: "Before the scale-down, stop the job with a savepoint (flink stop drains the sink and commits " +
		"its transactions) and restore from that savepoint; or keep the parallelism. If it already happened, watch the " +
		"read_committed consumers' lag and abort hanging transactions with kafka-transactions.sh find-hanging / abort, or " +
		"lower transaction.timeout.ms."}},
	References: []string{"https://issues.apache.org/jira/browse/FLINK-40626", "https://github.com/apache/flink-connector-kafka/pull/314",
		"https://issues.apache.org/jira/browse/FLINK-34554", "https://issues.apache.org/jira/browse/FLINK-23854"},
	Bugs: []Bug{{ID: "FLINK-40626", Component: kafkaConnector, Affected: []VersionRange{{Introduced: "4.0.0"}},
		FixedIn: "unfixed (apache/flink-connector-kafka#314 open; not in 5.0.0)",
		Summary: "with the POOLING transaction naming strategy, a transaction left open under a secondary owned subtask id after a " +
			"scale-down is never aborted and pins the last stable offset until the transaction timeout"}},
}

func init() { register(&Rule{meta: &kafkaPoolingDownscale, check: checkKafkaPoolingDownscale}) }

// checkKafkaPoolingDownscale (PF194): a KafkaSink writer of a connector with the POOLING strategy
// is scaled down.
func checkKafkaPoolingDownscale(c *Context) []Finding {
	applies, note := kafkaPoolingDownscale.Bugs[0].Applies(c.Options)
	if !applies || c.Layout == nil || stopWithSavepoint(c.Layout) {
		return nil
	}
	var out []Finding
	c.operators(func(v *rescale.VertexAssignment, op *rescale.OperatorAssignment) {
		old := op.Layout.Parallelism
		if v.NewParallelism <= 0 || v.NewParallelism >= old || kafkaSinkKind(c, op) != "KafkaSink" || stateIndex(op, "writer_raw_states") < 0 {
			return
		}
		f := c.finding(&kafkaPoolingDownscale, Warning, op)
		f.Message = fmt.Sprintf("%s is a KafkaSink writer scaled down from %d to %d. If it uses TransactionNamingStrategy.POOLING, "+
			"a transaction left open under the id of one of the %s it takes over may never be aborted: read_committed "+
			"consumers of its topics then stall at the last stable offset until transaction.timeout.ms expires (FLINK-40626). %s",
			upperFirst(opLabel(op, c.Entry(op))), old, v.NewParallelism, units.Plural(int64(old-v.NewParallelism), "removed subtask"), note)
		f.Remediation = kafkaPoolingDownscale.remedy("")
		f.References = kafkaPoolingDownscale.refs()
		out = append(out, f)
	})
	return out
}
