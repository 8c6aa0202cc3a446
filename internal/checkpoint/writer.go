package checkpoint

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"
)

// nullTrailer is a Java-serialized null: the trailer written when a format-4+ Metadata has none.
var nullTrailer = []byte{0xAC, 0xED, 0x00, 0x05, 0x70}

// Write encodes m in its format version (2 to 7) the way Flink's DataOutputStream does. Values
// kept by Read for exactness (presence flags, boolean bytes, negative counts, the trailer and
// trailing bytes) are written back as read, so Write(Read(b)) reproduces b. A format-4+ Metadata
// with a nil Trailer gets a Java null trailer.
func Write(w io.Writer, m *Metadata) error {
	if m == nil {
		return fmt.Errorf("checkpoint: nil Metadata")
	}
	if m.Version < 2 || m.Version > 7 {
		return fmt.Errorf("checkpoint: cannot write format version %d (supported: 2 to 7)", m.Version)
	}
	e := &encoder{w: w, buf: make([]byte, 0, 64<<10)}
	e.file(m)
	if e.err == nil {
		e.flush()
	}
	return e.err
}

// encoder buffers big-endian output; the first error sticks.
type encoder struct {
	w       io.Writer
	buf     []byte
	err     error
	version int32
}

func (e *encoder) flush() {
	if e.err != nil || len(e.buf) == 0 {
		return
	}
	_, e.err = e.w.Write(e.buf)
	e.buf = e.buf[:0]
}

func (e *encoder) maybeFlush() {
	if len(e.buf) >= 64<<10 {
		e.flush()
	}
}

func (e *encoder) fail(format string, args ...any) {
	if e.err == nil {
		e.err = fmt.Errorf("checkpoint: "+format, args...)
	}
}

func (e *encoder) u8(v uint8)  { e.buf = append(e.buf, v) }
func (e *encoder) i32(v int32) { e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(v)) }
func (e *encoder) i64(v int64) { e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(v)) }

func (e *encoder) utf(s string) {
	b, err := appendMUTF8(e.buf, s)
	if err != nil {
		e.fail("%v", err)
		return
	}
	e.buf = b
}

func (e *encoder) raw(b []byte) {
	for len(b) > 0 && e.err == nil {
		k := min(len(b), 1<<20)
		e.buf = append(e.buf, b[:k]...)
		b = b[k:]
		e.maybeFlush()
	}
}

func (e *encoder) i64s(vs []int64) {
	for len(vs) > 0 && e.err == nil {
		k := min(len(vs), 8192)
		for _, v := range vs[:k] {
			e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(v))
		}
		vs = vs[k:]
		e.maybeFlush()
	}
}

func (e *encoder) count(n int, what string) {
	if n > 1<<31-1 {
		e.fail("too many %s: %d", what, n)
	}
	e.i32(int32(n))
}

func (e *encoder) file(m *Metadata) {
	e.version = m.Version
	e.i32(Magic)
	e.i32(m.Version)
	e.i64(m.CheckpointID)
	e.count(len(m.MasterStates), "master states")
	for i := range m.MasterStates {
		ms := &m.MasterStates[i]
		if ms.Payload == nil && ms.n > 0 {
			e.fail("master state %q: payload was not kept (metadata from ReadLayout cannot be written)", ms.Name)
			return
		}
		name, err := appendMUTF8(nil, ms.Name)
		if err != nil {
			e.fail("master state %d: %v", i, err)
			return
		}
		e.i32(masterStateMagic - 1<<32)
		e.count(4+len(name)+4+len(ms.Payload), "master state bytes")
		e.i32(ms.Version)
		e.raw(name)
		e.count(len(ms.Payload), "master state payload bytes")
		e.raw(ms.Payload)
	}
	e.count(len(m.Operators), "operators")
	for i := range m.Operators {
		e.operator(&m.Operators[i])
		if e.err != nil {
			return
		}
		e.maybeFlush()
	}
	if m.Version >= 4 {
		if m.Trailer == nil {
			e.raw(nullTrailer)
		} else {
			e.raw(m.Trailer)
		}
	} else {
		e.raw(m.Trailing)
	}
}

