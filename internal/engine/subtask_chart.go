package engine

import (
	"cmp"
	"slices"

	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// subtaskStates is what new subtask i receives per state name, of op's states (counts only: O(1)
// per UNION name, however many old subtasks wrote it).
func subtaskStates(states []*rescale.StateDistribution, i int) []*pb.SubtaskStateShare {
	out := make([]*pb.SubtaskStateShare, len(states))
	for k, d := range states {
		sh := d.ShareCounts(i)
		out[k] = &pb.SubtaskStateShare{Name: d.Name, Mode: d.Mode.String(), Elements: sh.Elements, Bytes: sh.Bytes}
	}
	return out
}

// subtaskRows calls fn with every new subtask's row of op with its state shares (what
// include_subtasks lists), one at a time, checking stop per row (runs under cancel.Recover).
// states is op.States(), built once by the caller for these rows and oldSubtaskRows'.
func subtaskRows(stop *cancel.Flag, op *rescale.OperatorAssignment, states []*rescale.StateDistribution, fn func(*pb.SubtaskAssignment)) {
	for i := 0; i < op.NewParallelism; i++ {
		stop.Check()
		sa := subtaskAssignment(op, i)
		sa.States = subtaskStates(states, i)
		fn(sa)
	}
}

// oldSubtasks is what every old subtask of op held (oldSubtaskRows), all of them; states is
// op.States().
func oldSubtasks(stop *cancel.Flag, op *rescale.OperatorAssignment, states []*rescale.StateDistribution) []*pb.OldSubtaskState {
	if op.Layout == nil || op.Layout.Parallelism <= 0 {
		return nil
	}
	out := make([]*pb.OldSubtaskState, 0, op.Layout.Parallelism)
	oldSubtaskRows(stop, op, states, func(o *pb.OldSubtaskState) { out = append(out, o) })
	return out
}

// oldStateKey finds an old entry's state among op's states.
type oldStateKey struct {
	name string
	raw  bool
}

// oldSubtaskRows calls fn with what each old subtask of op held, in index order, with the
// operator states in op's order (OperatorAssignment.State) so that a chart can put old and new side by side, name by
// name. It builds one message at a time, so that a caller handing them on in chunks
// (rowsInPieces) holds a chunk, not old parallelism × states messages. It checks stop per old
// subtask and per record (runs under cancel.Recover). states is op.States().
func oldSubtaskRows(stop *cancel.Flag, op *rescale.OperatorAssignment, states []*rescale.StateDistribution, fn func(*pb.OldSubtaskState)) {
	l := op.Layout
	if l == nil || l.Parallelism <= 0 {
		return
	}
	// One lookup per old entry, not a scan of the names (an operator may have very many).
	stateIndex := make(map[oldStateKey]int, len(states))
	for j, d := range states {
		stop.Check()
		if _, dup := stateIndex[oldStateKey{d.Name, d.Raw}]; !dup {
			stateIndex[oldStateKey{d.Name, d.Raw}] = j
		}
	}
	order := recordsByIndex(l.Subtasks)
	record := func(k int) *checkpoint.SubtaskLayout {
		if order != nil {
			return &l.Subtasks[order[k]]
		}
		return &l.Subtasks[k]
	}
	k := 0
	for i := 0; i < l.Parallelism; i++ {
		stop.Check()
		o := &pb.OldSubtaskState{Index: int32(i), States: make([]*pb.SubtaskStateShare, len(states))}
		for j, d := range states {
			o.States[j] = &pb.SubtaskStateShare{Name: d.Name, Mode: d.Mode.String()}
		}
		// The records of subtask i: a file may hold several, or none; those of an index out of
		// range are skipped.
		for ; k < len(l.Subtasks) && record(k).Index <= i; k++ {
			stop.Check()
			if st := record(k); st.Index == i {
				addOldRecord(o, st, stateIndex)
			}
		}
		fn(o)
	}
}

// recordsByIndex returns the positions of records in ascending order of their subtask index,
// file order among equals; nil when they are in that order already (the usual file).
func recordsByIndex(records []checkpoint.SubtaskLayout) []int32 {
	sorted := true
	for k := 1; k < len(records) && sorted; k++ {
		sorted = records[k-1].Index <= records[k].Index
	}
	if sorted {
		return nil
	}
	order := make([]int32, len(records))
	for k := range order {
		order[k] = int32(k)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(records[a].Index, records[b].Index) })
	return order
}

// addOldRecord adds what the subtask record st holds to its old subtask's message o.
func addOldRecord(o *pb.OldSubtaskState, st *checkpoint.SubtaskLayout, stateIndex map[oldStateKey]int) {
	for e, raw := range st.OperatorStatesRaw() {
		o.Elements += e.Elements
		o.Bytes += e.Bytes
		if j, ok := stateIndex[oldStateKey{e.Name, raw}]; ok {
			o.States[j].Elements += e.Elements
			o.States[j].Bytes += e.Bytes
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
