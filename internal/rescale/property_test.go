package rescale

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// refSlice is one entry of a new subtask in the reference repartitioner: stream, name, first
// element within the old entry, element count.
type refSlice struct {
	stream string
	name   string
	first  int64
	n      int64
}

// flinkGroupingOrder is groupByStateMode transcribed on the model's primitives, independently of
// nameGrouping's shortcuts: each handle's name map is read with put (newHashMapWithExpectedSize),
// iterated, and every name goes through computeIfAbsent on its mode's HashMap. It returns the
// SPLIT_DISTRIBUTE names in iteration order.
func flinkGroupingOrder(handles []*checkpoint.OperatorStateHandleLayout) []string {
	var keys []string
	index := map[string]int32{}
	m := newJavaHashMap(-1, func(a, b int32) int { return javaStringCompare(keys[a], keys[b]) })
	for _, h := range handles {
		if h == nil {
			continue
		}
		var names []string
		modes := map[string]checkpoint.DistributionMode{}
		for _, st := range h.States {
			names = append(names, st.Name)
			modes[st.Name] = st.Mode
		}
		for _, n := range modelPutOrder(names, flinkExpectedSizeCapacity(len(names))) {
			if modes[n] != checkpoint.SplitDistribute {
				continue // another mode's map
			}
			id, ok := index[n]
			if !ok {
				id = int32(len(keys))
				index[n] = id
				keys = append(keys, n)
			}
			m.computeIfAbsent(id, javaSpread(JavaStringHashCode(n)), ok)
		}
	}
	var out []string
	for _, id := range m.keys(nil) {
		out = append(out, keys[id])
	}
	return out
}

// referenceOldSubtasks is the set of old subtasks each new subtask reads in Flink: the handles it
// is given (§1.2-§1.4): at unchanged parallelism its own old handle (even one without names) plus
// the UNION and partly-reported BROADCAST entries' handles; otherwise the handles of its slices.
func referenceOldSubtasks(handles []*checkpoint.OperatorStateHandleLayout, ref [][]refSlice, oldP, newP int) [][]int {
	stream := map[string]int{}
	for j, h := range handles {
		if h != nil {
			stream[h.Stream.Path] = j
		}
	}
	out := make([][]int, newP)
	for i := range newP {
		set := map[int]bool{}
		if oldP == newP && handles[i] != nil {
			set[i] = true
		}
		for _, s := range ref[i] {
			set[stream[s.stream]] = true
		}
		for j := range oldP {
			if set[j] {
				out[i] = append(out[i], j)
			}
		}
	}
	return out
}

