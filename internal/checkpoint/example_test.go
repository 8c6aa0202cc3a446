package checkpoint_test

import (
	"bytes"
	"fmt"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

func ExampleReadLayout() {
	// A small savepoint: a Kafka-like source with parallelism 2 whose subtasks each hold a
	// SPLIT_DISTRIBUTE list state inline in _metadata (Write produces what Flink would).
	src := checkpoint.OperatorState{
		UID: "kafka-source", ID: checkpoint.OperatorIDFromUID("kafka-source"),
		Parallelism: 2, MaxParallelism: 128,
	}
	for i := range 2 {
		src.Subtasks = append(src.Subtasks, checkpoint.SubtaskEntry{Index: int32(i), State: &checkpoint.SubtaskState{
			ManagedOperatorState: checkpoint.OperatorStateSlot{Present: 1, Handle: &checkpoint.OperatorStateHandle{
				States: []checkpoint.StateEntry{{
					Name: "SourceReaderState", Mode: checkpoint.SplitDistribute,
					Offsets: []int64{233, 272, 311},
				}},
				Delegate: &checkpoint.ByteStreamStateHandle{Name: "state", Data: make([]byte, 350)},
			}},
		}})
	}
	var file bytes.Buffer
	if err := checkpoint.Write(&file, &checkpoint.Metadata{Version: 6, CheckpointID: 12, Operators: []checkpoint.OperatorState{src}}); err != nil {
		fmt.Println(err)
		return
	}

	l, err := checkpoint.ReadLayout(&file)
	if err != nil {
		fmt.Println(err) // a *checkpoint.FormatError with offset, field path and value
		return
	}
	fmt.Printf("format %d, checkpoint %d, %d bytes\n", l.Version, l.CheckpointID, l.Size)
	for _, op := range l.Operators {
		fmt.Printf("operator %s (uid %q) parallelism %d, max %d\n", op.ID, op.UID, op.Parallelism, op.MaxParallelism)
		for _, st := range op.Subtasks {
			for _, s := range st.ManagedOperatorState.States {
				fmt.Printf("  subtask %d: %s %s, %d elements of %d bytes, %d bytes inline\n",
					st.Index, s.Name, s.Mode, s.Elements, s.Sizes.At(0), st.ManagedOperatorState.Stream.Size)
			}
		}
	}
	// Output:
	// format 6, checkpoint 12, 948 bytes
	// operator 61252f73469d3ffba207c548d29a0267 (uid "kafka-source") parallelism 2, max 128
	//   subtask 0: SourceReaderState SPLIT_DISTRIBUTE, 3 elements of 39 bytes, 350 bytes inline
	//   subtask 1: SourceReaderState SPLIT_DISTRIBUTE, 3 elements of 39 bytes, 350 bytes inline
}

func ExampleOperatorIDFromUID() {
	fmt.Println(checkpoint.OperatorIDFromUID("kafka-source-operator-uid"))
	// Output: cb16aa5adb311e8ac72482def19accbe
}
