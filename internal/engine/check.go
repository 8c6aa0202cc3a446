package engine

import (
	"context"

	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/rescale"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// check runs the simulator and the rules and builds the API report, stopping when ctx ends.
func (e *Engine) check(ctx context.Context, layout *checkpoint.Layout, source string, p *pb.RescalePlan, opts *pb.CheckOptions) (_ *pb.RescaleReport, err error) {
	stop, release := cancel.Watch(ctx)
	defer release()
	defer cancel.Recover(&err)
	plan := toRescalePlan(p, opts)
	result, err := rescale.SimulateContext(ctx, layout, plan)
	if err != nil {
		return nil, err
	}
	rep, err := findings.CheckContext(ctx, layout, plan, result, e.catalog, findings.Options{
		FlinkVersion:          opts.GetFlinkVersion(),
		RPCFrameSize:          opts.GetRpcFrameSizeBytes(),
		InlineThreshold:       opts.GetInlineStateThresholdBytes(),
		JobManagerMemory:      opts.GetJobmanagerMemoryBytes(),
		AllowNonRestoredState: opts.GetAllowNonRestoredState(),
		// The API's severities and the rules' share ordinals.
		FailLevel: findings.Severity(opts.GetFailLevel()),
	})
	if err != nil {
		return nil, err
	}
	out := &pb.RescaleReport{
		Verdict:    pb.Verdict(rep.Verdict),
		Checkpoint: summary(layout, source),
	}
	for _, f := range rep.Findings {
		out.Findings = append(out.Findings, &pb.Finding{
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
		})
	}
	for _, s := range rep.Safe {
		out.SafeParallelism = append(out.SafeParallelism, &pb.SafeParallelism{
			VertexId: s.VertexID, VertexName: s.VertexName, Requested: s.Requested, Below: s.Below, Above: s.Above,
		})
	}
	for _, v := range result.Vertices {
		for _, op := range v.Operators {
			stop.Check()
			out.Operators = append(out.Operators, operatorAssignment(stop, v, op, opts.GetIncludeSubtasks()))
		}
	}
	stop.Check()
	return out, nil
}

// operatorAssignment summarises what the simulator gave one operator; it checks stop per state
// and per subtask (runs under cancel.Recover).
func operatorAssignment(stop *cancel.Flag, v *rescale.VertexAssignment, op *rescale.OperatorAssignment, withSubtasks bool) *pb.OperatorAssignment {
	s := op.Summary
	out := &pb.OperatorAssignment{
		OperatorId:             op.ID.String(),
		Name:                   op.Name,
		Uid:                    op.UID,
		VertexId:               v.ID.String(),
		OldParallelism:         int32(op.OldParallelism),
		NewParallelism:         int32(op.NewParallelism),
		MaxParallelism:         int32(op.MaxParallelism),
		CoordinatorStateBytes:  op.CoordinatorBytes,
		FullyFinished:          op.FullyFinished,
		MaxSubtaskPayloadBytes: s.MaxPayloadBytes,
		TotalPayloadBytes:      s.TotalPayloadBytes,
	}
	for _, st := range op.States {
		stop.Check()
		out.States = append(out.States, &pb.StateAssignment{
			Name:                  st.Name,
			Mode:                  st.Mode.String(),
			Raw:                   st.Raw,
			Elements:              st.Elements,
			Bytes:                 st.Bytes,
			MinElementsPerSubtask: st.Summary.MinElements,
			MaxElementsPerSubtask: st.Summary.MaxElements,
			EmptySubtasks:         int32(st.Summary.EmptySubtasks),
		})
	}
	if op.ManagedKeyed != nil || op.RawKeyed != nil {
		k := &pb.KeyedAssignment{
			Bytes:          s.KeyedBytes,
			MaxReadBytes:   s.KeyedMaxReadBytes,
			MeanOwnedBytes: s.KeyedMeanOwnedBytes,
			Skew:           s.KeyedSkew,
		}
		seen := map[checkpoint.KeyedHandleKind]bool{}
		for _, d := range []*rescale.KeyedDistribution{op.ManagedKeyed, op.RawKeyed} {
			if d == nil {
				continue
			}
			for _, kind := range d.Kinds {
				if !seen[kind] {
					seen[kind] = true
					k.HandleKinds = append(k.HandleKinds, kind.String())
				}
			}
		}
		out.Keyed = k
	}
	if withSubtasks && op.Layout != nil && !op.FullyFinished {
		for i := 0; i < op.NewParallelism; i++ {
			stop.Check()
			st := op.Subtask(i)
			sa := subtaskAssignment(st)
			sa.States = subtaskStates(op, st)
			out.Subtasks = append(out.Subtasks, sa)
		}
		out.OldSubtasks = oldSubtasks(op)
	}
	return out
}

func subtaskAssignment(st rescale.SubtaskAssignment) *pb.SubtaskAssignment {
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
	for _, o := range st.FromOldSubtasks {
		out.FromOldSubtasks = append(out.FromOldSubtasks, int32(o))
	}
	return out
}
