package engine

import (
	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// subtaskStates is what new subtask i receives per state name, parallel to op.States (counts
// only: O(1) per UNION name, however many old subtasks wrote it).
func subtaskStates(op *rescale.OperatorAssignment, i int) []*pb.SubtaskStateShare {
	out := make([]*pb.SubtaskStateShare, len(op.States))
	for k, d := range op.States {
		sh := d.ShareCounts(i)
		out[k] = &pb.SubtaskStateShare{Name: d.Name, Mode: d.Mode.String(), Elements: sh.Elements, Bytes: sh.Bytes}
	}
	return out
}

// oldSubtasks is what every old subtask of op held, with the operator states in op.States order
// so that a chart can put old and new side by side, name by name.
func oldSubtasks(stop *cancel.Flag, op *rescale.OperatorAssignment) []*pb.OldSubtaskState {
	l := op.Layout
	if l == nil || l.Parallelism <= 0 {
		return nil
	}
	// One lookup per old entry, not a scan of the names (an operator may have very many).
	type stateKey struct {
		name string
		raw  bool
	}
	stateIndex := make(map[stateKey]int, len(op.States))
	for j, d := range op.States {
		if _, dup := stateIndex[stateKey{d.Name, d.Raw}]; !dup {
			stateIndex[stateKey{d.Name, d.Raw}] = j
		}
	}
	out := make([]*pb.OldSubtaskState, l.Parallelism)
	for i := range out {
		o := &pb.OldSubtaskState{Index: int32(i), States: make([]*pb.SubtaskStateShare, len(op.States))}
		for k, d := range op.States {
			o.States[k] = &pb.SubtaskStateShare{Name: d.Name, Mode: d.Mode.String()}
		}
		out[i] = o
	}
	for k := range l.Subtasks {
		stop.Check()
		st := &l.Subtasks[k]
		if st.Index < 0 || st.Index >= len(out) {
			continue
		}
		o := out[st.Index]
		for _, h := range []struct {
			h   *checkpoint.OperatorStateHandleLayout
			raw bool
		}{{st.ManagedOperatorState, false}, {st.RawOperatorState, true}} {
			if h.h == nil {
				continue
			}
			for _, e := range h.h.States {
				o.Elements += e.Elements
				o.Bytes += e.Bytes
				if j, ok := stateIndex[stateKey{e.Name, h.raw}]; ok {
					o.States[j].Elements += e.Elements
					o.States[j].Bytes += e.Bytes
				}
			}
		}
		for h := range st.KeyedStateHandles() {
			o.KeyedBytes += h.StateSize
			o.Bytes += h.StateSize
		}
		for _, c := range st.InputChannels() {
			o.Bytes += c.Size
		}
		for _, c := range st.OutputChannels() {
			o.Bytes += c.Size
		}
	}
	return out
}
