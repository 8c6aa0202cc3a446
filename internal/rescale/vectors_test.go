package rescale

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// Vectors of §7 of the rescaling spec: A = asserted in Flink's tests, B = derived.

// A1: StateAssignmentOperationTest, operator-state modes. Old p=2, maxP=4.
func TestA1OperatorStateModes(t *testing.T) {
	type want map[string]int
	tests := []struct {
		name     string
		s0, s1   *checkpoint.OperatorStateHandleLayout
		by3      want // entries per name at 2→3
		by1      want // 2→1
		by2      want // 2→2
		offsets3 map[string]int64
	}{
		{
			name: "testRepartitionSplitDistributeStates",
			s0:   handle("h0", split("t-1", 2)), s1: handle("h1", split("t-2", 2)),
			by3: want{"t-1": 2, "t-2": 2}, by1: want{"t-1": 1, "t-2": 1}, by2: want{"t-1": 1, "t-2": 1},
			offsets3: map[string]int64{"t-1": 1, "t-2": 1},
		},
		{
			name: "testRepartitionUnionState",
			s0:   handle("h0", union("t-3", 1), union("t-4", 2)), s1: handle("h1", union("t-3", 1)),
			by3: want{"t-3": 6, "t-4": 3}, by1: want{"t-3": 2, "t-4": 1}, by2: want{"t-3": 4, "t-4": 2},
		},
		{
			name: "testRepartitionBroadcastState",
			s0:   handle("h0", bcast("t-5", 3), bcast("t-6", 3)), s1: handle("h1", bcast("t-5", 3), bcast("t-6", 3)),
			by3: want{"t-5": 3, "t-6": 3}, by1: want{"t-5": 1, "t-6": 1}, by2: want{"t-5": 2, "t-6": 2},
			offsets3: map[string]int64{"t-5": 3, "t-6": 3},
		},
		{
			name: "testRepartitionBroadcastStateWithNullSubtaskState",
			s0:   handle("h0", bcast("t-5", 3), bcast("t-6", 3)), s1: nil,
			by3: want{"t-5": 3, "t-6": 3}, by1: want{"t-5": 1, "t-6": 1}, by2: want{"t-5": 2, "t-6": 2},
		},
		{
			name: "testRepartitionBroadcastStateWithEmptySubtaskState",
			s0:   handle("h0", bcast("t-5", 3), bcast("t-6", 3)), s1: handle("h1"),
			by3: want{"t-5": 3, "t-6": 3}, by1: want{"t-5": 1, "t-6": 1}, by2: want{"t-5": 2, "t-6": 2},
		},
		{
			name: "testReDistributeCombinedPartitionableStates",
			s0: handle("h0", union("t-1", 1), union("t-2", 2), split("t-3", 2),
				bcast("t-4", 1), bcast("t-5", 1), bcast("t-6", 1)),
			s1:  handle("h1", union("t-1", 1), bcast("t-4", 1), bcast("t-5", 1), bcast("t-6", 1)),
			by3: want{"t-1": 6, "t-2": 3, "t-3": 2, "t-4": 3, "t-5": 3, "t-6": 3},
			by1: want{"t-1": 2, "t-2": 1, "t-3": 1, "t-4": 1, "t-5": 1, "t-6": 1},
			by2: want{"t-1": 4, "t-2": 2, "t-3": 1, "t-4": 2, "t-5": 2, "t-6": 2},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := layoutOf(op(1, 2, 4, sub(0, tc.s0), sub(1, tc.s1)))
			for _, c := range []struct {
				newP int
				want want
			}{{3, tc.by3}, {1, tc.by1}, {2, tc.by2}} {
				r := simulate(t, l, Plan{DefaultParallelism: c.newP})
				a := r.Vertices[0].Operators[0]
				got, offs := entriesPerName(a)
				if !reflect.DeepEqual(got, map[string]int(c.want)) {
					t.Errorf("2→%d: entries per name = %v, want %v", c.newP, got, c.want)
				}
				if c.newP == 3 {
					for name, n := range tc.offsets3 {
						for _, o := range offs[name] {
							if o != n {
								t.Errorf("2→3: %s entry with %d offsets, want %d", name, o, n)
							}
						}
					}
				}
				// Per subtask and name, offsets summed over handles (§7 A1, last paragraph).
				for i := 0; i < c.newP; i++ {
					for _, s := range a.States() {
						sh := s.Share(i)
						if !sh.Present {
							continue
						}
						var want int64
						switch {
						case s.Mode == checkpoint.SplitDistribute && c.newP == 3:
							want = 1
						case s.Mode == checkpoint.SplitDistribute:
							want = 2
						default:
							want = s.Elements
							if s.Mode == checkpoint.Broadcast {
								want = s.Elements / int64(s.OldEntries)
							}
						}
						if sh.Elements != want {
							t.Errorf("2→%d subtask %d %s: %d offsets, want %d", c.newP, i, s.Name, sh.Elements, want)
						}
					}
				}
			}
		})
	}
}

