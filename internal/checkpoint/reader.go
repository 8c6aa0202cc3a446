package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

var sprintf = fmt.Sprintf

// Minimum encoded sizes, for checking counts against the bytes that remain (spec §11).
const (
	minStreamHandle   = 1
	minKeyedHandle    = 1
	minOffset         = 8
	minStateEntry     = 2 + 1 + 4
	minPathListEntry  = 2 + 1
	minMasterState    = 8 + 10
	minChannelV1      = 4 + 4 + 4 + 4 + 8 + 1
	minChannelV2      = 1 + 4 + 8 + 1 + 4
	minMergedChannel  = 4 + 4 + 8 + 4
	minStateChange    = 4 + 4
	minChangelogEntry = 8 + 1
	minTaskV1         = 16 + 4 + 4 + 4 + 4
	minSubtaskV1      = 4 + 8 + 4 + 4 + 4 + 1 + 1
)

// maxKeyGroups is Flink's upper bound of max parallelism (KeyGroupRangeAssignment).
const maxKeyGroups = 1 << 15

// ReadBytes decodes a complete _metadata file held in memory.
func ReadBytes(b []byte) (m *Metadata, err error) {
	d := newBytesDecoder(b)
	defer recoverError(&err)
	m = d.file()
	return m, nil
}

// Read decodes a complete _metadata file from r. It reads r to the end; the Metadata holds every
// byte of the file (inline state included), so use ReadLayout for files of unknown size.
func Read(r io.Reader) (*Metadata, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, &FormatError{Offset: int64(len(b)), Msg: "read error: " + err.Error(), Err: err}
	}
	return ReadBytes(b)
}

// file decodes the whole file.
func (d *decoder) file() *Metadata {
	var m *Metadata
	if d.lay != nil {
		m = &d.lay.meta // the Layout is built from it and it is dropped
	} else {
		m = new(Metadata)
	}
	d.push("magic")
	if b := d.peekStart(); len(b) >= 2 && b[0] == 0xAC && b[1] == 0xED {
		d.fail(0, "0xaced", "no _metadata header but Java serialization: a Flink 1.0 savepoint (restore it with Flink 1.1-1.2 and take a new savepoint) or not a _metadata file")
	}
	if magic := uint32(d.i32()); magic != Magic {
		msg := sprintf("wrong magic number (want %#08x): not a Flink _metadata file", Magic)
		if magic < 16 {
			msg += "; it starts like a state file (operator or keyed state stream) or an OperatorSnapshotUtil test snapshot"
		}
		d.fail(0, sprintf("%#08x", magic), msg)
	}
	d.pop()
	d.push("version")
	m.Version = d.i32()
	switch {
	case m.Version == 0:
		d.fail(4, "0", "unsupported legacy format v0 (Flink 1.1); take a savepoint with Flink ≥ 1.3")
	case m.Version < 0 || m.Version > 7:
		d.fail(4, strconv.Itoa(int(m.Version)), "unknown format version (Flink knows 1 to 6, and 7 unreleased)")
	}
	d.pop()
	d.push("checkpointId")
	off := d.offset()
	m.CheckpointID = d.i64()
	if m.CheckpointID < 0 {
		d.fail(off, strconv.FormatInt(m.CheckpointID, 10), "negative checkpoint ID")
	}
	d.pop()
	if m.Version == 1 {
		m.Tasks = d.tasksV1()
		d.trailerOff = d.offset()
		d.checkNoTrailingBytes(d.trailerOff, "the format-1 _metadata (its last task)")
		m.Trailing = d.rest(false)
		return m
	}
	m.MasterStates = d.masterStates()
	m.Operators = d.operators(m.Version)
	if m.Version >= 4 {
		d.push("trailer")
		d.trailerOff = d.offset()
		m.Trailer = d.rest(true)
		d.checkTrailerComplete(m.Trailer)
		d.pop()
	} else {
		d.trailerOff = d.offset()
		d.checkNoTrailingBytes(d.trailerOff, sprintf("the format-%d _metadata (its last operator)", m.Version))
		m.Trailing = d.rest(false)
	}
	return m
}

