package findings

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// failureFindings turns the simulator's precondition failures of the given kinds into one
// finding per (kind, vertex), skipping failures for which skip returns true.
func failureFindings(c *Context, r Rule, kinds []rescale.FailureKind, skip func(v *rescale.VertexAssignment, op *rescale.OperatorAssignment) bool,
	build func(f *Finding, fl rescale.Failure, v *rescale.VertexAssignment, op *rescale.OperatorAssignment)) []Finding {
	var out []Finding
	seen := map[string]bool{}
	for _, fl := range c.Result.Failures {
		match := false
		for _, k := range kinds {
			match = match || fl.Kind == k
		}
		if !match {
			continue
		}
		key := fmt.Sprintf("%d/%s", fl.Kind, fl.VertexID)
		if seen[key] {
			continue
		}
		var v *rescale.VertexAssignment
		if fl.VertexID != (checkpoint.OperatorID{}) {
			v = c.Result.Vertex(fl.VertexID)
		}
		op := failureOperator(c, fl, v)
		if skip != nil && skip(v, op) {
			continue
		}
		seen[key] = true
		f := c.finding(r, r.Severity(), op)
		if op == nil && v != nil {
			f.VertexID = v.ID.String()
		}
		build(&f, fl, v, op)
		out = append(out, f)
	}
	return out
}

func failureOperator(c *Context, fl rescale.Failure, v *rescale.VertexAssignment) *rescale.OperatorAssignment {
	if fl.OperatorID != (checkpoint.OperatorID{}) {
		if op := c.Result.Operator(fl.OperatorID); op != nil {
			return op
		}
	}
	if v != nil {
		for _, op := range v.Operators {
			if op.Layout != nil {
				return op
			}
		}
		if len(v.Operators) > 0 {
			return v.Operators[0]
		}
	}
	return nil
}

// pinned reports whether the vertex holds an operator that can only run at parallelism 1: a
// stored max parallelism of 1, or a catalog PINNED operator.
func pinned(c *Context, v *rescale.VertexAssignment) (*rescale.OperatorAssignment, bool) {
	if v == nil {
		return nil, false
	}
	for _, op := range v.Operators {
		if op.Layout == nil {
			continue
		}
		if op.CheckpointMaxParallelism == 1 {
			return op, true
		}
		if e := c.Entry(op); e != nil && e.Assumption == Pinned {
			return op, true
		}
	}
	return nil, false
}

// MaxParallelismRule (PF110): the new parallelism exceeds the max parallelism (the stored one,
// or the new job's), Flink §2.4 rows 1 and 5.
type MaxParallelismRule struct{}

func (MaxParallelismRule) ID() string         { return "PF110" }
func (MaxParallelismRule) Title() string      { return "Parallelism above the max parallelism" }
func (MaxParallelismRule) Severity() Severity { return Error }
func (MaxParallelismRule) Explanation() string {
	return "Flink refuses a vertex whose parallelism exceeds its max parallelism (JobException in " +
		"ExecutionJobVertex) and refuses to restore state whose stored max parallelism is lower than the new " +
		"parallelism (StateAssignmentOperation.checkParallelismPreconditions). The stored max parallelism is " +
		"fixed by the key groups of the checkpoint."
}

func (r MaxParallelismRule) Check(c *Context) []Finding {
	return failureFindings(c, r, []rescale.FailureKind{rescale.FailureParallelismAboveMaxParallelism, rescale.FailureMaxParallelismBelowParallelism},
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
			f.Remediation = fmt.Sprintf("Use a parallelism of at most %d for this vertex. The stored max parallelism cannot be raised for state in this checkpoint: to go higher, take a savepoint and rewrite it at a larger max parallelism with the State Processor API (keyed state is re-split into the new key groups).", maxP)
			f.References = []string{"https://nightlies.apache.org/flink/flink-docs-stable/docs/ops/production_ready/#set-an-explicit-max-parallelism"}
		})
}

