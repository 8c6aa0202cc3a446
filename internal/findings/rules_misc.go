package findings

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// KeyedSkewRule (PF140): keyed state spreads unevenly over the new subtasks, by key groups or
// by bytes.
type KeyedSkewRule struct{}

func (KeyedSkewRule) ID() string         { return "PF140" }
func (KeyedSkewRule) Title() string      { return "Keyed state unevenly spread over the new subtasks" }
func (KeyedSkewRule) Severity() Severity { return Warning }
func (KeyedSkewRule) Explanation() string {
	return "Keyed state moves in key groups: subtask i of p owns key groups [ceil(i*maxP/p), floor(((i+1)*maxP-1)/p)]. " +
		"When maxP is not a multiple of p some subtasks own one more key group; when key groups differ in size " +
		"the busiest subtask restores and processes more than the mean. INFO from a max/mean of 1.25 (key groups) " +
		"or 1.5 (bytes), WARNING from 2 with at least 1 MiB of keyed state."
}

func (r KeyedSkewRule) Check(c *Context) []Finding {
	var out []Finding
	c.operators(func(v *rescale.VertexAssignment, op *rescale.OperatorAssignment) {
		if (op.ManagedKeyed == nil && op.RawKeyed == nil) || v.NewParallelism <= 1 || v.MaxParallelism <= 0 || op.Path == rescale.PathFinished ||
			v.NewParallelism > v.MaxParallelism || (op.CheckpointMaxParallelism > 0 && v.NewParallelism > op.CheckpointMaxParallelism) {
			return
		}
		mean := float64(v.MaxParallelism) / float64(v.NewParallelism)
		most := (v.MaxParallelism + v.NewParallelism - 1) / v.NewParallelism
		kgRatio := float64(most) / mean
		s := op.Summary
		var sev Severity
		var msg string
		var affected []int32
		switch {
		case s.KeyedSkew >= 1.5 && s.KeyedBytes > 0:
			sev = Info
			if s.KeyedSkew >= 2 && s.KeyedBytes >= 1<<20 {
				sev = Warning
			}
			for i := 0; i < v.NewParallelism; i++ {
				c.stop.Check()
				if float64(keyedOwned(op, i)) >= 1.5*s.KeyedMeanOwnedBytes {
					affected = append(affected, int32(i))
				}
			}
			msg = fmt.Sprintf("At parallelism %d the keyed state of %s (%s) is skewed: the largest subtask owns %s against a mean of %s (max/mean %.2f).",
				v.NewParallelism, opLabel(op, c.Entry(op)), bytesText(s.KeyedBytes), bytesText(s.KeyedMaxOwnedBytes), bytesText(int64(s.KeyedMeanOwnedBytes)), s.KeyedSkew)
		case kgRatio >= 1.25:
			sev = Info
			for i := 0; i < v.NewParallelism; i++ {
				if v.KeyGroupRange(i).NumKeyGroups == most {
					affected = append(affected, int32(i))
				}
			}
			msg = fmt.Sprintf("At parallelism %d with max parallelism %d, new subtasks %s of %s own %d key groups against a mean of %.2f (max/mean %.2f).",
				v.NewParallelism, v.MaxParallelism, subtaskList(affected), opLabel(op, c.Entry(op)), most, mean, kgRatio)
		default:
			return
		}
		f := c.finding(r, sev, op)
		f.AffectedSubtasks = affected
		f.Message = msg
		f.Remediation = "Prefer a parallelism that divides the max parallelism, and check the key distribution if the byte skew persists."
		f.References = []string{"https://nightlies.apache.org/flink/flink-docs-stable/docs/ops/production_ready/#set-an-explicit-max-parallelism"}
		out = append(out, f)
	})
	return out
}

// ChannelStateRule (PF150): in-flight data of an unaligned checkpoint is redistributed because
// the parallelism changes.
type ChannelStateRule struct{}

func (ChannelStateRule) ID() string { return "PF150" }
func (ChannelStateRule) Title() string {
	return "Unaligned-checkpoint channel state with a parallelism change"
}
func (ChannelStateRule) Severity() Severity { return Error }
func (ChannelStateRule) Explanation() string {
	return "Input-channel and result-subpartition state is redistributed by the edge's SubtaskStateMapper; " +
		"ambiguous mappers (RANGE, FULL) replay records to several subtasks and filter them afterwards. Pointwise " +
		"edges (forward, rescale) cannot be rescaled: \"Cannot rescale the given pointwise partitioner.\" " +
		"Without the mapper the redistribution cannot be simulated."
}

