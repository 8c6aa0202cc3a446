package scenarios

import (
	"fmt"
	"unicode/utf16"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// stringSnapshot is StringSerializer's snapshot class, named in the operator-state header.
const stringSnapshot = "org.apache.flink.api.common.typeutils.base.StringSerializer$StringSerializerSnapshot"

// CustomOperator is a DataStream job with a user-written operator that the built-in catalog does
// not know, written as a savepoint by Flink 2.x (format 5, names and uids) at parallelism 4:
//
//   - Source: events (KafkaSource, uid events-source): SourceReaderState, one split per subtask;
//   - PendingCommitOperator (uid pending-commit-writer): the operator of
//     testdata/custom-operator/src, whose SPLIT_DISTRIBUTE list state pending-commit holds the one
//     open transaction of each subtask. Its initializeState takes that element with
//     pending.get().iterator().next() and no hasNext(): restored at 8, subtasks 4-7 throw.
func CustomOperator() *checkpoint.Metadata {
	const p = 4
	loc := location{dir: "file:/flink/savepoints/savepoint-" + hexOf("custom-operator/job", 6) + "-" + hexOf("custom-operator/sp", 12), savepoint: true, seed: "custom-operator"}

	src := operator("Source: events", "events-source", p, 128)
	src.CoordinatorState = &checkpoint.ByteStreamStateHandle{Name: src.ID.String(), Data: kafkaEnumerator("events", p, p)}
	for i := 0; i < p; i++ {
		src.Subtasks = append(src.Subtasks, loc.subtaskWithOperatorState("events-source", i, []*listState{{
			name: "SourceReaderState", mode: checkpoint.SplitDistribute, serializer: bytesSnapshot,
			elements: [][]byte{kafkaSplit("events", int32(i), 52_000+int64(i)*389)},
		}}))
	}

	writer := operator("PendingCommitOperator", "pending-commit-writer", p, 128)
	for i := 0; i < p; i++ {
		txn := "txn-" + uuid(fmt.Sprintf("custom-operator/txn/%d", i))
		writer.Subtasks = append(writer.Subtasks, loc.subtaskWithOperatorState("pending-commit-writer", i, []*listState{{
			name: "pending-commit", mode: checkpoint.SplitDistribute, serializer: stringSnapshot,
			elements: [][]byte{flinkString(txn)},
		}}))
	}

	return &checkpoint.Metadata{
		Version:      5,
		CheckpointID: 977,
		Operators:    fileOrder(src, writer),
		Trailer:      savepointTrailer,
	}
}

// flinkString is a StringSerializer element (StringValue.writeString): the length plus one, then
// every UTF-16 unit, each as a variable-length integer (seven bits per byte, low bits first).
func flinkString(s string) []byte {
	units := utf16.Encode([]rune(s))
	var b []byte
	put := func(v uint32) {
		for v >= 0x80 {
			b = append(b, byte(v|0x80))
			v >>= 7
		}
		b = append(b, byte(v))
	}
	put(uint32(len(units) + 1))
	for _, u := range units {
		put(uint32(u))
	}
	return b
}
