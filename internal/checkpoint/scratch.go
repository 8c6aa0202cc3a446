package checkpoint

import (
	"slices"
	"unsafe"
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
	subtasks        []SubtaskEntry // the operator's subtask list
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

// entries returns an empty slice with room for exactly n state entries, carved from the
// scratch: appending n entries fills it without reallocating or touching another handle's.
func (hs *handleScratch) stateEntries(n int) []StateEntry {
	if cap(hs.entries)-len(hs.entries) < n {
		hs.entries = make([]StateEntry, 0, max(2*cap(hs.entries), n, 16))
	}
	start := len(hs.entries)
	hs.entries = hs.entries[:start+n]
	return hs.entries[start : start : start+n]
}

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

// stringBlocks copies the strings of one Layout into shared blocks instead of one allocation
// each: a Layout keeps every path and name it decodes (twenty-odd strings in a small file), and
// they live and die together with it. A block is only appended to, so the bytes a string points
// at never change; each decoded file starts new blocks (the decoder is reset per file), so a
// Layout shares no block with another.
type stringBlocks struct {
	block []byte
	next  int // the size of the next block
}

const (
	firstStringBlock = 512
	maxStringBlock   = 8 << 10
)

func (sb *stringBlocks) string(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > cap(sb.block)-len(sb.block) {
		if len(b) > maxStringBlock/4 {
			return string(b) // a long string gets its own allocation, not a block's tail
		}
		sb.next = min(max(2*sb.next, firstStringBlock), maxStringBlock)
		sb.block = make([]byte, 0, max(sb.next, len(b)))
	}
	start := len(sb.block)
	sb.block = append(sb.block, b...)
	return unsafe.String(&sb.block[start], len(b))
}
