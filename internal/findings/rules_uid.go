package findings

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// missingUID is PF180.
var missingUID = RuleMeta{
	ID:       "PF180",
	Title:    "Stateful operator without a uid",
	Severity: Info,
	Cause: "Without a uid Flink derives the operator ID from the graph position and the chain. A parallelism " +
		"change can break or build chains and so change the ID: the state is then not mapped (restore fails) or " +
		"silently dropped with --allowNonRestoredState. FLIP-411 proposes chaining-agnostic IDs. Decided from " +
		"format 5+ files, which store the uid.",
	Remedies: []Remedy{{Text: "Set uid(...) on every stateful operator (for SQL, use compiled plans / table.exec.uid.generation) and take a new savepoint; if the ID must stay, setUidHash to the current ID."}},
	References: []string{"https://nightlies.apache.org/flink/flink-docs-stable/docs/ops/state/savepoints/#assigning-operator-ids",
		"https://cwiki.apache.org/confluence/display/FLINK/FLIP-411"},
}

func init() { register(&Rule{meta: &missingUID, check: checkMissingUID}) }

// checkMissingUID (PF180): a stateful operator without a uid (format 5+ stores an empty uid).
func checkMissingUID(c *Context) []Finding {
	if c.Layout == nil || c.Layout.Version < 5 {
		return nil
	}
	var out []Finding
	c.operators(func(v *rescale.VertexAssignment, op *rescale.OperatorAssignment) {
		if op.UID != "" || !stateful(op.Layout) {
			return
		}
		f := c.finding(&missingUID, Info, op)
		f.Message = fmt.Sprintf("%s has state but no uid; its ID is generated from the job graph and changes if chaining changes (for example when the parallelism of a neighbour changes).", upperFirst(opLabel(op, c.Entry(op))))
		f.Remediation = missingUID.remedy("")
		f.References = missingUID.refs()
		out = append(out, f)
	})
	return out
}

func stateful(op *checkpoint.OperatorLayout) bool {
	if op.CoordinatorState != nil && op.CoordinatorState.Size > 0 {
		return true
	}
	for i := range op.Subtasks {
		st := &op.Subtasks[i]
		if st.ManagedKeyedState != nil || st.RawKeyedState != nil || len(st.InputChannels()) > 0 || len(st.OutputChannels()) > 0 {
			return true
		}
		for range st.OperatorStates() {
			return true
		}
	}
	return false
}
