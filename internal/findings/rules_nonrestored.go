package findings

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// nonRestoredState is PF160.
var nonRestoredState = RuleMeta{
	ID:       "PF160",
	Title:    "Checkpoint state without an operator in the new job",
	Severity: Error,
	Grading:  "WARNING with --allowNonRestoredState (the state is dropped), INFO when the operator has no state.",
	Cause: "When the plan lists the new job's operators, checkpoint operators that match none of them are refused " +
		"(\"Cannot map checkpoint/savepoint state for operator ...\" on the savepoint path, \"There is no operator " +
		"for the state ...\" otherwise) unless --allowNonRestoredState is set, which drops their state. The HA " +
		"failover path never allows non-restored state.",
	Remedies: []Remedy{
		{When: "refused", Text: "Keep the operator's uid in the new job, or restore with --allowNonRestoredState to drop its state (data loss for that operator; the HA failover path never allows it)."},
		{When: "dropped", Text: "Make sure dropping this state is intended (e.g. a replaced source that restarts from committed offsets)."},
		{When: "empty", Text: "None needed: the operator had no state."},
	},
	References: []string{"https://nightlies.apache.org/flink/flink-docs-stable/docs/ops/state/savepoints/#allowing-non-restored-state"},
}

func init() { register(&Rule{meta: &nonRestoredState, check: checkNonRestoredState}) }

// checkNonRestoredState (PF160): checkpoint operators that the new job does not have.
func checkNonRestoredState(c *Context) []Finding {
	var out []Finding
	var byID map[checkpoint.OperatorID]*checkpoint.OperatorLayout // built once: NonRestored can hold every operator
	for _, nr := range c.Result.NonRestored {
		c.stop.Check()
		sev := Error
		switch {
		case nr.Dropped && nr.HasState:
			sev = Warning
		case nr.Dropped:
			sev = Info
		}
		f := c.finding(&nonRestoredState, sev, nil)
		f.OperatorID, f.OperatorName, f.OperatorUID = nr.ID.String(), nr.Name, nr.UID
		label := "operator " + nr.ID.String()
		if nr.UID != "" {
			label += " (uid " + nr.UID + ")"
		}
		if byID == nil {
			byID = make(map[checkpoint.OperatorID]*checkpoint.OperatorLayout, len(c.Layout.Operators))
			for i := range c.Layout.Operators {
				c.stop.Check()
				if op := &c.Layout.Operators[i]; byID[op.ID] == nil {
					byID[op.ID] = op
				}
			}
		}
		if op := byID[nr.ID]; op != nil {
			if e := Identify(op, c.Catalog); e != nil {
				f.CatalogEntry = e.ID
				if f.OperatorName == "" {
					f.OperatorName = e.Name
				}
			}
		}
		switch sev {
		case Error:
			f.Message = fmt.Sprintf("The new job has no operator for the state of %s.", label)
			for _, fl := range c.Result.Failures {
				if fl.OperatorID == nr.ID && (fl.Kind == rescale.FailureOperatorNotInNewProgram || fl.Kind == rescale.FailureNoOperatorForState) {
					f.Message += fmt.Sprintf(" Flink refuses the restore: %s: %s", fl.Exception, fl.Message)
					break
				}
			}
			f.Remediation = nonRestoredState.remedy("refused")
		case Warning:
			f.Message = fmt.Sprintf("The new job has no operator for the state of %s; with --allowNonRestoredState Flink logs \"Skipping savepoint state for operator %s.\" and the state is lost.", label, nr.ID)
			f.Remediation = nonRestoredState.remedy("dropped")
		default:
			f.Message = fmt.Sprintf("%s has no state and no operator in the new job; Flink skips it (\"Skipping empty savepoint state for operator %s.\").", upperFirst(label), nr.ID)
		}
		f.References = nonRestoredState.refs()
		out = append(out, f)
	}
	return out
}
