package rescale

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/testutil"
)

// TestSplitOrderSharedBucket is issue #17's minimal case: two old subtasks list `a` (1 element)
// and `ab` (2 elements) in that order; both names hash to bucket 1 of every table. Flink reads
// each handle's map with put (a, ab), then groupByStateMode's computeIfAbsent links ab at the head
// of the bucket: ab is distributed first, then a. At parallelism 3 new subtasks 0/1/2 read old
// subtasks [0] / [0 1] / [1], and subtask 0 gets no element of `a`.
func TestSplitOrderSharedBucket(t *testing.T) {
	l := layoutOf(op(1, 2, 128,
		sub(0, handle("h0", split("a", 1), split("ab", 2))),
		sub(1, handle("h1", split("a", 1), split("ab", 2)))))
	a := simulate(t, l, Plan{DefaultParallelism: 3}).Vertices[0].Operators[0]
	var names []string
	for _, s := range a.States() {
		names = append(names, s.Name)
	}
	if !reflect.DeepEqual(names, []string{"ab", "a"}) {
		t.Fatalf("iteration order %v, Flink's is [ab a]", names)
	}
	wantOld := [][]int{{0}, {0, 1}, {1}}
	wantA := []int64{0, 1, 1}
	for i := range 3 {
		if got := a.Subtask(i).FromOldSubtasks; !reflect.DeepEqual(got, wantOld[i]) {
			t.Errorf("subtask %d reads old %v, Flink %v", i, got, wantOld[i])
		}
		if got := a.States()[1].Share(i).Elements; got != wantA[i] {
			t.Errorf("subtask %d gets %d elements of a, Flink %d", i, got, wantA[i])
		}
	}
	if a.States()[1].Summary.EmptySubtasks != 1 {
		t.Errorf("a: %d empty subtasks, want 1", a.States()[1].Summary.EmptySubtasks)
	}
	// Listed the other way round (ab, a), put keeps ab first in the bucket and computeIfAbsent
	// then puts a in front of it: a is distributed first.
	l = layoutOf(op(1, 2, 128,
		sub(0, handle("h0", split("ab", 2), split("a", 1))),
		sub(1, handle("h1", split("ab", 2), split("a", 1)))))
	a = simulate(t, l, Plan{DefaultParallelism: 3}).Vertices[0].Operators[0]
	if a.States()[0].Name != "a" {
		t.Fatalf("file order ab, a: %s distributed first, Flink distributes a first", a.States()[0].Name)
	}
	wantOld = [][]int{{0, 1}, {1}, {0}}
	for i := range 3 {
		if got := a.Subtask(i).FromOldSubtasks; !reflect.DeepEqual(got, wantOld[i]) {
			t.Errorf("file order ab, a: subtask %d reads old %v, Flink %v", i, got, wantOld[i])
		}
	}
}

// TestEmptyHandleKeptAtSameParallelism: a managed operator-state handle without names, at
// unchanged parallelism, stays with new subtask i (the repartitioner returns the old handles);
// on a rescale it is dropped (it has no entry to distribute).
func TestEmptyHandleKeptAtSameParallelism(t *testing.T) {
	l := layoutOf(op(1, 2, 128,
		sub(0, inlineHandle("h0")),
		sub(1, handle("h1", split("s", 2)))))
	for _, tc := range []struct {
		newP    int
		old     [][]int
		handles []int
	}{
		{2, [][]int{{0}, {1}}, []int{1, 1}},
		{3, [][]int{{1}, {1}, nil}, []int{1, 1, 0}},
	} {
		a := simulate(t, l, Plan{DefaultParallelism: tc.newP}).Vertices[0].Operators[0]
		for i := range tc.newP {
			st := a.Subtask(i)
			if !reflect.DeepEqual(st.FromOldSubtasks, tc.old[i]) || st.Handles != tc.handles[i] {
				t.Errorf("p=%d subtask %d: old %v handles %d, want %v and %d", tc.newP, i, st.FromOldSubtasks, st.Handles, tc.old[i], tc.handles[i])
			}
		}
		checkSummaries(t, a)
	}
}