// A3: every key group lies in ranges[kg*P/maxP].
func TestA3KeyGroupPartitions(t *testing.T) {
	pairs := [][2]int{{1, 1}, {13, 1}, {13, 2}, {32767, 1}, {32767, 13}, {32767, 32767}}
	rng := newRand(1234)
	for range 1000 {
		maxP := 1 + rng.Intn(UpperBoundMaxParallelism)
		pairs = append(pairs, [2]int{maxP, 1 + rng.Intn(maxP)})
	}
	for _, pr := range pairs {
		checkPartition(t, pr[0], pr[1])
	}
}

// checkPartition: ranges partition [0, maxP), sizes differ by ≤ 1, operatorIndex is consistent.
func checkPartition(t *testing.T, maxP, p int) {
	t.Helper()
	next := 0
	minSize, maxSize := maxP, 0
	for i := 0; i < p; i++ {
		r := KeyGroupRangeForSubtask(maxP, p, i)
		if r.Start != next {
			t.Fatalf("maxP=%d p=%d: range %d starts at %d, want %d", maxP, p, i, r.Start, next)
		}
		next = r.End() + 1
		minSize, maxSize = min(minSize, r.NumKeyGroups), max(maxSize, r.NumKeyGroups)
		for _, kg := range []int{r.Start, r.End()} {
			if r.NumKeyGroups > 0 && OperatorIndexForKeyGroup(maxP, p, kg) != i {
				t.Fatalf("maxP=%d p=%d: key group %d → %d, want %d", maxP, p, kg, OperatorIndexForKeyGroup(maxP, p, kg), i)
			}
		}
	}
	if next != maxP || maxSize-minSize > 1 {
		t.Fatalf("maxP=%d p=%d: ranges end at %d, sizes %d..%d", maxP, p, next, minSize, maxSize)
	}
}

// A4: keyed restore with rescale; max-parallelism change fails.
func TestA4KeyedRestore(t *testing.T) {
	mk := func(maxP, p int) checkpoint.OperatorLayout {
		var subs []checkpoint.SubtaskLayout
		for j := 0; j < p; j++ {
			subs = append(subs, checkpoint.SubtaskLayout{Index: j, ManagedKeyedState: keyGroupsHandle(maxP, p, j)})
		}
		return op(1, p, maxP, subs...)
	}
	for _, c := range [][2]int{{2, 13}, {13, 2}, {3, 3}} {
		oldP, newP := c[0], c[1]
		l := layoutOf(mk(13, oldP))
		r := simulate(t, l, Plan{DefaultParallelism: newP})
		a := r.Vertices[0].Operators[0]
		if len(r.Failures) != 0 {
			t.Fatalf("%d→%d: failures %v", oldP, newP, r.Failures)
		}
		for i := 0; i < newP; i++ {
			want := KeyGroupRangeForSubtask(13, newP, i)
			sh := a.ManagedKeyed.Share(i)
			var covered []int
			var wantBytes int64
			for kg := want.Start; kg <= want.End(); kg++ {
				wantBytes += int64(kg + 1)
			}
			for _, h := range sh.Handles {
				for kg := h.KeyGroups.Start; kg <= h.KeyGroups.End(); kg++ {
					covered = append(covered, kg)
				}
			}
			if len(covered) != want.NumKeyGroups || covered[0] != want.Start || sh.ReadBytes != wantBytes || sh.OwnedBytes != wantBytes {
				t.Errorf("%d→%d subtask %d: key groups %v read %d owned %d, want %v with %d bytes",
					oldP, newP, i, covered, sh.ReadBytes, sh.OwnedBytes, want, wantBytes)
			}
		}
	}
	// testRestoreLatestCheckpointFailureWhenMaxParallelismChanges: checkpoint maxP (42, 13),
	// new vertices configured (20, 42).
	v1, v2 := mk(42, 3), mk(13, 2)
	v2.ID = opID(2)
	l := layoutOf(v1, v2)
	r := simulate(t, l, Plan{Restore: RestoreLatestCheckpoint, MaxParallelism: map[string]MaxParallelism{
		opID(1).String(): {20, true}, opID(2).String(): {42, true}}})
	if len(r.Failures) != 2 || r.Failures[0].Kind != FailureMaxParallelismChanged || r.Failures[0].Exception != "IllegalStateException" {
		t.Fatalf("failures = %+v", r.Failures)
	}
	if !strings.HasPrefix(r.Failures[0].Message, "The maximum parallelism (42) with which the latest checkpoint of the execution job vertex ") ||
		!strings.HasSuffix(r.Failures[0].Message, " has been taken and the current maximum parallelism (20) changed. This is currently not supported.") {
		t.Errorf("message = %q", r.Failures[0].Message)
	}
}

