package checkpoint

import (
	"slices"
	"unsafe"

	"github.com/flinkpreflight/preflight/internal/cancel"
)

// handleScratch holds the handle records of the operator being decoded when a Layout is built
// operator by operator (decoder.layout set): operatorLayout copies what the Layout keeps from
// them (values and strings, never a pointer to a record), so after each operator they are
// reused for the next one, and by a Decoder for its next file, instead of allocated per
// handle. A small checkpoint file holds a few dozen such records; allocating each was about a
// quarter of a corpus file's allocations.
type handleScratch struct {
	operatorHandles []OperatorStateHandle
	entries         []StateEntry // the States of operatorHandles, carved in order
	files           []FileStateHandle
	relativeFiles   []RelativeFileStateHandle
	inline          []ByteStreamStateHandle
	segments        []SegmentFileStateHandle
	keyGroups       []KeyGroupsStateHandle
	incremental     []IncrementalKeyedStateHandle
	paths           []HandleAndLocalPath // the file lists of incremental handles, carved in order
	subtasks        []SubtaskEntry       // the operator's subtask list
}

// maxKeptScratch bounds how many records of one kind a decoder keeps between operators (an
// operator of a 32768-parallelism job has that many handles of a kind; the next one grows its
// own rather than the decoder holding them for good).
const maxKeptScratch = 4096

// take returns a zero record appended to *s. Records taken before an append that grows *s stay
// where they were (the old array lives while they point into it).
func take[T any](s *[]T) *T {
	var zero T
	*s = append(*s, zero)
	return &(*s)[len(*s)-1]
}

// carve returns an empty slice with room for exactly n records, carved from *s: appending n
// records fills it without reallocating or touching the records carved before or after it.
func carve[T any](s *[]T, n int) []T {
	if cap(*s)-len(*s) < n {
		*s = make([]T, 0, max(2*cap(*s), n, 16))
	}
	start := len(*s)
	*s = (*s)[:start+n]
	return (*s)[start : start : start+n]
}

// stateEntries returns room for the n state entries of one operator-state handle.
func (hs *handleScratch) stateEntries(n int) []StateEntry { return carve(&hs.entries, n) }

// pathList returns room for the n files of an incremental handle's file list.
func (hs *handleScratch) pathList(n int) []HandleAndLocalPath { return carve(&hs.paths, n) }

// subtaskEntries returns the empty subtask list of the operator being decoded, with room for n;
// the caller clears what it appended once the operator is converted.
func (hs *handleScratch) subtaskEntries(n int) []SubtaskEntry {
	hs.subtasks = slices.Grow(hs.subtasks[:0], n)
	return hs.subtasks[:0]
}

// reset makes every record reusable, dropping what they point to.
func (hs *handleScratch) reset() {
	resetScratch(&hs.operatorHandles)
	resetScratch(&hs.entries)
	resetScratch(&hs.files)
	resetScratch(&hs.relativeFiles)
	resetScratch(&hs.inline)
	resetScratch(&hs.segments)
	resetScratch(&hs.keyGroups)
	resetScratch(&hs.incremental)
	resetScratch(&hs.paths)
	resetScratch(&hs.subtasks)
}

func resetScratch[T any](s *[]T) {
	if cap(*s) > maxKeptScratch {
		*s = nil
		return
	}
	clear(*s) // what lies past len was cleared by an earlier reset (or never used)
	*s = (*s)[:0]
}

// newHandle returns a zero handle record: from d's scratch in layout mode, else allocated (the
// record is then part of the decoded model).
func newHandle[T any](d *decoder, of func(*handleScratch) *[]T) *T {
	if d.handles == nil {
		return new(T)
	}
	return take(of(d.handles))
}

