package rescale

import (
	"fmt"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/testutil"
)

// benchLayout builds ops operators of parallelism oldP, each subtask with one managed operator
// state handle of 10 names (6 SPLIT_DISTRIBUTE with splitElems elements, 2 UNION of 2 elements,
// 2 BROADCAST of 1), half of the SPLIT names with two element sizes, every fourth operator with
// a key-groups keyed handle.
func benchLayout(ops, oldP int, splitElems int64) *checkpoint.Layout {
	l := &checkpoint.Layout{Version: 3}
	for o := 0; o < ops; o++ {
		op := checkpoint.OperatorLayout{ID: opID(o + 1), Parallelism: oldP, MaxParallelism: 8192}
		for j := 0; j < oldP; j++ {
			var states []checkpoint.StateEntryLayout
			for k := 0; k < 6; k++ {
				e := checkpoint.StateEntryLayout{Name: fmt.Sprintf("split-%d", k), Mode: checkpoint.SplitDistribute, Elements: splitElems}
				if k%2 == 0 {
					e.Sizes.Append(40, splitElems)
				} else {
					e.Sizes.Append(40, splitElems/2)
					e.Sizes.Append(90, splitElems-splitElems/2)
				}
				e.Bytes = e.Sizes.Total()
				states = append(states, e)
			}
			states = append(states, union("union-0", 2), union("union-1", 2), bcast("bcast-0", 1), bcast("bcast-1", 1))
			st := checkpoint.SubtaskLayout{Index: j, ManagedOperatorState: inlineHandle(fmt.Sprintf("o%d-s%d", o, j), states...)}
			if o%4 == 0 {
				st.ManagedKeyedState = keyGroupsHandle(8192, oldP, j)
			}
			op.Subtasks = append(op.Subtasks, st)
		}
		l.Operators = append(l.Operators, op)
	}
	return l
}

// BenchmarkSimulate1000x10x4096 is the shape target: 1,000 operators × 10 states, new
// parallelism 4,096, under 100 ms on 2 cores (summaries included), from old parallelism 16 and
// from 64 (four times the input: 640,000 old state entries).
func BenchmarkSimulate1000x10x4096(b *testing.B) {
	for _, oldP := range []int{16, 64} {
		b.Run(fmt.Sprintf("oldP=%d", oldP), func(b *testing.B) {
			l := benchLayout(1000, oldP, 512/int64(oldP)) // 512 elements per SPLIT name
			plan := Plan{DefaultParallelism: 4096}
			b.ResetTimer()
			start, cpu := time.Now(), testutil.CPUTime()
			for b.Loop() {
				if _, err := Simulate(l, plan); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/simulation")
			b.ReportMetric(float64((testutil.CPUTime()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/simulation")
		})
	}
}

// BenchmarkSplit10M is the element target: 10⁷ SPLIT_DISTRIBUTE elements under 1 s, from 100
// old subtasks of 100,000 elements (ten size runs each) and from 10,000 old subtasks of 1,000.
func BenchmarkSplit10M(b *testing.B) {
	for _, oldP := range []int{100, 10_000} {
		per := int64(10_000_000 / oldP)
		l := &checkpoint.Layout{Version: 3}
		op := checkpoint.OperatorLayout{ID: opID(1), Parallelism: oldP, MaxParallelism: 32768}
		for j := 0; j < oldP; j++ {
			e := checkpoint.StateEntryLayout{Name: "SourceReaderState", Mode: checkpoint.SplitDistribute, Elements: per}
			for k := int64(0); k < 10; k++ {
				e.Sizes.Append(100+k, per/10)
			}
			e.Bytes = e.Sizes.Total()
			op.Subtasks = append(op.Subtasks, sub(j, handle(fmt.Sprintf("s%d", j), e)))
		}
		l.Operators = append(l.Operators, op)
		for _, newP := range []int{7, 1000, 32768} {
			b.Run(fmt.Sprintf("oldP=%d/newP=%d", oldP, newP), func(b *testing.B) {
				start, cpu := time.Now(), testutil.CPUTime()
				for b.Loop() {
					r, err := Simulate(l, Plan{DefaultParallelism: newP})
					if err != nil {
						b.Fatal(err)
					}
					if s := r.Vertices[0].Operators[0].States()[0]; s.Summary.TotalElements != 10_000_000 {
						b.Fatalf("total %d", s.Summary.TotalElements)
					}
				}
				b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/simulation")
				b.ReportMetric(float64((testutil.CPUTime()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/simulation")
			})
		}
	}
}

// BenchmarkSimulateStoredParallelism is the restore without rescaling (the path Flink takes on
// every failover): 1,000 operators × 10 states at parallelism 64, UNION names included.
func BenchmarkSimulateStoredParallelism(b *testing.B) {
	l := benchLayout(1000, 64, 8)
	start, cpu := time.Now(), testutil.CPUTime()
	for b.Loop() {
		if _, err := Simulate(l, Plan{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/simulation")
	b.ReportMetric(float64((testutil.CPUTime()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/simulation")
}
