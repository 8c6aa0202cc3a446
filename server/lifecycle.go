package server

import (
	"context"
	"log/slog"

	"github.com/flinkpreflight/preflight/internal/lifecycle"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// DiffCheckpoints (issue #12) compares two checkpoints. Both are read as bounded-memory layouts
// through the same sources, limits, cache and memory budget as CheckRescale; the older one's
// grant is held until the answer is built.
func (v *service) DiffCheckpoints(ctx context.Context, req *pb.DiffCheckpointsRequest) (*pb.DiffCheckpointsResponse, error) {
	if req.GetOldCheckpoint() == nil || req.GetNewCheckpoint() == nil {
		return nil, errInvalid("old_checkpoint and new_checkpoint are both required")
	}
	if req.GetRpcFrameSizeBytes() < 0 {
		return nil, errInvalid("rpc_frame_size_bytes %d is negative", req.GetRpcFrameSizeBytes())
	}
	oldL, oldLabel, oldMem, err := v.s.layout(ctx, req.GetOldCheckpoint())
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	defer oldMem.release()
	newL, newLabel, newMem, err := v.s.layout(ctx, req.GetNewCheckpoint())
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	defer newMem.release()
	addLog(ctx, slog.String("old_source", oldLabel), slog.String("new_source", newLabel),
		slog.Int64("old_metadata_bytes", oldL.Size), slog.Int64("new_metadata_bytes", newL.Size))
	d := lifecycle.Diff(oldL, newL, oldLabel, newLabel, lifecycle.DiffOptions{FrameSize: req.GetRpcFrameSizeBytes(), JobOperators: req.GetJobOperators()})
	return diffResponse(d), nil
}

func diffResponse(d *lifecycle.DiffResult) *pb.DiffCheckpointsResponse {
	side := func(c lifecycle.CheckpointInfo) *pb.LifecycleCheckpoint {
		return &pb.LifecycleCheckpoint{Source: c.Source, CheckpointId: c.CheckpointID, FormatVersion: int32(c.Version), MetadataBytes: c.Size}
	}
	resp := &pb.DiffCheckpointsResponse{OldCheckpoint: side(d.Old), NewCheckpoint: side(d.New), RpcFrameSizeBytes: d.FrameSize}
	for _, op := range d.Operators {
		o := &pb.LifecycleOperatorDiff{Id: op.ID, Name: op.Name, Uid: op.UID, Change: op.Change,
			OldParallelism: int32(op.OldParallelism), NewParallelism: int32(op.NewParallelism),
			OldMaxParallelism: int32(op.OldMaxParallelism), NewMaxParallelism: int32(op.NewMaxParallelism),
			OldKeyGroupsCovered: int32(op.OldKeyGroups), NewKeyGroupsCovered: int32(op.NewKeyGroups)}
		for _, s := range op.States {
			o.States = append(o.States, &pb.LifecycleStateDiff{Name: s.Name, Kind: s.Kind, Change: s.Change, OldMode: s.OldMode, NewMode: s.NewMode,
				OldElements: s.OldElements, NewElements: s.NewElements, OldBytes: s.OldBytes, NewBytes: s.NewBytes,
				OldSubtasks: int32(s.OldSubtasks), NewSubtasks: int32(s.NewSubtasks)})
		}
		resp.Operators = append(resp.Operators, o)
	}
	for _, f := range d.Findings {
		sev := pb.Severity_SEVERITY_INFO
		switch f.Severity {
		case "WARNING":
			sev = pb.Severity_SEVERITY_WARNING
		case "ERROR":
			sev = pb.Severity_SEVERITY_ERROR
		}
		resp.Findings = append(resp.Findings, &pb.LifecycleFinding{Id: f.ID, Severity: sev, Title: f.Title, Operator: f.Operator, State: f.State, Detail: f.Detail})
	}
	return resp
}
