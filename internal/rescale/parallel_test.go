package rescale

import (
	"reflect"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// TestParallelMatchesSequential: the worker pool gives the same summaries as one goroutine (and
// gives the race detector something to look at).
func TestParallelMatchesSequential(t *testing.T) {
	l := benchLayout(40, 16, 5)
	plan := Plan{DefaultParallelism: 300}
	old := parallelWork
	defer func() { parallelWork = old }()
	parallelWork = 1
	par := simulate(t, l, plan)
	parallelWork = 1 << 62
	seq := simulate(t, l, plan)
	for v := range seq.Vertices {
		for k, a := range seq.Vertices[v].Operators {
			b := par.Vertices[v].Operators[k]
			if !reflect.DeepEqual(a.Summary, b.Summary) {
				t.Fatalf("operator %s: sequential %+v, parallel %+v", a.ID, a.Summary, b.Summary)
			}
			as, bs := a.States(), b.States()
			for x := range as {
				if as[x].Summary != bs[x].Summary {
					t.Fatalf("operator %s state %s: %+v vs %+v", a.ID, as[x].Name, as[x].Summary, bs[x].Summary)
				}
			}
		}
	}
}

// TestBlockedPass: with many old streams the operator pass works a block of subtasks at a time;
// its summaries must still equal the per-subtask recomputation.
func TestBlockedPass(t *testing.T) {
	rng := newRand(5)
	var subs []checkpoint.SubtaskLayout
	const oldP = 5000 // 10,000 stream ids: 157 words per subtask, blocks of 208 subtasks
	for j := 0; j < oldP; j++ {
		h := handle("s"+fmtInt(j), split("a", rng.Int63n(3)), split("b", rng.Int63n(2)), bcast("c", 1))
		if j%7 == 0 {
			h.Stream.Kind = checkpoint.StreamInline
		}
		subs = append(subs, sub(j, h))
	}
	l := layoutOf(op(1, oldP, 32768, subs...))
	for _, newP := range []int{500, 7001} {
		r := simulate(t, l, Plan{DefaultParallelism: newP})
		a := r.Vertices[0].Operators[0]
		checkSummaries(t, a)
		for _, s := range a.States() {
			checkStateInvariants(t, s, oldP, newP, true)
		}
	}
}