// checkTrailerComplete fails a format-4+ file whose CheckpointProperties trailer is missing or
// ends inside its Java serialization stream: Flink's ObjectInputStream hits end of file there and
// the restore fails, so the file is truncated, not merely carrying unknown properties. A complete
// stream Preflight cannot interpret stays a warning (Layout.PropertiesError).
//
// Bytes after a complete trailer object fail too: Flink's ObjectInputStream stops after the one
// object and never writes more, so they mean a damaged or concatenated file. d is at the end of
// the file (rest read it).
func (d *decoder) checkTrailerComplete(trailer []byte) {
	if len(trailer) == 0 {
		d.fail(d.trailerOff, "", "missing CheckpointProperties trailer (format 4+ ends with a Java-serialized object; the file is truncated)")
	}
	_, n, err := d.propsMemo().decodeLen(trailer)
	switch {
	case err == nil && n < len(trailer):
		end := d.trailerOff + int64(n)
		d.fail(end, "", sprintf("%d bytes after the end of the CheckpointProperties trailer: Flink never writes them (the file is damaged or concatenated)", d.offset()-end))
	case len(trailer) >= maxTrailerKeep:
		return // ReadLayout kept only a prefix; nothing more to conclude
	case err != nil: // (the error's target escapes, so only a failing trailer pays for it)
		var fe *FormatError
		if errors.As(err, &fe) && errors.Is(fe.Err, errTrailerTruncated) {
			d.fail(d.trailerOff+fe.Offset, "", "the CheckpointProperties trailer ends inside its Java serialization stream (the file is truncated)")
		}
	}
}

// peekStart returns up to two bytes at the start without consuming them.
func (d *decoder) peekStart() []byte {
	d.fill(2)
	return d.buf[d.pos:min(d.pos+2, len(d.buf))]
}

// rest reads everything left. In summarize mode it keeps at most maxTrailerKeep bytes of the
// trailer and nothing of other trailing bytes; from bytes in memory the trailer it returns then
// aliases them (readLayoutKeep decodes it before returning and the Layout keeps no bytes of it).
func (d *decoder) rest(trailer bool) []byte {
	if d.r == nil {
		b := d.buf[d.pos:]
		d.pos = len(d.buf)
		if d.summarize() && !trailer {
			return nil
		}
		if d.summarize() {
			return b[:min(len(b), maxTrailerKeep):min(len(b), maxTrailerKeep)]
		}
		return bytes.Clone(b)
	}
	var out []byte
	for d.pos < len(d.buf) || d.fill(1) {
		chunk := d.buf[d.pos:]
		switch {
		case !d.summarize():
			out = append(out, chunk...)
		case trailer && len(out) < maxTrailerKeep:
			out = append(out, chunk[:min(len(chunk), maxTrailerKeep-len(out))]...)
		}
		d.pos = len(d.buf)
	}
	d.checkReadError()
	if out == nil && !d.summarize() {
		out = []byte{}
	}
	return out
}

// maxTrailerKeep is how much of the properties trailer ReadLayout keeps for decoding.
const maxTrailerKeep = 1 << 20

func (d *decoder) masterStates() []MasterState {
	d.push("masterStates")
	off := d.offset()
	n := d.i32()
	if n < 0 {
		d.fail(off, strconv.Itoa(int(n)), "negative number of master states")
	}
	out := make([]MasterState, 0, d.count(n, off, minMasterState, "master state"))
	d.indexed(true)
	for i := 0; i < int(n); i++ {
		d.setIdx(i)
		out = append(out, d.masterState())
	}
	d.pop()
	return out
}

func (d *decoder) masterState() MasterState {
	off := d.offset()
	if magic := uint32(d.i32()); magic != masterStateMagic {
		d.fail(off, sprintf("%#08x", magic), sprintf("incorrect master state magic number (want %#08x)", uint32(masterStateMagic)))
	}
	off = d.offset()
	length := d.i32()
	if length <= 0 {
		d.fail(off, strconv.Itoa(int(length)), "zero or negative master state length")
	}
	if rem := d.remaining(); rem >= 0 && int64(length) > rem {
		d.fail(off, strconv.Itoa(int(length)), sprintf("master state length exceeds the %d bytes that remain", rem))
	}
	end := d.offset() + int64(length)
	saved := d.limit
	d.limit = min(end, saved)
	var ms MasterState
	ms.Version = d.i32()
	ms.Name = d.utf()
	off = d.offset()
	pl := d.i32()
	if pl < 0 {
		d.fail(off, strconv.Itoa(int(pl)), "negative master state payload length")
	}
	d.count(pl, off, 1, "payload byte")
	ms.n = int64(pl)
	ms.Payload = d.payload(int64(pl))
	if d.offset() != end {
		d.fail(d.offset(), strconv.FormatInt(end-d.offset(), 10), "trailing bytes in master state")
	}
	d.limit = saved
	return ms
}

