package checkpoint

import (
	"context"
	"encoding/binary"
	"io"

	"github.com/flinkpreflight/preflight/internal/cancel"
)

// This file builds the Layout: ReadLayout runs the decoder in summarizing mode, and Metadata.Layout
// maps the decoded model (summaries included) onto the Layout types.

// ReadLayout decodes the analysis view of a _metadata file from r in bounded memory: offset
// arrays of operator state and channel state are folded into counts and run-length-encoded
// element sizes and inline bytes are counted, not kept. Errors are *FormatError.
func ReadLayout(r io.Reader) (*Layout, error) {
	return readLayout(newReaderDecoder(r))
}

// ReadLayoutSized is ReadLayout stopping when ctx ends, with ctx's error, for a stream whose
// length the caller expects (a file's size, an object's, an upload's header; 0 when unknown).
// r's reads are checked by the caller (a reader that checks ctx), and the work between reads
// (each state entry, each subtask record, each converted operator) checks ctx here: without
// this, the conversion of the last buffered record (a subtask with a million state names) ran
// for seconds after the deadline. The size only lets the decoder size its arrays once instead
// of growing them; a stream of another length decodes the same.
func ReadLayoutSized(ctx context.Context, r io.Reader, size int64) (l *Layout, err error) {
	stop, release := cancel.Watch(ctx)
	defer release()
	defer cancel.Recover(&err)
	d := newReaderDecoder(r)
	d.stop = stop
	d.sizeHint = max(size, 0)
	return readLayout(d)
}

func readLayout(d *decoder) (l *Layout, err error) {
	defer d.release()
	return readLayoutKeep(d)
}

// readLayoutKeep is readLayout leaving d's buffers to the caller (Decoder reuses them).
func readLayoutKeep(d *decoder) (l *Layout, err error) {
	if d.lay == nil {
		d.lay = &layoutState{}
	}
	ls := d.lay
	ls.handles.reset() // what a failed or format-1 file left
	defer recoverError(&err)
	m := d.file()
	// Operators went to ls.out one by one; format-1 tasks and the rest map as usual.
	l = m.layoutStop(ls.props, d.stop)
	if len(m.Operators) == 0 && len(m.Tasks) == 0 && ls.out.Operators != nil {
		l.Operators = ls.out.Operators
	}
	l.Size = d.offset()
	if m.Version >= 4 {
		l.TrailerSize = int(d.offset() - d.trailerOff)
	}
	return l, nil
}

// Layout derives the analysis view from a decoded file. Layout.Size is left 0 (ReadLayout fills
// it in).
func (m *Metadata) Layout() *Layout { return m.layout(nil) }

func (m *Metadata) layout(props *propertiesMemo) *Layout { return m.layoutStop(props, nil) }

// layoutStop is layout checking stop per converted record (under cancel.Recover).
func (m *Metadata) layoutStop(props *propertiesMemo, stop *cancel.Flag) *Layout {
	l := new(Layout)
	l.Version, l.CheckpointID = int(m.Version), m.CheckpointID
	for i := range m.MasterStates {
		ms := &m.MasterStates[i]
		l.MasterStates = append(l.MasterStates, MasterStateSummary{Name: ms.Name, Version: ms.Version, PayloadSize: int(ms.Size())})
	}
	l.Operators = make([]OperatorLayout, 0, len(m.Operators)+len(m.Tasks))
	for i := range m.Operators {
		l.Operators = append(l.Operators, operatorLayout(&m.Operators[i], stop))
	}
	for i := range m.Tasks {
		l.Operators = append(l.Operators, taskLayout(&m.Tasks[i], stop))
	}
	if m.Version >= 4 {
		l.TrailerSize = len(m.Trailer)
		if len(m.Trailer) > 0 {
			l.Properties, l.PropertiesError = props.decode(m.Trailer)
		}
	}
	return l
}