// TestSplitCountsByNameSharedBucket: the counts helper follows the same order.
func TestSplitCountsByNameSharedBucket(t *testing.T) {
	got := SplitCountsByName([]string{"a", "ab"}, map[string][]int64{"a": {1, 1}, "ab": {2, 2}}, 3)
	want := map[string][]int64{"ab": {2, 1, 1}, "a": {0, 1, 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SplitCountsByName = %v, want %v", got, want)
	}
}

// BenchmarkNamesInOneSubtask: one old subtask with n SPLIT_DISTRIBUTE names of one element,
// restored at parallelism 2 (issue #10: 10k → 100k names must scale near-linearly).
func BenchmarkNamesInOneSubtask(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		states := make([]checkpoint.StateEntryLayout, n)
		for k := range states {
			states[k] = split("state-"+strconv.Itoa(k), 1)
		}
		l := layoutOf(op(1, 1, 128, sub(0, handle("h0", states...))))
		b.Run("names="+strconv.Itoa(n), func(b *testing.B) {
			cpu := testutil.CPUTime()
			for b.Loop() {
				if _, err := Simulate(l, Plan{DefaultParallelism: 2}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/name")
			b.ReportMetric(float64((testutil.CPUTime()-cpu).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/name")
		})
	}
}

// TestHandleMapSizingReachesTheOrder: with names whose handle map iterates differently when
// created with new HashMap<>(n) (Flink 1.17) and with newHashMapWithExpectedSize (1.18+),
// Plan.HandleMaps selects Flink's order.
func TestHandleMapSizingReachesTheOrder(t *testing.T) {
	for id := 0; id < goldenSets; id++ {
		s := goldenNameSet(id)
		handles := [][]string{s, s}
		legacy, current := modelGrouping(handles, HandleMapCapacityN), modelGrouping(handles, HandleMapExpectedSize)
		if reflect.DeepEqual(legacy, current) {
			continue
		}
		states := make([]checkpoint.StateEntryLayout, len(s))
		for k, n := range s {
			states[k] = split(n, 1)
		}
		l := layoutOf(op(1, 2, 128, sub(0, handle("h0", states...)), sub(1, handle("h1", states...))))
		for sizing, want := range map[HandleMapSizing][]string{HandleMapCapacityN: legacy, HandleMapExpectedSize: current} {
			a := simulate(t, l, Plan{DefaultParallelism: 3, HandleMaps: sizing}).Vertices[0].Operators[0]
			var got []string
			for _, st := range a.States() {
				got = append(got, st.Name)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("set %d sizing %d: order %v, want %v", id, sizing, got, want)
			}
		}
		t.Logf("set %d (%d names): the two sizings give different orders, each simulated as Flink's", id, len(s))
		return
	}
	t.Fatal("no name set where the handle map's sizing changes the order")
}

// TestEmptyHandleKeptWithoutRawStreams: at 64+ old subtasks without raw operator state the
// operator has oldP streams only (no raw slots), so the kept-handle lookup must not index the
// raw stream oldP+i; Subtask, SubtaskTotals and OldSubtasksRead32 agree on the kept handle.
func TestEmptyHandleKeptWithoutRawStreams(t *testing.T) {
	const p = 64
	subs := []checkpoint.SubtaskLayout{sub(0, inlineHandle("h0"))}
	for j := 1; j < p; j++ {
		subs = append(subs, sub(j, handle("h"+strconv.Itoa(j), split("s", 1))))
	}
	a := simulate(t, layoutOf(op(1, p, 128, subs...)), Plan{DefaultParallelism: p}).Vertices[0].Operators[0]
	for i := range p {
		st, tot := a.Subtask(i), a.SubtaskTotals(i)
		if !reflect.DeepEqual(st.FromOldSubtasks, []int{i}) || st.Handles != 1 {
			t.Fatalf("subtask %d: old %v handles %d, want [%d] and 1", i, st.FromOldSubtasks, st.Handles, i)
		}
		if tot.Handles != st.Handles || tot.PayloadBytes != st.PayloadBytes || tot.InlineBytes != st.InlineBytes ||
			tot.FileReferences != st.FileReferences {
			t.Fatalf("subtask %d: SubtaskTotals %+v, Subtask %+v", i, tot, st)
		}
		if got := a.OldSubtasksRead32(i); !reflect.DeepEqual(got, []int32{int32(i)}) {
			t.Fatalf("subtask %d: OldSubtasksRead32 %v, Subtask %v", i, got, st.FromOldSubtasks)
		}
	}
	checkSummaries(t, a)
}
