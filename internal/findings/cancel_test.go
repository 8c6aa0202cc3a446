package findings

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/flinkpreflight/preflight/internal/cancel/canceltest"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// wideLayout has n stateful operators of parallelism 2 whose max parallelism (1) is below it:
// every one of them is refused (PF110), so the rules and the safe-parallelism search visit each.
func wideLayout(n int) *checkpoint.Layout {
	l := &checkpoint.Layout{Version: 3, Operators: make([]checkpoint.OperatorLayout, n)}
	for i := range l.Operators {
		st := func(j int) checkpoint.SubtaskLayout {
			e := checkpoint.StateEntryLayout{Name: "s", Mode: checkpoint.SplitDistribute, Elements: 2, Bytes: 20}
			e.Sizes.Append(10, 2)
			return checkpoint.SubtaskLayout{Index: j, RefCheckpointID: -1, ManagedOperatorState: &checkpoint.OperatorStateHandleLayout{
				States: []checkpoint.StateEntryLayout{e}, Stream: checkpoint.StreamRef{Kind: checkpoint.StreamFile, Path: "f", Size: 20}}}
		}
		l.Operators[i] = checkpoint.OperatorLayout{ID: checkpoint.OperatorIDFromUID("wide-" + strconv.Itoa(i)), Parallelism: 2, MaxParallelism: 128, Subtasks: []checkpoint.SubtaskLayout{st(0), st(1)}}
	}
	return l
}

// TestCheckContextStops: the rules and the safe-parallelism search stop when the context ends,
// with the context's error.
func TestCheckContextStops(t *testing.T) {
	l := wideLayout(20_000)
	plan := rescale.Plan{DefaultParallelism: 200} // above every stored max parallelism: PF110 on each vertex
	res, err := rescale.Simulate(l, plan)
	if err != nil {
		t.Fatal(err)
	}
	canceltest.Stops(t, 5*time.Millisecond, 2*time.Second, func(t *testing.T, ctx context.Context) error {
		rep, err := CheckContext(ctx, l, plan, res, nil, Options{})
		if len(rep.Findings) != 0 {
			t.Errorf("%d findings from a stopped check", len(rep.Findings))
		}
		return err
	})
	// Without a deadline the same check completes (on a smaller layout to keep the test short;
	// BenchmarkSafeSearchManyVertices measures the cost per refused vertex).
	small := wideLayout(20)
	res, err = rescale.Simulate(small, plan)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := CheckContext(context.Background(), small, plan, res, nil, Options{})
	if err != nil || len(rep.Safe) != len(small.Operators) || rep.Verdict != Deny {
		t.Fatalf("uninterrupted: %v, verdict %v, %d safe-parallelism answers for %d vertices", err, rep.Verdict, len(rep.Safe), len(small.Operators))
	}
}