// operatorLayout maps one decoded operator record, checking stop per subtask and state entry.
func operatorLayout(op *OperatorState, stop *cancel.Flag) OperatorLayout {
	o := OperatorLayout{
		ID: op.ID, Name: op.Name, UID: op.UID,
		Parallelism: int(op.Parallelism), MaxParallelism: int(op.MaxParallelism),
		ChainLength: int(op.ChainLength), FullyFinished: op.FullyFinished, Offset: op.offset,
	}
	if op.CoordinatorState != nil {
		o.CoordinatorState = &CoordinatorStateRef{StreamRef: streamRef(op.CoordinatorState)}
		copy(o.CoordinatorState.Head[:], op.CoordinatorState.prefix())
	}
	o.Subtasks = make([]SubtaskLayout, 0, len(op.Subtasks))
	for _, e := range op.Subtasks {
		stop.Check()
		s := SubtaskLayout{Index: int(e.Index), Finished: e.Finished, RefCheckpointID: -1}
		if st := e.State; st != nil {
			if st.ManagedOperatorState.Present != 0 && st.ManagedOperatorState.Handle != nil {
				s.ManagedOperatorState = operatorHandleLayout(st.ManagedOperatorState.Handle, stop)
				s.ManagedOperatorState.Compression = streamCompression(st.ManagedOperatorState.Handle.Delegate)
			}
			if st.RawOperatorState.Present != 0 && st.RawOperatorState.Handle != nil {
				s.RawOperatorState = operatorHandleLayout(st.RawOperatorState.Handle, stop)
			}
			s.ManagedKeyedState = keyedLayout(st.ManagedKeyedState)
			s.RawKeyedState = keyedLayout(st.RawKeyedState)
			if in, out := channelLayouts(st.InputChannels), channelLayouts(st.OutputChannels); in != nil || out != nil {
				s.Channels = &ChannelLayouts{Input: in, Output: out}
			}
			if st.RefMarker == 1 {
				s.RefCheckpointID = st.RefCheckpointID
			}
		}
		o.Subtasks = append(o.Subtasks, s)
	}
	return o
}

// shareEmptySubtasks points o.Subtasks into one array shared by the Layout when its records are
// the empty records 0..n-1 in order (a stateless operator: each subtask reported, nothing
// held), instead of n records of its own. A file of many stateless operators spends about
// 22 bytes of _metadata on such a record and the Layout 64 bytes; shared, the records cost
// nothing per operator. The shared slice's capacity is its length, so an append copies. The
// Layout is read-only after decoding (the simulator only takes pointers into it).
func (ls *layoutState) shareEmptySubtasks(o *OperatorLayout) {
	n := len(o.Subtasks)
	if n == 0 {
		return
	}
	for k := range o.Subtasks {
		if !emptyRecord(&o.Subtasks[k], k) {
			return
		}
	}
	if len(ls.emptySubtasks) < n {
		grown := make([]SubtaskLayout, max(n, min(2*len(ls.emptySubtasks), maxKeyGroups)))
		for k := range grown {
			grown[k] = SubtaskLayout{Index: k, RefCheckpointID: -1}
		}
		ls.emptySubtasks = grown
	}
	o.Subtasks = ls.emptySubtasks[:n:n]
}

// emptyRecord reports whether s is the record of subtask k that holds nothing.
func emptyRecord(s *SubtaskLayout, k int) bool {
	return s.Index == k && !s.Finished && s.RefCheckpointID == -1 &&
		s.ManagedOperatorState == nil && s.RawOperatorState == nil &&
		s.ManagedKeyedState == nil && s.RawKeyedState == nil &&
		s.Channels == nil
}