func (e *encoder) operator(op *OperatorState) {
	if e.version >= 5 {
		e.utf(op.Name)
		e.utf(op.UID)
	}
	e.buf = append(e.buf, op.ID[:]...)
	e.i32(op.Parallelism)
	e.i32(op.MaxParallelism)
	neg := op.negCount
	if neg >= 0 {
		neg = -1
	}
	if e.version == 2 {
		e.i32(op.ChainLength)
		if len(op.Subtasks) == 0 && op.negCount < 0 {
			e.i32(op.negCount)
			return
		}
	} else {
		if op.CoordinatorState == nil {
			e.u8(TagNullHandle)
		} else {
			e.stream(op.CoordinatorState)
		}
		if op.FullyFinished {
			if op.CoordinatorState != nil || len(op.Subtasks) > 0 {
				e.fail("operator %s: a fully finished operator has no coordinator state and no subtasks", op.ID)
			}
			e.i32(neg)
			return
		}
	}
	e.count(len(op.Subtasks), "subtasks")
	for _, s := range op.Subtasks {
		if s.Finished {
			if e.version == 2 {
				e.fail("operator %s: format 2 has no finished subtasks", op.ID)
			}
			e.i32(-s.Index - 1)
			continue
		}
		e.i32(s.Index)
		if s.State == nil {
			e.fail("operator %s subtask %d: no state", op.ID, s.Index)
			return
		}
		e.subtask(s.State)
		e.maybeFlush()
	}
}

func (e *encoder) subtask(s *SubtaskState) {
	if e.version == 2 {
		e.i64(s.Duration)
		e.count(len(s.Legacy), "legacy handles")
		for _, h := range s.Legacy {
			e.stream(h)
		}
	}
	e.slot(s.ManagedOperatorState)
	e.slot(s.RawOperatorState)
	e.keyed(s.ManagedKeyedState)
	e.keyed(s.RawKeyedState)
	if e.version >= 3 {
		e.channels(s.InputChannels, true)
		e.channels(s.OutputChannels, false)
	}
	if e.version == 7 {
		e.u8(s.RefMarker)
		if s.RefMarker == 1 {
			e.i64(s.RefCheckpointID)
		}
	}
}

func (e *encoder) slot(s OperatorStateSlot) {
	present := s.Present
	if present == 0 && s.Handle != nil {
		present = 1
	}
	e.i32(present)
	if present != 0 {
		e.operatorHandle(s.Handle)
	}
}

func (e *encoder) operatorHandle(h *OperatorStateHandle) {
	if h == nil {
		e.u8(TagNullHandle)
		return
	}
	tag := h.Tag
	if tag == 0 {
		tag = TagPartitionableOperatorStateHandle
	}
	if tag != TagPartitionableOperatorStateHandle && tag != TagSegmentPartitionableOperatorStateHandle {
		e.fail("invalid operator state handle tag %d", tag)
		return
	}
	e.u8(tag)
	e.count(len(h.States), "states")
	for i := range h.States {
		s := &h.States[i]
		e.utf(s.Name)
		if s.Mode > Broadcast {
			e.fail("state %q: invalid distribution mode %d", s.Name, s.Mode)
		}
		e.u8(uint8(s.Mode))
		if len(s.Offsets) == 0 && s.sum.n > 0 {
			e.fail("state %q: offsets were not kept (metadata from ReadLayout cannot be written)", s.Name)
		}
		e.count(len(s.Offsets), "offsets")
		e.i64s(s.Offsets)
	}
	if tag == TagSegmentPartitionableOperatorStateHandle {
		e.utf(h.TaskOwnedDir)
		e.utf(h.SharedDir)
		e.u8(h.Empty)
		switch h.Delegate.(type) {
		case *SegmentFileStateHandle, *EmptySegmentFileStateHandle:
		default:
			e.fail("file-merging operator state handle needs a segment delegate, got tag %d", streamTagOf(h.Delegate))
		}
	}
	e.stream(h.Delegate)
}

