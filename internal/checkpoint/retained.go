package checkpoint

// This file is the memory model of a Layout: what a decoded Layout keeps on the heap, for the
// daemon's layout cache. It counts the records the decoder allocates, each at a stated size
// (the record's size on 64-bit platforms, rounded up to the allocator's size class for records
// allocated one by one; retained_test.go checks them against unsafe.Sizeof and the measured
// heap), plus the bytes of the slices and strings they hold.

// Bytes per record.
const (
	layoutBytes        = 128 // Layout, allocated alone (104 bytes, size class 128)
	masterStateBytes   = 32  // MasterStateSummary, in a slice
	propertiesBytes    = 80  // CheckpointProperties, allocated alone (72, size class 80)
	operatorBytes      = 120 // OperatorLayout, in a slice
	subtaskBytes       = 64  // SubtaskLayout, in a slice
	channelsBytes      = 48  // ChannelLayouts, allocated alone
	operatorHandleSize = 80  // OperatorStateHandleLayout, allocated alone (72, size class 80)
	stateEntryBytes    = 64  // StateEntryLayout, in a slice
	moreRunsBytes      = 48  // moreRuns (an ElementSizes of two runs or more), allocated alone
	streamRefBytes     = 48  // StreamRef, allocated alone (40, size class 48)
	coordinatorBytes   = 48  // CoordinatorStateRef, allocated alone (48)
	keyedHandleBytes   = 224 // KeyedStateHandleLayout, allocated alone (216, size class 224)
	keyedNestedBytes   = 216 // KeyedStateHandleLayout, in a slice (changelog)
	channelBytes       = 72  // ChannelStateLayout, in a slice
	sizeRunBytes       = 16  // SizeRun and runEnd, in ElementSizes' slices
)

// RetainedBytes estimates the heap bytes the Layout holds: its records at the sizes above,
// slices by capacity, and strings by length. State names are counted once per distinct name,
// as the decoder interns them; the records of stateless operators once for the Layout, as the
// decoder shares them (shareEmptySubtasks). It takes one pass over the Layout and allocates
// only a set of the distinct state names.
func (l *Layout) RetainedBytes() int64 {
	n := int64(layoutBytes) + int64(cap(l.MasterStates))*masterStateBytes
	for i := range l.MasterStates {
		n += int64(len(l.MasterStates[i].Name))
	}
	if p := l.Properties; p != nil {
		n += propertiesBytes + int64(len(p.Name)+len(p.SavepointFormat)+len(p.SharingStrategy)+len(p.PostCheckpointAct))
	}
	n += int64(len(l.PropertiesError))
	n += int64(cap(l.Operators)) * operatorBytes
	names := retainedNames{seen: map[string]bool{}}
	sharedEmpty := 0 // the longest run of shared empty subtask records
	for i := range l.Operators {
		op := &l.Operators[i]
		n += int64(len(op.Name) + len(op.UID))
		if op.CoordinatorState != nil {
			n += coordinatorBytes + int64(len(op.CoordinatorState.Path))
		}
		if emptySubtasks(op.Subtasks) {
			sharedEmpty = max(sharedEmpty, len(op.Subtasks))
			continue
		}
		n += int64(cap(op.Subtasks)) * subtaskBytes
		for k := range op.Subtasks {
			n += subtaskRetained(&op.Subtasks[k], &names)
		}
	}
	return n + int64(sharedEmpty)*subtaskBytes + names.bytes
}

// emptySubtasks reports whether subtasks are the empty records 0..n-1 that the decoder shares.
func emptySubtasks(subtasks []SubtaskLayout) bool {
	for k := range subtasks {
		if !emptyRecord(&subtasks[k], k) {
			return false
		}
	}
	return len(subtasks) > 0
}

// retainedNames counts each distinct state name once.
type retainedNames struct {
	seen  map[string]bool
	last  string
	bytes int64
}

func (r *retainedNames) add(name string) {
	if name == r.last || r.seen[name] {
		return
	}
	r.last = name
	if len(r.seen) < maxInternedNames {
		r.seen[name] = true
	}
	r.bytes += int64(len(name))
}

// subtaskRetained is what one subtask record references beyond the record itself.
func subtaskRetained(s *SubtaskLayout, names *retainedNames) int64 {
	var n int64
	for _, h := range [...]*OperatorStateHandleLayout{s.ManagedOperatorState, s.RawOperatorState} {
		if h == nil {
			continue
		}
		n += operatorHandleSize + int64(len(h.Stream.Path)) + int64(cap(h.States))*stateEntryBytes
		for e := range h.States {
			st := &h.States[e]
			names.add(st.Name)
			if m := st.Sizes.more; m != nil {
				n += moreRunsBytes + int64(cap(m.runs)+cap(m.ends))*sizeRunBytes
			}
		}
	}
	for _, h := range [...]*KeyedStateHandleLayout{s.ManagedKeyedState, s.RawKeyedState} {
		if h != nil {
			n += keyedHandleBytes + keyedRetained(h, 0)
		}
	}
	if s.Channels != nil {
		n += channelsBytes
	}
	for _, chans := range [...][]ChannelStateLayout{s.InputChannels(), s.OutputChannels()} {
		n += int64(cap(chans)) * channelBytes
		for c := range chans {
			n += int64(len(chans[c].Stream.Path))
		}
	}
	return n
}

// keyedRetained is what a keyed handle references beyond its record; depth bounds the changelog
// nesting as the decoder does.
func keyedRetained(h *KeyedStateHandleLayout, depth int) int64 {
	n := int64(cap(h.KeyGroupBytes.data)) + int64(len(h.Stream.Path)) + int64(len(h.BackendID))
	if depth >= maxDepth {
		return n
	}
	n += int64(cap(h.Nested)) * keyedNestedBytes
	for i := range h.Nested {
		n += keyedRetained(&h.Nested[i], depth+1)
	}
	return n
}
