package rescale

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/cancel/canceltest"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/testutil"
)

// wideLayout has n operators of parallelism 2, each with one SPLIT name of 3 elements per old
// subtask: work that grows with the operator count whatever the algorithms' constants.
func wideLayout(n int) *checkpoint.Layout {
	l := &checkpoint.Layout{Version: 3, Operators: make([]checkpoint.OperatorLayout, n)}
	for i := range l.Operators {
		l.Operators[i] = checkpoint.OperatorLayout{ID: checkpoint.OperatorIDFromUID("wide-" + strconv.Itoa(i)), Parallelism: 2, MaxParallelism: 128,
			Subtasks: []checkpoint.SubtaskLayout{sub(0, handle("a", split("s", 3))), sub(1, handle("b", split("s", 3)))}}
	}
	return l
}

// TestSimulateContextStops: a simulation stops when its context ends, with the context's error,
// and a context that has ended before the call does no work.
func TestSimulateContextStops(t *testing.T) {
	l := wideLayout(50_000) // uninterrupted, many times the deadline (bench/README.md, "Figures behind constants")
	// The machine is shared: a generous bound.
	canceltest.Stops(t, 10*time.Millisecond, 2*time.Second, func(t *testing.T, ctx context.Context) error {
		res, err := SimulateContext(ctx, l, Plan{DefaultParallelism: 3})
		if res != nil {
			t.Error("a result from a stopped simulation")
		}
		return err
	})
}

// BenchmarkSimulateContextOverhead compares a simulation without a deadline (nil flag: one nil
// test per check) with one under a live context (one atomic load per check).
func BenchmarkSimulateContextOverhead(b *testing.B) {
	l := benchLayout(1000, 64, 8)
	plan := Plan{DefaultParallelism: 4096}
	canceltest.Overhead(b, func(b *testing.B, ctx context.Context) {
		cpu := testutil.CPUTime()
		for b.Loop() {
			if _, err := SimulateContext(ctx, l, plan); err != nil {
				b.Fatal(err)
			}
		}
		// CPU time, not wall time: the benchmark machine is shared.
		b.ReportMetric(float64((testutil.CPUTime()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/simulation")
	})
}

// TestSparseNamesBoundedMemory: names listed by one of many old subtasks cost their entries, not
// a place per old subtask each: 2,000 names in subtask 0 of 4,096 would take 2,000 × 4,096
// entries (over 300 MB) if every name reserved a place per old subtask. A hostile file of a few
// MB could ask for terabytes that way.
func TestSparseNamesBoundedMemory(t *testing.T) {
	const names, oldP = 2000, 4096
	states := make([]checkpoint.StateEntryLayout, names)
	for k := range states {
		states[k] = split("s-"+strconv.Itoa(k), 1)
	}
	op := checkpoint.OperatorLayout{ID: checkpoint.OperatorIDFromUID("sparse"), Parallelism: oldP, MaxParallelism: 8192,
		Subtasks: []checkpoint.SubtaskLayout{sub(0, handle("a", states...))}}
	l := &checkpoint.Layout{Version: 3, Operators: []checkpoint.OperatorLayout{op}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := Simulate(l, Plan{DefaultParallelism: 2})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Vertices[0].Operators[0].States()); n != names {
		t.Fatalf("%d states, want %d", n, names)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("simulating %d names of one subtask at old parallelism %d allocated %d MiB", names, oldP, alloc>>20)
	}
}
