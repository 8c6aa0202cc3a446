package rescale

import (
	"reflect"
	"testing"
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
			for x := range a.States {
				if a.States[x].Summary != b.States[x].Summary {
					t.Fatalf("operator %s state %s: %+v vs %+v", a.ID, a.States[x].Name, a.States[x].Summary, b.States[x].Summary)
				}
			}
		}
	}
}
