package checkpoint

import (
	"encoding/binary"
	"io"
	"slices"
	"sort"
)

// offsetSummary folds the ascending offsets of one state entry into what the Layout needs: the
// count, the first and last offset, and the run-length-encoded differences of consecutive
// offsets (the sizes of all elements but the last, whose end is known only once the delegate
// stream's size and the other states of the handle are known).
type offsetSummary struct {
	n           int64
	first, last int64
	sizes       ElementSizes
	cur, curN   int64 // the open run
	unordered   bool  // an offset was smaller than its predecessor
	// boundsOnly skips the run-length encoding (UNION and BROADCAST states keep only their
	// element count and byte total).
	boundsOnly bool
	// budget is the decoder's remaining run budget (nil: unlimited); once it is spent, runs are
	// folded into tailN elements of tailBytes bytes.
	budget           *int64
	tailN, tailBytes int64
}

// add folds big-endian i64 offsets (len(b) is a multiple of 8).
func (s *offsetSummary) add(b []byte) {
	if len(b) < 8 {
		return
	}
	i := 0
	if s.n == 0 {
		v := int64(binary.BigEndian.Uint64(b))
		s.first, s.last = v, v
		i = 8
	}
	s.n += int64(len(b) / 8)
	if s.boundsOnly {
		// Only the count, the bounds and whether the offsets ascend: a branch-free scan.
		last, descend := s.last, uint64(0)
		for ; i+8 <= len(b); i += 8 {
			v := int64(binary.BigEndian.Uint64(b[i:]))
			descend |= uint64(boolToInt(v < last))
			last = v
		}
		s.last, s.unordered = last, s.unordered || descend != 0
		return
	}
	last, cur, curN := s.last, s.cur, s.curN
	for ; i+8 <= len(b); i += 8 {
		v := int64(binary.BigEndian.Uint64(b[i:]))
		diff := v - last
		last = v
		if diff == cur {
			curN++
			continue
		}
		if curN > 0 {
			s.flush(cur, curN)
		}
		cur, curN = diff, 1
	}
	s.last, s.cur, s.curN = last, cur, curN
}

func (s *offsetSummary) flush(size, count int64) {
	if size < 0 {
		s.unordered = true
		size = 0
	}
	if s.budget != nil {
		if *s.budget <= 0 || s.tailN > 0 {
			s.tailN += count
			s.tailBytes += size * count
			return
		}
		*s.budget--
	}
	s.sizes.Append(size, count)
}

// runBudget caps the run-length-encoded sizes one ReadLayout keeps over all states (32 bytes a
// run, so 32 MiB): elements whose size changes from one to the next cost a run each, and a
// hostile or unusual file could otherwise need more memory than its own offsets. Beyond the
// budget a state's remaining element sizes are folded into their average (byte totals stay
// exact) and the state is marked SizesApproximate.
const runBudget = 1 << 20

// summarizeOffsets builds a summary from offsets held in memory.
func summarizeOffsets(offs []int64, mode DistributionMode) offsetSummary {
	s := offsetSummary{boundsOnly: mode != SplitDistribute}
	var buf [8 * 256]byte
	for len(offs) > 0 {
		k := min(len(offs), 256)
		for i := 0; i < k; i++ {
			binary.BigEndian.PutUint64(buf[8*i:], uint64(offs[i]))
		}
		s.add(buf[:8*k])
		offs = offs[k:]
	}
	return s
}

// ReadLayout decodes the analysis view of a _metadata file from r in bounded memory: offset
// arrays of operator state and channel state are folded into counts and run-length-encoded
// element sizes and inline bytes are counted, not kept. Errors are *FormatError.
func ReadLayout(r io.Reader) (*Layout, error) {
	return readLayout(newReaderDecoder(r))
}

// ReadLayoutBytes is ReadLayout over a file held in memory; it does not copy b.
func ReadLayoutBytes(b []byte) (*Layout, error) {
	return readLayout(newBytesDecoder(b))
}

func readLayout(d *decoder) (l *Layout, err error) {
	d.summarize = true
	defer d.release()
	defer recoverError(&err)
	m := d.file()
	l = m.Layout()
	l.Size = d.offset()
	if m.Version >= 4 {
		l.TrailerSize = int(d.offset() - d.trailerOff)
	} else {
		l.TrailingBytes = d.offset() - d.trailerOff
	}
	return l, nil
}

