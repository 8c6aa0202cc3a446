package findings

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
	"github.com/flinkpreflight/preflight/internal/units"
)

// unknownEmptySplit is PF170.
var unknownEmptySplit = RuleMeta{
	ID:       "PF170",
	Title:    "Operator of unknown tolerance restored with empty SPLIT_DISTRIBUTE state on some subtasks",
	Severity: Info,
	Cause: "New subtasks that receive no element of a SPLIT_DISTRIBUTE state still run the restore branch with an " +
		"empty list. Operators that assume an element fail (FLINK-31689, FLINK-40043). For operators the catalog " +
		"does not know Preflight cannot tell without the job's bytecode (--job-jar) or a catalog entry with the ONE-UNGUARDED label.",
	Remedies:   []Remedy{{Text: "Pass the job jar with --job-jar (API: a catalog written by preflight analyze --catalog-out) so that Preflight reads what the operator's restore code does with the list; or, if the operator needs an element on restore, describe it in a user catalog (state label ONE-UNGUARDED) so that Preflight denies such plans."}},
	References: []string{"FLINK-31689", "FLINK-40043"},
}

func init() { register(&Rule{meta: &unknownEmptySplit, check: checkUnknownOperatorEmptySplit}) }

// checkUnknownOperatorEmptySplit (PF170): an operator the catalog does not know gets no element
// of a SPLIT_DISTRIBUTE state on some new subtasks.
//
// It reports once per operator and cause (the catalog's consequence), naming the first few
// states and counting the rest; the finding's new subtasks are those any of its states leaves
// empty.
func checkUnknownOperatorEmptySplit(c *Context) []Finding {
	var out []Finding
	c.operators(func(v *rescale.VertexAssignment, op *rescale.OperatorAssignment) {
		e := c.Entry(op)
		if !v.Rescaled() || op.Path != rescale.PathRescale {
			return
		}
		var groups stateGroups
		s := new(rescale.StateDistribution) // one at a time (OperatorAssignment.StateInto)
		for k := range op.NumStates() {
			c.stop.Check()
			op.StateInto(k, s)
			if s.Mode != checkpoint.SplitDistribute || s.Elements == 0 || s.Summary.EmptySubtasks == 0 {
				continue
			}
			consequence, ask := "", e == nil
			if e != nil {
				for _, r := range e.StateRules(s.Name) {
					ask = ask || r.InfoWhenEmpty
					if r.InfoWhenEmpty && r.Consequence != "" {
						consequence = " " + r.Consequence
					}
				}
			}
			if !ask {
				continue
			}
			affected := subtasksOf(c, op, s, false, func(sh rescale.Share, _ int) bool { return sh.Elements == 0 })
			if len(affected) == 0 {
				continue
			}
			groups.add(consequence, s.Name, s.Elements, affected)
		}
		for _, g := range groups.list {
			out = append(out, unknownOperatorEmptySplitFinding(c, v, op, e, g))
		}
	})
	return out
}

// unknownOperatorEmptySplitFinding is PF170's finding for one group of states.
func unknownOperatorEmptySplitFinding(c *Context, v *rescale.VertexAssignment, op *rescale.OperatorAssignment, e *CatalogEntry, g *stateGroup) Finding {
	f := c.finding(&unknownEmptySplit, Info, op)
	g.setStates(&f)
	f.AffectedSubtasks = g.affected
	consequence, n := g.key, len(g.affected)
	if len(g.names) == 1 {
		f.Message = fmt.Sprintf("At parallelism %d, %s of %s %s no element of `%s` (SPLIT_DISTRIBUTE, %s in the checkpoint). %s still restored, with an empty list; check that the operator tolerates that.%s",
			v.NewParallelism, subtasksText(g.affected), opLabel(op, e), verbFor(n, "receives", "receive"), g.names[0], units.Plural(g.elements, "element"),
			verbFor(n, "It is", "They are"), consequence)
	} else {
		f.Message = fmt.Sprintf("At parallelism %d, %s of %s %s no element of some of its %s SPLIT_DISTRIBUTE states: %s (%s in the checkpoint) each leave some of them empty. %s still restored, with empty lists; check that the operator tolerates that.%s",
			v.NewParallelism, subtasksText(g.affected), opLabel(op, e), verbFor(n, "receives", "receive"), units.Thousands(int64(len(g.names))), statesText(g.names),
			units.Thousands(g.elements)+" elements", verbFor(n, "It is", "They are"), consequence)
	}
	f.Remediation = unknownEmptySplit.remedy("")
	f.References = unknownEmptySplit.refs()
	return f
}
