package findings

import (
	"fmt"
	"strings"

	"github.com/flinkpreflight/preflight/internal/rescale"
)

// hazard is PF105.
var hazard = RuleMeta{
	ID:       "PF105",
	Title:    "Known rescale hazard of the operator",
	Severity: Error,
	Grading:  "Each catalog hazard sets its own severity.",
	Cause: "Some operators misbehave when their parallelism changes for reasons the state layout does not " +
		"reveal: sink-v2 committers that wait forever for summaries of new subtasks (FLINK-37747), the legacy " +
		"Kafka producer scaled down by more than its safe factor before a first checkpoint. The catalog lists " +
		"them per implementation with the direction of the change and the affected versions (see the catalog " +
		"bugs below).",
	Remedies: []Remedy{{Text: "The catalog hazard's remediation."}},
}

func init() { register(&Rule{meta: &hazard, check: checkHazard, safeAt: hazardSafeAt}) }

// checkHazard (PF105): the catalog knows a rescale problem of the operator's implementation
// (a committer stall, lingering transactions) that the element counts do not show.
func checkHazard(c *Context) []Finding {
	var out []Finding
	c.operators(func(v *rescale.VertexAssignment, op *rescale.OperatorAssignment) {
		e := c.Entry(op)
		if e == nil || !v.Rescaled() || op.Path == rescale.PathFinished {
			return
		}
		oldP, newP := float64(v.OldParallelism), float64(v.NewParallelism)
		for _, h := range e.Hazards {
			up := newP > oldP
			switch {
			case h.When == "scale-up" && !up, h.When == "scale-down" && up:
				continue
			case h.MinFactor > 1 && up && newP/oldP < h.MinFactor, h.MinFactor > 1 && !up && oldP/newP < h.MinFactor:
				continue
			}
			applies, note := c.Catalog.Bug(h.Bug).Applies(c.Options)
			if !applies {
				continue
			}
			sev, _ := ParseSeverity(h.Severity)
			f := c.finding(&hazard, sev, op)
			f.Message = strings.TrimSpace(fmt.Sprintf("%s changes parallelism %d -> %d. %s %s", upperFirst(opLabel(op, e)), v.OldParallelism, v.NewParallelism, h.Message, note))
			f.Remediation = h.Remediation
			f.References = append([]string(nil), h.References...)
			if b := c.Catalog.Bug(h.Bug); b != nil {
				f.References = dedupe(append(f.References, b.References...))
			}
			out = append(out, f)
		}
	})
	return out
}

func hazardSafeAt(c *Context, v *rescale.VertexAssignment, p int) (bool, bool) {
	for _, op := range v.Operators {
		e := c.Entry(op)
		if e == nil || op.Layout == nil {
			continue
		}
		for _, h := range e.Hazards {
			if sev, _ := ParseSeverity(h.Severity); sev < c.Options.failLevel() {
				continue
			}
			if applies, _ := c.Catalog.Bug(h.Bug).Applies(c.Options); !applies {
				continue
			}
			oldP, newP := float64(v.OldParallelism), float64(p)
			if p == v.OldParallelism {
				continue
			}
			up := newP > oldP
			if (h.When == "scale-up" && !up) || (h.When == "scale-down" && up) {
				continue
			}
			if h.MinFactor > 1 && ((up && newP/oldP < h.MinFactor) || (!up && oldP/newP < h.MinFactor)) {
				continue
			}
			return false, true
		}
	}
	return true, true
}
