package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

// TestReadFileRefs: every kind of handle that names a file is found, wherever it is nested, in
// file order; inline bytes are not files.
func TestReadFileRefs(t *testing.T) {
	file := func(p string, n int64) *FileStateHandle { return &FileStateHandle{Path: p, StateSize: n} }
	opState := func(h StreamStateHandle) OperatorStateSlot {
		return OperatorStateSlot{Present: 1, Handle: &OperatorStateHandle{Tag: TagPartitionableOperatorStateHandle, Delegate: h,
			States: []StateEntry{{Name: "s", Offsets: []int64{0}}}}}
	}
	for _, c := range []struct {
		name  string
		state SubtaskState
		want  []string
	}{
		{"operator state, relative", SubtaskState{ManagedOperatorState: opState(&RelativeFileStateHandle{RelativePath: "a", StateSize: 5})}, []string{"relative-file a 5+0"}},
		{"raw operator state, inline", SubtaskState{RawOperatorState: opState(&ByteStreamStateHandle{Name: "x", Data: []byte{1}})}, nil},
		{"key groups", SubtaskState{ManagedKeyedState: &KeyGroupsStateHandle{Tag: TagKeyGroupsHandleV2, NumKeyGroups: 1, Offsets: []int64{0},
			Delegate: file("s3://b/k", 9), StateHandleID: "id"}}, []string{"file s3://b/k 9+0"}},
		{"incremental", SubtaskState{ManagedKeyedState: &IncrementalKeyedStateHandle{Tag: TagIncrementalKeyGroupsHandleV2, NumKeyGroups: 1, BackendID: "b", StateHandleID: "i",
			MetaData:     file("s3://b/meta", 3),
			SharedFiles:  []HandleAndLocalPath{{LocalPath: "1.sst", Handle: file("s3://b/shared/1.sst", 100)}},
			PrivateFiles: []HandleAndLocalPath{{LocalPath: "MANIFEST", Handle: &SegmentFileStateHandle{StartPos: 10, StateSize: 20, PhysicalPath: "s3://b/taskowned/m", LogicalFileID: "l"}}},
		}}, []string{"file s3://b/meta 3+0", "file s3://b/shared/1.sst 100+0", "segment s3://b/taskowned/m 20+10"}},
		{"changelog", SubtaskState{ManagedKeyedState: &ChangelogStateBackendHandle{Tag: TagChangelogHandleV2, NumKeyGroups: 1, StateHandleID: "c",
			Materialized: []KeyedStateHandle{&KeyGroupsStateHandle{Tag: TagKeyGroupsHandleV2, NumKeyGroups: 1, Offsets: []int64{0}, Delegate: file("s3://b/mat", 7), StateHandleID: "m"}},
			NonMaterialized: []KeyedStateHandle{&ChangelogStateHandleStreamImpl{Tag: TagChangelogFileIncrementHandleV2, NumKeyGroups: 1, StateHandleID: "n", StorageIdentifier: "filesystem",
				Handles: []ChangelogSegment{{Offset: 0, Handle: file("s3://b/dstl/1", 50)}, {Offset: 25, Handle: file("s3://b/dstl/1", 50)}}}},
		}}, []string{"file s3://b/mat 7+0", "file s3://b/dstl/1 50+0", "file s3://b/dstl/1 50+0"}},
		{"channel state", SubtaskState{InputChannels: []ChannelStateHandle{{Tag: TagInputChannelHandle, Offsets: []int64{0}, StateSize: 4, Delegate: file("file:/chk/ch", 4)}}},
			[]string{"file file:/chk/ch 4+0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := c.state
			m := &Metadata{Version: 6, CheckpointID: 1, Operators: []OperatorState{{ID: OperatorIDFromUID("x"), Parallelism: 1, MaxParallelism: 128,
				Subtasks: []SubtaskEntry{{Index: 0, State: &st}}}}}
			var b bytes.Buffer
			if err := Write(&b, m); err != nil {
				t.Fatal(err)
			}
			var got []string
			err := ReadFileRefs(context.Background(), &b, int64(b.Len()), func(f FileRef) {
				if f.Operator != m.Operators[0].ID || f.Subtask != 0 {
					t.Errorf("ref %+v: wrong operator or subtask", f)
				}
				got = append(got, fmt.Sprintf("%s %s %d+%d", f.Kind, f.Path, f.Size, f.Start))
			})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("refs %q, want %q", got, c.want)
			}
		})
	}
}

// TestReadFileRefsCancelled: a cancelled context stops the read with its error.
func TestReadFileRefsCancelled(t *testing.T) {
	m := &Metadata{Version: 3, CheckpointID: 1, Operators: []OperatorState{{ID: OperatorIDFromUID("x"), Parallelism: 1, MaxParallelism: 128}}}
	var b bytes.Buffer
	if err := Write(&b, m); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ReadFileRefs(ctx, &b, 0, func(FileRef) {}); err != context.Canceled {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
