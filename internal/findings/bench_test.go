package findings

import (
	"testing"

	"github.com/flinkpreflight/preflight/internal/rescale"
)

// BenchmarkCheckSafeSearch checks a plan far above the safe value: the closed-form bounds of
// PF101 walk ~30 000 candidates without re-simulating.
func BenchmarkCheckSafeSearch(b *testing.B) {
	per := make([]int, 500)
	for i := range per {
		per[i] = 1
	}
	op := tOp{name: "compact-operator", uid: "compact-operator", p: 500, maxP: 32768, states: []tState{splitState("expired-files", per...)}}
	benchSafe(b, op, rescale.Plan{Parallelism: par("compact-operator", 30000)}, Options{}, SafeParallelism{Below: 500})
}

// BenchmarkCheckResimulate needs re-simulation (frame size of SPLIT state).
func BenchmarkCheckResimulate(b *testing.B) {
	op := tOp{name: "big", uid: "big", p: 4, coord: 10, states: []tState{splitState("SourceReaderState", 40000, 40000, 40000, 40000)}}
	benchSafe(b, op, rescale.Plan{DefaultParallelism: 1}, Options{RPCFrameSize: 256 << 10}, SafeParallelism{Above: 5})
}

// benchSafe checks op under plan and opts in a loop and wants one safe parallelism, whose Below
// or Above (the one set in want) matches.
func benchSafe(b *testing.B, op tOp, plan rescale.Plan, opts Options, want SafeParallelism) {
	l := layoutOf(&testing.T{}, 5, op)
	res, err := rescale.Simulate(l, plan)
	if err != nil {
		b.Fatal(err)
	}
	cat := DefaultCatalog()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep := Check(l, plan, res, cat, opts)
		if len(rep.Safe) != 1 || (want.Below != 0 && rep.Safe[0].Below != want.Below) || (want.Above != 0 && rep.Safe[0].Above != want.Above) {
			b.Fatalf("%+v", rep.Safe)
		}
	}
}