// A5: SubtaskStateMapperTest.
func TestA5SubtaskMappers(t *testing.T) {
	tests := []struct {
		m          SubtaskMapper
		oldP, newP int
		want       [][]int
	}{
		{MapperFirst, 3, 2, [][]int{{0, 1, 2}, {}}},
		{MapperFirst, 3, 3, [][]int{{0, 1, 2}, {}, {}}},
		{MapperFirst, 3, 4, [][]int{{0, 1, 2}, {}, {}, {}}},
		{MapperFull, 3, 2, [][]int{{0, 1, 2}, {0, 1, 2}}},
		{MapperFull, 3, 3, [][]int{{0, 1, 2}, {0, 1, 2}, {0, 1, 2}}},
		{MapperFull, 3, 4, [][]int{{0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}}},
		{MapperRange, 3, 2, [][]int{{0, 1}, {1, 2}}},
		{MapperRange, 10, 2, [][]int{{0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}}},
		{MapperRange, 10, 1, [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}},
		{MapperRange, 3, 3, [][]int{{0}, {1}, {2}}},
		{MapperRange, 3, 4, [][]int{{0}, {0, 1}, {1, 2}, {2}}},
		{MapperRange, 3, 7, [][]int{{0}, {0}, {0, 1}, {1}, {1, 2}, {2}, {2}}},
		{MapperRoundRobin, 10, 4, [][]int{{0, 4, 8}, {1, 5, 9}, {2, 6}, {3, 7}}},
		{MapperRoundRobin, 5, 4, [][]int{{0, 4}, {1}, {2}, {3}}},
		{MapperRoundRobin, 5, 2, [][]int{{0, 2, 4}, {1, 3}}},
		{MapperRoundRobin, 5, 1, [][]int{{0, 1, 2, 3, 4}}},
		{MapperRoundRobin, 10, 10, [][]int{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}}},
		{MapperRoundRobin, 5, 5, [][]int{{0}, {1}, {2}, {3}, {4}}},
		{MapperRoundRobin, 1, 1, [][]int{{0}}},
		{MapperRoundRobin, 4, 10, [][]int{{0}, {1}, {2}, {3}, {}, {}, {}, {}, {}, {}}},
		{MapperRoundRobin, 4, 5, [][]int{{0}, {1}, {2}, {3}, {}}},
		{MapperRoundRobin, 2, 5, [][]int{{0}, {1}, {}, {}, {}}},
		{MapperRoundRobin, 1, 5, [][]int{{0}, {}, {}, {}, {}}},
		{MapperArbitrary, 5, 2, [][]int{{0, 2, 4}, {1, 3}}},
	}
	for _, tc := range tests {
		if got := MapSubtasks(tc.m, tc.oldP, tc.newP); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v %d→%d = %v, want %v", tc.m, tc.oldP, tc.newP, got, tc.want)
		}
	}
	if MapSubtasks(MapperUnsupported, 2, 3) != nil || MapSubtasks(MapperUnspecified, 2, 3) != nil {
		t.Error("UNSUPPORTED / UNSPECIFIED must give no mapping")
	}
}

// channelOp is an operator whose old subtasks each have one input and one output channel handle.
func channelOp(n, p int) checkpoint.OperatorLayout {
	var subs []checkpoint.SubtaskLayout
	for j := 0; j < p; j++ {
		ch := checkpoint.ChannelStateLayout{SubtaskIndex: j, Size: 100,
			Stream: checkpoint.StreamRef{Kind: checkpoint.StreamFile, Path: "ch", Size: 100}}
		subs = append(subs, checkpoint.SubtaskLayout{Index: j, Channels: &checkpoint.ChannelLayouts{
			Input: []checkpoint.ChannelStateLayout{ch}, Output: []checkpoint.ChannelStateLayout{ch}}})
	}
	return op(n, p, 128, subs...)
}