// referenceRepartition is a literal transcription of RoundRobinOperatorStateRepartitioner
// (§1.2-§1.4) over counts, materialising every entry. It is the oracle for the compact
// implementation.
func referenceRepartition(handles []*checkpoint.OperatorStateHandleLayout, oldP, newP int) [][]refSlice {
	type loc struct {
		stream string
		n      int64
		old    int
	}
	out := make([][]refSlice, newP)
	if oldP == newP {
		var unionNames, bcastNames []string
		union, bcast := map[string][]loc{}, map[string][]loc{}
		reported := map[string]map[int]bool{}
		for j, h := range handles {
			if h == nil {
				continue
			}
			for _, st := range h.States {
				l := loc{h.Stream.Path, st.Elements, j}
				switch st.Mode {
				case checkpoint.Union:
					if _, ok := union[st.Name]; !ok {
						unionNames = append(unionNames, st.Name)
					}
					union[st.Name] = append(union[st.Name], l)
				case checkpoint.Broadcast:
					if _, ok := bcast[st.Name]; !ok {
						bcastNames = append(bcastNames, st.Name)
						reported[st.Name] = map[int]bool{}
					}
					bcast[st.Name] = append(bcast[st.Name], l)
					reported[st.Name][j] = true
				}
			}
		}
		var partial []string
		for _, n := range bcastNames {
			if len(reported[n]) != (oldP+63)/64*64 {
				partial = append(partial, n)
			}
		}
		// own handles (as-is when nothing changes)
		merge := make([]map[string]map[string]refSlice, newP) // stream → name → slice
		for i := range merge {
			merge[i] = map[string]map[string]refSlice{}
			if h := handles[i]; h != nil {
				m := map[string]refSlice{}
				for _, st := range h.States {
					m[st.Name] = refSlice{h.Stream.Path, st.Name, 0, st.Elements}
				}
				merge[i][h.Stream.Path] = m
			}
		}
		if len(unionNames) > 0 || len(partial) > 0 {
			for i := range merge {
				for _, n := range unionNames {
					for _, l := range union[n] {
						if merge[i][l.stream] == nil {
							merge[i][l.stream] = map[string]refSlice{}
						}
						merge[i][l.stream][n] = refSlice{l.stream, n, 0, l.n}
					}
				}
				for _, n := range partial {
					l := bcast[n][i%len(bcast[n])]
					if merge[i][l.stream] == nil {
						merge[i][l.stream] = map[string]refSlice{}
					}
					merge[i][l.stream][n] = refSlice{l.stream, n, 0, l.n}
				}
			}
		}
		for i := range merge {
			for _, m := range merge[i] {
				for _, s := range m {
					out[i] = append(out[i], s)
				}
			}
		}
		return out
	}
	var names [3][]string
	groups := [3]map[string][]loc{{}, {}, {}}
	for j, h := range handles {
		if h == nil {
			continue
		}
		for _, st := range h.States {
			if _, ok := groups[st.Mode][st.Name]; !ok {
				names[st.Mode] = append(names[st.Mode], st.Name)
			}
			groups[st.Mode][st.Name] = append(groups[st.Mode][st.Name], loc{h.Stream.Path, st.Elements, j})
		}
	}
	start := 0
	for _, name := range flinkGroupingOrder(handles) {
		cur := groups[checkpoint.SplitDistribute][name]
		var total int64
		for _, l := range cur {
			total += l.n
		}
		lst, off := 0, int64(0)
		base, rem := total/int64(newP), total%int64(newP)
		newStart := start
		for i := 0; i < newP; i++ {
			idx := (i + start) % newP
			n := base
			if rem > 0 {
				n++
				rem--
			} else if rem == 0 {
				newStart = idx
				rem--
			}
			for n > 0 {
				l := cur[lst]
				remaining := l.n - off
				var s refSlice
				if remaining > n {
					s = refSlice{l.stream, name, off, n}
					off += n
				} else {
					s = refSlice{l.stream, name, off, remaining}
					off = 0
					lst++
				}
				n -= remaining
				out[idx] = append(out[idx], s)
			}
		}
		start = newStart
	}
	for i := 0; i < newP; i++ {
		for _, name := range names[checkpoint.Union] {
			for _, l := range groups[checkpoint.Union][name] {
				out[i] = append(out[i], refSlice{l.stream, name, 0, l.n})
			}
		}
		for _, name := range names[checkpoint.Broadcast] {
			ls := groups[checkpoint.Broadcast][name]
			l := ls[i%len(ls)]
			out[i] = append(out[i], refSlice{l.stream, name, 0, l.n})
		}
	}
	return out
}

func sortSlices(s []refSlice) []refSlice {
	s = append([]refSlice(nil), s...)
	sort.Slice(s, func(a, b int) bool {
		x, y := s[a], s[b]
		if x.name != y.name {
			return x.name < y.name
		}
		if x.stream != y.stream {
			return x.stream < y.stream
		}
		return x.first < y.first
	})
	return s
}

