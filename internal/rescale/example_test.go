package rescale_test

import (
	"fmt"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// A source with three Kafka splits per subtask at parallelism 2, restored at parallelism 4.
func ExampleSimulate() {
	split := func(n int64) checkpoint.StateEntryLayout {
		e := checkpoint.StateEntryLayout{Name: "SourceReaderState", Mode: checkpoint.SplitDistribute, Elements: n, Bytes: 60 * n}
		e.Sizes.Append(60, n)
		return e
	}
	handle := func(path string, n int64) *checkpoint.OperatorStateHandleLayout {
		return &checkpoint.OperatorStateHandleLayout{States: []checkpoint.StateEntryLayout{split(n)},
			Stream: checkpoint.StreamRef{Kind: checkpoint.StreamInline, Path: path, Size: 60 * n}}
	}
	layout := &checkpoint.Layout{Version: 5, Operators: []checkpoint.OperatorLayout{{
		ID: checkpoint.OperatorIDFromUID("kafka-source"), UID: "kafka-source", Parallelism: 2, MaxParallelism: 128,
		Subtasks: []checkpoint.SubtaskLayout{
			{Index: 0, ManagedOperatorState: handle("h0", 3)},
			{Index: 1, ManagedOperatorState: handle("h1", 3)},
		},
	}}}
	res, err := rescale.Simulate(layout, rescale.Plan{Parallelism: map[string]int{"kafka-source": 4}})
	if err != nil {
		panic(err)
	}
	op := res.Vertices[0].Operators[0]
	for i := 0; i < op.NewParallelism; i++ {
		sh := op.State(0).Share(i)
		fmt.Printf("subtask %d: %d splits from old subtasks %v\n", i, sh.Elements, sh.OldSubtasks())
	}
	fmt.Println("failures:", len(res.Failures), "max parallelism:", res.Vertices[0].MaxParallelism)
	// Output:
	// subtask 0: 2 splits from old subtasks [0]
	// subtask 1: 2 splits from old subtasks [0 1]
	// subtask 2: 1 splits from old subtasks [1]
	// subtask 3: 1 splits from old subtasks [1]
	// failures: 0 max parallelism: 128
}
