package engine

import (
	"context"
	"slices"
	"sort"

	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/rescale"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// SubtaskDetail says which per-subtask rows a report carries.
type SubtaskDetail uint8

const (
	// SubtasksAsAsked follows CheckOptions.include_subtasks: every new subtask of every
	// restored operator, or none.
	SubtasksAsAsked SubtaskDetail = iota
	// SubtasksForChart carries only what report.WriteText's before/after chart shows: the
	// operators named by a finding at WARNING or above (else the one operator with the most state
	// after the restore), and of each at most ChartRows subtasks (the first and last four, the
	// four with the least and the four with the most operator-state bytes). The rows are chosen
	// from per-subtask totals, so the cost is linear in old + new parallelism even for UNION state,
	// and the report's memory does not grow with the number of operators × subtasks.
	SubtasksForChart
)

// ChartRows is the most subtasks SubtasksForChart keeps per operator.
const ChartRows = 16

// check runs the simulator and the rules and builds the API report, stopping when ctx ends.
func (e *Engine) check(ctx context.Context, layout *checkpoint.Layout, source string, p *pb.RescalePlan, opts *pb.CheckOptions, detail SubtaskDetail) (_ *pb.RescaleReport, err error) {
	stop, release := cancel.Watch(ctx)
	defer release()
	defer cancel.Recover(&err)
	plan := toRescalePlan(p, opts)
	result, err := rescale.SimulateContext(ctx, layout, plan)
	if err != nil {
		return nil, err
	}
	rep, err := findings.CheckContext(ctx, layout, plan, result, e.catalog, findingsOptions(opts))
	if err != nil {
		return nil, err
	}
	out := &pb.RescaleReport{
		Verdict:    pb.Verdict(rep.Verdict),
		Checkpoint: summary(layout, source),
	}
	// The report's messages of one kind come from one allocation each (findings, operators,
	// states) rather than one per message: a cached file checked again allocates mostly in
	// the simulation, not in building its answer.
	findingMsgs := make([]pb.Finding, len(rep.Findings))
	out.Findings = make([]*pb.Finding, 0, len(rep.Findings))
	for i, f := range rep.Findings {
		fm := &findingMsgs[i]
		*fm = pb.Finding{
			RuleId:           f.RuleID,
			Title:            f.Title,
			Severity:         pb.Severity(f.Severity),
			OperatorId:       f.OperatorID,
			OperatorName:     f.OperatorName,
			OperatorUid:      f.OperatorUID,
			VertexId:         f.VertexID,
			StateName:        f.StateName,
			AffectedSubtasks: f.AffectedSubtasks,
			Message:          f.Message,
			Remediation:      f.Remediation,
			References:       f.References,
			CatalogEntry:     f.CatalogEntry,
		}
		out.Findings = append(out.Findings, fm)
	}
	for _, s := range rep.Safe {
		out.SafeParallelism = append(out.SafeParallelism, &pb.SafeParallelism{
			VertexId: s.VertexID, VertexName: s.VertexName, Requested: s.Requested, Below: s.Below, Above: s.Above,
		})
	}
	var charted map[*rescale.OperatorAssignment]bool
	if detail == SubtasksForChart {
		charted = chartedOperators(stop, result, rep.Findings)
	}
	n, nStates := 0, 0
	for _, v := range result.Vertices {
		n += len(v.Operators)
		for _, op := range v.Operators {
			nStates += len(op.States)
		}
	}
	out.Operators = make([]*pb.OperatorAssignment, 0, n)
	opMsgs := make([]pb.OperatorAssignment, n)
	stateMsgs := make([]pb.StateAssignment, nStates)
	statePtrs := make([]*pb.StateAssignment, nStates)
	for vi, v := range result.Vertices {
		// Nothing reads the vertex after its operators are converted: drop it from the result so
		// that the simulation's memory is released while the report grows (peak: layout +
		// simulation, not layout + simulation + report).
		result.Vertices[vi] = nil
		vid := v.ID.String()
		for _, op := range v.Operators {
			stop.Check()
			a := &opMsgs[len(out.Operators)]
			k := len(op.States)
			operatorAssignment(stop, v, vid, op, a, stateMsgs[:k:k], statePtrs[:0:k])
			stateMsgs, statePtrs = stateMsgs[k:], statePtrs[k:]
			switch {
			case !hasSubtasks(op):
			case detail == SubtasksAsAsked && opts.GetIncludeSubtasks():
				a.Subtasks = make([]*pb.SubtaskAssignment, 0, op.NewParallelism)
				for i := 0; i < op.NewParallelism; i++ {
					stop.Check()
					sa := subtaskAssignment(op, i)
					sa.States = subtaskStates(op, i)
					a.Subtasks = append(a.Subtasks, sa)
				}
				a.OldSubtasks = oldSubtasks(stop, op)
			case charted[op]:
				for _, i := range chartRows(stop, op) {
					a.Subtasks = append(a.Subtasks, subtaskAssignment(op, i))
				}
				// The chart shows the old subtasks a scale-down removes.
				if op.OldParallelism > op.NewParallelism {
					a.OldSubtasks = oldSubtasks(stop, op)
				}
			}
			out.Operators = append(out.Operators, a)
		}
	}
	stop.Check()
	setShortIDs(out.Operators)
	return out, nil
}

// hasSubtasks reports whether the report can list the operator's new subtasks.
func hasSubtasks(op *rescale.OperatorAssignment) bool {
	return op.Layout != nil && !op.FullyFinished && op.NewParallelism > 0
}

// chartedOperators picks the operators report.WriteText charts (see SubtasksForChart).
func chartedOperators(stop *cancel.Flag, result *rescale.Result, fs []findings.Finding) map[*rescale.OperatorAssignment]bool {
	named := map[string]bool{}
	for _, f := range fs {
		stop.Check()
		if f.OperatorID != "" && f.Severity >= findings.Warning {
			named[f.OperatorID] = true
		}
	}
	out := map[*rescale.OperatorAssignment]bool{}
	// Without findings, as report.WriteText: the rescaled operator with the most state, else
	// the operator with the most state.
	var best *rescale.OperatorAssignment
	var bestBytes int64
	bestRescaled := false
	for _, v := range result.Vertices {
		for _, op := range v.Operators {
			stop.Check()
			if !hasSubtasks(op) {
				continue
			}
			if len(named) > 0 && named[op.ID.String()] {
				out[op] = true
			}
			b := op.Summary.TotalStateBytes + op.Summary.KeyedTotalOwnedBytes
			rescaled := op.OldParallelism != op.NewParallelism
			if b > 0 && (best == nil || rescaled && !bestRescaled || rescaled == bestRescaled && b > bestBytes) {
				best, bestBytes, bestRescaled = op, b, rescaled
			}
		}
	}
	if len(out) == 0 && best != nil {
		out[best] = true
	}
	return out
}

// chartRows returns, in ascending order, the subtasks a chart shows: all up to ChartRows, else
// the first four, the last four, and the four with the least and the most operator-state bytes
// (ties: the lower index counts as less).
func chartRows(stop *cancel.Flag, op *rescale.OperatorAssignment) []int {
	n := op.NewParallelism
	if n <= ChartRows {
		rows := make([]int, n)
		for i := range rows {
			rows[i] = i
		}
		return rows
	}
	bytes := make([]int64, n)
	order := make([]int, n)
	for i := range bytes {
		stop.Check()
		bytes[i] = op.SubtaskTotals(i).StateBytes
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return bytes[order[a]] < bytes[order[b]] })
	keep := map[int]bool{}
	for k := 0; k < 4; k++ {
		keep[k], keep[n-1-k], keep[order[k]], keep[order[n-1-k]] = true, true, true, true
	}
	rows := make([]int, 0, len(keep))
	for i := range keep {
		rows = append(rows, i)
	}
	sort.Ints(rows)
	return rows
}

