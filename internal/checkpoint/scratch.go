package checkpoint

import "slices"

// handleScratch holds the handle records of the operator being decoded when a Layout is built
// operator by operator (layoutState): operatorLayout copies what the Layout keeps from
// them (values and strings, never a pointer to a record), so after each operator they are
// reused for the next one, and by a Decoder for its next file, instead of allocated per
// handle. A small checkpoint file holds a few dozen such records; allocating each was about a
// quarter of a corpus file's allocations.
type handleScratch struct {
	operatorHandles []OperatorStateHandle
	ends            []entryEnds // the ends of operatorHandles' layouts, carved in order
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

// entryEnds returns room for the ends of the n state entries of one operator-state handle.
func (hs *handleScratch) entryEnds(n int) []entryEnds { return carve(&hs.ends, n) }

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
	resetScratch(&hs.ends)
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
	if d.lay == nil {
		return new(T)
	}
	return take(of(&d.lay.handles))
}