// Layout derives the analysis view from a decoded file. Layout.Size is left 0 (ReadLayout fills
// it in).
func (m *Metadata) Layout() *Layout {
	l := &Layout{Version: int(m.Version), CheckpointID: m.CheckpointID}
	for i := range m.MasterStates {
		ms := &m.MasterStates[i]
		l.MasterStates = append(l.MasterStates, MasterStateSummary{Name: ms.Name, Version: ms.Version, PayloadSize: int(ms.Size())})
	}
	l.Operators = make([]OperatorLayout, 0, len(m.Operators)+len(m.Tasks))
	for i := range m.Operators {
		l.Operators = append(l.Operators, operatorLayout(&m.Operators[i]))
	}
	for i := range m.Tasks {
		l.Operators = append(l.Operators, taskLayout(&m.Tasks[i]))
	}
	if m.Version < 4 {
		l.TrailingBytes = int64(len(m.Trailing))
	}
	if m.Version >= 4 {
		l.TrailerSize = len(m.Trailer)
		if len(m.Trailer) > 0 {
			p, err := decodeProperties(m.Trailer)
			if err != nil {
				l.PropertiesError = err.Error()
			} else {
				l.Properties = p
			}
		}
	}
	return l
}

func operatorLayout(op *OperatorState) OperatorLayout {
	o := OperatorLayout{
		ID: op.ID, Name: op.Name, UID: op.UID,
		Parallelism: int(op.Parallelism), MaxParallelism: int(op.MaxParallelism),
		ChainLength: int(op.ChainLength), FullyFinished: op.FullyFinished, Offset: op.offset,
	}
	if op.CoordinatorState != nil {
		ref := streamRef(op.CoordinatorState)
		o.CoordinatorState = &ref
	}
	o.Subtasks = make([]SubtaskLayout, 0, len(op.Subtasks))
	for _, e := range op.Subtasks {
		s := SubtaskLayout{Index: int(e.Index), Finished: e.Finished, RefCheckpointID: -1}
		if st := e.State; st != nil {
			if st.ManagedOperatorState.Present != 0 && st.ManagedOperatorState.Handle != nil {
				s.ManagedOperatorState = operatorHandleLayout(st.ManagedOperatorState.Handle)
			}
			if st.RawOperatorState.Present != 0 && st.RawOperatorState.Handle != nil {
				s.RawOperatorState = operatorHandleLayout(st.RawOperatorState.Handle)
			}
			s.ManagedKeyedState = keyedLayout(st.ManagedKeyedState)
			s.RawKeyedState = keyedLayout(st.RawKeyedState)
			s.InputChannels = channelLayouts(st.InputChannels)
			s.OutputChannels = channelLayouts(st.OutputChannels)
			if st.RefMarker == 1 {
				s.RefCheckpointID = st.RefCheckpointID
			}
		}
		o.Subtasks = append(o.Subtasks, s)
	}
	return o
}