// randomLayout builds an operator with random operator state: names of every mode, random
// counts (zero included), missing subtasks, varying element sizes.
func randomLayout(rng interface {
	Intn(int) int
	Int63n(int64) int64
}, oldP int, uniformBroadcast bool) *checkpoint.Layout {
	nSplit, nUnion, nBcast := rng.Intn(5), rng.Intn(3), rng.Intn(3)
	// SPLIT names that share buckets ("a"/"ab" at every table size, "Aa"/"BB" one hashCode),
	// so that Java's order within a bucket decides where the round robin starts.
	pool := []string{"a", "ab", "Aa", "BB", "split-0", "split-1", "AaAa", "BBBB", "AaBB"}
	for k := len(pool) - 1; k > 0; k-- {
		x := rng.Intn(k + 1)
		pool[k], pool[x] = pool[x], pool[k]
	}
	emptyHandles := rng.Intn(3) == 0
	var subs []checkpoint.SubtaskLayout
	for j := 0; j < oldP; j++ {
		if rng.Intn(8) == 0 {
			continue // reported nothing
		}
		if emptyHandles && rng.Intn(3) == 0 {
			subs = append(subs, sub(j, handle(fmt.Sprintf("s%d", j)))) // a handle without names
			continue
		}
		var states []checkpoint.StateEntryLayout
		for k := 0; k < nSplit; k++ {
			if rng.Intn(5) == 0 {
				continue
			}
			n := rng.Int63n(7)
			e := checkpoint.StateEntryLayout{Name: pool[k], Mode: checkpoint.SplitDistribute, Elements: n}
			for x := int64(0); x < n; x++ {
				sz := 1 + rng.Int63n(50)
				e.Sizes.Append(sz, 1)
				e.Bytes += sz
			}
			states = append(states, e)
		}
		for k := 0; k < nUnion; k++ {
			states = append(states, union(fmt.Sprintf("union-%d", k), rng.Int63n(4)))
		}
		for k := 0; k < nBcast; k++ {
			if !uniformBroadcast && rng.Intn(4) == 0 {
				continue
			}
			states = append(states, bcast(fmt.Sprintf("bcast-%d", k), 1+int64(k)))
		}
		if rng.Intn(2) == 0 { // file order varies between handles
			for k := len(states) - 1; k > 0; k-- {
				x := rng.Intn(k + 1)
				states[k], states[x] = states[x], states[k]
			}
		}
		h := handle(fmt.Sprintf("s%d", j), states...)
		if rng.Intn(3) == 0 {
			h.Stream.Kind = checkpoint.StreamInline
		}
		subs = append(subs, sub(j, h))
	}
	return layoutOf(op(1, oldP, 128, subs...))
}

// TestPropertyOperatorStateAgainstReference compares every Share with the literal transcription
// of Flink's repartitioner, and checks Flink's invariants (§7 A2).
func TestPropertyOperatorStateAgainstReference(t *testing.T) {
	rng := newRand(42)
	runs, compared := 0, 0
	for range 3000 {
		oldP, newP := 1+rng.Intn(9), 1+rng.Intn(12)
		if rng.Intn(100) == 0 {
			oldP, newP = 64, 64*(1+rng.Intn(2)) // the multiple-of-64 broadcast branch
		}
		uniform := rng.Intn(2) == 0
		l := randomLayout(rng, oldP, uniform)
		r := simulate(t, l, Plan{DefaultParallelism: newP})
		a := r.Vertices[0].Operators[0]
		runs++
		handles := make([]*checkpoint.OperatorStateHandleLayout, oldP)
		for k := range l.Operators[0].Subtasks {
			st := &l.Operators[0].Subtasks[k]
			handles[st.Index] = st.ManagedOperatorState
		}
		checkEachStateOnce(t, handles, a.States())
		ref := referenceRepartition(handles, oldP, newP)
		refOld := referenceOldSubtasks(handles, ref, oldP, newP)
		splitTotals := make([]int64, newP)
		for i := 0; i < newP; i++ {
			if got := a.Subtask(i).FromOldSubtasks; !reflect.DeepEqual(got, refOld[i]) {
				t.Fatalf("%d→%d subtask %d reads old subtasks %v, Flink %v", oldP, newP, i, got, refOld[i])
			}
			var got []refSlice
			for _, s := range a.States() {
				for _, sl := range s.Share(i).Slices {
					got = append(got, refSlice{sl.Stream.Path, s.Name, sl.First, sl.Elements})
				}
				if s.Mode == checkpoint.SplitDistribute {
					splitTotals[i] += s.Share(i).Elements
				}
			}
			if !reflect.DeepEqual(sortSlices(got), sortSlices(ref[i])) {
				t.Fatalf("%d→%d subtask %d:\n got %v\nwant %v", oldP, newP, i, sortSlices(got), sortSlices(ref[i]))
			}
			compared++
		}
		for _, s := range a.States() {
			checkStateInvariants(t, s, oldP, newP, uniform)
		}
		if oldP != newP {
			lo, hi := splitTotals[0], splitTotals[0]
			for _, x := range splitTotals {
				lo, hi = min(lo, x), max(hi, x)
			}
			if hi-lo > 1 {
				t.Fatalf("%d→%d: SPLIT totals per subtask %v differ by more than 1", oldP, newP, splitTotals)
			}
		}
		if oldP != newP && uniform && a.Summary.MaxElements-a.Summary.MinElements > 1 {
			// §7 A2: with every subtask reporting the same BROADCAST states, the total over all
			// modes differs by at most one, as CheckpointCoordinatorTest asserts.
			t.Fatalf("%d→%d: elements per subtask %d..%d (all modes)", oldP, newP, a.Summary.MinElements, a.Summary.MaxElements)
		}
		checkSummaries(t, a)
	}
	t.Logf("%d random layouts, %d subtasks compared with the reference", runs, compared)
}

