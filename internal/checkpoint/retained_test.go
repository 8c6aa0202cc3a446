package checkpoint

import (
	"bytes"
	"fmt"
	"reflect"
	"runtime"
	"testing"
)

// TestRetainedRecordSizes: the per-record constants of RetainedBytes are the records' sizes
// (in a slice) or those rounded up to a size class (allocated alone).
func TestRetainedRecordSizes(t *testing.T) {
	tests := []struct {
		name       string
		constant   uintptr
		size       uintptr
		allocAlone bool
	}{
		{"Layout", layoutBytes, sizeOf[Layout](), true},
		{"MasterStateSummary", masterStateBytes, sizeOf[MasterStateSummary](), false},
		{"CheckpointProperties", propertiesBytes, sizeOf[CheckpointProperties](), true},
		{"OperatorLayout", operatorBytes, sizeOf[OperatorLayout](), false},
		{"SubtaskLayout", subtaskBytes, sizeOf[SubtaskLayout](), false},
		{"OperatorStateHandleLayout", operatorHandleSize, sizeOf[OperatorStateHandleLayout](), true},
		{"StateEntryLayout", stateEntryBytes, sizeOf[StateEntryLayout](), false},
		{"StreamRef", streamRefBytes, sizeOf[StreamRef](), true},
		{"CoordinatorStateRef", coordinatorBytes, sizeOf[CoordinatorStateRef](), true},
		{"KeyedStateHandleLayout", keyedHandleBytes, sizeOf[KeyedStateHandleLayout](), true},
		{"KeyedStateHandleLayout in a slice", keyedNestedBytes, sizeOf[KeyedStateHandleLayout](), false},
		{"ChannelStateLayout", channelBytes, sizeOf[ChannelStateLayout](), false},
		{"ChannelLayouts", channelsBytes, sizeOf[ChannelLayouts](), true},
		{"SizeRun", sizeRunBytes, sizeOf[SizeRun](), false},
		{"moreRuns", moreRunsBytes, sizeOf[moreRuns](), true},
		{"runEnd", sizeRunBytes, sizeOf[runEnd](), false},
	}
	if sizeOf[uintptr]() != 8 {
		t.Skip("the constants are for 64-bit platforms")
	}
	for _, tc := range tests {
		switch {
		case !tc.allocAlone && tc.constant != tc.size:
			t.Errorf("%s: constant %d, record is %d bytes", tc.name, tc.constant, tc.size)
		case tc.allocAlone && (tc.constant < tc.size || tc.constant > tc.size+tc.size/4+8):
			t.Errorf("%s: constant %d, record is %d bytes (the constant is its size class)", tc.name, tc.constant, tc.size)
		}
	}
}

// retainedFactor is how far RetainedBytes may be from the heap a Layout really holds.
const retainedFactor = 1.5

// TestRetainedBytesMeasured decodes files of different shapes and compares RetainedBytes with
// the heap the Layout holds, measured with runtime.MemStats: within retainedFactor either way.
func TestRetainedBytesMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	tests := []struct {
		name string
		file []byte
	}{
		{"keyed 8 operators x 64 subtasks", largeKeyedFile(t, 8, 64)},
		{"operator state 200 operators x 64 subtasks x 3 names", operatorStateFile(t, 200, 64, 3)},
		{"stateless 2000 operators x 32 subtasks", operatorStateFile(t, 2000, 32, 0)},
		{"union 4 subtasks x 200000 offsets", operatorStateFile(t, 4, 4, -200000)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := heapAlloc()
			l, err := readLayoutBytes(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			measured := int64(heapAlloc() - before)
			est := l.RetainedBytes()
			runtime.KeepAlive(l)
			ratio := float64(est) / float64(max(measured, 1))
			t.Logf("RetainedBytes %d, measured %d (×%.2f)", est, measured, ratio)
			if ratio > retainedFactor || ratio < 1/retainedFactor {
				t.Errorf("RetainedBytes = %d, measured %d bytes: ×%.2f, beyond ×%g", est, measured, ratio, retainedFactor)
			}
		})
	}
}

// heapAlloc is the live heap after two collections (the second empties sync.Pool's victims).
func heapAlloc() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// operatorStateFile generates ops operators of parallelism p, each subtask holding a managed
// operator-state handle with names SPLIT_DISTRIBUTE states of 16 offsets; names 0 makes the
// subtasks stateless, names < 0 one handle with a UNION state of -names offsets.
func operatorStateFile(tb testing.TB, ops, p, names int) []byte {
	m := &Metadata{Version: 6, CheckpointID: 1, Trailer: mustHex(templateA)}
	for o := range ops {
		uid := fmt.Sprintf("op-%d", o)
		op := OperatorState{ID: OperatorIDFromUID(uid), UID: uid, Parallelism: int32(p), MaxParallelism: 128}
		for i := range p {
			st := &SubtaskState{}
			if names != 0 {
				st.ManagedOperatorState = OperatorStateSlot{Present: 1, Handle: operatorStateHandle(uid, i, names)}
			}
			op.Subtasks = append(op.Subtasks, SubtaskEntry{Index: int32(i), State: st})
		}
		m.Operators = append(m.Operators, op)
	}
	var buf bytes.Buffer
	if err := Write(&buf, m); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func operatorStateHandle(uid string, subtask, names int) *OperatorStateHandle {
	h := &OperatorStateHandle{Tag: TagPartitionableOperatorStateHandle,
		Delegate: &FileStateHandle{Path: fmt.Sprintf("s3://bucket/chk-1/%s-%d", uid, subtask)}}
	pos := int64(0)
	offsets := func(n int, size int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = pos
			pos += size + int64(i%3)
		}
		return out
	}
	if names < 0 {
		h.States = []StateEntry{{Name: "union", Mode: Union, Offsets: offsets(-names, 24)}}
	}
	for k := range max(names, 0) {
		h.States = append(h.States, StateEntry{Name: fmt.Sprintf("state-%d", k), Mode: SplitDistribute, Offsets: offsets(16, 40)})
	}
	h.Delegate.(*FileStateHandle).StateSize = pos
	return h
}

// sizeOf is the size of a T, as unsafe.Sizeof gives it, read through reflect so that no file of
// the repository imports unsafe.
func sizeOf[T any]() uintptr { return reflect.TypeFor[T]().Size() }