func (r ChannelStateRule) Check(c *Context) []Finding {
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
			var f Finding
			switch cd.Status {
			case rescale.ChannelUnsupported:
				f = c.finding(r, Error, op)
				f.Message = fmt.Sprintf("%s has %s of %s state (%d handles) behind a pointwise edge, and the parallelism changes %d -> %d. Flink refuses: UnsupportedOperationException: Cannot rescale the given pointwise partitioner.\nDid you change the partitioner to forward or rescale?\nIt may also help to add an explicit shuffle().",
					opLabel(op, c.Entry(op)), bytesText(cd.Bytes), kind, cd.Handles, v.OldParallelism, v.NewParallelism)
				f.Remediation = "Restore at the old parallelism, or take an aligned checkpoint / a savepoint (no in-flight data) before rescaling, or add an explicit shuffle() on the edge."
			case rescale.ChannelUnknownMapper:
				f = c.finding(r, Warning, op)
				f.Message = fmt.Sprintf("%s has %s of %s state (%d handles) and the parallelism changes %d -> %d; the plan names no subtask mapper for the edge, so the redistribution of in-flight data cannot be simulated (a forward or rescale edge would fail the restore).",
					opLabel(op, c.Entry(op)), bytesText(cd.Bytes), kind, cd.Handles, v.OldParallelism, v.NewParallelism)
				f.Remediation = "Give the vertex's channel mapper in the plan (input_channel_mappers / output_channel_mappers), or rescale from a savepoint, which holds no in-flight data."
			case rescale.ChannelMapped:
				f = c.finding(r, Info, op)
				f.Message = fmt.Sprintf("%s has %s of %s state (%d handles), redistributed with the %s mapper for the parallelism change %d -> %d; the most one new subtask replays is %s.",
					opLabel(op, c.Entry(op)), bytesText(cd.Bytes), kind, cd.Handles, cd.Mapper, v.OldParallelism, v.NewParallelism, bytesText(op.Summary.MaxChannelBytes))
				if cd.Mapper == rescale.MapperRange || cd.Mapper == rescale.MapperFull {
					f.Message += " The mapper is ambiguous: records are replayed to several subtasks and filtered after restore."
				}
				f.Remediation = "None needed; rescaling from a savepoint avoids replaying in-flight data."
			default:
				continue
			}
			f.References = []string{"https://nightlies.apache.org/flink/flink-docs-stable/docs/ops/state/checkpointing_under_backpressure/#unaligned-checkpoints"}
			out = append(out, f)
		}
	})
	return out
}

func (ChannelStateRule) SafeAt(c *Context, v *rescale.VertexAssignment, p int) (bool, bool) {
	for _, op := range v.Operators {
		for _, cd := range []*rescale.ChannelDistribution{op.InputChannels, op.OutputChannels} {
			if cd != nil && cd.Handles > 0 && cd.Status == rescale.ChannelUnsupported {
				return p == v.OldParallelism, true
			}
		}
	}
	return true, true
}

// NonRestoredStateRule (PF160): checkpoint operators that the new job does not have.
type NonRestoredStateRule struct{}

func (NonRestoredStateRule) ID() string { return "PF160" }
func (NonRestoredStateRule) Title() string {
	return "Checkpoint state without an operator in the new job"
}
func (NonRestoredStateRule) Severity() Severity { return Error }
func (NonRestoredStateRule) Explanation() string {
	return "When the plan lists the new job's operators, checkpoint operators that match none of them are refused " +
		"(\"Cannot map checkpoint/savepoint state for operator ...\" on the savepoint path, \"There is no operator " +
		"for the state ...\" otherwise) unless --allowNonRestoredState is set, which drops their state. The HA " +
		"failover path never allows non-restored state."
}

func (r NonRestoredStateRule) Check(c *Context) []Finding {
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
		f := Finding{RuleID: r.ID(), Title: r.Title(), Severity: sev, OperatorID: nr.ID.String(), OperatorName: nr.Name, OperatorUID: nr.UID}
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
			f.Remediation = "Keep the operator's uid in the new job, or restore with --allowNonRestoredState to drop its state (data loss for that operator; the HA failover path never allows it)."
		case Warning:
			f.Message = fmt.Sprintf("The new job has no operator for the state of %s; with --allowNonRestoredState Flink logs \"Skipping savepoint state for operator %s.\" and the state is lost.", label, nr.ID)
			f.Remediation = "Make sure dropping this state is intended (e.g. a replaced source that restarts from committed offsets)."
		default:
			f.Message = fmt.Sprintf("%s has no state and no operator in the new job; Flink skips it (\"Skipping empty savepoint state for operator %s.\").", label, nr.ID)
		}
		f.References = []string{"https://nightlies.apache.org/flink/flink-docs-stable/docs/ops/state/savepoints/#allowing-non-restored-state"}
		out = append(out, f)
	}
	return out
}

// UnknownOperatorEmptySplitRule (PF170): an operator the catalog does not know gets no element
// of a SPLIT_DISTRIBUTE state on some new subtasks.
type UnknownOperatorEmptySplitRule struct{}

