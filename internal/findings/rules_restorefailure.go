package findings

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// restoreFailure is PF190.
var restoreFailure = RuleMeta{
	ID:       "PF190",
	Title:    "Flink refuses the restore",
	Severity: Error,
	Cause: "Precondition failures of Flink's state assignment not covered by a more specific rule: a vertex with " +
		"mixed finished and running operators, or channel state on an operator that is no longer the chain's " +
		"input or output operator.",
	Remedies: []Remedy{{Text: "Restore with the job graph the checkpoint was taken with (same chaining), or take a savepoint after all operators of the vertex finished or none did."}},
}

func init() { register(&Rule{meta: &restoreFailure, check: checkRestoreFailure}) }

// specificFailures are the failure kinds that a more specific rule reports.
var specificFailures = map[rescale.FailureKind]bool{
	rescale.FailureParallelismAboveMaxParallelism: true, rescale.FailureMaxParallelismBelowParallelism: true,
	rescale.FailureMaxParallelismMismatch: true, rescale.FailureMaxParallelismChanged: true,
	rescale.FailureOperatorNotInNewProgram: true, rescale.FailureNoOperatorForState: true,
	rescale.FailureUnsupportedChannelRescale: true,
}

// checkRestoreFailure (PF190): any other exception the simulator predicts (mixed finished
// state, channel state on a chained operator).
func checkRestoreFailure(c *Context) []Finding {
	var out []Finding
	for _, fl := range c.Result.Failures {
		if specificFailures[fl.Kind] {
			continue
		}
		var v *rescale.VertexAssignment
		if fl.VertexID != (checkpoint.OperatorID{}) {
			v = c.Result.Vertex(fl.VertexID)
		}
		op := failureOperator(c, fl, v)
		f := c.finding(&restoreFailure, Error, op)
		if v != nil {
			f.VertexID = v.ID.String()
		}
		f.Message = fmt.Sprintf("Flink refuses the restore (%s): %s: %s", fl.Kind, fl.Exception, fl.Message)
		f.Remediation = restoreFailure.remedy("")
		out = append(out, f)
	}
	return out
}
