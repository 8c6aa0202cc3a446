package rescale

import (
	"fmt"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// Builders for hand-made layouts. Element sizes are 10 bytes unless a test says otherwise.

const elemSize = 10

func entry(name string, mode checkpoint.DistributionMode, n int64) checkpoint.StateEntryLayout {
	e := checkpoint.StateEntryLayout{Name: name, Mode: mode, Elements: n, Bytes: n * elemSize}
	if mode == checkpoint.SplitDistribute {
		e.Sizes.Append(elemSize, n)
	}
	return e
}

func split(name string, n int64) checkpoint.StateEntryLayout {
	return entry(name, checkpoint.SplitDistribute, n)
}
func union(name string, n int64) checkpoint.StateEntryLayout { return entry(name, checkpoint.Union, n) }
func bcast(name string, n int64) checkpoint.StateEntryLayout {
	return entry(name, checkpoint.Broadcast, n)
}

// handle is an operator state handle on a file stream named path.
func handle(path string, states ...checkpoint.StateEntryLayout) *checkpoint.OperatorStateHandleLayout {
	var size int64
	for _, s := range states {
		size += s.Bytes
	}
	return &checkpoint.OperatorStateHandleLayout{States: states,
		Stream: checkpoint.StreamRef{Kind: checkpoint.StreamFile, Path: path, Size: size}}
}

func inlineHandle(path string, states ...checkpoint.StateEntryLayout) *checkpoint.OperatorStateHandleLayout {
	h := handle(path, states...)
	h.Stream.Kind = checkpoint.StreamInline
	return h
}

// sub is old subtask i with a managed operator state handle (nil for none).
func sub(i int, h *checkpoint.OperatorStateHandleLayout) checkpoint.SubtaskLayout {
	return checkpoint.SubtaskLayout{Index: i, ManagedOperatorState: h, RefCheckpointID: -1}
}

// keyGroupsHandle is a heap key-groups handle of old subtask j of p at maxP, with key group kg
// holding kg+1 bytes.
func keyGroupsHandle(maxP, p, j int) *checkpoint.KeyedStateHandleLayout {
	r := KeyGroupRangeForSubtask(maxP, p, j)
	h := &checkpoint.KeyedStateHandleLayout{Kind: checkpoint.KeyGroupsHandle, KeyGroups: r,
		Stream: checkpoint.StreamRef{Kind: checkpoint.StreamFile, Path: fmt.Sprintf("kg-%d", j)}}
	var sizes []int64
	for kg := r.Start; kg <= r.End(); kg++ {
		sizes = append(sizes, int64(kg+1))
		h.StateSize += int64(kg + 1)
	}
	h.KeyGroupBytes = checkpoint.NewKeyGroupSizes(sizes)
	h.Stream.Size = h.StateSize
	return h
}

func opID(n int) checkpoint.OperatorID {
	var id checkpoint.OperatorID
	id[15] = byte(n)
	id[14] = byte(n >> 8)
	id[0] = 0xa0
	return id
}

func op(n, p, maxP int, subtasks ...checkpoint.SubtaskLayout) checkpoint.OperatorLayout {
	return checkpoint.OperatorLayout{ID: opID(n), Parallelism: p, MaxParallelism: maxP, Subtasks: subtasks}
}

func layoutOf(ops ...checkpoint.OperatorLayout) *checkpoint.Layout {
	return &checkpoint.Layout{Version: 3, Operators: ops}
}

func simulate(t testing.TB, l *checkpoint.Layout, plan Plan) *Result {
	t.Helper()
	r, err := Simulate(l, plan)
	if err != nil {
		t.Fatalf("Simulate: %v", err)
	}
	return r
}

// entriesPerName counts, for each state name, the (new subtask, entry) pairs that contain it and
// the offsets per entry.
func entriesPerName(a *OperatorAssignment) (entries map[string]int, offsets map[string][]int64) {
	entries, offsets = map[string]int{}, map[string][]int64{}
	for i := 0; i < a.NewParallelism; i++ {
		for k, s := range a.States() {
			for _, sl := range s.Share(i).Slices {
				entries[s.Name]++
				offsets[s.Name] = append(offsets[s.Name], sl.Elements)
			}
			_ = k
		}
	}
	return entries, offsets
}

// sliceString renders a share as "h0[0+2] h1[0+1]" (stream path, first element, count).
func sliceString(sh Share) string {
	s := ""
	for k, sl := range sh.Slices {
		if k > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s[%d+%d]", sl.Stream.Path, sl.First, sl.Elements)
	}
	return s
}