func (d *decoder) operators(version int32) []OperatorState {
	d.push("operators")
	off := d.offset()
	n := d.i32()
	minOp := int64(16 + 4 + 4 + 1 + 4)
	if version >= 5 {
		minOp += 4
	}
	if version == 2 {
		minOp = 16 + 4 + 4 + 4 + 4
	}
	c := d.count(n, off, minOp, "operator")
	if ls := d.lay; ls != nil {
		ls.out.Operators = make([]OperatorLayout, 0, c)
		d.indexed(true)
		for i := 0; i < int(n); i++ {
			d.setIdx(i)
			op := d.operator(version)
			if ls.onOperator != nil {
				ls.onOperator(&op)
			}
			ls.out.Operators = append(ls.out.Operators, operatorLayout(&op, d.stop))
			ls.shareEmptySubtasks(&ls.out.Operators[len(ls.out.Operators)-1])
			// op's SubtaskStates are ls.subScratch and its handles ls.handles: drop them before
			// the next operator, which reuses them.
			clear(ls.subScratch)
			ls.subScratch = ls.subScratch[:0]
			clear(op.Subtasks)
			ls.handles.reset()
		}
		d.pop()
		return nil
	}
	out := make([]OperatorState, 0, c)
	d.indexed(true)
	for i := 0; i < int(n); i++ {
		d.setIdx(i)
		out = append(out, d.operator(version))
	}
	d.pop()
	return out
}

// checkParallelism applies the bounds Flink's writer guarantees to a stored (max) parallelism at
// off: the constructor of OperatorState (TaskState in format 1) refuses a parallelism above the max
// parallelism, and no job can have a max parallelism outside 1..32768
// (KeyGroupRangeAssignment.UPPER_BOUND_MAX_PARALLELISM) nor a parallelism below 1, so Flink never
// writes them. Accepting them would let a hostile file drive allocations by parallelism.
func (d *decoder) checkParallelism(kind string, id OperatorID, off int64, p, maxP int32) {
	if p >= 1 && p <= maxP && maxP <= maxKeyGroups {
		return // the usual case: no message to build
	}
	who := kind + " " + id.String()
	switch {
	case p < 1 || p > maxKeyGroups:
		d.push("parallelism")
		d.fail(off, strconv.Itoa(int(p)), sprintf("%s: parallelism outside 1..%d (Flink's UPPER_BOUND_MAX_PARALLELISM); Flink never writes it", who, maxKeyGroups))
	case maxP < 1 || maxP > maxKeyGroups:
		d.push("maxParallelism")
		d.fail(off+4, strconv.Itoa(int(maxP)), sprintf("%s: max parallelism outside 1..%d (Flink's UPPER_BOUND_MAX_PARALLELISM); Flink never writes it", who, maxKeyGroups))
	case p > maxP:
		d.push("parallelism")
		d.fail(off, sprintf("parallelism %d, maxParallelism %d", p, maxP),
			sprintf("%s: parallelism above max parallelism (Flink's OperatorState refuses it: \"Parallelism %d is not smaller or equal to max parallelism %d.\")", who, p, maxP))
	}
}

// checkNoTrailingBytes fails when bytes follow the end of the file's content at end: Flink
// never writes them (format 1-3 readers ignore them, format 4+ stops after the properties
// object), so they mean a damaged or concatenated file. Only one byte is looked at.
func (d *decoder) checkNoTrailingBytes(end int64, what string) {
	if d.pos < len(d.buf) || d.fill(1) {
		msg := "bytes after the end of " + what + ": Flink never writes them (the file is damaged, concatenated or not a _metadata file)"
		if d.r == nil {
			msg = sprintf("%d %s", len(d.buf)-d.pos, msg)
		}
		d.fail(end, "", msg)
	}
	d.checkReadError()
}

func (d *decoder) operatorID() OperatorID {
	var id OperatorID
	copy(id[:], d.next(16))
	return id
}