func (UnknownOperatorEmptySplitRule) ID() string { return "PF170" }
func (UnknownOperatorEmptySplitRule) Title() string {
	return "Operator of unknown tolerance restored with empty SPLIT_DISTRIBUTE state on some subtasks"
}
func (UnknownOperatorEmptySplitRule) Severity() Severity { return Info }
func (UnknownOperatorEmptySplitRule) Explanation() string {
	return "New subtasks that receive no element of a SPLIT_DISTRIBUTE state still run the restore branch with an " +
		"empty list. Operators that assume an element fail (FLINK-31689, FLINK-40043). For operators the catalog " +
		"does not know Preflight cannot tell; add a catalog entry with the ONE-UNGUARDED label to turn this into an error."
}

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
			f := c.finding(r, Info, op)
			f.StateName = s.Name
			f.AffectedSubtasks = affected
			f.Message = fmt.Sprintf("At parallelism %d, %s of %s no element of `%s` (SPLIT_DISTRIBUTE, %s). They are still restored (with an empty list); check that the operator tolerates that.%s",
				v.NewParallelism, subtasksVerb(affected, "receive"), opLabel(op, e), s.Name, plural(s.Elements, "element"), consequence)
			f.Remediation = "If the operator needs an element on restore, describe it in a user catalog (state label ONE-UNGUARDED) so Preflight denies such plans; otherwise nothing to do."
			f.References = []string{"FLINK-31689", "FLINK-40043"}
			out = append(out, f)
		}
	})
	return out
}

// MissingUIDRule (PF180): a stateful operator without a uid (format 5+ stores an empty uid).
type MissingUIDRule struct{}

func (MissingUIDRule) ID() string         { return "PF180" }
func (MissingUIDRule) Title() string      { return "Stateful operator without a uid" }
func (MissingUIDRule) Severity() Severity { return Info }
func (MissingUIDRule) Explanation() string {
	return "Without a uid Flink derives the operator ID from the graph position and the chain. A parallelism " +
		"change can break or build chains and so change the ID: the state is then not mapped (restore fails) or " +
		"silently dropped with --allowNonRestoredState. FLIP-411 proposes chaining-agnostic IDs."
}

func (r MissingUIDRule) Check(c *Context) []Finding {
	if c.Layout == nil || c.Layout.Version < 5 {
		return nil
	}
	var out []Finding
	c.operators(func(v *rescale.VertexAssignment, op *rescale.OperatorAssignment) {
		if op.UID != "" || !stateful(op.Layout) {
			return
		}
		f := c.finding(r, Info, op)
		f.Message = fmt.Sprintf("%s has state but no uid; its ID is generated from the job graph and changes if chaining changes (for example when the parallelism of a neighbour changes).", opLabel(op, c.Entry(op)))
		f.Remediation = "Set uid(...) on every stateful operator (for SQL, use compiled plans / table.exec.uid.generation) and take a new savepoint; if the ID must stay, setUidHash to the current ID."
		f.References = []string{"https://nightlies.apache.org/flink/flink-docs-stable/docs/ops/state/savepoints/#assigning-operator-ids", "https://cwiki.apache.org/confluence/display/FLINK/FLIP-411"}
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
		if st.ManagedKeyedState != nil || st.RawKeyedState != nil || len(st.InputChannels) > 0 || len(st.OutputChannels) > 0 {
			return true
		}
		for _, h := range []*checkpoint.OperatorStateHandleLayout{st.ManagedOperatorState, st.RawOperatorState} {
			if h != nil && len(h.States) > 0 {
				return true
			}
		}
	}
	return false
}

// RestoreFailureRule (PF190): any other exception the simulator predicts (mixed finished
// state, channel state on a chained operator).
type RestoreFailureRule struct{}

func (RestoreFailureRule) ID() string         { return "PF190" }
func (RestoreFailureRule) Title() string      { return "Flink refuses the restore" }
func (RestoreFailureRule) Severity() Severity { return Error }
func (RestoreFailureRule) Explanation() string {
	return "Precondition failures of Flink's state assignment not covered by a more specific rule: a vertex with " +
		"mixed finished and running operators, or channel state on an operator that is no longer the chain's " +
		"input or output operator."
}

var specificFailures = map[rescale.FailureKind]bool{
	rescale.FailureParallelismAboveMaxParallelism: true, rescale.FailureMaxParallelismBelowParallelism: true,
	rescale.FailureMaxParallelismMismatch: true, rescale.FailureMaxParallelismChanged: true,
	rescale.FailureOperatorNotInNewProgram: true, rescale.FailureNoOperatorForState: true,
	rescale.FailureUnsupportedChannelRescale: true,
}

func (r RestoreFailureRule) Check(c *Context) []Finding {
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
		f := c.finding(r, Error, op)
		if v != nil {
			f.VertexID = v.ID.String()
		}
		f.Message = fmt.Sprintf("Flink refuses the restore (%s): %s: %s", fl.Kind, fl.Exception, fl.Message)
		f.Remediation = "Restore with the job graph the checkpoint was taken with (same chaining), or take a savepoint after all operators of the vertex finished or none did."
		out = append(out, f)
	}
	return out
}