// A6: channel-state assignment, downstream (input) mapper RANGE, upstream (output) ROUND_ROBIN.
func TestA6ChannelStateAssignment(t *testing.T) {
	tests := []struct {
		oldP, newP  int
		input, outp [][]int
		status      ChannelStatus
	}{
		{3, 2, [][]int{{0, 1}, {1, 2}}, [][]int{{0, 2}, {1}}, ChannelMapped},
		{2, 3, [][]int{{0}, {0, 1}, {1}}, [][]int{{0}, {1}, nil}, ChannelMapped},
		{2, 2, [][]int{{0}, {1}}, [][]int{{0}, {1}}, ChannelUnchanged},
	}
	for _, tc := range tests {
		l := layoutOf(channelOp(1, tc.oldP))
		key := opID(1).String()
		r := simulate(t, l, Plan{DefaultParallelism: tc.newP,
			InputChannelMappers:  map[string]SubtaskMapper{key: MapperRange},
			OutputChannelMappers: map[string]SubtaskMapper{key: MapperRoundRobin}})
		a := r.Vertices[0].Operators[0]
		if a.InputChannels.Status != tc.status || a.OutputChannels.Status != tc.status {
			t.Errorf("%d→%d: status %v/%v, want %v", tc.oldP, tc.newP, a.InputChannels.Status, a.OutputChannels.Status, tc.status)
		}
		for i := 0; i < tc.newP; i++ {
			st := a.Subtask(i)
			if !reflect.DeepEqual(st.InputChannels.OldSubtasks, tc.input[i]) || !reflect.DeepEqual(st.OutputChannels.OldSubtasks, tc.outp[i]) {
				t.Errorf("%d→%d subtask %d: input %v output %v, want %v %v", tc.oldP, tc.newP, i,
					st.InputChannels.OldSubtasks, st.OutputChannels.OldSubtasks, tc.input[i], tc.outp[i])
			}
			if st.InputChannels.Bytes != int64(100*len(tc.input[i])) {
				t.Errorf("%d→%d subtask %d: input bytes %d", tc.oldP, tc.newP, i, st.InputChannels.Bytes)
			}
		}
	}
	// Without a mapper the rescale cannot be simulated; with UNSUPPORTED Flink refuses it.
	l := layoutOf(channelOp(1, 2))
	r := simulate(t, l, Plan{DefaultParallelism: 3})
	a := r.Vertices[0].Operators[0]
	if a.InputChannels.Status != ChannelUnknownMapper || a.Summary.MaxChannelBytes != -1 || a.Subtask(0).InputChannels.Known {
		t.Errorf("no mapper: status %v, max %d", a.InputChannels.Status, a.Summary.MaxChannelBytes)
	}
	r = simulate(t, l, Plan{DefaultParallelism: 3, InputChannelMappers: map[string]SubtaskMapper{opID(1).String(): MapperUnsupported}})
	if len(r.Failures) != 1 || r.Failures[0].Kind != FailureUnsupportedChannelRescale ||
		r.Failures[0].Message != "Cannot rescale the given pointwise partitioner.\nDid you change the partitioner to forward or rescale?\nIt may also help to add an explicit shuffle()." {
		t.Errorf("UNSUPPORTED: failures %+v", r.Failures)
	}
	// testChannelStateAssignmentStability: 100→100 across 10 vertices, each subtask keeps its own.
	var ops []checkpoint.OperatorLayout
	for v := 0; v < 10; v++ {
		ops = append(ops, channelOp(v+1, 100))
	}
	r = simulate(t, layoutOf(ops...), Plan{})
	for _, v := range r.Vertices {
		a := v.Operators[0]
		for i := 0; i < 100; i++ {
			st := a.Subtask(i)
			if !reflect.DeepEqual(st.FromOldSubtasks, []int{i}) || st.InputChannels.Bytes != 100 {
				t.Fatalf("100→100 vertex %s subtask %d: from %v", v.ID, i, st.FromOldSubtasks)
			}
		}
	}
	// Channel state on a chained operator that is not the chain's input operator.
	up, down := channelOp(1, 2), channelOp(2, 2)
	r = simulate(t, layoutOf(up, down), Plan{Vertices: []VertexSpec{{Operators: []string{opID(1).String(), opID(2).String()}}}})
	// Input-channel state is checked first: op 2 is no longer the chain's input operator; then
	// result-subpartition state: op 1 is no longer the output operator.
	const chained = "Cannot recover from unaligned checkpoint when topology changes, such that data exchanges with persisted data are now chained.\nThe following operators contain channel state: "
	if len(r.Failures) != 2 || r.Failures[0].Kind != FailureChainedChannelState ||
		r.Failures[0].Message != chained+"["+opID(2).String()+"]" || r.Failures[1].Message != chained+"["+opID(1).String()+"]" {
		t.Errorf("chained: %+v", r.Failures)
	}
}