func (d *decoder) operator(version int32) OperatorState {
	var op OperatorState
	op.offset = d.offset()
	if version >= 5 {
		d.push("name")
		op.Name = d.utf()
		d.rename("uid")
		if op.UID = d.utf(); op.UID == op.Name {
			op.UID = op.Name // one string where jobs name operators by their uid: a million operators keep one copy
		}
		d.pop()
	}
	op.ID = d.operatorID()
	off := d.offset()
	op.Parallelism = d.i32()
	op.MaxParallelism = d.i32()
	d.checkParallelism("operator", op.ID, off, op.Parallelism, op.MaxParallelism)
	if version == 2 {
		op.ChainLength = d.i32()
	} else {
		d.push("coordinatorState")
		off := d.offset()
		h := d.streamHandle()
		switch h := h.(type) {
		case nil:
		case *ByteStreamStateHandle:
			op.CoordinatorState = h
		default:
			d.fail(off, strconv.Itoa(int(h.streamTag())), "expected a ByteStreamStateHandle (tag 1) or null for the coordinator state")
		}
		d.pop()
	}
	d.push("subtasks")
	off = d.offset()
	n := d.i32()
	if n < 0 {
		op.negCount = n
		if version >= 3 {
			op.FullyFinished = true
			if op.CoordinatorState != nil {
				d.fail(off, strconv.Itoa(int(n)), "fully finished operator with coordinator state")
			}
		}
		d.pop()
		return op
	}
	// A finished subtask takes 4 bytes (its index); a format-2 subtask at least 26.
	minSub := int64(4)
	if version == 2 {
		minSub = 26
	}
	if c := d.count(n, off, minSub, "subtask"); d.lay != nil {
		op.Subtasks = d.lay.handles.subtaskEntries(c) // converted and dropped before the next operator
	} else {
		op.Subtasks = make([]SubtaskEntry, 0, c)
	}
	d.indexed(true)
	for i := 0; i < int(n); i++ {
		d.setIdx(i)
		off := d.offset()
		idx := d.i32()
		e := SubtaskEntry{Index: idx}
		if idx < 0 && version >= 3 {
			e.Index = -idx - 1
			e.Finished = true
		}
		if e.Index < 0 || e.Index >= op.Parallelism {
			d.fail(off, strconv.Itoa(int(idx)), sprintf("subtask index outside [0, parallelism %d)", op.Parallelism))
		}
		if !e.Finished {
			e.State = d.newSubtaskState()
			d.subtaskState(version, e.State)
		}
		op.Subtasks = append(op.Subtasks, e)
	}
	d.pop()
	return op
}

// newSubtaskState returns a zero SubtaskState: in layout mode the next record of its subScratch
// (an append that moves the scratch leaves the records already handed out where they were,
// complete), otherwise a new one, as the Metadata keeps it.
func (d *decoder) newSubtaskState() *SubtaskState {
	ls := d.lay
	if ls == nil {
		return &SubtaskState{}
	}
	ls.subScratch = append(ls.subScratch, SubtaskState{})
	return &ls.subScratch[len(ls.subScratch)-1]
}

// subtaskState reads an OperatorSubtaskState into s, which is zero.
func (d *decoder) subtaskState(version int32, s *SubtaskState) {
	if version == 2 {
		s.Duration = d.i64()
		s.Legacy = d.legacyHandles()
	}
	d.push("managedOperatorState")
	s.ManagedOperatorState = d.operatorSlot()
	d.rename("rawOperatorState")
	s.RawOperatorState = d.operatorSlot()
	d.rename("managedKeyedState")
	s.ManagedKeyedState = d.keyedHandle()
	d.rename("rawKeyedState")
	s.RawKeyedState = d.keyedHandle()
	d.pop()
	if version >= 3 {
		d.push("inputChannels")
		s.InputChannels = d.channelHandles(version, true)
		d.rename("outputChannels")
		s.OutputChannels = d.channelHandles(version, false)
		d.pop()
	}
	if version == 7 {
		d.push("refCheckpointId")
		s.RefMarker = d.u8()
		if s.RefMarker == 1 {
			s.RefCheckpointID = d.i64()
		}
		d.pop()
	}
}

// legacyHandles reads the legacy (pre-1.2 non-partitionable) stream handles of a format-1 or
// format-2 subtask; nil when there are none.
func (d *decoder) legacyHandles() []StreamStateHandle {
	d.push("legacy")
	n, c := d.listLen(minStreamHandle, "legacy handle")
	var out []StreamStateHandle
	if n > 0 {
		out = make([]StreamStateHandle, 0, c)
	}
	d.indexed(true)
	for i := range n {
		d.setIdx(i)
		out = append(out, d.streamHandle())
	}
	d.pop()
	return out
}

func (d *decoder) operatorSlot() OperatorStateSlot {
	var slot OperatorStateSlot
	slot.Present = d.i32()
	if slot.Present != 0 {
		slot.Handle = d.operatorHandle()
	}
	return slot
}