// checkEachStateOnce: the simulation lists every (mode, name) of the handles exactly once, as
// Flink's groupByStateMode does (distributions relies on the iteration orders being a
// permutation of the names; a state without elements has no slice to compare).
func checkEachStateOnce(t *testing.T, handles []*checkpoint.OperatorStateHandleLayout, states []*StateDistribution) {
	t.Helper()
	want := map[stateKey]bool{}
	for _, h := range handles {
		if h == nil {
			continue
		}
		for _, st := range h.States {
			if st.Mode <= checkpoint.Broadcast {
				want[stateKey{st.Mode, st.Name}] = true
			}
		}
	}
	got := map[stateKey]bool{}
	for _, s := range states {
		k := stateKey{s.Mode, s.Name}
		if got[k] || !want[k] {
			t.Fatalf("state %v listed twice or not in the handles", k)
		}
		got[k] = true
	}
	if len(got) != len(want) {
		t.Fatalf("%d states listed, the handles have %d", len(got), len(want))
	}
}

// checkStateInvariants: SPLIT assigns every element exactly once; UNION gives everyone
// everything; BROADCAST replication follows newP/oldP + (j < newP mod oldP).
func checkStateInvariants(t *testing.T, s *StateDistribution, oldP, newP int, uniformBroadcast bool) {
	t.Helper()
	var total int64
	copies := map[int]int{}
	seen := map[[2]int64]bool{} // (old subtask, element)
	for i := 0; i < newP; i++ {
		sh := s.Share(i)
		total += sh.Elements
		switch s.Mode {
		case checkpoint.SplitDistribute:
			for _, sl := range sh.Slices {
				for x := sl.First; x < sl.First+sl.Elements; x++ {
					k := [2]int64{int64(sl.OldSubtask), x}
					if seen[k] {
						t.Fatalf("%s: element %v assigned twice", s.Name, k)
					}
					seen[k] = true
				}
			}
		case checkpoint.Union:
			if sh.Elements != s.Elements {
				t.Fatalf("%s: subtask %d has %d of %d union elements", s.Name, i, sh.Elements, s.Elements)
			}
		case checkpoint.Broadcast:
			for _, sl := range sh.Slices {
				copies[sl.OldSubtask]++
			}
		}
	}
	switch s.Mode {
	case checkpoint.SplitDistribute:
		if total != s.Elements || int64(len(seen)) != s.Elements {
			t.Fatalf("%s: %d of %d elements assigned", s.Name, total, s.Elements)
		}
	case checkpoint.Broadcast:
		if uniformBroadcast && int(s.OldEntries) == oldP && oldP != newP {
			for j := 0; j < oldP; j++ {
				want := newP / oldP
				if j < newP%oldP {
					want++
				}
				if copies[j] != want {
					t.Fatalf("%s %d→%d: old %d copied %d times, want %d", s.Name, oldP, newP, j, copies[j], want)
				}
			}
		}
	}
	if total != s.Summary.TotalElements {
		t.Fatalf("%s: summary total %d, shares %d", s.Name, s.Summary.TotalElements, total)
	}
}