// A7: finished operators, upstream output state, user-defined IDs, empty keyed lists.
func TestA7FinishedAndUserIDs(t *testing.T) {
	fin := op(1, 3, 128)
	fin.FullyFinished = true
	run := op(2, 3, 128, sub(0, handle("h0", split("s", 1))))
	r := simulate(t, layoutOf(fin, run), Plan{DefaultParallelism: 2})
	for i := 0; i < 2; i++ {
		if st := r.Vertices[0].Operators[0].Subtask(i); !st.Finished {
			t.Errorf("finished vertex subtask %d not deployed as finished", i)
		}
		if st := r.Vertices[1].Operators[0].Subtask(i); st.Finished || !st.Restored {
			t.Errorf("running vertex subtask %d: finished %v restored %v", i, st.Finished, st.Restored)
		}
	}
	if len(r.Failures) != 0 {
		t.Errorf("failures %+v", r.Failures)
	}
	// Mixed finished state inside one vertex.
	r = simulate(t, layoutOf(fin, run), Plan{Vertices: []VertexSpec{{Operators: []string{opID(1).String(), opID(2).String()}}}})
	if len(r.Failures) != 1 || r.Failures[0].Kind != FailureMixedFinishedState ||
		!strings.HasSuffix(r.Failures[0].Message, "which contain mixed operator finished state: [ALL_RUNNING, FULLY_FINISHED]") {
		t.Errorf("mixed: %+v", r.Failures)
	}
	// Only upstream output state (one subtask, 2→3): every new subtask gets a restore object.
	up := op(1, 2, 128, checkpoint.SubtaskLayout{Index: 0, Channels: &checkpoint.ChannelLayouts{Output: []checkpoint.ChannelStateLayout{{Size: 5}}}})
	r = simulate(t, layoutOf(up), Plan{DefaultParallelism: 3})
	for i := 0; i < 3; i++ {
		if !r.Vertices[0].Operators[0].Subtask(i).Restored {
			t.Errorf("upstream subtask %d has no restore object", i)
		}
	}
	// State stored under a user-defined ID goes to the operator's generated ID.
	stored := op(7, 2, 128, sub(0, handle("h0", split("s", 4))), sub(1, handle("h1", split("s", 4))))
	gen := opID(8).String()
	r = simulate(t, layoutOf(stored), Plan{NewJobOperators: []string{gen},
		UserDefinedOperatorIDs: map[string]string{gen: opID(7).String()}})
	a := r.Operator(opID(8))
	if a == nil || a.StateID != opID(7) || a.States()[0].Elements != 8 || len(r.NonRestored) != 0 {
		t.Fatalf("user-defined ID: %+v, non-restored %v", a, r.NonRestored)
	}
	// Both IDs hold state: the user-defined one is restored, the generated one is mapped too
	// (no failure) and ignored.
	shadowed := op(8, 2, 128, sub(0, handle("g0", split("s", 1))))
	r = simulate(t, layoutOf(stored, shadowed), Plan{UserDefinedOperatorIDs: map[string]string{gen: opID(7).String()}})
	if a := r.Operator(opID(8)); a == nil || a.StateID != opID(7) || len(r.NonRestored) != 0 || len(r.Failures) != 0 || len(r.Vertices) != 1 {
		t.Fatalf("shadowed generated ID: %+v non-restored %v failures %v", a, r.NonRestored, r.Failures)
	}
	// Empty keyed lists for an operator without subtask states.
	empty := op(9, 2, 128)
	r = simulate(t, layoutOf(empty), Plan{DefaultParallelism: 4})
	a = r.Vertices[0].Operators[0]
	if a.ManagedKeyed != nil || a.RawKeyed != nil || a.Path != PathNotRestored || a.Subtask(0).Restored {
		t.Errorf("empty operator: %+v", a)
	}
}

