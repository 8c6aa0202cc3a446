package rescale

import (
	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// Payload estimate constants (see the package doc). They approximate the Java-serialized size of
// the handle objects in a TaskDeploymentDescriptor; offsets (8 bytes each) and inline bytes are
// exact.
const (
	// PayloadHandleOverhead is charged per state handle (operator, keyed or channel) and per file
	// handle of an incremental keyed handle, plus the bytes of its path.
	PayloadHandleOverhead = 100
	// PayloadEntryOverhead is charged per named entry of an operator state handle, plus the
	// name's bytes.
	PayloadEntryOverhead = 16
)

// streamInfo is one old operator-state stream (the delegate of one old subtask's managed or raw
// operator state handle).
type streamInfo struct {
	ref    checkpoint.StreamRef
	inline int64 // bytes inside _metadata
	cost   int64 // payload of referencing it once: overhead + path + inline bytes
}

// operatorSim holds what an operator's per-subtask computations share.
type operatorSim struct {
	a      *OperatorAssignment
	layout *checkpoint.OperatorLayout
	oldP   int
	newP   int
	// byOld maps an old subtask index to its record (nil when it reported nothing).
	byOld []*checkpoint.SubtaskLayout
	// streams: managed stream of old subtask j at j, raw at oldP+j.
	streams []streamInfo
	// unionMask marks the streams every new subtask references because of UNION entries;
	// unionCost and unionInline are their payload and inline bytes.
	unionMask   []uint64
	unionCost   int64
	unionInline int64
	// unionHandles and unionFiles count those streams, and the ones on files (int32: an
	// operatorSim exists per operator, and its size is at the edge of an allocation class).
	unionHandles, unionFiles int32
	// the vertex's effective max parallelism and channel-state mappers
	maxP                int
	inMapper, outMapper SubtaskMapper
	// stop is the simulation's cancellation flag.
	stop *cancel.Flag
	// handleSizing is Plan.HandleMaps.
	handleSizing HandleMapSizing
	// sizes are the element sizes of the entries whose elements differ in size (oldEntry.sizes
	// indexes them), of every name of the operator.
	sizes []*checkpoint.ElementSizes
	// entries are the old entries of every name of the managed [0] and raw [1] lists, each
	// name's together (StateDistribution.first), as many places as the name has entries.
	entries [2][]oldEntry
	// keptMask marks the streams of old handles without state names that new subtask j keeps at
	// unchanged parallelism (no StateDistribution accounts for them).
	keptMask []uint64
	// states are the records of the operator's states, in OperatorAssignment.State's order.
	// Read them with rec: where they are another simulation's (adoptStates), over holds what
	// differs at this one's parallelism.
	states []stateRec
	over   *stateOverlay
}

func newOperatorSim(a *OperatorAssignment, l *checkpoint.OperatorLayout, newP int) *operatorSim {
	sim := &operatorSim{a: a, layout: l, oldP: l.Parallelism, newP: newP}
	sim.byOld = make([]*checkpoint.SubtaskLayout, sim.oldP)
	for i := range l.Subtasks {
		st := &l.Subtasks[i]
		if st.Index >= 0 && st.Index < sim.oldP && sim.byOld[st.Index] == nil {
			sim.byOld[st.Index] = st
		}
	}
	// Stream ids: managed j, raw oldP+j. Only as many as the operator's handles can use: most
	// operators have no raw operator state, many none at all.
	managed, raw := false, false
	for _, st := range sim.byOld {
		if st != nil {
			managed = managed || st.ManagedOperatorState != nil
			raw = raw || st.RawOperatorState != nil
		}
	}
	switch {
	case raw:
		sim.streams = make([]streamInfo, 2*sim.oldP)
	case managed:
		sim.streams = make([]streamInfo, sim.oldP)
	}
	for j, st := range sim.byOld {
		if st == nil {
			continue
		}
		if h := st.ManagedOperatorState; h != nil {
			sim.streams[j] = newStreamInfo(h.Stream)
		}
		if h := st.RawOperatorState; h != nil {
			sim.streams[sim.oldP+j] = newStreamInfo(h.Stream)
		}
	}
	return sim
}

func newStreamInfo(ref checkpoint.StreamRef) streamInfo {
	s := streamInfo{ref: ref, cost: PayloadHandleOverhead + int64(len(ref.Path))}
	if ref.Inline() {
		s.inline = ref.Size
		s.cost += ref.Size
	}
	return s
}

func (sim *operatorSim) handle(j int, raw bool) *checkpoint.OperatorStateHandleLayout {
	st := sim.byOld[j]
	if st == nil {
		return nil
	}
	if raw {
		return st.RawOperatorState
	}
	return st.ManagedOperatorState
}

// stateKey is one state of an operator list: its distribution mode and name.
type stateKey struct {
	mode checkpoint.DistributionMode
	name string
}

// stateLists groups the entries of one operator list (managed or raw) by mode and name.
type stateLists struct {
	sim *operatorSim
	raw bool
	// recs holds each (mode, name)'s record in first-appearance order: while filling,
	// OldEntries counts its entries filled of the counts[li] places it has in sim.entries[list]
	// (list: 0 managed, 1 raw).
	recs []stateRec
	list int
	// counts is how many old handles list each name, and lastJ the old subtask (+1) that last
	// did: the first pass over the handles counts, so that the entries take exactly their room
	// (a place per old subtask and name would be old parallelism × names, far more than the
	// file holds when each name is listed by a few of many subtasks).
	counts, lastJ []int32
	// ids is the list of every state the handles list, in the order of the passes: the first
	// finds them (index, Java's order), the second only reads them, so that what finding needs
	// is gone before the entries are allocated. next is the second pass's place in ids.
	ids  []int32
	next int
	// index finds a key's list by its name's spread hash (hashes), built beyond 16 names (below,
	// a linear search is faster): an open-addressing table of list + 1 (0: free), a power of
	// two at least twice the lists, probed linearly from the hash's slot. It is a few bytes a
	// name, where a map of keys, or of hashes, is tens (bench/README.md, "Many state names,
	// rounds 3 and 4").
	index []int32
	order []int32 // list of state k of the previous handle: handles usually list names alike
	// Java's order of the names (see nameGrouping): per key its name's spread hash, and the
	// current handle's distinct keys in file order, their modes and first appearances.
	hashes []int32
	hIDs   []int32
	hModes []checkpoint.DistributionMode
	hFresh []bool
}

// key is list li's mode and name.
func (g *stateLists) key(li int) stateKey { return stateKey{g.recs[li].Mode, g.sim.name(&g.recs[li])} }

// buildOperatorStates groups one list (managed or raw) by mode and name in Flink's traversal
// order (§1.4 step A), picks the repartitioning path (§1.2) and sets up each name's record,
// appending them to sim.states.
func (sim *operatorSim) buildOperatorStates(raw bool) OperatorPath {
	g := &stateLists{sim: sim, raw: raw}
	if raw {
		g.list = 1
	}
	streamBase := int32(0)
	if raw {
		streamBase = int32(sim.oldP)
	}
	listed := 0
	for j := 0; j < sim.oldP; j++ {
		if h := sim.handle(j, raw); h != nil {
			listed += len(h.States)
		}
	}
	g.ids = make([]int32, 0, listed)
	grouping := newNameGrouping(sim.handleSizing,
		func(id int32) string { return sim.name(&g.recs[id]) },
		func(id int32) int32 { return g.hashes[id] })
	for j := 0; j < sim.oldP; j++ {
		h := sim.handle(j, raw)
		if h == nil {
			continue
		}
		g.countHandle(j, h)
		if len(g.hIDs) == 0 && sim.oldP == sim.newP {
			// A handle without names: at unchanged parallelism Flink hands it to new subtask j
			// as it is (the repartitioner returns or keeps the old handles).
			sim.markKept(streamBase + int32(j))
		}
		grouping.addHandle(g.hIDs, g.hModes, g.hFresh)
	}
	// What only finding the names and their order needed goes before the entries are
	// allocated: with many names Java's maps, the index and the hashes take tens of bytes a
	// name (bench/README.md, "Many state names, rounds 3 and 4").
	var orders [checkpoint.Broadcast + 1][]int32
	for mode := range orders {
		orders[mode] = grouping.order(checkpoint.DistributionMode(mode))
	}
	g.index, g.order, g.hashes, g.hIDs, g.hModes, g.hFresh, grouping, g.lastJ = nil, nil, nil, nil, nil, nil, nil, nil
	g.placeEntries()
	for j := 0; j < sim.oldP; j++ {
		if h := sim.handle(j, raw); h != nil {
			g.addHandle(j, h)
		}
	}
	g.counts, g.ids = nil, nil
	path := g.path()
	sim.distributions(g.recs, orders, path)
	return path
}

// countHandle finds or adds the lists of old subtask j's handle h, counts their entries (one a
// name, also for a name listed twice: addHandle merges those) and sets the handle's distinct
// keys in file order (hIDs), their modes and first appearances for Java's order.
func (g *stateLists) countHandle(j int, h *checkpoint.OperatorStateHandleLayout) {
	if cap(g.hIDs) < len(h.States) {
		// Sized for the handle: grown by appending, a handle of 300,000 names would leave
		// about as much again as garbage.
		g.hIDs, g.hModes, g.hFresh = make([]int32, 0, len(h.States)), make([]checkpoint.DistributionMode, 0, len(h.States)), make([]bool, 0, len(h.States))
	}
	g.hIDs, g.hModes, g.hFresh = g.hIDs[:0], g.hModes[:0], g.hFresh[:0]
	g.eachListed(j, h, func(st *checkpoint.StateEntryLayout, li int) {
		g.ids = append(g.ids, int32(li))
		if g.lastJ[li] != int32(j)+1 {
			g.hIDs = append(g.hIDs, int32(li))
			g.hModes = append(g.hModes, st.Mode)
			g.hFresh = append(g.hFresh, g.counts[li] == 0)
			g.lastJ[li], g.counts[li] = int32(j)+1, g.counts[li]+1
		}
	})
}

// eachListed calls fn with each state of h that the modes' lists take (not the modes Flink's
// repartitioner ignores) and the index of its list, which it finds or adds.
func (g *stateLists) eachListed(j int, h *checkpoint.OperatorStateHandleLayout, fn func(st *checkpoint.StateEntryLayout, li int)) {
	for k := range h.States {
		g.sim.stop.Check()
		if st := &h.States[k]; st.Mode <= checkpoint.Broadcast {
			fn(st, g.listOf(j, k, stateKey{st.Mode, st.Name}, len(h.States)))
		}
	}
}

// placeEntries gives every name its counted places in one allocation for the list.
func (g *stateLists) placeEntries() {
	var total int64
	for li := range g.recs {
		g.recs[li].first = int32(total)
		total += int64(g.counts[li])
	}
	g.sim.entries[g.list] = make([]oldEntry, total)
}

// addHandle adds the entries of old subtask j's handle h to their names' lists (ids: the lists
// countHandle found, in the same order).
func (g *stateLists) addHandle(j int, h *checkpoint.OperatorStateHandleLayout) {
	for k := range h.States {
		g.sim.stop.Check()
		st := &h.States[k]
		if st.Mode > checkpoint.Broadcast {
			continue // as eachListed
		}
		li := int(g.ids[g.next])
		g.next++
		s := &g.recs[li]
		list, n := g.sim.entries[g.list][s.first:s.first+g.counts[li]], s.OldEntries
		if n > 0 && list[n-1].old == int32(j) {
			// A name twice in one handle: a format-1 task record, whose chained operators'
			// states the Layout merges. Java's map cannot hold it twice; merge the entries.
			prev := &checkpoint.StateEntryLayout{Elements: list[n-1].n, Bytes: list[n-1].bytes}
			if x := list[n-1].sizes; x >= 0 {
				prev.Sizes = *g.sim.sizes[x]
			} else if u := uniform(g.sim.sizes, &list[n-1]); u >= 0 {
				prev.Sizes.Append(u, list[n-1].n)
			}
			st = mergeEntries(prev, st)
			n--
		}
		list[n] = g.entry(j, st)
		s.OldEntries = n + 1
	}
}

// listOf returns the list of old subtask j's handle's k-th state key, adding one for a new key.
func (g *stateLists) listOf(j, k int, key stateKey, handleStates int) int {
	li := -1
	if k < len(g.order) && g.key(int(g.order[k])) == key {
		li = int(g.order[k])
	} else if len(g.recs) <= 16 {
		for x := range g.recs {
			if g.key(x) == key {
				li = x
				break
			}
		}
	} else {
		if g.index == nil {
			g.rebuildIndex(max(len(g.recs), handleStates))
		}
		mask := len(g.index) - 1
		for slot := indexSlot(javaSpread(JavaStringHashCode(key.name)), mask); g.index[slot] != 0; slot = (slot + 1) & mask {
			if x := int(g.index[slot] - 1); g.key(x) == key {
				li = x
				break
			}
		}
	}
	if li < 0 {
		li = g.newList(key, j, k, handleStates)
	}
	if k < len(g.order) {
		g.order[k] = int32(li)
	} else {
		g.order = append(g.order, int32(li))
	}
	return li
}

// newList adds an empty list for key, the k-th state of old subtask j's handle, its record, and
// returns its index.
func (g *stateLists) newList(key stateKey, j, k, handleStates int) int {
	li := len(g.recs)
	if li == 0 {
		// Sized for the first handle's names (usually all of them): grown by appending, the
		// tables of 300,000 names would leave about three times their size as garbage.
		n := max(handleStates, 1)
		g.recs, g.hashes = make([]stateRec, 0, n), make([]int32, 0, n)
		g.counts, g.lastJ = make([]int32, 0, n), make([]int32, 0, n)
	}
	g.hashes = append(g.hashes, javaSpread(JavaStringHashCode(key.name)))
	g.counts, g.lastJ = append(g.counts, 0), append(g.lastJ, 0)
	// Its place in the entries is set once all are counted (placeEntries).
	g.recs = append(g.recs, stateRec{nameJ: int32(j), nameK: int32(k), Mode: key.mode, Raw: g.raw})
	if g.index != nil {
		if 2*len(g.recs) > len(g.index) {
			g.rebuildIndex(len(g.recs))
		} else {
			g.indexList(li)
		}
	}
	return li
}

// rebuildIndex sizes the index for n lists (at least twice as many slots) and adds every list.
func (g *stateLists) rebuildIndex(n int) {
	size := 64
	for size < 2*n {
		size *= 2
	}
	g.index = make([]int32, size)
	for x := range g.recs {
		g.indexList(x)
	}
}

// indexList adds list li to the index.
func (g *stateLists) indexList(li int) {
	mask := len(g.index) - 1
	slot := indexSlot(g.hashes[li], mask)
	for g.index[slot] != 0 {
		slot = (slot + 1) & mask
	}
	g.index[slot] = int32(li) + 1
}

// indexSlot is the first slot probed for a name's spread hash: its bits mixed (Java's hashes of
// similar names differ in few low bits), then masked.
func indexSlot(hash int32, mask int) int {
	h := uint32(hash) * 0x9E3779B1
	return int(h^h>>15) & mask
}

// entry is old subtask j's entry of a name, keeping its element sizes only where needed.
func (g *stateLists) entry(j int, st *checkpoint.StateEntryLayout) oldEntry {
	e := oldEntry{old: int32(j), sizes: -1, n: max(st.Elements, 0), bytes: st.Bytes}
	switch runs := st.Sizes.Runs(); {
	case st.Mode != checkpoint.SplitDistribute:
		// UNION and BROADCAST entries are handed out whole: no element sizes needed (the
		// Layout keeps none), so their cache lines are not read.
	case len(runs) == 1 && runs[0].Count == e.n && e.bytes%e.n == 0 && e.bytes/e.n == runs[0].Size,
		e.n == 0:
		e.sizes = uniformSizes
	case st.Sizes.Len() == e.n:
		e.sizes = int32(len(g.sim.sizes))
		g.sim.sizes = append(g.sim.sizes, &st.Sizes)
	}
	return e
}

// path picks the repartitioning path of the list (§1.2).
func (g *stateLists) path() OperatorPath {
	sim := g.sim
	if sim.oldP != sim.newP {
		return PathRescale
	}
	path := PathUnchanged
	for li := range g.recs {
		switch s := &g.recs[li]; {
		case s.Mode == checkpoint.Union:
			path = PathUnchangedWithUnion
		case s.Mode == checkpoint.Broadcast && broadcastPartiallyReported(sim.entriesOf(s), sim.oldP):
			path = PathUnchangedWithUnion
		}
	}
	return path
}

// distributions sets up each name's record (recs, in first-appearance order) and appends them
// to sim.states in Flink's iteration order of the modes' maps (orders, per mode, indexes into
// recs). orders is always a permutation of recs' indexes: each record went once through the
// computeIfAbsent of its mode's map (nameGrouping.addHandle, fresh on its first handle).
func (sim *operatorSim) distributions(recs []stateRec, orders [checkpoint.Broadcast + 1][]int32, path OperatorPath) {
	var start int64
	base := len(sim.states)
	if len(recs) > 1 {
		// In place: a second table of every name would double them at the peak.
		reorder(recs, orders)
	}
	if base == 0 {
		sim.states = recs // the operator's first list (most operators have one state)
	} else {
		sim.states = append(sim.states, recs...)
	}
	for k := base; k < len(sim.states); k++ {
		// Flink's iteration order of the mode's HashMap; only SPLIT_DISTRIBUTE's matters (the
		// cursor's start carries over from name to name), the others are listed alike.
		sim.stop.Check()
		s := &sim.states[k]
		s.path = path
		start = sim.setUpDistribution(s, start)
	}
}

// reorder puts recs in the order orders list them (a permutation of recs' indexes), in place:
// each cycle of the permutation is followed once.
func reorder(recs []stateRec, orders [checkpoint.Broadcast + 1][]int32) {
	perm := make([]int32, 0, len(recs)) // perm[i]: the record that goes to place i
	for _, order := range orders {
		perm = append(perm, order...)
	}
	for i := range perm {
		if perm[i] < 0 {
			continue // placed by an earlier cycle
		}
		tmp, j := recs[i], i
		for {
			k := int(perm[j])
			perm[j] = -1
			if k == i {
				recs[j] = tmp
				break
			}
			recs[j], j = recs[k], k
		}
	}
}

// setUpDistribution fills s's totals and its distribution's cursors from its entries; start is
// the SPLIT_DISTRIBUTE cursor's start for s, and the one for the next name is returned.
func (sim *operatorSim) setUpDistribution(s *stateRec, start int64) int64 {
	entries := sim.entriesOf(s)
	var pre int64
	for e := range entries {
		entries[e].pre = pre
		pre += entries[e].n
		s.Bytes += entries[e].bytes
	}
	if s.Mode == checkpoint.Union {
		d := sim.dist(s)
		for e := range entries {
			sim.markUnion(d.stream(&entries[e]))
		}
	}
	return sim.setUpCursor(s, start)
}

// setUpCursor sets what of s depends on the new parallelism, given its list's path (s.path):
// the SPLIT_DISTRIBUTE cursor's start (start; the next name's is returned), whether a
// BROADCAST name is partially reported, and the operator pass's bytes, not yet known.
func (sim *operatorSim) setUpCursor(s *stateRec, start int64) int64 {
	s.partial, s.start = false, 0
	if s.Mode == checkpoint.Broadcast && s.path == PathUnchangedWithUnion {
		s.partial = broadcastPartiallyReported(sim.entriesOf(s), sim.oldP)
	}
	if s.Mode == checkpoint.SplitDistribute && s.path == PathRescale {
		n := int64(sim.newP)
		s.start = int32(start)
		start = (start + sim.elements(s)%n) % n
	}
	// Filled by the operator pass (summarize); -1 until then, as Summary had it.
	s.minBytes, s.maxBytes = -1, -1
	return start
}

// adoptStates takes the operator's named states from base, a simulation of the same operator
// at another parallelism (simulation.prevSim): their records, grouping, Java order, old
// entries, element sizes and what the UNION entries add to every subtask do not depend on the
// parallelism and are shared with base, read only. What does (the lists' paths, the cursors,
// the operator pass's bytes, the handles kept at unchanged parallelism) is set up again, as
// buildOperatorStates does, in an overlay (stateOverlay) of a few bytes a state instead of a
// copy of the records. It returns the operator's path.
func (sim *operatorSim) adoptStates(base *operatorSim) OperatorPath {
	sim.sizes, sim.entries, sim.states = base.sizes, base.entries, base.states
	sim.unionMask, sim.unionCost, sim.unionInline = base.unionMask, base.unionCost, base.unionInline
	sim.unionHandles, sim.unionFiles = base.unionHandles, base.unionFiles
	over := &stateOverlay{at: make([]stateAt, len(sim.states))}
	var starts [2]int64
	for list, raw := range [2]bool{false, true} {
		over.paths[list] = sim.listPath(raw)
		if sim.oldP == sim.newP {
			sim.markKeptHandles(raw)
		}
	}
	for k := range sim.states {
		sim.stop.Check()
		s := sim.states[k] // a copy: base's record is not changed
		list := listOf(s.Raw)
		s.path = over.paths[list]
		starts[list] = sim.setUpCursor(&s, starts[list])
		over.at[k] = stateAt{minBytes: s.minBytes, maxBytes: s.maxBytes, start: s.start}
	}
	sim.over = over
	return max(over.paths[0], over.paths[1])
}

// listPath is stateLists.path of the list (managed or raw) of the operator's states.
func (sim *operatorSim) listPath(raw bool) OperatorPath {
	if sim.oldP != sim.newP {
		return PathRescale
	}
	path := PathUnchanged
	for k := range sim.states {
		switch s := &sim.states[k]; {
		case s.Raw != raw:
		case s.Mode == checkpoint.Union:
			path = PathUnchangedWithUnion
		case s.Mode == checkpoint.Broadcast && broadcastPartiallyReported(sim.entriesOf(s), sim.oldP):
			path = PathUnchangedWithUnion
		}
	}
	return path
}

// markKeptHandles marks the old handles of the list that list no name the modes' lists take,
// as buildOperatorStates does at unchanged parallelism.
func (sim *operatorSim) markKeptHandles(raw bool) {
	streamBase := int32(0)
	if raw {
		streamBase = int32(sim.oldP)
	}
	for j := 0; j < sim.oldP; j++ {
		h := sim.handle(j, raw)
		if h == nil {
			continue
		}
		listed := false
		for k := range h.States {
			if h.States[k].Mode <= checkpoint.Broadcast {
				listed = true
				break
			}
		}
		if !listed {
			sim.markKept(streamBase + int32(j))
		}
	}
}

// broadcastPartiallyReported is collectPartlyFinishedBroadcastStates' test, including the quirk
// that the BitSet's size is rounded up to a multiple of 64 (§1.3). Entries are in old-subtask
// order, one per old subtask, so their number is the number of reporting subtasks.
func broadcastPartiallyReported(entries []oldEntry, oldP int) bool {
	return len(entries) != (oldP+63)/64*64
}

func (sim *operatorSim) markKept(stream int32) {
	if sim.keptMask == nil {
		sim.keptMask = make([]uint64, (len(sim.streams)+63)/64)
	}
	sim.keptMask[stream>>6] |= 1 << (uint(stream) & 63)
}

// keptStreams returns the kept streams of subtask i (managed, then raw).
func (sim *operatorSim) keptStreams(i int) []int32 {
	if sim.keptMask == nil || i < 0 || i >= sim.oldP {
		return nil
	}
	var out []int32
	for _, id := range [2]int32{int32(i), int32(sim.oldP + i)} {
		// Without raw operator state there are only oldP streams (newOperatorSim).
		if int(id) < len(sim.streams) && sim.keptMask[id>>6]&(1<<(uint(id)&63)) != 0 {
			out = append(out, id)
		}
	}
	return out
}

func (sim *operatorSim) markUnion(stream int32) {
	w := (len(sim.streams) + 63) / 64
	if sim.unionMask == nil {
		sim.unionMask = make([]uint64, w)
	}
	m := uint64(1) << (uint(stream) & 63)
	if sim.unionMask[stream>>6]&m == 0 {
		sim.unionMask[stream>>6] |= m
		sim.unionCost += sim.streams[stream].cost
		sim.unionHandles++
		if k := sim.streams[stream].ref.Kind; k != checkpoint.StreamInline && k != checkpoint.StreamNone {
			sim.unionFiles++
		}
		sim.unionInline += sim.streams[stream].inline
	}
}

// analyticSummary fills what is known without visiting subtasks; SPLIT_DISTRIBUTE bytes on the
// rescale path are the operator pass's (stateRec.minBytes, maxBytes). elements is s's.
func (d *stateDist) analyticSummary(s *stateRec, elements int64) StateSummary {
	newP := int64(d.newP)
	var sum StateSummary
	switch {
	case s.Mode == checkpoint.SplitDistribute && d.path == PathRescale:
		sum.MinElements, sum.MaxElements = d.base, d.base
		if d.rem > 0 {
			sum.MaxElements++
		}
		if d.base == 0 {
			sum.EmptySubtasks = int32(newP - d.rem)
			sum.AbsentSubtasks = sum.EmptySubtasks
		}
		sum.TotalElements = elements
		sum.MinBytes, sum.MaxBytes = -1, -1 // filled by the operator pass
	case s.Mode == checkpoint.Union:
		sum.MinElements, sum.MaxElements = elements, elements
		sum.MinBytes, sum.MaxBytes = s.Bytes, s.Bytes
		if elements == 0 {
			sum.EmptySubtasks = int32(d.newP)
		}
		sum.TotalElements = newP * elements
	case s.Mode == checkpoint.Broadcast && d.path == PathRescale:
		// Entry e goes to newP/n + (e < newP mod n ? 1 : 0) subtasks.
		n := len(d.entries)
		sum.MinElements, sum.MinBytes = -1, -1
		for e := 0; e < min(n, d.newP); e++ {
			cnt := int64(d.newP / n)
			if e < d.newP%n {
				cnt++
			}
			en := &d.entries[e]
			if en.n == 0 {
				sum.EmptySubtasks += int32(cnt)
			}
			sum.TotalElements += cnt * en.n
			widen(&sum.MinElements, &sum.MaxElements, en.n)
			widen(&sum.MinBytes, &sum.MaxBytes, en.bytes)
		}
	case !d.partial:
		// Unchanged parallelism: subtask i keeps old subtask i's entry.
		sum.MinElements, sum.MinBytes = -1, -1
		if len(d.entries) < d.newP {
			sum.MinElements, sum.MinBytes = 0, 0
			sum.AbsentSubtasks = int32(d.newP - len(d.entries))
			sum.EmptySubtasks = sum.AbsentSubtasks
		}
		for e := range d.entries {
			en := &d.entries[e]
			if en.n == 0 {
				sum.EmptySubtasks++
			}
			sum.TotalElements += en.n
			widen(&sum.MinElements, &sum.MaxElements, en.n)
			widen(&sum.MinBytes, &sum.MaxBytes, en.bytes)
		}
	default:
		// Partially reported BROADCAST at unchanged parallelism: own entry and entry i mod n.
		sum.MinElements, sum.MinBytes = -1, -1
		for i := 0; i < d.newP; i++ {
			var el, b int64
			present := false
			d.eachWhole(i, func(e int) {
				el += d.entries[e].n
				b += d.entries[e].bytes
				present = true
			})
			if !present {
				sum.AbsentSubtasks++
			}
			if el == 0 {
				sum.EmptySubtasks++
			}
			sum.TotalElements += el
			widen(&sum.MinElements, &sum.MaxElements, el)
			widen(&sum.MinBytes, &sum.MaxBytes, b)
		}
	}
	return sum
}

// eachWhole calls f for every entry subtask i receives whole (every mode and path except SPLIT on
// the rescale path).
func (d *stateDist) eachWhole(i int, f func(e int)) {
	switch {
	case d.mode == checkpoint.Union:
		for e := range d.entries {
			f(e)
		}
	case d.path == PathRescale: // BROADCAST
		f(i % len(d.entries))
	default:
		own := int32(-1)
		if e := d.firstFrom(i); e < len(d.entries) && int(d.entries[e].old) == i {
			own = int32(e)
			f(e)
		}
		if d.partial {
			if e := i % len(d.entries); int32(e) != own {
				f(e)
			}
		}
	}
}

// mergeEntries returns the elements of a followed by those of b (same old subtask and stream).
func mergeEntries(a, b *checkpoint.StateEntryLayout) *checkpoint.StateEntryLayout {
	m := &checkpoint.StateEntryLayout{Name: b.Name, Mode: b.Mode, Elements: a.Elements + b.Elements,
		Bytes: a.Bytes + b.Bytes, SizesApproximate: a.SizesApproximate || b.SizesApproximate}
	if a.Sizes.Len() == a.Elements && b.Sizes.Len() == b.Elements {
		for _, r := range a.Sizes.Runs() {
			m.Sizes.Append(r.Size, r.Count)
		}
		for _, r := range b.Sizes.Runs() {
			m.Sizes.Append(r.Size, r.Count)
		}
	}
	return m
}