// operatorAssignment summarises what the simulator gave one operator, without subtasks. vid is
// the vertex ID's hex, shared by the operators of the vertex (and by the head operator's ID). It
// checks stop per state (runs under cancel.Recover).
// operatorAssignment fills out with the operator's report, its states in stateMsgs (one per
// state of op) listed through statePtrs (capacity len(op.States)).
func operatorAssignment(stop *cancel.Flag, v *rescale.VertexAssignment, vid string, op *rescale.OperatorAssignment, out *pb.OperatorAssignment, stateMsgs []pb.StateAssignment, statePtrs []*pb.StateAssignment) {
	s := op.Summary
	id := vid
	if op.ID != v.ID {
		id = op.ID.String()
	}
	*out = pb.OperatorAssignment{
		OperatorId:             id,
		Name:                   op.Name,
		Uid:                    op.UID,
		VertexId:               vid,
		OldParallelism:         int32(op.OldParallelism),
		NewParallelism:         int32(op.NewParallelism),
		MaxParallelism:         int32(op.MaxParallelism),
		CoordinatorStateBytes:  op.CoordinatorBytes,
		FullyFinished:          op.FullyFinished,
		MaxSubtaskPayloadBytes: s.MaxPayloadBytes,
		TotalPayloadBytes:      s.TotalPayloadBytes,
		Position:               int32(op.LayoutIndex() + 1),
	}
	if len(op.States) > 0 {
		out.States = statePtrs
	}
	for i, st := range op.States {
		stop.Check()
		sm := &stateMsgs[i]
		*sm = pb.StateAssignment{
			Name:                  st.Name,
			Mode:                  st.Mode.String(),
			Raw:                   st.Raw,
			Elements:              st.Elements,
			Bytes:                 st.Bytes,
			MinElementsPerSubtask: st.Summary.MinElements,
			MaxElementsPerSubtask: st.Summary.MaxElements,
			EmptySubtasks:         int32(st.Summary.EmptySubtasks),
		}
		out.States = append(out.States, sm)
	}
	if op.ManagedKeyed != nil || op.RawKeyed != nil {
		k := &pb.KeyedAssignment{
			Bytes:          s.KeyedBytes,
			MaxReadBytes:   s.KeyedMaxReadBytes,
			MeanOwnedBytes: s.KeyedMeanOwnedBytes,
			Skew:           s.KeyedSkew,
		}
		var seen []checkpoint.KeyedHandleKind // a handful of kinds at most
		for _, d := range [2]*rescale.KeyedDistribution{op.ManagedKeyed, op.RawKeyed} {
			if d == nil {
				continue
			}
			for _, kind := range d.Kinds {
				if !slices.Contains(seen, kind) {
					seen = append(seen, kind)
					k.HandleKinds = append(k.HandleKinds, kind.String())
				}
			}
		}
		out.Keyed = k
	}
}