// taskLayout maps a format-1 task onto an OperatorLayout: the operator states of all chained
// operators are listed together in one handle layout per slot (each state's sizes computed in
// its own handle's stream); the stream is the first chained operator's.
func taskLayout(t *TaskState, stop *cancel.Flag) OperatorLayout {
	o := OperatorLayout{
		ID: t.JobVertexID, Parallelism: int(t.Parallelism), MaxParallelism: int(t.MaxParallelism),
		ChainLength: int(t.ChainLength), Offset: t.offset,
	}
	merge := func(hs []*OperatorStateHandle) *OperatorStateHandleLayout {
		var out *OperatorStateHandleLayout
		for _, h := range hs {
			if h == nil {
				continue
			}
			hl := operatorHandleLayout(h, stop)
			if out == nil {
				out = hl
			} else {
				out.States = append(out.States, hl.States...)
			}
		}
		return out
	}
	for _, st := range t.Subtasks {
		stop.Check()
		o.Subtasks = append(o.Subtasks, SubtaskLayout{
			Index:                int(st.Index),
			ManagedOperatorState: merge(st.ManagedOperatorState),
			RawOperatorState:     merge(st.RawOperatorState),
			ManagedKeyedState:    keyedLayout(st.ManagedKeyedState),
			RawKeyedState:        keyedLayout(st.RawKeyedState),
			RefCheckpointID:      -1,
		})
	}
	return o
}

func streamRef(h StreamStateHandle) StreamRef {
	switch h := h.(type) {
	case *ByteStreamStateHandle:
		return StreamRef{Kind: StreamInline, Size: h.Size(), Path: h.Name}
	case *FileStateHandle:
		return StreamRef{Kind: StreamFile, Size: h.StateSize, Path: h.Path}
	case *RelativeFileStateHandle:
		return StreamRef{Kind: StreamRelativeFile, Size: h.StateSize, Path: h.RelativePath}
	case *KeyGroupsStateHandle:
		d := streamRef(h.Delegate)
		return StreamRef{Kind: StreamKeyGroups, Size: d.Size, Path: d.Path}
	case *SegmentFileStateHandle:
		return StreamRef{Kind: StreamSegment, Size: h.StateSize, Path: h.PhysicalPath, SegmentStart: h.StartPos}
	case *EmptySegmentFileStateHandle:
		return StreamRef{Kind: StreamEmptySegment}
	}
	return StreamRef{Kind: StreamNone}
}

// inlineBytes returns the bytes of h stored inside _metadata.
func inlineBytes(h StreamStateHandle) int64 {
	switch h := h.(type) {
	case *ByteStreamStateHandle:
		return h.Size()
	case *KeyGroupsStateHandle:
		return inlineBytes(h.Delegate)
	}
	return 0
}

func operatorHandleLayout(h *OperatorStateHandle, stop *cancel.Flag) *OperatorStateHandleLayout {
	hl := &OperatorStateHandleLayout{
		Stream:      streamRef(h.Delegate),
		FileMerging: h.Tag == TagSegmentPartitionableOperatorStateHandle,
		Empty:       h.Tag == TagSegmentPartitionableOperatorStateHandle && h.Empty != 0,
	}
	if h.layouts != nil {
		hl.States = h.layouts
		finishLayouts(hl.States, h.ends, hl.Stream.Size, stop)
	} else {
		hl.States = finishStates(h.States, hl.Stream.Size, stop)
	}
	return hl
}

