package findings

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// unknownEmptySplit is PF170.
var unknownEmptySplit = RuleMeta{
	ID:       "PF170",
	Title:    "Operator of unknown tolerance restored with empty SPLIT_DISTRIBUTE state on some subtasks",
	Severity: Info,
	Cause: "New subtasks that receive no element of a SPLIT_DISTRIBUTE state still run the restore branch with an " +
		"empty list. Operators that assume an element fail (FLINK-31689, FLINK-40043). For operators the catalog " +
		"does not know Preflight cannot tell; add a catalog entry with the ONE-UNGUARDED label to turn this into an error.",
	Remedies:   []Remedy{{Text: "If the operator needs an element on restore, describe it in a user catalog (state label ONE-UNGUARDED) so that Preflight denies such plans; otherwise nothing to do."}},
	References: []string{"FLINK-31689", "FLINK-40043"},
}

func init() { register(UnknownOperatorEmptySplitRule{}) }

// UnknownOperatorEmptySplitRule (PF170): an operator the catalog does not know gets no element
// of a SPLIT_DISTRIBUTE state on some new subtasks.
type UnknownOperatorEmptySplitRule struct{}

// Meta returns PF170's facts.
func (UnknownOperatorEmptySplitRule) Meta() *RuleMeta { return &unknownEmptySplit }

func (r UnknownOperatorEmptySplitRule) Check(c *Context) []Finding {
	var out []Finding
	c.operators(func(v *rescale.VertexAssignment, op *rescale.OperatorAssignment) {
		e := c.Entry(op)
		if !v.Rescaled() || op.Path != rescale.PathRescale {
			return
		}
		for k, s := range op.States {
			c.stop.Check()
			if s.Mode != checkpoint.SplitDistribute || s.Elements == 0 || s.Summary.EmptySubtasks == 0 {
				continue
			}
			var consequence string
			if e != nil {
				ask := false
				for _, r := range e.StateRules(s.Name) {
					ask = ask || r.InfoWhenEmpty
					if r.InfoWhenEmpty && r.Consequence != "" {
						consequence = " " + r.Consequence
					}
				}
				if !ask {
					continue
				}
			}
			affected := subtasksWhere(c, op, k, func(sh rescale.Share, _ int) bool { return sh.Elements == 0 })
			if len(affected) == 0 {
				continue
			}
			f := c.finding(r, Info, op)
			f.StateName = s.Name
			f.AffectedSubtasks = affected
			f.Message = fmt.Sprintf("At parallelism %d, %s of %s %s no element of `%s` (SPLIT_DISTRIBUTE, %s in the checkpoint). %s still restored, with an empty list; check that the operator tolerates that.%s",
				v.NewParallelism, subtasksText(affected), opLabel(op, e), verbFor(len(affected), "receives", "receive"), s.Name, plural(s.Elements, "element"),
				verbFor(len(affected), "It is", "They are"), consequence)
			f.Remediation = unknownEmptySplit.remedy("")
			f.References = unknownEmptySplit.refs()
			out = append(out, f)
		}
	})
	return out
}
