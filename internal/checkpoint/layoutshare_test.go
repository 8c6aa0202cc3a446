package checkpoint

import (
	"bytes"
	"reflect"
	"testing"
)

// TestEmptySubtasksShared: operators whose subtask records 0..n-1 all hold nothing share one
// array of records in the streaming Layout (a stateless operator costs no record of its own),
// the Layout still equals the decoded model's, and records that differ (out of order, finished,
// with state) keep their own.
func TestEmptySubtasksShared(t *testing.T) {
	empty := func(idx ...int32) []SubtaskEntry {
		var out []SubtaskEntry
		for _, i := range idx {
			out = append(out, SubtaskEntry{Index: i, State: &SubtaskState{}})
		}
		return out
	}
	op := func(uid string, p int32, subtasks []SubtaskEntry) OperatorState {
		return OperatorState{Name: uid, UID: uid, ID: OperatorIDFromUID(uid), Parallelism: p, MaxParallelism: 128, Subtasks: subtasks}
	}
	m := &Metadata{Version: 5, CheckpointID: 7, Operators: []OperatorState{
		op("a", 3, empty(0, 1, 2)),
		op("b", 2, empty(0, 1)),
		op("c", 2, empty(1, 0)), // out of order
		op("d", 2, append(empty(0), SubtaskEntry{Index: 1, Finished: true})),
		op("e", 1, empty(0)),
	}}
	var b bytes.Buffer
	if err := Write(&b, m); err != nil {
		t.Fatal(err)
	}
	l, err := ReadLayout(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := ReadBytes(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := decoded.Layout()
	want.Size, want.TrailerSize = l.Size, l.TrailerSize
	if !reflect.DeepEqual(l, want) {
		t.Errorf("streaming Layout differs from the decoded model's:\n got %+v\nwant %+v", l.Operators, want.Operators)
	}
	ops := l.Operators
	first := func(i int) *SubtaskLayout { return &ops[i].Subtasks[0] }
	for _, i := range []int{1, 4} {
		if first(i) != first(0) {
			t.Errorf("operator %s: its empty records are not shared", ops[i].UID)
		}
	}
	for _, i := range []int{2, 3} {
		if first(i) == first(0) {
			t.Errorf("operator %s: records that are not the empty records 0..n-1 are shared", ops[i].UID)
		}
	}
	if c := cap(ops[0].Subtasks); c != len(ops[0].Subtasks) {
		t.Errorf("a shared slice has capacity %d beyond its length %d: an append would write into others", c, len(ops[0].Subtasks))
	}
}