// checkSummaries: the eager summaries equal what Subtask(i) computes one by one.
func checkSummaries(t *testing.T, a *OperatorAssignment) {
	t.Helper()
	var sum OperatorSummary
	sum.MinElements, sum.MinStateBytes = -1, -1
	for i := 0; i < a.NewParallelism; i++ {
		st := a.Subtask(i)
		tot := a.SubtaskTotals(i)
		if olds := a.OldSubtasksRead32(i); !slices.EqualFunc(olds, st.FromOldSubtasks, func(o int32, j int) bool { return int(o) == j }) {
			t.Fatalf("subtask %d: OldSubtasksRead32 %v, Subtask %v", i, olds, st.FromOldSubtasks)
		}
		if tot.Elements != st.Elements || tot.StateBytes != st.StateBytes || tot.Offsets != st.Offsets ||
			tot.Handles != st.Handles || tot.InlineBytes != st.InlineBytes || tot.FileReferences != st.FileReferences ||
			tot.PayloadBytes != st.PayloadBytes || tot.KeyedReadBytes != st.KeyedReadBytes ||
			tot.KeyedOwnedBytes != st.KeyedOwnedBytes || tot.BytesBefore != st.BytesBefore || tot.KeyGroups != st.KeyGroups ||
			tot.Restored != st.Restored || tot.Finished != st.Finished {
			t.Fatalf("subtask %d: SubtaskTotals %+v, Subtask %+v", i, tot, st)
		}
		if st.Elements == 0 {
			sum.EmptySubtasks++
		}
		if sum.MinElements < 0 || st.Elements < sum.MinElements {
			sum.MinElements = st.Elements
		}
		if sum.MinStateBytes < 0 || st.StateBytes < sum.MinStateBytes {
			sum.MinStateBytes = st.StateBytes
		}
		sum.MaxElements = max(sum.MaxElements, st.Elements)
		sum.MaxStateBytes = max(sum.MaxStateBytes, st.StateBytes)
		sum.TotalStateBytes += st.StateBytes
		sum.KeyedTotalOwnedBytes += st.KeyedOwnedBytes
		sum.MaxPayloadBytes = max(sum.MaxPayloadBytes, st.PayloadBytes)
		sum.TotalPayloadBytes += st.PayloadBytes
		sum.MaxInlineBytes = max(sum.MaxInlineBytes, st.InlineBytes)
		sum.KeyedMaxReadBytes = max(sum.KeyedMaxReadBytes, st.KeyedReadBytes)
	}
	got := a.Summary
	if got.MinElements != sum.MinElements || got.MaxElements != sum.MaxElements || got.EmptySubtasks != sum.EmptySubtasks ||
		got.MinStateBytes != sum.MinStateBytes || got.MaxStateBytes != sum.MaxStateBytes ||
		got.MaxPayloadBytes != sum.MaxPayloadBytes || got.TotalPayloadBytes != sum.TotalPayloadBytes ||
		got.MaxInlineBytes != sum.MaxInlineBytes || got.KeyedMaxReadBytes != sum.KeyedMaxReadBytes ||
		got.TotalStateBytes != sum.TotalStateBytes || got.KeyedTotalOwnedBytes != sum.KeyedTotalOwnedBytes {
		t.Fatalf("operator summary %+v, per-subtask recomputation %+v", got, sum)
	}
	for _, s := range a.States() {
		var lo, hi, blo, bhi int64 = -1, 0, -1, 0
		empty, absent := 0, 0
		for i := 0; i < a.NewParallelism; i++ {
			sh := s.Share(i)
			if c := s.ShareCounts(i); c.Present != sh.Present || c.Elements != sh.Elements || c.Bytes != sh.Bytes {
				t.Fatalf("%s subtask %d: ShareCounts %+v, Share %+v", s.Name, i, c, sh)
			}
			if lo < 0 || sh.Elements < lo {
				lo = sh.Elements
			}
			if blo < 0 || sh.Bytes < blo {
				blo = sh.Bytes
			}
			hi, bhi = max(hi, sh.Elements), max(bhi, sh.Bytes)
			if sh.Elements == 0 {
				empty++
			}
			if !sh.Present {
				absent++
			}
		}
		ss := s.Summary
		if ss.MinElements != lo || ss.MaxElements != hi || ss.MinBytes != blo || ss.MaxBytes != bhi || int(ss.EmptySubtasks) != empty || int(ss.AbsentSubtasks) != absent {
			t.Fatalf("%s %v: summary %+v, shares min/max %d/%d bytes %d/%d empty %d absent %d", s.Name, s.path, ss, lo, hi, blo, bhi, empty, absent)
		}
	}
}

