package rescale

import (
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// TestRobustMalformedLayouts feeds layouts no Flink writes (a decoded hostile file can hold any
// value) and checks that Simulate neither panics nor allocates without bound.
func TestRobustMalformedLayouts(t *testing.T) {
	rng := newRand(99)
	pick := func(vals ...int) int { return vals[rng.Intn(len(vals))] }
	for run := 0; run < 2000; run++ {
		var ops []checkpoint.OperatorLayout
		for o := 0; o < 1+rng.Intn(3); o++ {
			p := pick(-1, 0, 1, 2, 3, 5, 1<<30)
			maxP := pick(-5, 0, 1, 4, 128, 1<<20)
			op := checkpoint.OperatorLayout{ID: opID(o + 1), Parallelism: p, MaxParallelism: maxP, FullyFinished: rng.Intn(10) == 0}
			for k := 0; k < rng.Intn(5); k++ {
				st := checkpoint.SubtaskLayout{Index: pick(-1, 0, 1, 2, 4, 1<<30), Finished: rng.Intn(8) == 0}
				e := checkpoint.StateEntryLayout{Name: pick2(rng.Intn(3)), Mode: checkpoint.DistributionMode(rng.Intn(4)),
					Elements: int64(pick(-3, 0, 1, 7)), Bytes: int64(pick(-1, 0, 5, 100))}
				if rng.Intn(2) == 0 {
					e.Sizes.Append(int64(pick(0, 3)), int64(pick(1, 7)))
				}
				st.ManagedOperatorState = &checkpoint.OperatorStateHandleLayout{States: []checkpoint.StateEntryLayout{e, e},
					Stream: checkpoint.StreamRef{Kind: checkpoint.StreamKind(rng.Intn(7)), Size: int64(pick(-1, 0, 9))}}
				if rng.Intn(2) == 0 {
					kr := checkpoint.KeyGroupRange{Start: pick(-4, 0, 3, 200), NumKeyGroups: pick(-2, 0, 1, 5, 300)}
					h := &checkpoint.KeyedStateHandleLayout{Kind: checkpoint.KeyedHandleKind(rng.Intn(7)), KeyGroups: kr,
						StateSize: int64(pick(-1, 0, 50))}
					if rng.Intn(2) == 0 && kr.NumKeyGroups > 0 {
						h.KeyGroupBytes = checkpoint.NewKeyGroupSizes(make([]int64, pick(kr.NumKeyGroups, 1)))
					}
					st.ManagedKeyedState = h
				}
				if rng.Intn(3) == 0 {
					chs := []checkpoint.ChannelStateLayout{{Size: int64(pick(-1, 10))}}
					st.Channels = &checkpoint.ChannelLayouts{Input: chs, Output: chs}
				}
				op.Subtasks = append(op.Subtasks, st)
			}
			ops = append(ops, op)
		}
		plan := Plan{DefaultParallelism: pick(0, 1, 3, 7),
			InputChannelMappers: map[string]SubtaskMapper{opID(1).String(): SubtaskMapper(rng.Intn(8))}}
		if rng.Intn(2) == 0 {
			plan.MaxParallelism = map[string]MaxParallelism{opID(1).String(): {Value: pick(1, 2, 128), Configured: rng.Intn(2) == 0}}
		}
		if rng.Intn(3) == 0 {
			plan.Vertices = []VertexSpec{{Operators: []string{opID(1).String(), opID(2).String()}}}
		}
		r, err := Simulate(layoutOf(ops...), plan)
		if err != nil {
			continue
		}
		for _, v := range r.Vertices {
			for _, a := range v.Operators {
				for _, i := range []int{-1, 0, a.NewParallelism - 1, a.NewParallelism} {
					a.Subtask(i)
					for _, s := range a.States() {
						s.Share(i)
					}
				}
			}
		}
	}
}

func pick2(i int) string { return [...]string{"a", "b", "t-1"}[i] }
