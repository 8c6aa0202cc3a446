package rescale

import (
	"math/bits"
	"slices"
	"sort"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// Subtask computes what new subtask i of the operator receives, with the same figures the
// operator pass summarised. It costs O(states × log entries) plus the slices it returns.
func (a *OperatorAssignment) Subtask(i int) SubtaskAssignment {
	st, sim := a.subtaskBase(i)
	if sim == nil {
		return st
	}
	var olds []int
	// Distinct streams: the UNION streams are in sim.unionMask; the others are few per subtask,
	// so a linear scan beats a map until there are many.
	var seen []int32
	var seenSet map[int32]bool
	has := func(id int32) bool {
		if sim.unionMask != nil && sim.unionMask[id>>6]&(1<<(uint(id)&63)) != 0 {
			return true
		}
		if seenSet != nil {
			return seenSet[id]
		}
		for _, x := range seen {
			if x == id {
				return true
			}
		}
		return false
	}
	countStream := func(id int32, union bool) {
		switch {
		case union: // has finds it in the mask
		case seenSet != nil:
			seenSet[id] = true
		default:
			if seen = append(seen, id); len(seen) > 64 {
				seenSet = make(map[int32]bool, 2*len(seen))
				for _, x := range seen {
					seenSet[x] = true
				}
			}
		}
		st.addStream(&sim.streams[id])
	}
	for _, s := range sim.unionStreams() {
		countStream(s, true)
	}
	for _, id := range sim.keptStreams(i) {
		countStream(id, false) // an old handle without names, kept as it is
		olds = append(olds, i)
	}
	st.States = make([]Share, len(sim.states))
	var tmp stateRec
	for k := range sim.states {
		s := sim.rec(k, &tmp)
		d := sim.namedDist(s)
		sh := d.share(i)
		st.States[k] = sh
		st.Elements += sh.Elements
		st.StateBytes += sh.Bytes
		st.Offsets += sh.Elements
		for _, sl := range sh.Slices {
			olds = append(olds, sl.OldSubtask)
			id := int32(sl.OldSubtask)
			if s.Raw {
				id += int32(sim.oldP)
			}
			if !has(id) {
				countStream(id, false)
			}
			st.PayloadBytes += d.nameOverhead + 8*sl.Elements
		}
	}
	for _, k := range []*KeyedDistribution{a.ManagedKeyed, a.RawKeyed} {
		if k == nil {
			continue
		}
		var ks KeyedShare
		ks.KeyGroups = st.KeyGroups
		k.each(i, st.KeyGroups, func(s KeyedSlice, p int64) {
			ks.Handles = append(ks.Handles, s)
			ks.ReadBytes += s.ReadBytes
			ks.OwnedBytes += s.OwnedBytes
			ks.InlineBytes += s.InlineBytes
			st.PayloadBytes += p
			olds = append(olds, s.OldSubtask)
			st.FileReferences += k.fileReferences(s.OldSubtask)
		})
		st.KeyedReadBytes += ks.ReadBytes
		st.KeyedOwnedBytes += ks.OwnedBytes
		st.InlineBytes += ks.InlineBytes
		if k.Raw {
			st.RawKeyed = ks
		} else {
			st.ManagedKeyed = ks
		}
	}
	for _, c := range []*ChannelDistribution{a.InputChannels, a.OutputChannels} {
		if c == nil {
			continue
		}
		sh := c.Share(i)
		for _, j := range sh.OldSubtasks {
			olds = append(olds, j)
			st.PayloadBytes += c.perOld[j].cost
			st.FileReferences += c.perOld[j].files
		}
		st.InlineBytes += sh.InlineBytes
		if c.Input {
			st.InputChannels = sh
		} else {
			st.OutputChannels = sh
		}
	}
	sort.Ints(olds)
	for k, j := range olds {
		if k == 0 || j != olds[k-1] {
			st.FromOldSubtasks = append(st.FromOldSubtasks, j)
		}
	}
	return st
}

// addStream counts one old stream handle the subtask reads: a handle, its payload, its inline
// bytes and, when its bytes are in a file, a file reference.
func (st *SubtaskAssignment) addStream(s *streamInfo) {
	st.Handles++
	st.PayloadBytes += s.cost
	st.InlineBytes += s.inline
	if k := s.ref.Kind; k != checkpoint.StreamInline && k != checkpoint.StreamNone {
		st.FileReferences++
	}
}

// fileReferences counts the files old subtask old's keyed handle makes a reader open: its
// stream when not inline, and its shared and private files.
func (k *KeyedDistribution) fileReferences(old int) int {
	h := k.d.handles[k.d.byOld[old]].h
	n := h.SharedFiles.Count + h.PrivateFiles.Count
	if !h.Stream.Inline() && h.Stream.Kind != checkpoint.StreamNone {
		n++
	}
	return n
}

// subtaskBase is what Subtask and SubtaskTotals share: new subtask i's fields that need no
// simulation, and the simulation to compute the rest from (nil when i is out of range or the
// operator restores nothing: st is then complete).
func (a *OperatorAssignment) subtaskBase(i int) (SubtaskAssignment, *operatorSim) {
	st := SubtaskAssignment{Index: i, Finished: a.Path == PathFinished, CoordinatorBytes: a.CoordinatorBytes,
		BytesBefore: a.bytesBefore(i)}
	if i < 0 || i >= a.NewParallelism {
		return st, nil
	}
	st.Restored = a.taskRestored
	if a.sim == nil {
		return st, nil
	}
	st.KeyGroups = KeyGroupRangeForSubtask(a.MaxParallelism, a.NewParallelism, i)
	return st, a.sim
}

// SubtaskTotals is Subtask without the per-subtask detail: the totals (elements, state bytes,
// offsets, handles, inline bytes, file references, payload, keyed bytes) and nothing that
// lists old entries, handles or subtasks (States, the keyed and channel shares' lists and
// FromOldSubtasks stay empty). UNION state is added as the one constant every subtask
// receives, so a call costs O(non-UNION states × log entries + keyed handles read), not
// O(old subtasks): what a rule that scans every new subtask should call.
func (a *OperatorAssignment) SubtaskTotals(i int) SubtaskAssignment {
	st, sim := a.subtaskBase(i)
	if sim == nil {
		return st
	}
	st.Handles = int(sim.unionHandles)
	st.FileReferences = int(sim.unionFiles)
	st.PayloadBytes = sim.unionCost
	st.InlineBytes = sim.unionInline
	var seen []int32 // non-UNION streams counted: few per subtask
	for _, id := range sim.keptStreams(i) {
		// an old handle without names, kept as it is (as in Subtask)
		seen = append(seen, id)
		st.addStream(&sim.streams[id])
	}
	var tmp stateRec
	for k := range sim.states {
		s := sim.rec(k, &tmp)
		if s.Mode == checkpoint.Union {
			elements := sim.elements(s)
			st.Elements += elements
			st.StateBytes += s.Bytes
			st.Offsets += elements
			st.PayloadBytes += int64(s.OldEntries)*sim.nameOverhead(s) + 8*elements
			continue
		}
		sd := sim.namedDist(s)
		d := &sd
		d.walk(i, func(e int, _, count, bytes int64) {
			st.Elements += count
			st.StateBytes += bytes
			st.Offsets += count
			st.PayloadBytes += d.nameOverhead + 8*count
			id := d.stream(&d.entries[e])
			if sim.unionMask != nil && sim.unionMask[id>>6]&(1<<(uint(id)&63)) != 0 || slices.Contains(seen, id) {
				return
			}
			seen = append(seen, id)
			st.addStream(&sim.streams[id])
		})
	}
	for _, k := range []*KeyedDistribution{a.ManagedKeyed, a.RawKeyed} {
		if k == nil {
			continue
		}
		k.each(i, st.KeyGroups, func(s KeyedSlice, p int64) {
			st.KeyedReadBytes += s.ReadBytes
			st.KeyedOwnedBytes += s.OwnedBytes
			st.InlineBytes += s.InlineBytes
			st.PayloadBytes += p
			st.FileReferences += k.fileReferences(s.OldSubtask)
		})
	}
	for _, c := range []*ChannelDistribution{a.InputChannels, a.OutputChannels} {
		if c == nil || c.Mapping == nil || i >= len(c.Mapping) {
			continue
		}
		for _, j := range c.Mapping[i] {
			if j >= len(c.perOld) || c.perOld[j].handles == 0 {
				continue
			}
			o := &c.perOld[j]
			st.PayloadBytes += o.cost
			st.FileReferences += o.files
			st.InlineBytes += o.inline
		}
	}
	return st
}

// UnionPayloadBytes is the part of every new subtask's SubtaskAssignment.PayloadBytes that the
// operator's UNION state adds: each UNION stream once, and every UNION entry's name and offsets.
// Every new subtask receives all of it at any new parallelism (the entries are all old entries
// of the UNION names), so it is a lower bound of the payload that no parallelism removes.
// 0 when the operator restores nothing.
func (a *OperatorAssignment) UnionPayloadBytes() int64 {
	if a.sim == nil {
		return 0
	}
	n := a.sim.unionCost
	for k := range a.sim.states {
		if s := &a.sim.states[k]; s.Mode == checkpoint.Union {
			n += int64(s.OldEntries)*a.sim.nameOverhead(s) + 8*a.sim.elements(s)
		}
	}
	return n
}

// SplitFloor is what one SPLIT_DISTRIBUTE name puts into the new subtasks' payloads at any
// parallelism: Entries old entries that hold Elements elements, each slice of an entry costing
// EntryBytes (PayloadEntryOverhead plus the name) and 8 bytes per element.
type SplitFloor struct {
	Entries, Elements, EntryBytes int64
}

// PayloadFloor bounds, from below and for every new parallelism, the deployment payload the
// operator's SPLIT_DISTRIBUTE state adds beyond UnionPayloadBytes. Total is the least the new
// subtasks' payloads sum to: every entry holding elements is received at least once (its slices
// cost at least one EntryBytes and 8 bytes per element) and every non-UNION stream holding such
// an entry is referenced at least once. States are the per-name figures for MaxAt.
type PayloadFloor struct {
	Total  int64
	States []SplitFloor
}

// SplitPayloadFloor computes the operator's PayloadFloor: O(old entries) once, after which
// MaxAt costs O(names) per parallelism. The zero value when nothing is restored.
func (a *OperatorAssignment) SplitPayloadFloor() PayloadFloor {
	var f PayloadFloor
	sim := a.sim
	if sim == nil {
		return f
	}
	var seen []uint64
	var tmp stateRec
	splits := 0
	for k := range sim.states {
		if sim.states[k].Mode == checkpoint.SplitDistribute {
			splits++
		}
	}
	// Sized at once: grown by appending, the figures of 300,000 names would be held about
	// twice while they grow, at the search's peak (bench/README.md, "Many state names, round 5").
	if splits > 0 {
		f.States = make([]SplitFloor, 0, splits)
	}
	for k := range sim.states {
		s := sim.rec(k, &tmp)
		if s.Mode != checkpoint.SplitDistribute {
			continue
		}
		sd := sim.namedDist(s)
		d := &sd
		sf := SplitFloor{EntryBytes: d.nameOverhead}
		for e := range d.entries {
			en := &d.entries[e]
			if en.n <= 0 {
				continue
			}
			sf.Entries++
			sf.Elements += en.n
			id := d.stream(en)
			if sim.unionMask != nil && sim.unionMask[id>>6]&(1<<(uint(id)&63)) != 0 {
				continue
			}
			if seen == nil {
				seen = make([]uint64, (len(sim.streams)+63)/64)
			}
			if seen[id>>6]&(1<<(uint(id)&63)) == 0 {
				seen[id>>6] |= 1 << (uint(id) & 63)
				f.Total += sim.streams[id].cost
			}
		}
		if sf.Entries > 0 {
			f.Total += sf.Entries*sf.EntryBytes + 8*sf.Elements
			f.States = append(f.States, sf)
		}
	}
	// MaxAt runs once per candidate parallelism: with many names, keep those with the largest
	// entry and element terms (any subset still gives a lower bound).
	if len(f.States) > 2*maxFloorStates {
		keep := map[int]bool{}
		for _, term := range []func(s SplitFloor) int64{
			func(s SplitFloor) int64 { return s.Entries * (s.EntryBytes + 8) },
			func(s SplitFloor) int64 { return s.EntryBytes + 8*s.Elements },
		} {
			idx := make([]int32, len(f.States))
			for i := range idx {
				idx[i] = int32(i)
			}
			sort.Slice(idx, func(a, b int) bool { return term(f.States[idx[a]]) > term(f.States[idx[b]]) })
			for _, i := range idx[:maxFloorStates] {
				keep[int(i)] = true
			}
		}
		var kept []SplitFloor
		for i, s := range f.States {
			if keep[i] {
				kept = append(kept, s)
			}
		}
		f.States = kept
	}
	return f
}

// maxFloorStates is how many names PayloadFloor keeps per term.
const maxFloorStates = 8

// MaxAt is a lower bound of the largest SPLIT_DISTRIBUTE payload one new subtask receives at
// parallelism p: for each name, some subtask receives slices of at least ceil(Entries/p)
// entries, each with an element, and some subtask receives at least ceil(Elements/p) elements.
func (f PayloadFloor) MaxAt(p int) int64 {
	if p < 1 {
		return 0
	}
	n := int64(p)
	var m int64
	for _, s := range f.States {
		m = max(m, (s.Entries+n-1)/n*(s.EntryBytes+8), s.EntryBytes+8*((s.Elements+n-1)/n))
	}
	return m
}

// OldSubtasksRead32 returns Subtask(i).FromOldSubtasks, ascending, as int32s, without building
// the shares: the old subtasks whose operator, keyed or channel state new subtask i reads (nil
// for none). It costs O(old parallelism / 64 + entries read); with SubtaskTotals it gives a
// report row's from_old_subtasks. A row of a UNION state lists every old subtask, so rows
// streamed by the thousand allocate only the slice they keep, of the exact length.
func (a *OperatorAssignment) OldSubtasksRead32(i int) []int32 {
	seen := a.oldSubtasksSeen(i)
	n := 0
	for _, word := range seen {
		n += bits.OnesCount64(word)
	}
	if n == 0 {
		return nil
	}
	out := make([]int32, 0, n)
	for w, word := range seen {
		for ; word != 0; word &= word - 1 {
			out = append(out, int32(w*64+bits.TrailingZeros64(word)))
		}
	}
	return out
}

// oldSubtasksSeen is a bitmap of the old subtasks new subtask i reads (nil when it reads none
// or i is out of range).
func (a *OperatorAssignment) oldSubtasksSeen(i int) []uint64 {
	sim := a.sim
	if sim == nil || i < 0 || i >= a.NewParallelism || sim.oldP == 0 {
		return nil
	}
	seen := make([]uint64, (sim.oldP+63)/64)
	mark := func(j int) {
		if j >= 0 && j < sim.oldP {
			seen[j>>6] |= 1 << (uint(j) & 63)
		}
	}
	if len(sim.keptStreams(i)) > 0 {
		mark(i) // an old handle without names, kept by the subtask of the same index
	}
	var tmp stateRec
	for k := range sim.states {
		s := sim.rec(k, &tmp)
		sd := sim.dist(s)
		d := &sd
		if s.Mode == checkpoint.Union {
			for e := range d.entries {
				mark(int(d.entries[e].old))
			}
			continue
		}
		d.walk(i, func(e int, _, _, _ int64) { mark(int(d.entries[e].old)) })
	}
	r := KeyGroupRangeForSubtask(a.MaxParallelism, a.NewParallelism, i)
	for _, k := range []*KeyedDistribution{a.ManagedKeyed, a.RawKeyed} {
		if k != nil {
			k.each(i, r, func(s KeyedSlice, _ int64) { mark(s.OldSubtask) })
		}
	}
	for _, c := range []*ChannelDistribution{a.InputChannels, a.OutputChannels} {
		if c == nil || c.Mapping == nil || i >= len(c.Mapping) {
			continue
		}
		for _, j := range c.Mapping[i] {
			if j < len(c.perOld) && c.perOld[j].handles > 0 {
				mark(j)
			}
		}
	}
	return seen
}

func (sim *operatorSim) unionStreams() []int32 {
	var out []int32
	for w, word := range sim.unionMask {
		for b := 0; word != 0; b++ {
			if word&1 != 0 {
				out = append(out, int32(w*64+b))
			}
			word >>= 1
		}
	}
	return out
}

// bytesBefore is what old subtask i held (operator, keyed and channel state); -1 when i is not an
// old subtask index.
func (a *OperatorAssignment) bytesBefore(i int) int64 {
	if a.Layout == nil || i < 0 || i >= a.Layout.Parallelism {
		return -1
	}
	if a.sim != nil {
		// The record of old subtask i, found without a scan (a scan per subtask would make a
		// per-subtask loop quadratic).
		if st := a.sim.byOld[i]; st != nil {
			return subtaskBytes(st)
		}
		return 0
	}
	for k := range a.Layout.Subtasks {
		if st := &a.Layout.Subtasks[k]; st.Index == i {
			return subtaskBytes(st)
		}
	}
	return 0
}

// subtaskBytes is the state one old subtask record holds.
func subtaskBytes(st *checkpoint.SubtaskLayout) int64 {
	var b int64
	for e := range st.OperatorStates() {
		b += e.Bytes
	}
	for h := range st.KeyedStateHandles() {
		b += h.StateSize
	}
	for _, c := range st.InputChannels() {
		b += c.Size
	}
	for _, c := range st.OutputChannels() {
		b += c.Size
	}
	return b
}
