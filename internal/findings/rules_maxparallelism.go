package findings

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/rescale"
)

// maxParallelism is PF110.
var maxParallelism = RuleMeta{
	ID:       "PF110",
	Title:    "Parallelism above the max parallelism",
	Severity: Error,
	Cause: "Flink refuses a vertex whose parallelism exceeds its max parallelism (JobException in " +
		"ExecutionJobVertex) and refuses to restore state whose stored max parallelism is lower than the new " +
		"parallelism (StateAssignmentOperation.checkParallelismPreconditions). The stored max parallelism is " +
		"fixed by the key groups of the checkpoint.",
	Remedies: []Remedy{{Text: "Use a parallelism of at most %d for this vertex. The stored max parallelism cannot be raised for state in this checkpoint: to go higher, take a savepoint and rewrite it at a larger max parallelism with the State Processor API (keyed state is re-split into the new key groups).",
		Args: []string{"the vertex's max parallelism"}}},
	References: []string{"https://nightlies.apache.org/flink/flink-docs-stable/docs/ops/production_ready/#set-an-explicit-max-parallelism"},
}

// maxParallelismChanged is PF111.
var maxParallelismChanged = RuleMeta{
	ID:       "PF111",
	Title:    "Max parallelism changed against the checkpoint",
	Severity: Error,
	Cause: "A vertex whose max parallelism is configured (setMaxParallelism, pipeline.max-parallelism) must use " +
		"the max parallelism stored in the checkpoint; only an auto-derived value adopts the stored one. " +
		"Otherwise Checkpoints.loadAndValidateCheckpoint or checkParallelismPreconditions refuse the restore. " +
		"No parallelism avoids it.",
	Remedies: []Remedy{{Text: "Configure the vertex's max parallelism back to the stored value %d (or leave it unconfigured so that Flink adopts it). Changing max parallelism requires rewriting the savepoint with the State Processor API.",
		Args: []string{"stored max parallelism"}}},
	References: []string{"https://nightlies.apache.org/flink/flink-docs-stable/docs/ops/production_ready/#set-an-explicit-max-parallelism"},
}

func init() {
	register(&Rule{meta: &maxParallelism, check: checkMaxParallelism, safeAt: maxParallelismSafeAt})
	register(&Rule{meta: &maxParallelismChanged, check: checkMaxParallelismChanged, safeAt: maxParallelismChangedSafeAt, unsafeEverywhere: maxParallelismChangedEverywhere})
}

// checkMaxParallelism (PF110): the new parallelism exceeds the max parallelism (the stored one,
// or the new job's), Flink §2.4 rows 1 and 5.
func checkMaxParallelism(c *Context) []Finding {
	return failureFindings(c, &maxParallelism, []rescale.FailureKind{rescale.FailureParallelismAboveMaxParallelism, rescale.FailureMaxParallelismBelowParallelism},
		func(v *rescale.VertexAssignment, _ *rescale.OperatorAssignment) bool {
			_, p := pinned(c, v)
			return p // PF112 reports pinned operators
		},
		func(f *Finding, fl rescale.Failure, v *rescale.VertexAssignment, op *rescale.OperatorAssignment) {
			maxP := 0
			if v != nil {
				maxP = v.MaxParallelism
				if op != nil && op.CheckpointMaxParallelism > 0 && fl.Kind == rescale.FailureMaxParallelismBelowParallelism {
					maxP = op.CheckpointMaxParallelism
				}
				f.AffectedSubtasks = rangeFrom(int32(maxP), int32(v.NewParallelism))
			}
			f.Message = fmt.Sprintf("Flink refuses the restore: %s: %s", fl.Exception, fl.Message)
			f.Remediation = maxParallelism.remedy("", maxP)
			f.References = maxParallelism.refs()
		})
}

func maxParallelismSafeAt(c *Context, v *rescale.VertexAssignment, p int) (bool, bool) {
	limit := v.MaxParallelism
	for _, op := range v.Operators {
		if op.CheckpointMaxParallelism > 0 && op.CheckpointMaxParallelism < limit {
			limit = op.CheckpointMaxParallelism
		}
	}
	if v.MaxParallelismConfigured && v.NewJobMaxParallelism < limit {
		limit = v.NewJobMaxParallelism
	}
	return p <= limit, true
}

// checkMaxParallelismChanged (PF111): the new job configures a max parallelism different from
// the stored one (§2.4 rows 2 and 6). Independent of the parallelism: no safe value exists.
func checkMaxParallelismChanged(c *Context) []Finding {
	return failureFindings(c, &maxParallelismChanged, []rescale.FailureKind{rescale.FailureMaxParallelismMismatch, rescale.FailureMaxParallelismChanged}, nil,
		func(f *Finding, fl rescale.Failure, v *rescale.VertexAssignment, op *rescale.OperatorAssignment) {
			f.Message = fmt.Sprintf("Flink refuses the restore: %s: %s", fl.Exception, fl.Message)
			stored := 0
			if op != nil {
				stored = op.CheckpointMaxParallelism
			}
			f.Remediation = maxParallelismChanged.remedy("", stored)
			f.References = maxParallelismChanged.refs()
		})
}

func maxParallelismChangedSafeAt(c *Context, v *rescale.VertexAssignment, p int) (bool, bool) {
	for _, fl := range vertexFailures(c, v) { // search.go: indexed once per check
		if fl.Kind == rescale.FailureMaxParallelismMismatch || fl.Kind == rescale.FailureMaxParallelismChanged {
			return false, true // parallelism does not help
		}
	}
	return true, true
}