func (MaxParallelismRule) SafeAt(c *Context, v *rescale.VertexAssignment, p int) (bool, bool) {
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

// MaxParallelismChangedRule (PF111): the new job configures a max parallelism different from
// the stored one (§2.4 rows 2 and 6). Independent of the parallelism: no safe value exists.
type MaxParallelismChangedRule struct{}

func (MaxParallelismChangedRule) ID() string { return "PF111" }
func (MaxParallelismChangedRule) Title() string {
	return "Max parallelism changed against the checkpoint"
}
func (MaxParallelismChangedRule) Severity() Severity { return Error }
func (MaxParallelismChangedRule) Explanation() string {
	return "A vertex whose max parallelism is configured (setMaxParallelism, pipeline.max-parallelism) must use " +
		"the max parallelism stored in the checkpoint; only an auto-derived value adopts the stored one. " +
		"Otherwise Checkpoints.loadAndValidateCheckpoint or checkParallelismPreconditions refuse the restore."
}

func (r MaxParallelismChangedRule) Check(c *Context) []Finding {
	return failureFindings(c, r, []rescale.FailureKind{rescale.FailureMaxParallelismMismatch, rescale.FailureMaxParallelismChanged}, nil,
		func(f *Finding, fl rescale.Failure, v *rescale.VertexAssignment, op *rescale.OperatorAssignment) {
			f.Message = fmt.Sprintf("Flink refuses the restore: %s: %s", fl.Exception, fl.Message)
			stored := 0
			if op != nil {
				stored = op.CheckpointMaxParallelism
			}
			f.Remediation = fmt.Sprintf("Configure the vertex's max parallelism back to the stored value %d (or leave it unconfigured so that Flink adopts it). Changing max parallelism requires rewriting the savepoint with the State Processor API.", stored)
			f.References = []string{"https://nightlies.apache.org/flink/flink-docs-stable/docs/ops/production_ready/#set-an-explicit-max-parallelism"}
		})
}

func (MaxParallelismChangedRule) SafeAt(c *Context, v *rescale.VertexAssignment, p int) (bool, bool) {
	for _, fl := range vertexFailures(c, v) { // search.go: indexed once per check
		if fl.Kind == rescale.FailureMaxParallelismMismatch || fl.Kind == rescale.FailureMaxParallelismChanged {
			return false, true // parallelism does not help
		}
	}
	return true, true
}

// PinnedOperatorRule (PF112): an operator that can only run at parallelism 1 (stored max
// parallelism 1, or a catalog PINNED operator) is asked to run at another parallelism.
type PinnedOperatorRule struct{}

func (PinnedOperatorRule) ID() string { return "PF112" }
func (PinnedOperatorRule) Title() string {
	return "Pinned operator (max parallelism 1) asked to change parallelism"
}
func (PinnedOperatorRule) Severity() Severity { return Error }
func (PinnedOperatorRule) Explanation() string {
	return "Some operators are built with parallelism 1 and max parallelism 1 (the table sink's compact-coordinator " +
		"and partition committer, the Iceberg committer). Flink refuses any other parallelism; a global parallelism " +
		"change or an autoscaler override must exclude their vertex."
}

func (r PinnedOperatorRule) Check(c *Context) []Finding {
	var out []Finding
	for _, v := range c.Result.Vertices {
		c.stop.Check()
		op, ok := pinned(c, v)
		if !ok || v.NewParallelism == 1 {
			continue
		}
		e := c.Entry(op)
		f := c.finding(r, Error, op)
		f.AffectedSubtasks = rangeFrom(1, int32(v.NewParallelism))
		if op.CheckpointMaxParallelism == 1 {
			f.Message = fmt.Sprintf("%s runs at parallelism 1 with max parallelism 1 and cannot be rescaled; the plan asks for parallelism %d.",
				opLabel(op, e), v.NewParallelism)
			for _, fl := range c.Result.Failures {
				if fl.VertexID == v.ID && (fl.Kind == rescale.FailureMaxParallelismBelowParallelism || fl.Kind == rescale.FailureParallelismAboveMaxParallelism) {
					f.Message += fmt.Sprintf(" Flink refuses the restore: %s: %s", fl.Exception, fl.Message)
					break
				}
			}
		} else {
			// The catalog says the implementation is built for parallelism 1, but this checkpoint
			// stores another max parallelism: Flink accepts the plan, the operator's global view
			// (one committer, one coordinator) does not.
			f.Severity = Warning
			f.Message = fmt.Sprintf("%s is built to run at parallelism 1 (a single global instance), but the plan asks for parallelism %d; the checkpoint stores max parallelism %d, so Flink accepts the restore and several instances act as the single one.",
				opLabel(op, e), v.NewParallelism, op.CheckpointMaxParallelism)
		}
		f.Remediation = "Keep this vertex at parallelism 1: exclude it from global parallelism changes and autoscaler overrides (it is pinned by the connector, not by the job)."
		if e != nil && e.Remediation != "" {
			f.Remediation = e.Remediation
			f.References = append(f.References, e.References...)
		}
		out = append(out, f)
	}
	return out
}

func (PinnedOperatorRule) SafeAt(c *Context, v *rescale.VertexAssignment, p int) (bool, bool) {
	if op, ok := pinned(c, v); ok && (op.CheckpointMaxParallelism == 1 || c.Options.failLevel() <= Warning) {
		return p == 1, true
	}
	return true, true
}

// rangeFrom returns from, from+1, ..., to-1.
func rangeFrom(from, to int32) []int32 {
	var out []int32
	for i := max(from, 0); i < to; i++ {
		out = append(out, i)
	}
	return out
}
