package findings

import (
	"fmt"
	"strings"

	"github.com/flinkpreflight/preflight/internal/rescale"
	"github.com/flinkpreflight/preflight/internal/units"
)

// chainedMaxParallelism is PF113.
var chainedMaxParallelism = RuleMeta{
	ID:       "PF113",
	Title:    "Operators chained into one keyed vertex stored different max parallelisms",
	Severity: Error,
	Cause: "Flink stores every operator's state with the max parallelism of the vertex it ran in, so operators of one " +
		"old vertex agree. When the new job chains operators that ran in different vertices (chaining changed: a " +
		"parallelism made equal, chaining enabled, FLINK-31996's pipeline.operator-chaining.chain-operators-with-" +
		"different-max-parallelism, on by default since 1.18), their stored values can differ. " +
		"StateAssignmentOperation.checkParallelismPreconditions reconciles each operator's value onto the shared " +
		"vertex in turn, so an auto-derived vertex max parallelism ends at whichever operator is applied last (map " +
		"order of the operator IDs), and a keyed operator with another value is restored under a key-group count " +
		"that is not its own: its keys hash to key groups its state is not in, and the state is silently lost. " +
		"Since FLINK-40113 Flink refuses such a restore instead. A vertex with a configured max parallelism is " +
		"refused by PF111 already.",
	Remedies: []Remedy{{Text: "Restore with the chaining the checkpoint was taken with (break the chain again with disableChaining()/startNewChain(), " +
		"or set pipeline.operator-chaining.chain-operators-with-different-max-parallelism: false so operators with different max " +
		"parallelism are not chained), or give the operators the same max parallelism before taking the checkpoint. To change a keyed " +
		"operator's max parallelism, rewrite the savepoint with the State Processor API."}},
	References: []string{"https://github.com/apache/flink/pull/28714", "FLINK-31996", "https://github.com/apache/flink/pull/22520"},
	Bugs: []Bug{{
		ID: "FLINK-40113", Component: "flink",
		Affected: []VersionRange{{Fixed: "2.4"}},
		FixedIn:  "apache/flink#28714 (merged to master 2026-07; first release inferred from the merge date: 2.4)",
		Summary: "a keyed operator chained with operators that stored another max parallelism is restored under the vertex's " +
			"reconciled value and its keyed state is remapped through the wrong key-group count; fixed versions refuse the restore",
	}},
}

func init() {
	register(&Rule{meta: &chainedMaxParallelism, check: checkChainedMaxParallelism, safeAt: chainedMaxParallelismSafeAt})
}

// chainedMaxParallelismDisagreement returns the keyed operators of a restored vertex whose operators stored
// different max parallelisms; nil when they agree or none holds keyed state.
func chainedMaxParallelismDisagreement(v *rescale.VertexAssignment) (keyed []*rescale.OperatorAssignment) {
	if !v.Repartitioned || v.FullyFinished || v.MaxParallelismConfigured {
		return nil
	}
	first, differ := 0, false
	for _, op := range v.Operators {
		if op.Layout == nil || op.CheckpointMaxParallelism <= 0 {
			continue
		}
		if first == 0 {
			first = op.CheckpointMaxParallelism
		}
		differ = differ || op.CheckpointMaxParallelism != first
	}
	if !differ { // the common case, decided without looking at subtasks
		return nil
	}
	for _, op := range v.Operators {
		if op.Layout != nil && op.CheckpointMaxParallelism > 0 && hasKeyedLayout(op) {
			keyed = append(keyed, op)
		}
	}
	return keyed
}

// hasKeyedLayout reports whether any stored subtask of op holds keyed state.
func hasKeyedLayout(op *rescale.OperatorAssignment) bool {
	for i := range op.Layout.Subtasks {
		if st := &op.Layout.Subtasks[i]; st.ManagedKeyedState != nil || st.RawKeyedState != nil {
			return true
		}
	}
	return false
}

// checkChainedMaxParallelism (PF113): operators of one new vertex stored different max
// parallelisms and the vertex carries keyed state.
func checkChainedMaxParallelism(c *Context) []Finding {
	var out []Finding
	for _, v := range c.Result.Vertices {
		c.stop.Check()
		keyed := chainedMaxParallelismDisagreement(v)
		if keyed == nil {
			continue
		}
		var per []string
		for _, op := range v.Operators {
			if op.Layout != nil && op.CheckpointMaxParallelism > 0 {
				per = append(per, fmt.Sprintf("%s: %d", opLabel(op, c.Entry(op)), op.CheckpointMaxParallelism))
			}
		}
		applies, note := chainedMaxParallelism.bugApplies("FLINK-40113", c.Options.FlinkVersion)
		for _, op := range keyed {
			f := c.finding(&chainedMaxParallelism, Error, op)
			f.VertexID = v.ID.String()
			f.AffectedSubtasks = rangeFrom(0, int32(v.NewParallelism))
			head := fmt.Sprintf("Vertex %s chains operators that were checkpointed in different vertices and stored different max parallelisms (%s); %s holds keyed state written with %s.",
				v.Name, strings.Join(per, "; "), opLabel(op, c.Entry(op)), units.Plural(int64(op.CheckpointMaxParallelism), "key group"))
			switch {
			case c.Options.FlinkVersion == "":
				f.Message = head + " Flink versions without the FLINK-40113 fix restore it under whichever max parallelism is applied last and lose the keyed state of the other value silently; fixed versions refuse the restore with an IllegalStateException. " + note
			case applies:
				f.Message = head + fmt.Sprintf(" Flink %s reconciles the stored values onto the vertex one by one and keeps the last one applied; unless that is %d, the keyed state is split and looked up under another key-group count and its keys no longer find their state (no error). %s",
					c.Options.FlinkVersion, op.CheckpointMaxParallelism, note)
			default:
				f.Message = head + fmt.Sprintf(" Flink %s refuses the restore with an IllegalStateException: the operators of a keyed vertex must agree on the max parallelism (FLINK-40113).", c.Options.FlinkVersion)
			}
			f.Message = strings.TrimSpace(f.Message)
			f.Remediation = chainedMaxParallelism.remedy("")
			f.References = chainedMaxParallelism.refs()
			out = append(out, f)
		}
	}
	return out
}

// chainedMaxParallelismSafeAt: the disagreement does not depend on the parallelism.
func chainedMaxParallelismSafeAt(c *Context, v *rescale.VertexAssignment, p int) (bool, bool) {
	return chainedMaxParallelismDisagreement(v) == nil, true
}