// taskLayout maps a format-1 task onto an OperatorLayout: the operator states of all chained
// operators are listed together in one handle layout per slot (each state's sizes computed in
// its own handle's stream); the stream is the first chained operator's.
func taskLayout(t *TaskState) OperatorLayout {
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
			hl := operatorHandleLayout(h)
			if out == nil {
				out = hl
			} else {
				out.States = append(out.States, hl.States...)
			}
		}
		return out
	}
	for _, st := range t.Subtasks {
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

func operatorHandleLayout(h *OperatorStateHandle) *OperatorStateHandleLayout {
	hl := &OperatorStateHandleLayout{
		Stream:      streamRef(h.Delegate),
		FileMerging: h.Tag == tagSegmentPartitionable,
		Empty:       h.Tag == tagSegmentPartitionable && h.Empty != 0,
	}
	hl.States = finishStates(h.States, hl.Stream.Size)
	return hl
}

// finishStates computes the element sizes of the states of one handle (spec §6.1): an element
// ends at the next larger offset of the handle, the last one at the stream size. Summaries keep
// only each state's first and last offset, so a state whose offset range overlaps another's is
// marked SizesApproximate.
func finishStates(entries []StateEntry, streamSize int64) []StateEntryLayout {
	out := make([]StateEntryLayout, len(entries))
	sums := make([]*offsetSummary, len(entries))
	var order []int // non-empty states by first offset
	for i := range entries {
		e := &entries[i]
		s := &e.sum
		if s.n == 0 && len(e.Offsets) > 0 {
			tmp := summarizeOffsets(e.Offsets, e.Mode)
			s = &tmp
		}
		sums[i] = s
		out[i] = StateEntryLayout{Name: e.Name, Mode: e.Mode, Elements: s.n, SizesApproximate: s.unordered}
		if s.n > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return sums[order[a]].first < sums[order[b]].first })
	// Overlapping ranges: sweep in order of first offset.
	maxLast, maxIdx := int64(-1<<63), -1
	for _, i := range order {
		if maxIdx >= 0 && sums[i].first <= maxLast {
			out[i].SizesApproximate = true
			out[maxIdx].SizesApproximate = true
		}
		if sums[i].last > maxLast {
			maxLast, maxIdx = sums[i].last, i
		}
	}
	firsts := make([]int64, len(order))
	for k, i := range order {
		firsts[k] = sums[i].first
	}
	for _, i := range order {
		s := sums[i]
		end := streamSize
		if k, _ := slices.BinarySearch(firsts, s.last+1); k < len(firsts) {
			end = firsts[k]
		}
		lastSize := end - s.last
		if lastSize < 0 {
			lastSize = 0
			out[i].SizesApproximate = true
		}
		if s.boundsOnly || entries[i].Mode != SplitDistribute {
			out[i].Bytes = max(s.last-s.first, 0) + lastSize
			continue
		}
		sizes := s.sizes.clone()
		if s.tailN > 0 {
			avg, rem := s.tailBytes/s.tailN, s.tailBytes%s.tailN
			sizes.Append(avg+1, rem)
			sizes.Append(avg, s.tailN-rem)
			out[i].SizesApproximate = true
		}
		if s.curN > 0 {
			cur := s.cur
			if cur < 0 {
				cur = 0
				out[i].SizesApproximate = true
			}
			sizes.Append(cur, s.curN)
		}
		sizes.Append(lastSize, 1)
		out[i].Bytes = sizes.Total()
		out[i].Sizes = sizes
	}
	return out
}

// clone returns an independent copy.
func (e *ElementSizes) clone() ElementSizes {
	return ElementSizes{runs: slices.Clone(e.runs), endCount: slices.Clone(e.endCount), endBytes: slices.Clone(e.endBytes)}
}

func keyedLayout(h KeyedStateHandle) *KeyedStateHandleLayout {
	if h == nil {
		return nil
	}
	k := &KeyedStateHandleLayout{Tag: h.keyedTag(), CheckpointedSize: -1}
	switch h := h.(type) {
	case *KeyGroupsStateHandle:
		k.Kind = KeyGroupsHandle
		if h.Tag == tagSavepointKeyGroups {
			k.Kind = SavepointKeyGroupsHandle
		}
		k.KeyGroups = KeyGroupRange{Start: int(h.StartKeyGroup), NumKeyGroups: int(h.NumKeyGroups)}
		k.Stream = streamRef(h.Delegate)
		k.KeyGroupBytes = keyGroupBytes(h.Offsets, k.Stream.Size)
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
				if nl := keyedLayout(n); nl != nil {
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

// keyGroupBytes derives the bytes of each key group from its offset (0 = no data) and the next
// larger offset of the handle or the stream size.
func keyGroupBytes(offsets []int64, streamSize int64) []int64 {
	if len(offsets) == 0 {
		return nil
	}
	sorted := make([]int64, 0, len(offsets))
	ascending := true
	prev := int64(-1 << 63)
	for _, o := range offsets {
		if o != 0 {
			if o <= prev {
				ascending = false
			}
			prev = o
			sorted = append(sorted, o)
		}
	}
	if !ascending {
		slices.Sort(sorted)
		sorted = slices.Compact(sorted)
	}
	out := make([]int64, len(offsets))
	for i, o := range offsets {
		if o == 0 {
			continue
		}
		end := streamSize
		if k, found := slices.BinarySearch(sorted, o); found && k+1 < len(sorted) {
			end = sorted[k+1]
		}
		if end > o {
			out[i] = end - o
		}
	}
	return out
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

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