// operatorHandle reads an OperatorHandle; nil for the null tag.
func (d *decoder) operatorHandle() *OperatorStateHandle {
	off := d.offset()
	tag := d.u8()
	switch tag {
	case TagNullHandle:
		return nil
	case TagPartitionableOperatorStateHandle, TagSegmentPartitionableOperatorStateHandle:
	default:
		d.fail(off, strconv.Itoa(int(int8(tag))), "invalid operator state handle tag")
	}
	h := newHandle(d, func(hs *handleScratch) *[]OperatorStateHandle { return &hs.operatorHandles })
	h.Tag = tag
	d.push("states")
	off = d.offset()
	n := d.i32()
	// In layout mode the entries go straight into the Layout's records, with what finishing
	// their sizes needs beside them (entryEnds): a whole StateEntry with its summary for each
	// name of a handle is twice the Layout's record (bench/README.md, "Many state names,
	// round 4").
	if c := d.count(n, off, minStateEntry, "state"); d.lay != nil {
		h.layouts, h.ends = make([]StateEntryLayout, 0, c), d.lay.handles.entryEnds(c)
	} else {
		h.States = make([]StateEntry, 0, c)
	}
	d.indexed(true)
	for i := 0; i < int(n); i++ {
		d.stop.Check()
		d.setIdx(i)
		var e StateEntry
		e.Name = d.stateName()
		d.setKey(e.Name)
		d.push("mode")
		off := d.offset()
		mode := int8(d.u8())
		if mode < 0 || mode > 2 {
			d.fail(off, strconv.Itoa(int(mode)), "distribution mode ordinal not in {0 SPLIT_DISTRIBUTE, 1 UNION, 2 BROADCAST}")
		}
		e.Mode = DistributionMode(mode)
		d.rename("offsets")
		off = d.offset()
		k := d.i32()
		d.count(k, off, minOffset, "offset")
		e.sum.boundsOnly = e.Mode != SplitDistribute
		e.sum.budget = &d.runBudget
		e.Offsets = d.i64s(int(k), !d.summarize(), &e.sum)
		e.sum.budget = nil
		d.pop()
		if d.lay != nil {
			h.layouts = append(h.layouts, e.sum.layout(e.Name, e.Mode))
			h.ends = append(h.ends, e.sum.ends())
		} else {
			h.States = append(h.States, e)
		}
		d.indexed(true)
	}
	if cap(h.layouts) > len(h.layouts) {
		// Grown past a count the stream's size could not bound: the Layout keeps exactly its
		// entries.
		h.layouts = append(make([]StateEntryLayout, 0, len(h.layouts)), h.layouts...)
	}
	d.pop()
	if tag == TagSegmentPartitionableOperatorStateHandle {
		d.push("taskOwnedDir")
		h.TaskOwnedDir = d.utf()
		d.rename("sharedDir")
		h.SharedDir = d.utf()
		d.rename("isEmpty")
		h.Empty = d.u8()
		d.pop()
	}
	d.push("delegate")
	off = d.offset()
	h.Delegate = d.streamHandle()
	if tag == TagSegmentPartitionableOperatorStateHandle {
		switch h.Delegate.(type) {
		case *SegmentFileStateHandle, *EmptySegmentFileStateHandle:
		default:
			d.fail(off, strconv.Itoa(int(streamTagOf(h.Delegate))), "file-merging operator state handle needs a segment delegate (tag 15 or 16)")
		}
	}
	d.pop()
	return h
}

func streamTagOf(h StreamStateHandle) uint8 {
	if h == nil {
		return TagNullHandle
	}
	return h.streamTag()
}

// streamHandle reads a StreamHandle; nil for the null tag.
func (d *decoder) streamHandle() StreamStateHandle {
	off := d.offset()
	tag := d.u8()
	switch tag {
	case TagNullHandle:
		return nil
	case TagByteStreamStateHandle:
		h := newHandle(d, func(hs *handleScratch) *[]ByteStreamStateHandle { return &hs.inline })
		h.Name = d.utf()
		off := d.offset()
		n := d.i32()
		d.count(n, off, 1, "inline byte")
		h.n = int64(n)
		if d.summarize() && n > 0 {
			k := min(int(n), len(h.head))
			copy(h.head[:], d.next(k))
			d.skip(int64(n) - int64(k))
			return h
		}
		h.Data = d.payload(int64(n))
		return h
	case TagFileStreamStateHandle:
		h := newHandle(d, func(hs *handleScratch) *[]FileStateHandle { return &hs.files })
		h.StateSize = d.i64()
		h.Path = d.utf()
		return h
	case TagKeyGroupsHandle:
		d.enter()
		h := d.keyGroupsBody(TagKeyGroupsHandle)
		d.leave()
		return h
	case TagRelativeStreamStateHandle:
		h := newHandle(d, func(hs *handleScratch) *[]RelativeFileStateHandle { return &hs.relativeFiles })
		h.RelativePath = d.utf()
		h.StateSize = d.i64()
		return h
	case TagSegmentFileHandle:
		h := newHandle(d, func(hs *handleScratch) *[]SegmentFileStateHandle { return &hs.segments })
		h.StartPos = d.i64()
		h.StateSize = d.i64()
		off := d.offset()
		h.Scope = d.i32()
		if h.Scope != 0 && h.Scope != 1 {
			d.fail(off, strconv.Itoa(int(h.Scope)), "checkpointed state scope ordinal not in {0 EXCLUSIVE, 1 SHARED}")
		}
		h.PhysicalPath = d.utf()
		h.LogicalFileID = d.utf()
		return h
	case TagEmptySegmentFileHandle:
		return &EmptySegmentFileStateHandle{}
	}
	d.fail(off, strconv.Itoa(int(tag)), "unknown stream state handle tag")
	return nil
}

