package findings

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/rescale"
)

// pinnedOperator is PF112.
var pinnedOperator = RuleMeta{
	ID:       "PF112",
	Title:    "Pinned operator (max parallelism 1) asked to change parallelism",
	Severity: Error,
	Grading: "WARNING when only the catalog, not the checkpoint, pins the operator (the checkpoint stores a max parallelism above 1). " +
		"INFO when only a job-wide parallelism would change it: Flink never applies that to an operator whose max parallelism is 1, which stays at 1.",
	Cause: "Some operators are built with parallelism 1 and max parallelism 1 (the table sink's compact-coordinator " +
		"and partition committer, the Iceberg committer). Flink refuses any other parallelism; a global parallelism " +
		"change or an autoscaler override must exclude their vertex.",
	Remedies: []Remedy{{Text: "Keep this vertex at parallelism 1: exclude it from global parallelism changes and autoscaler overrides (it is pinned by the connector, not by the job)."}},
}

func init() {
	register(&Rule{meta: &pinnedOperator, check: checkPinnedOperator, safeAt: pinnedOperatorSafeAt})
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

// checkPinnedOperator (PF112): an operator that can only run at parallelism 1 (stored max
// parallelism 1, or a catalog PINNED operator) is asked to run at another parallelism.
func checkPinnedOperator(c *Context) []Finding {
	var out []Finding
	for _, v := range c.Result.Vertices {
		c.stop.Check()
		op, ok := pinned(c, v)
		if ok && v.JobParallelismNotApplied > 0 {
			out = append(out, pinnedOperatorKeptAtOne(c, v, op))
			continue
		}
		if !ok || v.NewParallelism == 1 {
			continue
		}
		e := c.Entry(op)
		f := c.finding(&pinnedOperator, Error, op)
		f.AffectedSubtasks = rangeFrom(1, int32(v.NewParallelism))
		if op.CheckpointMaxParallelism == 1 {
			f.Message = fmt.Sprintf("%s runs at parallelism 1 with max parallelism 1 and cannot be rescaled; the plan asks for parallelism %d.",
				upperFirst(opLabel(op, e)), v.NewParallelism)
			for _, fl := range c.Result.Failures {
				if fl.VertexID == v.ID && (fl.Kind == rescale.FailureMaxParallelismBelowParallelism || fl.Kind == rescale.FailureParallelismAboveMaxParallelism) {
					f.Message += fmt.Sprintf(" Flink refuses the restore: %s: %s", fl.Exception, fl.Message)
					break
				}
			}
		} else {
			// Only the catalog pins it: say what the checkpoint shows and what the catalog
			// claims, not what several instances would do (nothing here shows that).
			f.Severity = Warning
			f.Message = fmt.Sprintf("The catalog lists %s as a single-instance operator (its connector builds it at parallelism 1 with max parallelism 1). This checkpoint stores it at parallelism %d with max parallelism %d, so Flink accepts the planned parallelism %d; the catalog expects one instance.",
				opLabel(op, e), op.OldParallelism, op.CheckpointMaxParallelism, v.NewParallelism)
		}
		f.Remediation = pinnedOperator.remedy("")
		if e != nil && e.Remediation != "" {
			f.Remediation = e.Remediation
			f.References = append(f.References, e.References...)
		}
		out = append(out, f)
	}
	return out
}

// pinnedOperatorKeptAtOne is the INFO for a pinned vertex that a job-wide parallelism leaves at 1.
func pinnedOperatorKeptAtOne(c *Context, v *rescale.VertexAssignment, op *rescale.OperatorAssignment) Finding {
	f := c.finding(&pinnedOperator, Info, op)
	f.Title = "Pinned operator (max parallelism 1) stays at 1 under a job-wide parallelism"
	f.Message = fmt.Sprintf("%s has max parallelism 1, so Flink keeps it at parallelism 1: the job-wide parallelism %d does not apply to it.",
		upperFirst(opLabel(op, c.Entry(op))), v.JobParallelismNotApplied)
	f.Remediation = "Nothing to do. Naming this operator in a per-vertex parallelism (--set, pipeline.jobvertex-parallelism-overrides) would fail the restore."
	return f
}

func pinnedOperatorSafeAt(c *Context, v *rescale.VertexAssignment, p int) (bool, bool) {
	if op, ok := pinned(c, v); ok && (op.CheckpointMaxParallelism == 1 || c.Options.failLevel() <= Warning) {
		return p == 1, true
	}
	return true, true
}
