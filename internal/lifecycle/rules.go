package lifecycle

import "github.com/flinkpreflight/preflight/internal/findings"

// The documentation of the LC3xx findings of Diff and Trend, registered with the findings
// registry so that `preflight rules` and docs/rules.md list them beside the PF rules.
var rules = []findings.RuleMeta{
	{ID: FindingUnionGrowth, Title: "Union state grows by the parallelism per restore", Severity: findings.Warning,
		Grading:    "INFO when a UNION state grew by less than about the old parallelism",
		Cause:      "On restore Flink hands every subtask all entries of a UNION list state; an operator that writes them all back (an orphaned union state, e.g. FlinkKafkaConsumer's offsets kept under a uid the new source no longer reads) multiplies the state by the parallelism at each restore, until _metadata exceeds the RPC frame size.",
		Remedies:   []findings.Remedy{{Text: "Remove the orphaned state from the checkpoint with `preflight prune` (the finding prints the command), then restore from the pruned copy."}},
		References: []string{"FLINK-36848", "https://nightlies.apache.org/flink/flink-docs-stable/docs/dev/datastream/fault-tolerance/state/#using-operator-state"}},
	{ID: FindingVanished, Title: "State carried for an operator the job no longer has", Severity: findings.Warning,
		Cause:      "The checkpoint holds state of an operator that is not in the job (--job-operators): a restore needs --allowNonRestoredState and the state is carried, and paid for, in every later checkpoint.",
		Remedies:   []findings.Remedy{{Text: "Remove the operator's state with `preflight prune` (the finding prints the command)."}},
		References: []string{"https://nightlies.apache.org/flink/flink-docs-stable/docs/ops/state/savepoints/#allowing-non-restored-state"}},
	{ID: FindingFrameSize, Title: "_metadata at or on course to exceed the RPC frame size", Severity: findings.Error,
		Grading:    "ERROR at or above the frame size, WARNING when the growth reaches it within 10 checkpoints or restores, INFO when it grows by 5% or more per step",
		Cause:      "Task deployment descriptors carry the state handles read from _metadata; once they exceed pekko.framesize (10 MiB by default) the restore hangs or fails with an oversized-frame error.",
		Remedies:   []findings.Remedy{{Text: "Remove the state that grows (see LC301, LC302), or raise pekko.framesize while you do."}},
		References: []string{"https://nightlies.apache.org/flink/flink-docs-stable/docs/deployment/config/#pekko-framesize"}},
	{ID: FindingOperatorDropped, Title: "Operator state no longer in the checkpoint", Severity: findings.Info,
		Cause:      "An operator had state in the old checkpoint and none in the new one: the job dropped it, restored with --allowNonRestoredState, or the operator's uid changed.",
		Remedies:   []findings.Remedy{{Text: "Nothing to do if the operator was removed on purpose; otherwise restore its uid so its state is read again."}},
		References: []string{"https://nightlies.apache.org/flink/flink-docs-stable/docs/ops/state/savepoints/#assigning-operator-ids"}},
}

func init() { findings.RegisterDoc(rules...) }