func (e *encoder) stream(h StreamStateHandle) {
	switch h := h.(type) {
	case nil:
		e.u8(TagNullHandle)
	case *ByteStreamStateHandle:
		if h == nil {
			e.u8(TagNullHandle)
			return
		}
		if h.Data == nil && h.n > 0 {
			e.fail("inline state %q was not kept (metadata from ReadLayout cannot be written)", h.Name)
		}
		e.u8(TagByteStreamStateHandle)
		e.utf(h.Name)
		e.count(len(h.Data), "inline bytes")
		e.raw(h.Data)
	case *FileStateHandle:
		e.u8(TagFileStreamStateHandle)
		e.i64(h.StateSize)
		e.utf(h.Path)
	case *KeyGroupsStateHandle:
		if h.Tag != TagKeyGroupsHandle && h.Tag != 0 {
			e.fail("a key-groups handle nested as a stream handle must have tag 3, has %d", h.Tag)
		}
		e.u8(TagKeyGroupsHandle)
		e.keyGroups(h, TagKeyGroupsHandle)
	case *RelativeFileStateHandle:
		e.u8(TagRelativeStreamStateHandle)
		e.utf(h.RelativePath)
		e.i64(h.StateSize)
	case *SegmentFileStateHandle:
		e.u8(TagSegmentFileHandle)
		e.i64(h.StartPos)
		e.i64(h.StateSize)
		e.i32(h.Scope)
		e.utf(h.PhysicalPath)
		e.utf(h.LogicalFileID)
	case *EmptySegmentFileStateHandle:
		e.u8(TagEmptySegmentFileHandle)
	default:
		e.fail("unknown stream state handle type %T", h)
	}
}

func (e *encoder) keyGroups(h *KeyGroupsStateHandle, tag uint8) {
	if int(h.NumKeyGroups) != len(h.Offsets) {
		e.fail("key-group handle: %d key groups but %d offsets", h.NumKeyGroups, len(h.Offsets))
		return
	}
	e.keyGroupRange(h.StartKeyGroup, h.NumKeyGroups)
	e.i64s(h.Offsets)
	e.stream(h.Delegate)
	if tag == TagKeyGroupsHandleV2 {
		e.utf(h.StateHandleID)
	}
}

func (e *encoder) keyed(h KeyedStateHandle) {
	if h == nil {
		e.u8(TagNullHandle)
		return
	}
	tag := h.keyedTag()
	switch h := h.(type) {
	case *KeyGroupsStateHandle:
		if e.keyedTag(tag, "key-groups handle", TagKeyGroupsHandle, TagKeyGroupsHandleV2, TagSavepointKeyGroupsHandle) {
			e.keyGroups(h, tag)
		}
	case *IncrementalKeyedStateHandle:
		if !e.keyedTag(tag, "incremental handle", TagIncrementalKeyGroupsHandle, TagIncrementalKeyGroupsHandleV2) {
			return
		}
		e.i64(h.CheckpointID)
		e.utf(h.BackendID)
		e.keyGroupRange(h.StartKeyGroup, h.NumKeyGroups)
		if tag == TagIncrementalKeyGroupsHandleV2 {
			e.i64(h.CheckpointedSize)
		}
		e.stream(h.MetaData)
		for _, list := range [][]HandleAndLocalPath{h.SharedFiles, h.PrivateFiles} {
			e.count(len(list), "files")
			for _, f := range list {
				e.utf(f.LocalPath)
				e.stream(f.Handle)
			}
		}
		if tag == TagIncrementalKeyGroupsHandleV2 {
			e.utf(h.StateHandleID)
		}
	case *ChangelogStateBackendHandle:
		if !e.keyedTag(tag, "changelog handle", TagChangelogHandle, TagChangelogHandleV2) {
			return
		}
		e.keyGroupRange(h.StartKeyGroup, h.NumKeyGroups)
		e.i64(h.CheckpointedSize)
		for _, list := range [][]KeyedStateHandle{h.Materialized, h.NonMaterialized} {
			e.count(len(list), "keyed handles")
			for _, n := range list {
				e.keyed(n)
			}
		}
		e.i64(h.MaterializationID)
		if tag == TagChangelogHandleV2 {
			e.i64(h.CheckpointID)
		}
		e.utf(h.StateHandleID)
	case *InMemoryChangelogStateHandle:
		e.u8(TagChangelogByteIncrementHandle)
		e.keyGroupRange(h.StartKeyGroup, h.NumKeyGroups)
		e.i64(h.From)
		e.i64(h.To)
		e.count(len(h.Changes), "state changes")
		for i := range h.Changes {
			c := &h.Changes[i]
			if c.Data == nil && c.n > 0 {
				e.fail("state change bytes were not kept (metadata from ReadLayout cannot be written)")
			}
			e.i32(c.KeyGroup)
			e.count(len(c.Data), "change bytes")
			e.raw(c.Data)
		}
		e.utf(h.StateHandleID)
	case *ChangelogStateHandleStreamImpl:
		if !e.keyedTag(tag, "changelog file handle", TagChangelogFileIncrementHandle, TagChangelogFileIncrementHandleV2) {
			return
		}
		e.keyGroupRange(h.StartKeyGroup, h.NumKeyGroups)
		e.count(len(h.Handles), "changelog handles")
		for _, s := range h.Handles {
			e.i64(s.Offset)
			e.stream(s.Handle)
		}
		e.i64(h.StateSize)
		e.i64(h.CheckpointedSize)
		e.utf(h.StateHandleID)
		if tag == TagChangelogFileIncrementHandleV2 {
			e.utf(h.StorageIdentifier)
		}
	default:
		e.fail("unknown keyed state handle type %T", h)
	}
}