// layoutAlloc hands out the records one Layout keeps (subtask lists, handle records, state
// entries, size runs, the bytes of its plain-ASCII strings) from arrays shared by that Layout
// instead of one allocation each: they live and die together. A string's bytes are only carved,
// never written again, so the bytes a string points at never change. A Layout built from a
// decoded model (Metadata.Layout) allocates its records one by one (a nil *layoutAlloc).
//
// An owned layoutAlloc (the zero value) serves one Layout, which shares no record array with
// another. A recycling one (newRecyclingAlloc) serves a Layout that is only lent to its reader
// (ReadLayoutFiles' fn): once the reader is done, reuse clears the records and the next Layout
// takes the same arrays, so a batch of small files reaches a steady state with no allocation
// for records and no memory for the collector to reclaim and the runtime to hand back to the
// OS between files (those were a quarter of a small file's CPU). Its string bytes are never
// reused: a reader may keep the strings of a lent Layout.
type layoutAlloc struct {
	subtasks       blocks[SubtaskLayout]
	operatorStates blocks[OperatorStateHandleLayout]
	keyed          blocks[KeyedStateHandleLayout]
	states         blocks[StateEntryLayout]
	runs           blocks[SizeRun]
	streams        blocks[StreamRef] // operator coordinators' state
	bytes          blocks[byte]
	recycle        bool
	// Recycling only: the lent Layout itself, its operator list and its properties.
	layout    Layout
	operators []OperatorLayout
	props     CheckpointProperties
}

// newRecyclingAlloc returns a layoutAlloc whose records are reused (see layoutAlloc).
func newRecyclingAlloc() *layoutAlloc {
	a := &layoutAlloc{recycle: true}
	a.subtasks.recycle = true
	a.operatorStates.recycle = true
	a.keyed.recycle = true
	a.states.recycle = true
	a.runs.recycle = true
	a.streams.recycle = true
	return a
}

// maxRecycledBytes bounds the records a recycling layoutAlloc keeps per type between Layouts
// (a Layout that needed more makes the next one start afresh).
const maxRecycledBytes = 1 << 20

// reuse prepares a recycling layoutAlloc for the next Layout: the previous one's records are
// cleared and their arrays taken again (an owned layoutAlloc is reset to empty instead).
func (a *layoutAlloc) reuse() {
	if !a.recycle {
		*a = layoutAlloc{}
		return
	}
	a.subtasks.reuse()
	a.operatorStates.reuse()
	a.keyed.reuse()
	a.states.reuse()
	a.runs.reuse()
	a.streams.reuse()
	a.layout, a.props = Layout{}, CheckpointProperties{}
	if int(unsafe.Sizeof(OperatorLayout{}))*cap(a.operators) > maxRecycledBytes {
		a.operators = nil
	}
	clear(a.operators)
	a.operators = a.operators[:0]
}

// newLayout returns the zero Layout to fill: a recycling layoutAlloc's own.
func (a *layoutAlloc) newLayout() *Layout {
	if a == nil || !a.recycle {
		return new(Layout)
	}
	return &a.layout
}

// properties returns where the Layout's CheckpointProperties go: a recycling layoutAlloc's own
// (nil: allocate).
func (a *layoutAlloc) properties() *CheckpointProperties {
	if a == nil || !a.recycle {
		return nil
	}
	return &a.props
}

// streamRef returns r in a's records.
func (a *layoutAlloc) streamRef(r StreamRef) *StreamRef {
	if a == nil {
		return &r
	}
	p := &a.streams.take(1)[0]
	*p = r
	return p
}

// operatorList returns an empty operator list with room for n: a recycling layoutAlloc's own.
func (a *layoutAlloc) operatorList(n int) []OperatorLayout {
	if !a.recycle {
		return make([]OperatorLayout, 0, n)
	}
	a.operators = slices.Grow(a.operators[:0], n)
	return a.operators[:0]
}

// blocks hands out records of one type from arrays reserved per operator: operatorLayout counts
// what the operator needs (reserve), so an array is as large as its records and no larger.
// Records that are not counted ahead (size runs, string bytes) come from arrays that double from
// about 512 bytes to about 8 KiB. Recycling, there is one array, grown to what the last Layout
// took in all and reused by the next one.
type blocks[T any] struct {
	block   []T
	next    int // records in the next array taken without a reservation
	recycle bool
	taken   int  // recycling: records carved for the current Layout
	moved   bool // recycling: the current Layout outgrew block (which was replaced)
}