// keyGroupsBody reads KGBlock (and the state-handle ID of tag 12).
func (d *decoder) keyGroupsBody(tag uint8) *KeyGroupsStateHandle {
	h := newHandle(d, func(hs *handleScratch) *[]KeyGroupsStateHandle { return &hs.keyGroups })
	h.Tag = tag
	off := d.offset()
	h.StartKeyGroup = d.i32()
	h.NumKeyGroups = d.i32()
	if h.NumKeyGroups < 0 {
		d.fail(off+4, strconv.Itoa(int(h.NumKeyGroups)), "negative number of key groups")
	}
	if h.NumKeyGroups > 0 && h.StartKeyGroup < 0 {
		d.fail(off, strconv.Itoa(int(h.StartKeyGroup)), "negative start key group")
	}
	if h.NumKeyGroups > maxKeyGroups {
		// Flink never writes more (its max parallelism is at most 32768); the check keeps the
		// per-key-group offsets, which are held in memory, bounded.
		d.fail(off+4, strconv.Itoa(int(h.NumKeyGroups)), "more key groups than Flink's upper bound of max parallelism (32768)")
	}
	d.push("offsets")
	d.count(h.NumKeyGroups, off+4, minOffset, "key-group offset")
	// NumKeyGroups ≤ 32768 and is checked against what remains, so one exact allocation.
	if d.summarize() {
		// The Layout keeps bytes per key group, not offsets (see keyGroupSizes).
		h.keyGroupBytes, h.Delegate = d.keyGroupSizes(int(h.NumKeyGroups))
	} else {
		h.Offsets = d.appendI64s(make([]int64, 0, h.NumKeyGroups), int(h.NumKeyGroups), true, nil)
		d.rename("delegate")
		h.Delegate = d.streamHandle()
	}
	if tag == TagKeyGroupsHandleV2 {
		d.rename("stateHandleId")
		h.StateHandleID = d.utf()
	}
	d.pop()
	return h
}

// keyedHandle reads a KeyedHandle; nil for the null tag. The nesting depth is restored by hand,
// not deferred: a decoding error panics out of the whole file, so only a normal return needs it,
// and a deferred leave in a function with this many returns is not open-coded (a measurable
// share of decoding a small file: bench/README.md, "A chunk of files in one system call").
func (d *decoder) keyedHandle() KeyedStateHandle {
	off := d.offset()
	tag := d.u8()
	switch tag {
	case TagNullHandle:
		return nil
	case TagKeyGroupsHandle, TagKeyGroupsHandleV2, TagSavepointKeyGroupsHandle:
		d.enter()
		h := d.keyGroupsBody(tag)
		d.leave()
		return h
	case TagIncrementalKeyGroupsHandle, TagIncrementalKeyGroupsHandleV2:
		d.enter()
		h := newHandle(d, func(hs *handleScratch) *[]IncrementalKeyedStateHandle { return &hs.incremental })
		h.Tag, h.CheckpointedSize = tag, -1
		h.CheckpointID = d.i64()
		h.BackendID = d.utf()
		h.StartKeyGroup, h.NumKeyGroups = d.keyGroupRange()
		if tag == TagIncrementalKeyGroupsHandleV2 {
			h.CheckpointedSize = d.i64()
		}
		d.push("metaData")
		h.MetaData = d.streamHandle()
		d.rename("sharedFiles")
		h.SharedFiles = d.pathList()
		d.rename("privateFiles")
		h.PrivateFiles = d.pathList()
		if tag == TagIncrementalKeyGroupsHandleV2 {
			d.rename("stateHandleId")
			h.StateHandleID = d.utf()
		}
		d.pop()
		d.leave()
		return h
	case TagChangelogHandle, TagChangelogHandleV2:
		d.enter()
		h := &ChangelogStateBackendHandle{Tag: tag}
		h.StartKeyGroup, h.NumKeyGroups = d.keyGroupRange()
		h.CheckpointedSize = d.i64()
		d.push("materialized")
		h.Materialized = d.keyedList()
		d.rename("nonMaterialized")
		h.NonMaterialized = d.keyedList()
		d.pop()
		h.MaterializationID = d.i64()
		if tag == TagChangelogHandleV2 {
			h.CheckpointID = d.i64()
		} else {
			h.CheckpointID = h.MaterializationID
		}
		h.StateHandleID = d.utf()
		d.leave()
		return h
	case TagChangelogByteIncrementHandle:
		h := &InMemoryChangelogStateHandle{}
		h.StartKeyGroup, h.NumKeyGroups = d.keyGroupRange()
		h.From = d.i64()
		h.To = d.i64()
		d.push("changes")
		n, c := d.listLen(minStateChange, "state change")
		h.Changes = make([]StateChange, 0, c)
		d.indexed(true)
		for i := range n {
			d.setIdx(i)
			var c StateChange
			c.KeyGroup = d.i32()
			c.n, c.Data = d.sizedBytes("change byte")
			h.Changes = append(h.Changes, c)
		}
		d.pop()
		h.StateHandleID = d.utf()
		return h
	case TagChangelogFileIncrementHandle, TagChangelogFileIncrementHandleV2:
		d.enter()
		h := &ChangelogStateHandleStreamImpl{Tag: tag}
		h.StartKeyGroup, h.NumKeyGroups = d.keyGroupRange()
		d.push("handles")
		n, c := d.listLen(minChangelogEntry, "changelog handle")
		h.Handles = make([]ChangelogSegment, 0, c)
		d.indexed(true)
		for i := range n {
			d.setIdx(i)
			var s ChangelogSegment
			s.Offset = d.i64()
			s.Handle = d.streamHandle()
			h.Handles = append(h.Handles, s)
		}
		d.pop()
		h.StateSize = d.i64()
		h.CheckpointedSize = d.i64()
		h.StateHandleID = d.utf()
		if tag == TagChangelogFileIncrementHandleV2 {
			h.StorageIdentifier = d.utf()
		}
		d.leave()
		return h
	}
	d.fail(off, strconv.Itoa(int(int8(tag))), "invalid keyed state handle tag")
	return nil
}