// keyedTag writes a keyed handle's tag when it is one of the tags its type allows, and reports
// whether it was; what names the type in the error.
func (e *encoder) keyedTag(tag uint8, what string, allowed ...uint8) bool {
	if !slices.Contains(allowed, tag) {
		e.fail("invalid %s tag %d", what, tag)
		return false
	}
	e.u8(tag)
	return true
}

// keyGroupRange writes a KeyGroupRange as Flink does: start, then the number of key groups.
func (e *encoder) keyGroupRange(start, n int32) {
	e.i32(start)
	e.i32(n)
}

func (e *encoder) channels(hs []ChannelStateHandle, input bool) {
	e.count(len(hs), "channel state handles")
	for i := range hs {
		h := &hs[i]
		merged := h.Merged() || (h.Tag == 0 && h.Channels != nil)
		if e.version >= 6 {
			tag := h.Tag
			if tag == 0 {
				switch {
				case input && merged:
					tag = TagMergedInputChannelHandle
				case input:
					tag = TagInputChannelHandle
				case merged:
					tag = TagMergedResultSubpartitionHandle
				default:
					tag = TagResultSubpartitionHandle
				}
			}
			if (input && tag != TagInputChannelHandle && tag != TagMergedInputChannelHandle) || (!input && tag != TagResultSubpartitionHandle && tag != TagMergedResultSubpartitionHandle) {
				e.fail("channel state handle tag %d in the wrong collection", tag)
				return
			}
			e.u8(tag)
		} else if merged {
			e.fail("merged channel state handles need format 6 or later")
			return
		}
		if h.Offsets == nil && h.nOffsets > 0 {
			e.fail("channel offsets were not kept (metadata from ReadLayout cannot be written)")
		}
		e.i32(h.SubtaskIndex)
		if merged {
			e.i64(h.StateSize)
			e.stream(h.Delegate)
			blob := binary.BigEndian.AppendUint32(nil, uint32(len(h.Channels)))
			for _, c := range h.Channels {
				blob = binary.BigEndian.AppendUint32(blob, uint32(c.Info1))
				blob = binary.BigEndian.AppendUint32(blob, uint32(c.Info2))
				blob = binary.BigEndian.AppendUint64(blob, uint64(c.StateSize))
				blob = binary.BigEndian.AppendUint32(blob, uint32(len(c.Offsets)))
				for _, o := range c.Offsets {
					blob = binary.BigEndian.AppendUint64(blob, uint64(o))
				}
			}
			blob = append(blob, h.BlobTrailing...)
			e.count(len(blob), "channel offsets bytes")
			e.raw(blob)
			continue
		}
		e.i32(h.Info1)
		e.i32(h.Info2)
		e.count(len(h.Offsets), "channel offsets")
		e.i64s(h.Offsets)
		e.i64(h.StateSize)
		e.stream(h.Delegate)
	}
}
