package findings

import (
	"fmt"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
	"github.com/flinkpreflight/preflight/internal/testutil"
)

// The parallelism sweeps of issue 16: the same job shape at growing parallelism, simulated and
// checked (rescale.Simulate + Check, with the nearest-safe search), reported per subtask so that
// linear cost shows as a flat ns/old-subtask. CPU time (getrusage, both cores) is reported beside
// wall time because the build machine is shared.
//
//	go test ./internal/findings -run '^$' -bench 'Sweep' -benchtime 3x -count 3

// sweepLayout is the shape of the sweep at old parallelism p: a union-heavy source (one UNION
// element per subtask, as a legacy Kafka source's offsets, and two SPLIT_DISTRIBUTE splits of 12
// KiB, so that every subtask's stream is a file as in a real savepoint), a
// list-state operator (four SPLIT_DISTRIBUTE elements per subtask) and a keyed operator (heap
// key-group state), all at max parallelism 32768.
func sweepLayout(b *testing.B, p int) *checkpoint.Layout {
	t := &testing.T{}
	per := func(n int) []int {
		out := make([]int, p)
		for i := range out {
			out[i] = n
		}
		return out
	}
	l := layoutOf(t, 5,
		tOp{name: "union-source", uid: "union-source", p: p, maxP: 32768,
			states: []tState{{name: "legacy-offsets", mode: checkpoint.Union, perSubtask: per(1), size: 24}, {name: "splits", mode: checkpoint.SplitDistribute, perSubtask: per(2), size: 12 << 10}}},
		tOp{name: "list-op", uid: "list-op", p: p, maxP: 32768, states: []tState{{name: "buffer", mode: checkpoint.SplitDistribute, perSubtask: per(4), size: 64}}},
		tOp{name: "keyed-op", uid: "keyed-op", p: p, maxP: 32768, keyedKG: true},
	)
	if t.Failed() {
		b.Fatal("layout")
	}
	return l
}

// sweepCase runs Simulate + Check of plan on l b.N times and reports per-subtask figures.
func sweepCase(b *testing.B, l *checkpoint.Layout, plan rescale.Plan, opts Options, per int, wantDeny bool) {
	cat := DefaultCatalog()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := testutil.CPUTime()
	var rep Report
	for i := 0; i < b.N; i++ {
		res, err := rescale.Simulate(l, plan)
		if err != nil {
			b.Fatal(err)
		}
		rep = Check(l, plan, res, cat, opts)
	}
	cpu := testutil.CPUTime() - cpu0
	b.StopTimer()
	if wantDeny && (rep.Verdict != Deny || len(rep.Safe) == 0) {
		b.Fatalf("want DENY with a safe-parallelism search: %s", dump(rep))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(per), "ns/subtask")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(per), "cpu-ns/subtask")
	b.ReportMetric(0, "ns/op")
}

// maxPayload is the largest deployment payload of a new subtask of the union source when every
// operator runs at p.
func maxPayload(b *testing.B, l *checkpoint.Layout, p int) int64 {
	res, err := rescale.Simulate(l, rescale.Plan{DefaultParallelism: p})
	if err != nil {
		b.Fatal(err)
	}
	var m int64
	for _, v := range res.Vertices {
		if v.Name == "union-source" {
			for _, op := range v.Operators {
				m = max(m, op.Summary.MaxPayloadBytes)
			}
		}
	}
	return m
}

// BenchmarkSweepOldParallelism: old parallelism 1k → 32k, every operator restored at half its
// parallelism (DENY, so the nearest-safe search runs), per old subtask.
//   - union-over-frame: a frame of 64 bytes per old subtask, which every new subtask's UNION
//     payload (all p UNION handles, about 150 bytes each with path, name and offset) exceeds at
//     every parallelism, although the UNION offsets alone (8 bytes each) do not.
//   - split-over-frame: a frame halfway between the largest payload at the old parallelism and
//     at the requested one, so the UNION payload passes and only the SPLIT_DISTRIBUTE share
//     refuses: every candidate is re-simulated, up to the budget of 32.
func BenchmarkSweepOldParallelism(b *testing.B) {
	for _, shape := range []string{"union-over-frame", "split-over-frame"} {
		for _, p := range []int{1 << 10, 1 << 11, 1 << 12, 1 << 13, 1 << 14, 1 << 15} {
			b.Run(fmt.Sprintf("%s/old-%d", shape, p), func(b *testing.B) {
				l := sweepLayout(b, p)
				frame := int64(64 * p)
				if shape == "split-over-frame" {
					frame = (maxPayload(b, l, p) + maxPayload(b, l, p/2)) / 2
				}
				sweepCase(b, l, rescale.Plan{DefaultParallelism: p / 2}, Options{RPCFrameSize: frame}, p, true)
			})
		}
	}
}

// BenchmarkSweepNewParallelism: the same job at old parallelism 4096 restored at 1k → 32k, with
// the union-over-frame frame size, per new subtask.
func BenchmarkSweepNewParallelism(b *testing.B) {
	const old = 1 << 12
	l := sweepLayout(b, old)
	for _, p := range []int{1 << 10, 1 << 11, 1 << 12, 1 << 13, 1 << 14, 1 << 15} {
		b.Run(fmt.Sprintf("union-over-frame/new-%d", p), func(b *testing.B) {
			sweepCase(b, l, rescale.Plan{DefaultParallelism: p}, Options{RPCFrameSize: 64 * old}, p, true)
		})
	}
}

// BenchmarkSafeSearchManyVertices: n operators, one vertex each, every one refused (parallelism
// 200 above its max parallelism 128, PF110), so the search runs for every vertex: walks down to
// 128 by the bound and confirms 128 by re-simulating the vertex. Per vertex.
func BenchmarkSafeSearchManyVertices(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("vertices-%d", n), func(b *testing.B) {
			l := wideLayout(n)
			plan := rescale.Plan{DefaultParallelism: 200}
			cat := DefaultCatalog()
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := testutil.CPUTime()
			var rep Report
			for range b.N {
				res, err := rescale.Simulate(l, plan)
				if err != nil {
					b.Fatal(err)
				}
				rep = Check(l, plan, res, cat, Options{})
			}
			cpu := testutil.CPUTime() - cpu0
			b.StopTimer()
			if len(rep.Safe) != n || rep.Safe[0].Below != 128 {
				b.Fatalf("%d safe entries for %d vertices: %+v", len(rep.Safe), n, rep.Safe[:min(1, len(rep.Safe))])
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/vertex")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/vertex")
			b.ReportMetric(0, "ns/op")
		})
	}
}