// listLen reads the int size of a Java collection whose elements take at least minSize bytes
// each and checks it against the bytes that remain (count; what names an element in the error):
// the size, and the capacity to allocate for it.
func (d *decoder) listLen(minSize int64, what string) (n, capacity int) {
	off := d.offset()
	k := d.i32()
	c := d.count(k, off, minSize, what)
	return int(k), c
}

// sizedBytes reads a byte array written as its int length and the bytes (what names one byte in
// the error for a length that is negative or longer than what remains).
func (d *decoder) sizedBytes(what string) (n int64, data []byte) {
	off := d.offset()
	k := d.i32()
	d.count(k, off, 1, what)
	return int64(k), d.payload(int64(k))
}

// channelOffsets reads a channel state handle's offsets: their count and, unless summarising,
// the offsets themselves.
func (d *decoder) channelOffsets() (int64, []int64) {
	off := d.offset()
	k := d.i32()
	d.count(k, off, minOffset, "offset")
	return int64(k), d.i64s(int(k), !d.summarize(), nil)
}

func (d *decoder) keyGroupRange() (start, n int32) {
	off := d.offset()
	start = d.i32()
	n = d.i32()
	if n < 0 {
		d.fail(off+4, strconv.Itoa(int(n)), "negative number of key groups")
	}
	if n > 0 && start < 0 {
		d.fail(off, strconv.Itoa(int(start)), "negative start key group")
	}
	return start, n
}

func (d *decoder) keyedList() []KeyedStateHandle {
	n, c := d.listLen(minKeyedHandle, "keyed handle")
	out := make([]KeyedStateHandle, 0, c)
	d.indexed(true)
	for i := range n {
		d.setIdx(i)
		out = append(out, d.keyedHandle())
	}
	d.indexed(false)
	return out
}

func (d *decoder) pathList() []HandleAndLocalPath {
	n, c := d.listLen(minPathListEntry, "file")
	var out []HandleAndLocalPath
	if d.lay != nil {
		out = d.lay.handles.pathList(c)
	} else {
		out = make([]HandleAndLocalPath, 0, c)
	}
	d.indexed(true)
	for i := range n {
		d.setIdx(i)
		var e HandleAndLocalPath
		e.LocalPath = d.utf()
		e.Handle = d.streamHandle()
		out = append(out, e)
	}
	d.indexed(false)
	return out
}