// reuse clears the records of the last Layout for the next one.
func (b *blocks[T]) reuse() {
	var zero T
	switch size := max(int(unsafe.Sizeof(zero)), 1); {
	case b.taken*size > maxRecycledBytes:
		b.block = nil
	case b.moved:
		b.block = make([]T, 0, b.taken) // room for all of it next time; the old arrays are garbage
	default:
		clear(b.block)
		b.block = b.block[:0]
	}
	b.taken, b.moved = 0, false
}

// grow replaces a recycling block that has no room for n more records by one twice as large.
func (b *blocks[T]) grow(n int) {
	if n > cap(b.block)-len(b.block) {
		b.block = make([]T, 0, max(2*cap(b.block), n, 64))
		b.moved = true
	}
}

// reserve makes room for n more records: what the current array has left, else a new array of
// exactly n.
func (b *blocks[T]) reserve(n int) {
	if b.recycle {
		b.grow(n)
		return
	}
	if n > cap(b.block)-len(b.block) {
		b.block = make([]T, 0, n)
	}
}

// take returns n zero records (len n, cap n) from the room left, else from a new array (one of
// its own for a request above a quarter of an array).
func (b *blocks[T]) take(n int) []T {
	if n == 0 {
		return make([]T, 0)
	}
	if b.recycle {
		b.grow(n)
		b.taken += n
	} else if n > cap(b.block)-len(b.block) {
		var zero T
		most := max(8<<10/int(max(unsafe.Sizeof(zero), 1)), 1)
		if n > most/4 {
			return make([]T, n)
		}
		b.next = min(max(2*b.next, max(512/int(max(unsafe.Sizeof(zero), 1)), 1)), most)
		b.block = make([]T, 0, max(b.next, n))
	}
	start := len(b.block)
	b.block = b.block[:start+n]
	return b.block[start : start+n : start+n]
}

// reserve makes room for the records operatorLayout will take for op: its subtask list, its
// handles and their state entries.
func (a *layoutAlloc) reserve(op *OperatorState, stop *cancel.Flag) {
	if a == nil {
		return
	}
	var opHandles, keyed, states int
	for _, e := range op.Subtasks {
		stop.Check()
		st := e.State
		if st == nil {
			continue
		}
		for _, slot := range [2]OperatorStateSlot{st.ManagedOperatorState, st.RawOperatorState} {
			if slot.Present == 0 || slot.Handle == nil {
				continue
			}
			opHandles++
			states += len(slot.Handle.States)
		}
		if st.ManagedKeyedState != nil {
			keyed++
		}
		if st.RawKeyedState != nil {
			keyed++
		}
	}
	a.subtasks.reserve(len(op.Subtasks))
	a.operatorStates.reserve(opHandles)
	a.keyed.reserve(keyed)
	a.states.reserve(states)
}

func (a *layoutAlloc) subtaskList(n int) []SubtaskLayout {
	if a == nil {
		return make([]SubtaskLayout, 0, n)
	}
	return a.subtasks.take(n)[:0]
}

func (a *layoutAlloc) operatorState() *OperatorStateHandleLayout {
	if a == nil {
		return new(OperatorStateHandleLayout)
	}
	return &a.operatorStates.take(1)[0]
}

func (a *layoutAlloc) keyedHandle() *KeyedStateHandleLayout {
	if a == nil {
		return new(KeyedStateHandleLayout)
	}
	return &a.keyed.take(1)[0]
}

func (a *layoutAlloc) stateEntries(n int) []StateEntryLayout {
	if a == nil {
		return make([]StateEntryLayout, n)
	}
	return a.states.take(n)
}

// string returns b as a string whose bytes are in a's arrays.
func (a *layoutAlloc) string(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	s := a.bytes.take(len(b))
	copy(s, b)
	return unsafe.String(&s[0], len(s))
}

// sizeRuns returns runs copied into room for extra more.
func (a *layoutAlloc) sizeRuns(runs []SizeRun, extra int) []SizeRun {
	if a == nil {
		return append(make([]SizeRun, 0, len(runs)+extra), runs...)
	}
	out := a.runs.take(len(runs) + extra)[:len(runs)]
	copy(out, runs)
	return out
}
