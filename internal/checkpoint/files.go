package checkpoint

import (
	"context"
	"io"

	"github.com/flinkpreflight/preflight/internal/cancel"
)

// This file lists the state files a _metadata file points to: every FileStateHandle,
// RelativeFileStateHandle and file-merging segment, wherever it sits (operator state, keyed state
// and its incremental file lists, changelog handles, unaligned-checkpoint channel state, the
// legacy state of format 2, the task records of format 1). The package still opens none of them.

// FileRef is one reference to a state file.
type FileRef struct {
	// Kind is StreamFile (tag 2: Path is absolute, a URI or a path), StreamRelativeFile (tag 6:
	// Path is relative to the folder of _metadata) or StreamSegment (tag 15: Path is the
	// physical file the segment lies in).
	Kind StreamKind
	Path string
	// Size is the recorded state size: a file handle's whole file, a segment's length.
	Size int64
	// Start is a segment's offset in its physical file (0 for file handles).
	Start int64
	// Operator is the operator whose state holds the handle (format 1: the job vertex), and
	// Subtask its subtask index.
	Operator OperatorID
	Subtask  int
}

// MinSize is the least size the file must have for the handle to be read: a segment's end
// (start + length), a file handle's recorded size.
func (f FileRef) MinSize() int64 { return f.Start + f.Size }

// ReadFileRefs decodes the _metadata stream r (of the expected size, 0 when unknown) in bounded
// memory, as ReadLayoutSized does, and hands every file reference to fn in file order,
// duplicates included. It stops when ctx ends, with ctx's error; malformed input is a
// *FormatError.
func ReadFileRefs(ctx context.Context, r io.Reader, size int64, fn func(FileRef)) (err error) {
	defer func() {
		if cerr := ctx.Err(); err != nil && cerr != nil {
			err = cerr
		}
	}()
	stop, release := cancel.Watch(ctx)
	defer release()
	defer cancel.Recover(&err)
	d := newReaderDecoder(cancel.Reader(ctx, r))
	d.stop = stop
	d.sizeHint = max(size, 0)
	d.lay = &layoutState{onOperator: func(op *OperatorState) {
		for _, e := range op.Subtasks {
			stop.Check()
			if e.State != nil {
				e.State.fileRefs(func(f FileRef) { f.Operator, f.Subtask = op.ID, int(e.Index); fn(f) })
			}
		}
	}}
	defer d.release()
	defer recoverError(&err)
	m := d.file()
	for _, t := range m.Tasks {
		for i := range t.Subtasks {
			stop.Check()
			t.Subtasks[i].fileRefs(func(f FileRef) { f.Operator, f.Subtask = t.JobVertexID, int(t.Subtasks[i].Index); fn(f) })
		}
	}
	return nil
}

// fileRefs yields the file references of one subtask's state.
func (s *SubtaskState) fileRefs(fn func(FileRef)) {
	for _, h := range s.Legacy {
		streamFileRefs(h, fn)
	}
	for _, slot := range []OperatorStateSlot{s.ManagedOperatorState, s.RawOperatorState} {
		if slot.Present != 0 && slot.Handle != nil {
			streamFileRefs(slot.Handle.Delegate, fn)
		}
	}
	keyedFileRefs(s.ManagedKeyedState, fn)
	keyedFileRefs(s.RawKeyedState, fn)
	for _, chs := range [][]ChannelStateHandle{s.InputChannels, s.OutputChannels} {
		for i := range chs {
			streamFileRefs(chs[i].Delegate, fn)
		}
	}
}

// fileRefs yields the file references of one format-1 subtask.
func (s *TaskSubtaskState) fileRefs(fn func(FileRef)) {
	for _, h := range s.Legacy {
		streamFileRefs(h, fn)
	}
	for _, hs := range [][]*OperatorStateHandle{s.ManagedOperatorState, s.RawOperatorState} {
		for _, h := range hs {
			if h != nil {
				streamFileRefs(h.Delegate, fn)
			}
		}
	}
	keyedFileRefs(s.ManagedKeyedState, fn)
	keyedFileRefs(s.RawKeyedState, fn)
}

func streamFileRefs(h StreamStateHandle, fn func(FileRef)) {
	switch h := h.(type) {
	case *FileStateHandle:
		fn(FileRef{Kind: StreamFile, Path: h.Path, Size: h.StateSize})
	case *RelativeFileStateHandle:
		fn(FileRef{Kind: StreamRelativeFile, Path: h.RelativePath, Size: h.StateSize})
	case *SegmentFileStateHandle:
		fn(FileRef{Kind: StreamSegment, Path: h.PhysicalPath, Size: h.StateSize, Start: h.StartPos})
	case *KeyGroupsStateHandle:
		streamFileRefs(h.Delegate, fn)
	}
}

func keyedFileRefs(h KeyedStateHandle, fn func(FileRef)) {
	switch h := h.(type) {
	case *KeyGroupsStateHandle:
		streamFileRefs(h.Delegate, fn)
	case *IncrementalKeyedStateHandle:
		streamFileRefs(h.MetaData, fn)
		for _, files := range [][]HandleAndLocalPath{h.SharedFiles, h.PrivateFiles} {
			for _, f := range files {
				streamFileRefs(f.Handle, fn)
			}
		}
	case *ChangelogStateBackendHandle:
		for _, list := range [][]KeyedStateHandle{h.Materialized, h.NonMaterialized} {
			for _, n := range list {
				keyedFileRefs(n, fn)
			}
		}
	case *ChangelogStateHandleStreamImpl:
		for _, s := range h.Handles {
			streamFileRefs(s.Handle, fn)
		}
	}
}