// channelHandles reads an input-channel or result-subpartition collection.
func (d *decoder) channelHandles(version int32, input bool) []ChannelStateHandle {
	minSize := int64(minChannelV1)
	if version >= 6 {
		minSize = minChannelV2
	}
	n, c := d.listLen(minSize, "channel state handle")
	if n == 0 {
		return nil
	}
	out := make([]ChannelStateHandle, 0, c)
	d.indexed(true)
	for i := range n {
		d.setIdx(i)
		var h ChannelStateHandle
		if version >= 6 {
			off := d.offset()
			h.Tag = d.u8()
			plain, merged := uint8(TagInputChannelHandle), uint8(TagMergedInputChannelHandle)
			if !input {
				plain, merged = TagResultSubpartitionHandle, TagMergedResultSubpartitionHandle
			}
			switch h.Tag {
			case plain:
				d.channelV1(&h)
			case merged:
				d.mergedChannel(&h)
			default:
				d.fail(off, strconv.Itoa(int(h.Tag)), "unknown channel state handle tag")
			}
		} else {
			d.channelV1(&h)
		}
		out = append(out, h)
	}
	d.indexed(false)
	return out
}

func (d *decoder) channelV1(h *ChannelStateHandle) {
	h.SubtaskIndex = d.i32()
	h.Info1 = d.i32()
	h.Info2 = d.i32()
	d.push("offsets")
	h.nOffsets, h.Offsets = d.channelOffsets()
	d.pop()
	h.StateSize = d.i64()
	d.push("delegate")
	h.Delegate = d.streamHandle()
	d.pop()
}

func (d *decoder) mergedChannel(h *ChannelStateHandle) {
	h.SubtaskIndex = d.i32()
	h.StateSize = d.i64()
	d.push("delegate")
	h.Delegate = d.streamHandle()
	d.rename("channelOffsets")
	off := d.offset()
	blobLen := d.i32()
	d.count(blobLen, off, 1, "channel offsets byte")
	end := d.offset() + int64(blobLen)
	saved := d.limit
	d.limit = min(end, saved)
	n, c := d.listLen(minMergedChannel, "merged channel")
	h.Channels = make([]MergedChannel, 0, c)
	d.indexed(true)
	for i := range n {
		d.setIdx(i)
		var c MergedChannel
		c.Info1 = d.i32()
		c.Info2 = d.i32()
		c.StateSize = d.i64()
		c.nOffsets, c.Offsets = d.channelOffsets()
		h.Channels = append(h.Channels, c)
	}
	if left := end - d.offset(); left > 0 {
		h.BlobTrailing = d.payload(left)
	}
	d.limit = saved
	d.pop()
}

// tasksV1 reads the task list of a format-1 (Flink 1.2) file.
func (d *decoder) tasksV1() []TaskState {
	d.push("tasks")
	n, c := d.listLen(minTaskV1, "task")
	out := make([]TaskState, 0, c)
	d.indexed(true)
	for i := range n {
		d.setIdx(i)
		var t TaskState
		t.offset = d.offset()
		t.JobVertexID = d.operatorID()
		off := d.offset()
		t.Parallelism = d.i32()
		t.MaxParallelism = d.i32()
		d.checkParallelism("task", t.JobVertexID, off, t.Parallelism, t.MaxParallelism)
		t.ChainLength = d.i32()
		d.push("subtasks")
		k, c := d.listLen(minSubtaskV1, "subtask")
		t.Subtasks = make([]TaskSubtaskState, 0, c)
		d.indexed(true)
		for j := range k {
			d.setIdx(j)
			var s TaskSubtaskState
			off := d.offset()
			s.Index = d.i32()
			if s.Index < 0 || s.Index >= t.Parallelism {
				d.fail(off, strconv.Itoa(int(s.Index)), sprintf("subtask index outside [0, parallelism %d)", t.Parallelism))
			}
			s.Duration = d.i64()
			s.Legacy = d.legacyHandles()
			s.ManagedOperatorState = d.operatorHandlesV1("managedOperatorState")
			s.RawOperatorState = d.operatorHandlesV1("rawOperatorState")
			d.push("managedKeyedState")
			s.ManagedKeyedState = d.keyedHandle()
			d.rename("rawKeyedState")
			s.RawKeyedState = d.keyedHandle()
			d.pop()
			t.Subtasks = append(t.Subtasks, s)
		}
		d.pop()
		out = append(out, t)
	}
	d.pop()
	return out
}

func (d *decoder) operatorHandlesV1(name string) []*OperatorStateHandle {
	d.pushIdx(name)
	n, c := d.listLen(1, "operator handle")
	out := make([]*OperatorStateHandle, 0, c)
	for x := range n {
		d.setIdx(x)
		out = append(out, d.operatorHandle())
	}
	d.pop()
	return out
}
