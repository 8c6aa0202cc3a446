package findings

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/rescale"
	"github.com/flinkpreflight/preflight/internal/units"
)

// channelState is PF150.
var channelState = RuleMeta{
	ID:       "PF150",
	Title:    "Unaligned-checkpoint channel state with a parallelism change",
	Severity: Error,
	Grading:  "ERROR behind a pointwise edge, WARNING when the plan names no subtask mapper, INFO with a known mapper.",
	Cause: "Input-channel and result-subpartition state is redistributed by the edge's SubtaskStateMapper; " +
		"ambiguous mappers (RANGE, FULL) replay records to several subtasks and filter them afterwards. Pointwise " +
		"edges (forward, rescale) cannot be rescaled: \"Cannot rescale the given pointwise partitioner.\" " +
		"Without the mapper the redistribution cannot be simulated.",
	Remedies: []Remedy{
		{When: "pointwise", Text: "Restore at the old parallelism, or take an aligned checkpoint / a savepoint (no in-flight data) before rescaling, or add an explicit shuffle() on the edge."},
		{When: "unknown-mapper", Text: "Give the vertex's channel mapper (CLI --input-channel-mapper / --output-channel-mapper KEY=MAPPER; API plan input_channel_mappers / output_channel_mappers), or rescale from a savepoint, which holds no in-flight data."},
		{When: "mapped", Text: "None needed; rescaling from a savepoint avoids replaying in-flight data."},
	},
	References: []string{"https://nightlies.apache.org/flink/flink-docs-stable/docs/ops/state/checkpointing_under_backpressure/#unaligned-checkpoints"},
}

func init() {
	register(&Rule{meta: &channelState, check: checkChannelState, safeAt: channelStateSafeAt})
}

// checkChannelState (PF150): in-flight data of an unaligned checkpoint is redistributed because
// the parallelism changes.
func checkChannelState(c *Context) []Finding {
	var out []Finding
	c.operators(func(v *rescale.VertexAssignment, op *rescale.OperatorAssignment) {
		for _, cd := range []*rescale.ChannelDistribution{op.InputChannels, op.OutputChannels} {
			if cd == nil || cd.Handles == 0 || !v.Rescaled() {
				continue
			}
			kind := "result-subpartition"
			if cd.Input {
				kind = "input-channel"
			}
			state := fmt.Sprintf("%s of %s state (%s)", bytesText(cd.Bytes), kind, units.Plural(int64(cd.Handles), "handle"))
			var f Finding
			switch cd.Status {
			case rescale.ChannelUnsupported:
				f = c.finding(&channelState, Error, op)
				f.Message = fmt.Sprintf("%s has %s behind a pointwise edge, and the parallelism changes %d -> %d. Flink refuses: UnsupportedOperationException: Cannot rescale the given pointwise partitioner.\nDid you change the partitioner to forward or rescale?\nIt may also help to add an explicit shuffle().",
					upperFirst(opLabel(op, c.Entry(op))), state, v.OldParallelism, v.NewParallelism)
				f.Remediation = channelState.remedy("pointwise")
			case rescale.ChannelUnknownMapper:
				f = c.finding(&channelState, Warning, op)
				f.Message = fmt.Sprintf("%s has %s and the parallelism changes %d -> %d; the plan names no subtask mapper for the edge, so the redistribution of in-flight data cannot be simulated (a forward or rescale edge would fail the restore).",
					upperFirst(opLabel(op, c.Entry(op))), state, v.OldParallelism, v.NewParallelism)
				f.Remediation = channelState.remedy("unknown-mapper")
			case rescale.ChannelMapped:
				f = c.finding(&channelState, Info, op)
				f.Message = fmt.Sprintf("%s has %s, redistributed with the %s mapper for the parallelism change %d -> %d; the most one new subtask replays is %s.",
					upperFirst(opLabel(op, c.Entry(op))), state, cd.Mapper, v.OldParallelism, v.NewParallelism, bytesText(op.Summary.MaxChannelBytes))
				if cd.Mapper == rescale.MapperRange || cd.Mapper == rescale.MapperFull {
					f.Message += " The mapper is ambiguous: records are replayed to several subtasks and filtered after restore."
				}
				f.Remediation = channelState.remedy("mapped")
			default:
				continue
			}
			f.References = channelState.refs()
			out = append(out, f)
		}
	})
	return out
}

func channelStateSafeAt(c *Context, v *rescale.VertexAssignment, p int) (bool, bool) {
	for _, op := range v.Operators {
		for _, cd := range []*rescale.ChannelDistribution{op.InputChannels, op.OutputChannels} {
			if cd != nil && cd.Handles > 0 && cd.Status == rescale.ChannelUnsupported {
				return p == v.OldParallelism, true
			}
		}
	}
	return true, true
}
