package findings

import (
	"fmt"
	"strings"

	"github.com/flinkpreflight/preflight/internal/rescale"
)

// nonHeadKeyed is PF141.
var nonHeadKeyed = RuleMeta{
	ID:       "PF141",
	Title:    "Keyed state of a chained non-head operator is dropped by the restoring Flink",
	Severity: Error,
	Cause: "Flink's state assignment used to hand keyed state only to the head operator of a chain, an optimization from " +
		"when keyed state could only follow a keyBy. An operator chained behind the head can hold keyed state " +
		"(DataStreamUtils.reinterpretAsKeyedStream, or a keyed operator chained after a forward edge); on the " +
		"affected versions its keyed state is silently not restored, at any parallelism (FLINK-10809). Decided from " +
		"the checkpoint's keyed state and the plan's chains (head first).",
	Remedies: []Remedy{{Text: "Restore on Flink 1.6.3, 1.7.0 or later (no 1.5 release has the fix), or start a new chain at the keyed operator " +
		"(startNewChain() or disableChaining()) so that it is the head of its vertex."}},
	References: []string{"https://github.com/apache/flink/pull/7048", "https://flink.apache.org/news/2018/12/22/release-1.6.3.html"},
	Bugs: []Bug{{ID: "FLINK-10809", Component: "flink",
		Affected: []VersionRange{{Fixed: "1.6.3"}},
		FixedIn:  "1.6.3, 1.7.0 (apache/flink#7048, Nov 2018; listed in the 1.6.3 release notes, absent from 1.5.6's and 1.7.1's)",
		Summary:  "keyed state of an operator that is not the head of its chain is not assigned on restore (state silently lost)",
	}},
}

func init() {
	register(&Rule{meta: &nonHeadKeyed, check: checkNonHeadKeyedState, safeAt: nonHeadKeyedStateSafeAt})
}

// checkNonHeadKeyedState (PF141): keyed state on an operator chained behind the head, restored
// by a Flink that assigns keyed state to chain heads only.
func checkNonHeadKeyedState(c *Context) []Finding {
	if !nonHeadKeyed.bugAffects("FLINK-10809", c.Options.FlinkVersion) {
		return nil
	}
	var out []Finding
	for _, v := range c.Result.Vertices {
		c.stop.Check()
		if !v.Repartitioned || v.FullyFinished || len(v.Operators) < 2 {
			continue
		}
		head := v.Operators[0]
		for _, op := range v.Operators[1:] {
			if op.Layout == nil || !hasKeyedLayout(op) {
				continue
			}
			_, note := nonHeadKeyed.bugApplies("FLINK-10809", c.Options.FlinkVersion)
			f := c.finding(&nonHeadKeyed, Error, op)
			f.VertexID = v.ID.String()
			f.AffectedSubtasks = rangeFrom(0, int32(v.NewParallelism))
			f.Message = strings.TrimSpace(fmt.Sprintf("%s holds keyed state but is chained behind %s in vertex %s; Flink versions with FLINK-10809 assign keyed state to the chain's head only, so its keyed state is not restored (no error). %s",
				upperFirst(opLabel(op, c.Entry(op))), opLabel(head, c.Entry(head)), v.Name, note))
			f.Remediation = nonHeadKeyed.remedy("")
			f.References = nonHeadKeyed.refs()
			out = append(out, f)
		}
	}
	return out
}

// nonHeadKeyedStateSafeAt: the chain position does not depend on the parallelism.
func nonHeadKeyedStateSafeAt(c *Context, v *rescale.VertexAssignment, p int) (bool, bool) {
	if len(v.Operators) < 2 || !v.Repartitioned || !nonHeadKeyed.bugAffects("FLINK-10809", c.Options.FlinkVersion) {
		return true, true
	}
	for _, op := range v.Operators[1:] {
		if op.Layout != nil && hasKeyedLayout(op) {
			return false, true
		}
	}
	return true, true
}