func keyedLayout(h KeyedStateHandle) *KeyedStateHandleLayout {
	if h == nil {
		return nil
	}
	k := new(KeyedStateHandleLayout)
	k.Tag, k.CheckpointedSize = h.keyedTag(), -1
	switch h := h.(type) {
	case *KeyGroupsStateHandle:
		k.Kind = KeyGroupsHandle
		if h.Tag == TagSavepointKeyGroupsHandle {
			k.Kind = SavepointKeyGroupsHandle
		}
		k.KeyGroups = KeyGroupRange{Start: int(h.StartKeyGroup), NumKeyGroups: int(h.NumKeyGroups)}
		k.Stream = streamRef(h.Delegate)
		k.KeyGroupBytes = h.keyGroupBytes
		if k.KeyGroupBytes.Len() == 0 {
			k.KeyGroupBytes = NewKeyGroupSizes(keyGroupBytes(h.Offsets, k.Stream.Size))
		}
		k.StateSize = k.Stream.Size
		k.CheckpointedSize = k.StateSize
		k.InlineBytes = inlineBytes(h.Delegate)
	case *IncrementalKeyedStateHandle:
		k.Kind = IncrementalHandle
		k.KeyGroups = KeyGroupRange{Start: int(h.StartKeyGroup), NumKeyGroups: int(h.NumKeyGroups)}
		k.Stream = streamRef(h.MetaData)
		k.CheckpointedSize = h.CheckpointedSize
		k.SharedFiles = fileSet(h.SharedFiles)
		k.PrivateFiles = fileSet(h.PrivateFiles)
		k.StateSize = k.Stream.Size + k.SharedFiles.Bytes + k.PrivateFiles.Bytes
		k.InlineBytes = inlineBytes(h.MetaData) + k.SharedFiles.InlineBytes + k.PrivateFiles.InlineBytes
		k.BackendID = h.BackendID
		k.CheckpointID = h.CheckpointID
	case *ChangelogStateBackendHandle:
		k.Kind = ChangelogHandle
		k.KeyGroups = KeyGroupRange{Start: int(h.StartKeyGroup), NumKeyGroups: int(h.NumKeyGroups)}
		k.CheckpointedSize = h.CheckpointedSize
		k.CheckpointID = h.CheckpointID
		for _, list := range [][]KeyedStateHandle{h.Materialized, h.NonMaterialized} {
			for _, n := range list {
				if nl := keyedLayout(n); nl != nil { // copied into Nested
					k.StateSize += nl.StateSize
					k.InlineBytes += nl.InlineBytes
					k.Nested = append(k.Nested, *nl)
				}
			}
		}
	case *InMemoryChangelogStateHandle:
		k.Kind = ChangelogBytesHandle
		k.KeyGroups = KeyGroupRange{Start: int(h.StartKeyGroup), NumKeyGroups: int(h.NumKeyGroups)}
		for i := range h.Changes {
			k.StateSize += h.Changes[i].Size()
		}
		k.InlineBytes = k.StateSize
		k.CheckpointedSize = k.StateSize
	case *ChangelogStateHandleStreamImpl:
		k.Kind = ChangelogFileHandle
		k.KeyGroups = KeyGroupRange{Start: int(h.StartKeyGroup), NumKeyGroups: int(h.NumKeyGroups)}
		k.StateSize = h.StateSize
		k.CheckpointedSize = h.CheckpointedSize
		for _, s := range h.Handles {
			k.InlineBytes += inlineBytes(s.Handle)
		}
	}
	return k
}

func fileSet(files []HandleAndLocalPath) FileSet {
	fs := FileSet{Count: len(files)}
	for _, f := range files {
		fs.Bytes += streamRef(f.Handle).Size
		fs.InlineBytes += inlineBytes(f.Handle)
	}
	return fs
}

func channelLayouts(hs []ChannelStateHandle) []ChannelStateLayout {
	if len(hs) == 0 {
		return nil
	}
	out := make([]ChannelStateLayout, 0, len(hs))
	for i := range hs {
		h := &hs[i]
		ref := streamRef(h.Delegate)
		if h.Merged() {
			for _, c := range h.Channels {
				out = append(out, ChannelStateLayout{SubtaskIndex: int(h.SubtaskIndex), Info1: c.Info1, Info2: c.Info2, Size: c.StateSize, Stream: ref, Merged: true})
			}
			continue
		}
		out = append(out, ChannelStateLayout{SubtaskIndex: int(h.SubtaskIndex), Info1: h.Info1, Info2: h.Info2, Size: h.StateSize, Stream: ref})
	}
	return out
}

// streamCompression reads the compression flag of a managed operator-state stream held inside
// _metadata: i32 header version, then (version 6) a boolean.
func streamCompression(h StreamStateHandle) Compression {
	b, ok := h.(*ByteStreamStateHandle)
	if !ok {
		return CompressionUnknown
	}
	p := b.prefix()
	if len(p) < 5 {
		return CompressionUnknown
	}
	switch v := int32(binary.BigEndian.Uint32(p)); {
	case v >= 1 && v <= 5:
		return CompressionNone
	case v == 6 && p[4] == 0:
		return CompressionNone
	case v == 6 && p[4] == 1:
		return CompressionSnappy
	}
	return CompressionUnknown
}
