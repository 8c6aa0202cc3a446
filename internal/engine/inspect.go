package engine

import (
	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// summary describes the file for reports.
func summary(layout *checkpoint.Layout, source string) *pb.CheckpointSummary {
	s := &pb.CheckpointSummary{
		FormatVersion:    int32(layout.Version),
		WrittenBy:        checkpoint.WrittenBy(layout.Version),
		CheckpointId:     layout.CheckpointID,
		SizeBytes:        layout.Size,
		OperatorCount:    int32(len(layout.Operators)),
		InlineStateBytes: inlineBytes(layout),
		Source:           source,
	}
	if p := layout.Properties; p != nil {
		s.SnapshotName = p.Name
		if p.Savepoint {
			s.SnapshotKind = "savepoint"
			s.SavepointFormat = p.SavepointFormat
		} else {
			s.SnapshotKind = "checkpoint"
		}
	}
	return s
}

// inlineBytes adds up every state byte stored inside _metadata.
func inlineBytes(layout *checkpoint.Layout) int64 {
	var n int64
	for i := range layout.Operators {
		op := &layout.Operators[i]
		if op.CoordinatorState != nil && op.CoordinatorState.Inline() {
			n += op.CoordinatorState.Size
		}
		for j := range op.Subtasks {
			st := &op.Subtasks[j]
			for h := range st.OperatorStateHandles() {
				if h.Stream.Inline() {
					n += h.Stream.Size
				}
			}
			for k := range st.KeyedStateHandles() {
				n += k.InlineBytes
			}
			for _, chs := range [][]checkpoint.ChannelStateLayout{st.InputChannels(), st.OutputChannels()} {
				for _, ch := range chs {
					if ch.Stream.Inline() {
						n += ch.Size
					}
				}
			}
		}
	}
	return n
}

// stateKey identifies one operator state across subtasks.
type stateKey struct {
	name string
	mode checkpoint.DistributionMode
	raw  bool
}

// operatorInfo describes one operator of the checkpoint for inspection.
// It checks stop per state entry (runs under cancel.Recover): one subtask can list a million names.
func operatorInfo(stop *cancel.Flag, op *checkpoint.OperatorLayout) *pb.OperatorInfo {
	info := &pb.OperatorInfo{
		OperatorId:     op.ID.String(),
		Name:           op.Name,
		Uid:            op.UID,
		Parallelism:    int32(op.Parallelism),
		MaxParallelism: int32(op.MaxParallelism),
		FullyFinished:  op.FullyFinished,
	}
	if op.CoordinatorState != nil {
		info.CoordinatorStateBytes = op.CoordinatorState.Size
	}
	states := map[stateKey]*pb.StateInfo{}
	var order []stateKey
	kinds := map[string]bool{}
	for j := range op.Subtasks {
		st := &op.Subtasks[j]
		if st.Finished {
			info.FinishedSubtasks++
			continue
		}
		for e, raw := range st.OperatorStatesRaw() {
			stop.Check()
			k := stateKey{e.Name, e.Mode, raw}
			s, ok := states[k]
			if !ok {
				s = &pb.StateInfo{Name: e.Name, Mode: e.Mode.String(), Raw: raw}
				states[k] = s
				order = append(order, k)
			}
			s.Elements += e.Elements
			s.Bytes += e.Bytes
			s.Subtasks++
		}
		for k := range st.KeyedStateHandles() {
			info.KeyedBytes += k.StateSize
			if !kinds[k.Kind.String()] {
				kinds[k.Kind.String()] = true
				info.KeyedHandleKinds = append(info.KeyedHandleKinds, k.Kind.String())
			}
		}
		for _, chs := range [][]checkpoint.ChannelStateLayout{st.InputChannels(), st.OutputChannels()} {
			for _, ch := range chs {
				info.ChannelStateBytes += ch.Size
			}
		}
	}
	for _, k := range order {
		info.States = append(info.States, states[k])
	}
	return info
}
