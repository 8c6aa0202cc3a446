package findings

import (
	"testing"

	"github.com/flinkpreflight/preflight/internal/rescale"
)

// BenchmarkCheckSafeSearch checks a plan far above the safe value: the closed-form bounds of
// PF101 walk ~30 000 candidates without re-simulating.
func BenchmarkCheckSafeSearch(b *testing.B) {
	t := &testing.T{}
	per := make([]int, 500)
	for i := range per {
		per[i] = 1
	}
	l := layoutOf(t, 5, tOp{name: "compact-operator", uid: "compact-operator", p: 500, maxP: 32768, states: []tState{splitState("expired-files", per...)}})
	plan := rescale.Plan{Parallelism: par("compact-operator", 30000)}
	res, err := rescale.Simulate(l, plan)
	if err != nil {
		b.Fatal(err)
	}
	cat := DefaultCatalog()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep := Check(l, plan, res, cat, Options{})
		if len(rep.Safe) != 1 || rep.Safe[0].Below != 500 {
			b.Fatalf("%+v", rep.Safe)
		}
	}
}

// BenchmarkCheckResimulate needs re-simulation (frame size of SPLIT state).
func BenchmarkCheckResimulate(b *testing.B) {
	t := &testing.T{}
	l := layoutOf(t, 5, tOp{name: "big", uid: "big", p: 4, coord: 10, states: []tState{splitState("SourceReaderState", 40000, 40000, 40000, 40000)}})
	plan := rescale.Plan{DefaultParallelism: 1}
	res, err := rescale.Simulate(l, plan)
	if err != nil {
		b.Fatal(err)
	}
	cat := DefaultCatalog()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep := Check(l, plan, res, cat, Options{RPCFrameSize: 256 << 10})
		if len(rep.Safe) != 1 || rep.Safe[0].Above != 5 {
			b.Fatalf("%+v", rep.Safe)
		}
	}
}