// subtaskAssignment is one report row: the subtask's totals and the old subtasks it reads,
// computed without listing its old entries (a UNION state would list every old subtask's).
func subtaskAssignment(op *rescale.OperatorAssignment, i int) *pb.SubtaskAssignment {
	st := op.SubtaskTotals(i)
	st.FromOldSubtasks = op.OldSubtasksRead(i)
	out := &pb.SubtaskAssignment{
		Index:           int32(st.Index),
		Elements:        st.Elements,
		StateBytes:      st.StateBytes,
		InlineBytes:     st.InlineBytes,
		Offsets:         st.Offsets,
		KeyGroupStart:   -1,
		KeyGroupEnd:     -1,
		KeyedReadBytes:  st.KeyedReadBytes,
		KeyedOwnedBytes: st.KeyedOwnedBytes,
		PayloadBytes:    st.PayloadBytes,
		BytesBefore:     st.BytesBefore,
	}
	if st.KeyGroups.NumKeyGroups > 0 {
		out.KeyGroupStart = int32(st.KeyGroups.Start)
		out.KeyGroupEnd = int32(st.KeyGroups.End())
	}
	if len(st.FromOldSubtasks) > 0 {
		out.FromOldSubtasks = make([]int32, len(st.FromOldSubtasks))
		for k, o := range st.FromOldSubtasks {
			out.FromOldSubtasks[k] = int32(o)
		}
	}
	return out
}

// findingsOptions is the rules' view of the request's check options.
func findingsOptions(opts *pb.CheckOptions) findings.Options {
	return findings.Options{
		FlinkVersion:          opts.GetFlinkVersion(),
		RPCFrameSize:          opts.GetRpcFrameSizeBytes(),
		InlineThreshold:       opts.GetInlineStateThresholdBytes(),
		JobManagerMemory:      opts.GetJobmanagerMemoryBytes(),
		AllowNonRestoredState: opts.GetAllowNonRestoredState(),
		// The API's severities and the rules' share ordinals.
		FailLevel: findings.Severity(opts.GetFailLevel()),
	}
}

// probeOptions is findingsOptions with an unset fail level meaning ERROR: a probe must decide
// what denies.
func probeOptions(opts *pb.CheckOptions) findings.Options {
	o := findingsOptions(opts)
	if opts.GetFailLevel() == pb.Severity_SEVERITY_UNSPECIFIED {
		o.FailLevel = findings.Severity(pb.Severity_SEVERITY_ERROR)
	}
	return o
}