// TestPropertyKeyed: on a rescale, key-group handles are narrowed so that every key group is
// read by exactly the subtask that owns it; incremental handles are read whole by every
// overlapping subtask.
func TestPropertyKeyed(t *testing.T) {
	rng := newRand(7)
	runs := 0
	for range 500 {
		maxP := 1 + rng.Intn(300)
		oldP, newP := 1+rng.Intn(maxP), 1+rng.Intn(maxP)
		incremental := rng.Intn(2) == 0
		var subs []checkpoint.SubtaskLayout
		for j := 0; j < oldP; j++ {
			h := keyGroupsHandle(maxP, oldP, j)
			if incremental {
				h.Kind, h.KeyGroupBytes = checkpoint.IncrementalHandle, checkpoint.KeyGroupSizes{}
			}
			subs = append(subs, checkpoint.SubtaskLayout{Index: j, ManagedKeyedState: h})
		}
		r := simulate(t, layoutOf(op(1, oldP, maxP, subs...)), Plan{DefaultParallelism: newP})
		a := r.Vertices[0].Operators[0]
		runs++
		readBy := make([]int, maxP)
		var owned int64
		for i := 0; i < newP; i++ {
			sh := a.ManagedKeyed.Share(i)
			want := KeyGroupRangeForSubtask(maxP, newP, i)
			if sh.KeyGroups != want {
				t.Fatalf("range %v, want %v", sh.KeyGroups, want)
			}
			owned += sh.OwnedBytes
			for _, h := range sh.Handles {
				if oldP != newP && !incremental && IntersectKeyGroups(h.KeyGroups, want) != h.KeyGroups {
					t.Fatalf("narrowed handle %v outside %v", h.KeyGroups, want)
				}
				if incremental != h.Whole && oldP != newP {
					t.Fatalf("whole=%v for incremental=%v", h.Whole, incremental)
				}
				inter := IntersectKeyGroups(h.KeyGroups, want)
				for kg := inter.Start; kg <= inter.End(); kg++ {
					readBy[kg]++
				}
			}
		}
		for kg, n := range readBy {
			if n != 1 {
				t.Fatalf("maxP=%d %d→%d: key group %d owned by %d subtasks", maxP, oldP, newP, kg, n)
			}
		}
		if !incremental && owned != a.ManagedKeyed.Bytes {
			t.Fatalf("owned %d of %d bytes", owned, a.ManagedKeyed.Bytes)
		}
		checkSummaries(t, a)
	}
	t.Logf("%d random keyed layouts", runs)
}