// A8: KeyGroupRangeTest.
func TestA8KeyGroupRange(t *testing.T) {
	kr := func(s, e int) checkpoint.KeyGroupRange {
		r, err := NewKeyGroupRange(s, e)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct{ a, b, want checkpoint.KeyGroupRange }{
		{kr(0, 10), kr(3, 7), kr(3, 7)},
		{kr(0, 5), kr(6, 10), checkpoint.KeyGroupRange{}},
		{kr(0, 10), kr(5, 20), kr(5, 10)},
		{kr(3, 12), kr(0, 10), kr(3, 10)},
	}
	for _, tc := range tests {
		if got := IntersectKeyGroups(tc.a, tc.b); got != tc.want {
			t.Errorf("%v ∩ %v = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	if _, err := NewKeyGroupRange(-3, 2); err == nil {
		t.Error("KeyGroupRange.of(-3, 2) must fail")
	}
	if r := kr(5, 3); r.NumKeyGroups != 0 {
		t.Errorf("of(5,3) has %d key groups", r.NumKeyGroups)
	}
}

func TestBKeyGroupRanges(t *testing.T) {
	tests := []struct {
		maxP, p int
		want    string
	}{
		{128, 3, "[0,42] [43,85] [86,127]"},
		{128, 4, "[0,31] [32,63] [64,95] [96,127]"},
		{128, 5, "[0,25] [26,51] [52,76] [77,102] [103,127]"},
		{10, 4, "[0,2] [3,4] [5,7] [8,9]"},
		{42, 3, "[0,13] [14,27] [28,41]"},
		{13, 2, "[0,6] [7,12]"},
		{64, 10, "[0,6] [7,12] [13,19] [20,25] [26,31] [32,38] [39,44] [45,51] [52,57] [58,63]"},
	}
	for _, tc := range tests {
		var parts []string
		for i := 0; i < tc.p; i++ {
			r := KeyGroupRangeForSubtask(tc.maxP, tc.p, i)
			parts = append(parts, "["+fmtInt(r.Start)+","+fmtInt(r.End())+"]")
		}
		if got := strings.Join(parts, " "); got != tc.want {
			t.Errorf("maxP=%d p=%d: %s, want %s", tc.maxP, tc.p, got, tc.want)
		}
	}
}

func fmtInt(i int) string { return strconv.Itoa(i) }

func TestBKeyedOverlap(t *testing.T) {
	tests := []struct {
		maxP, oldP, newP int
		want             []string
	}{
		{128, 3, 2, []string{"0:[0,42] 1:[43,63]", "1:[64,85] 2:[86,127]"}},
		{128, 2, 3, []string{"0:[0,42]", "0:[43,63] 1:[64,85]", "1:[86,127]"}},
		{10, 4, 3, []string{"0:[0,2] 1:[3,3]", "1:[4,4] 2:[5,6]", "2:[7,7] 3:[8,9]"}},
	}
	for _, tc := range tests {
		var subs []checkpoint.SubtaskLayout
		for j := 0; j < tc.oldP; j++ {
			subs = append(subs, checkpoint.SubtaskLayout{Index: j, ManagedKeyedState: keyGroupsHandle(tc.maxP, tc.oldP, j)})
		}
		r := simulate(t, layoutOf(op(1, tc.oldP, tc.maxP, subs...)), Plan{DefaultParallelism: tc.newP})
		a := r.Vertices[0].Operators[0]
		for i, want := range tc.want {
			var parts []string
			for _, h := range a.ManagedKeyed.Share(i).Handles {
				parts = append(parts, fmtInt(h.OldSubtask)+":["+fmtInt(h.KeyGroups.Start)+","+fmtInt(h.KeyGroups.End())+"]")
			}
			if got := strings.Join(parts, " "); got != want {
				t.Errorf("maxP=%d %d→%d new%d: %s, want %s", tc.maxP, tc.oldP, tc.newP, i, got, want)
			}
		}
	}
}

func TestBDefaultMaxParallelism(t *testing.T) {
	for p, want := range map[int]int{1: 128, 10: 128, 85: 128, 86: 256, 100: 256, 128: 256, 200: 512,
		1000: 2048, 21845: 32768, 30000: 32768} {
		if got := DefaultMaxParallelism(p); got != want {
			t.Errorf("DefaultMaxParallelism(%d) = %d, want %d", p, got, want)
		}
	}
}

func TestBMurmurAndKeyGroups(t *testing.T) {
	if got := MurmurHash(0); got != 593689054 {
		t.Errorf("murmur(0) = %d", got)
	}
	ints := []struct {
		key      int32
		maxP, kg int
	}{{0, 128, 94}, {0, 32768, 31198}, {1, 128, 86}, {42, 128, 29}, {-1, 128, 80}}
	for _, tc := range ints {
		if got := KeyGroupForKeyHash(tc.key, tc.maxP); got != tc.kg {
			t.Errorf("key %d maxP %d: kg %d, want %d", tc.key, tc.maxP, got, tc.kg)
		}
	}
	wantKG := []int{94, 86, 127, 113, 7, 126, 18, 113, 15, 51}
	wantSub := []int{3, 3, 4, 4, 0, 4, 0, 4, 0, 1}
	for k := int32(0); k < 10; k++ {
		kg := KeyGroupForKeyHash(k, 128)
		if kg != wantKG[k] || OperatorIndexForKeyGroup(128, 5, kg) != wantSub[k] {
			t.Errorf("key %d: kg %d subtask %d", k, kg, OperatorIndexForKeyGroup(128, 5, kg))
		}
	}
	for s, want := range map[string]int{"a": 81, "b": 22, "hello": 35, "user-1": 121} {
		if got := KeyGroupForKeyHash(JavaStringHashCode(s), 128); got != want {
			t.Errorf("key %q: kg %d, want %d", s, got, want)
		}
	}
}

func TestBOperatorIDFromUID(t *testing.T) {
	for uid, want := range map[string]string{
		"source":       "e5a72f353fc1e6bbf3bd96a41384998c",
		"flatMap":      "4cf304da7f0eed0ff91c4cb6128e1ca7",
		"sink":         "2e588ce1c86a9d46e2e85186773ce4fd",
		"kafka-source": "61252f73469d3ffba207c548d29a0267",
	} {
		if got := checkpoint.OperatorIDFromUID(uid).String(); got != want {
			t.Errorf("uid %q: %s, want %s", uid, got, want)
		}
	}
}

// splitShares simulates one SPLIT layout and renders every new subtask's share of name.
func splitShares(t *testing.T, l *checkpoint.Layout, newP int) [][]string {
	t.Helper()
	r := simulate(t, l, Plan{DefaultParallelism: newP})
	a := r.Vertices[0].Operators[0]
	out := make([][]string, newP)
	for i := 0; i < newP; i++ {
		for _, s := range a.States() {
			if sh := s.Share(i); sh.Present {
				out[i] = append(out[i], s.Name+":"+sliceString(sh))
			}
		}
	}
	return out
}

func TestBSplitDistribute(t *testing.T) {
	twoOld := layoutOf(op(1, 2, 128, sub(0, handle("h0", split("s", 3))), sub(1, handle("h1", split("s", 2)))))
	tests := []struct {
		name string
		l    *checkpoint.Layout
		newP int
		want [][]string
	}{
		{"one name 2→1", twoOld, 1, [][]string{{"s:h0[0+3] h1[0+2]"}}},
		{"one name 2→3", twoOld, 3, [][]string{{"s:h0[0+2]"}, {"s:h0[2+1] h1[0+1]"}, {"s:h1[1+1]"}}},
		{"one name 2→4", twoOld, 4, [][]string{{"s:h0[0+2]"}, {"s:h0[2+1]"}, {"s:h1[0+1]"}, {"s:h1[1+1]"}}},
		{"one name 2→6", twoOld, 6, [][]string{{"s:h0[0+1]"}, {"s:h0[1+1]"}, {"s:h0[2+1]"}, {"s:h1[0+1]"}, {"s:h1[1+1]"}, nil}},
		{"carry-over a then b 1→2", layoutOf(op(1, 1, 128, sub(0, handle("h0", split("a", 3), split("b", 3))))), 2,
			[][]string{{"a:h0[0+2]", "b:h0[2+1]"}, {"a:h0[2+1]", "b:h0[0+2]"}}},
		{"A1 detail t-2 before t-1 2→3", layoutOf(op(1, 2, 4, sub(0, handle("test1", split("t-1", 2))), sub(1, handle("test2", split("t-2", 2))))), 3,
			[][]string{{"t-2:test2[0+1]", "t-1:test1[1+1]"}, {"t-2:test2[1+1]"}, {"t-1:test1[0+1]"}}},
		{"empty middle entry x|-|y,z 3→2", layoutOf(op(1, 3, 128, sub(0, handle("h0", split("s", 1))), sub(1, handle("h1", split("s", 0))), sub(2, handle("h2", split("s", 2))))), 2,
			[][]string{{"s:h0[0+1] h1[0+0] h2[0+1]"}, {"s:h2[1+1]"}}},
		{"empty middle entry a0|-|c0 3→2", layoutOf(op(1, 3, 128, sub(0, handle("h0", split("s", 1))), sub(1, handle("h1", split("s", 0))), sub(2, handle("h2", split("s", 1))))), 2,
			[][]string{{"s:h0[0+1]"}, {"s:h1[0+0] h2[0+1]"}}},
		{"empty middle entry a0|-|c0 3→4", layoutOf(op(1, 3, 128, sub(0, handle("h0", split("s", 1))), sub(1, handle("h1", split("s", 0))), sub(2, handle("h2", split("s", 1))))), 4,
			[][]string{{"s:h0[0+1]"}, {"s:h1[0+0] h2[0+1]"}, nil, nil}},
	}
	for _, tc := range tests {
		if got := splitShares(t, tc.l, tc.newP); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	if got := HashMapOrder([]string{"t-1", "t-2"}); !reflect.DeepEqual(got, []string{"t-2", "t-1"}) {
		t.Errorf("HashMapOrder(t-1, t-2) = %v", got)
	}
	if JavaStringHashCode("t-1") != 112920 || JavaStringHashCode("t-2") != 112921 {
		t.Error("String.hashCode of t-1 / t-2")
	}
	if got := SplitCounts([][]int64{{3}, {3}}, 2); !reflect.DeepEqual(got, [][]int64{{2, 1}, {1, 2}}) {
		t.Errorf("SplitCounts a,b 1→2 = %v", got)
	}
	// A1 detail on counts: t-1 (registered first) is iterated after t-2.
	got := SplitCountsByName([]string{"t-1", "t-2"}, map[string][]int64{"t-1": {2, 0}, "t-2": {0, 2}}, 3)
	if !reflect.DeepEqual(got, map[string][]int64{"t-2": {1, 1, 0}, "t-1": {1, 0, 1}}) {
		t.Errorf("SplitCountsByName = %v", got)
	}
}

// Precondition scenario of §2.4 / §7.B: derived maxP 128 at p=10, restored at p=200 and p=100.
func TestBPreconditionScenario(t *testing.T) {
	l := layoutOf(op(1, 10, 128, sub(0, handle("h0", split("s", 5)))))
	r := simulate(t, l, Plan{DefaultParallelism: 200})
	want := "The state for task " + opID(1).String() + " can not be restored. The maximum parallelism (128) of the restored state is lower than the configured parallelism (200). Please reduce the parallelism of the task to be lower or equal to the maximum parallelism."
	if len(r.Failures) != 1 || r.Failures[0].Kind != FailureMaxParallelismBelowParallelism || r.Failures[0].Message != want {
		t.Fatalf("p=200: %+v", r.Failures)
	}
	r = simulate(t, l, Plan{DefaultParallelism: 100})
	v := r.Vertices[0]
	if len(r.Failures) != 0 || v.MaxParallelism != 128 || !v.MaxParallelismAdopted || v.NewJobMaxParallelism != 256 {
		t.Fatalf("p=100: failures %+v, vertex %+v", r.Failures, v)
	}
	// Configured max parallelism that differs: savepoint check (row 2) then row 6.
	r = simulate(t, l, Plan{DefaultParallelism: 100, CheckpointPointer: "s3://b/sp",
		MaxParallelism: map[string]MaxParallelism{opID(1).String(): {Value: 256, Configured: true}}})
	if len(r.Failures) != 2 || r.Failures[0].Kind != FailureMaxParallelismMismatch || r.Failures[1].Kind != FailureMaxParallelismChanged ||
		r.Failures[0].Message != "Failed to rollback to checkpoint/savepoint Checkpoint Metadata. Max parallelism mismatch between checkpoint/savepoint state and new program. Cannot map operator "+opID(1).String()+" with max parallelism 128 to new program with max parallelism 256. This indicates that the program has been changed in a non-compatible way after the checkpoint/savepoint." {
		t.Fatalf("configured: %+v", r.Failures)
	}
	// Row 1: parallelism above a configured max parallelism.
	r = simulate(t, l, Plan{DefaultParallelism: 100, MaxParallelism: map[string]MaxParallelism{opID(1).String(): {Value: 64, Configured: true}}})
	if r.Failures[0].Kind != FailureParallelismAboveMaxParallelism || r.Failures[0].Exception != "JobException" ||
		r.Failures[0].Message != "Vertex "+opID(1).String()+"'s parallelism (100) is higher than the max parallelism (64). Please lower the parallelism or increase the max parallelism." {
		t.Fatalf("row 1: %+v", r.Failures[0])
	}
}

// Missing operators: rows 3 and 4 of §2.4.
func TestMissingOperators(t *testing.T) {
	withState := op(1, 2, 128, sub(0, handle("h0", split("s", 1))))
	empty := op(2, 2, 128)
	l := layoutOf(withState, empty)
	keep := []string{opID(3).String()}
	r := simulate(t, l, Plan{NewJobOperators: keep, CheckpointPointer: "file:/sp"})
	if len(r.Failures) != 1 || r.Failures[0].Kind != FailureOperatorNotInNewProgram ||
		r.Failures[0].Message != "Failed to rollback to checkpoint/savepoint file:/sp. Cannot map checkpoint/savepoint state for operator "+opID(1).String()+" to the new program, because the operator is not available in the new program. If you want to allow to skip this, you can set the --allowNonRestoredState option on the CLI." {
		t.Fatalf("savepoint: %+v", r.Failures)
	}
	if len(r.NonRestored) != 2 || r.NonRestored[0].Dropped || !r.NonRestored[1].Dropped || r.NonRestored[1].HasState {
		t.Errorf("non-restored: %+v", r.NonRestored)
	}
	r = simulate(t, l, Plan{NewJobOperators: keep, AllowNonRestoredState: true})
	if len(r.Failures) != 0 || !r.NonRestored[0].Dropped {
		t.Errorf("allowNonRestoredState: %+v %+v", r.Failures, r.NonRestored)
	}
	r = simulate(t, l, Plan{NewJobOperators: keep, Restore: RestoreLatestCheckpoint})
	if len(r.Failures) != 2 || r.Failures[1].Message != "There is no operator for the state "+opID(2).String() {
		t.Errorf("latest checkpoint: %+v", r.Failures)
	}
}

// Orphan-union growth (§4.2, §7.B): 64 elements, p=4.
func TestBOrphanUnionGrowth(t *testing.T) {
	want := []int64{64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304}
	per := want[0]
	for j := 1; j < len(want); j++ {
		var subs []checkpoint.SubtaskLayout
		for i := 0; i < 4; i++ {
			subs = append(subs, sub(i, handle("h"+fmtInt(i), union("topic-partition-offset-states", per))))
		}
		r := simulate(t, layoutOf(op(1, 4, 128, subs...)), Plan{})
		a := r.Vertices[0].Operators[0]
		per = a.Summary.MaxElements
		if per != want[j] || a.Summary.MinElements != want[j] {
			t.Fatalf("restore %d: %d elements per subtask, want %d", j+1, per, want[j])
		}
		if st := a.Subtask(3); st.FileReferences != 4 || st.Handles != 4 || st.Offsets != per {
			t.Fatalf("restore %d: subtask 3 references %d files in %d handles with %d offsets", j+1, st.FileReferences, st.Handles, st.Offsets)
		}
		if a.Summary.MaxPayloadBytes < 8*per {
			t.Fatalf("restore %d: payload %d below 8 bytes per offset", j+1, a.Summary.MaxPayloadBytes)
		}
	}
}

// Plan errors.
func TestPlanErrors(t *testing.T) {
	l := layoutOf(op(1, 2, 128, sub(0, handle("h0", split("s", 1)))), op(2, 2, 128))
	id1, id2 := opID(1).String(), opID(2).String()
	tests := []struct {
		name string
		plan Plan
	}{
		{"unknown key", Plan{Parallelism: map[string]int{"nope": 3}}},
		{"zero parallelism", Plan{Parallelism: map[string]int{id1: 0}}},
		{"too large", Plan{Parallelism: map[string]int{id1: 40000}}},
		{"negative default", Plan{DefaultParallelism: -1}},
		{"operator in two chains", Plan{Vertices: []VertexSpec{{Operators: []string{id1}}, {Operators: []string{id2, id1}}}}},
		{"vertex ID not the head", Plan{Vertices: []VertexSpec{{ID: id2, Operators: []string{id1, id2}}}}},
		{"contradictory values", Plan{Vertices: []VertexSpec{{Operators: []string{id1, id2}}}, Parallelism: map[string]int{id1: 3, id2: 4}}},
		{"max parallelism out of range", Plan{MaxParallelism: map[string]MaxParallelism{id1: {Value: 0}}}},
	}
	for _, tc := range tests {
		_, err := Simulate(l, tc.plan)
		if _, ok := err.(*PlanError); !ok {
			t.Errorf("%s: err = %v, want *PlanError", tc.name, err)
		}
	}
}
