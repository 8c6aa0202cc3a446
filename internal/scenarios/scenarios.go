// Package scenarios generates realistic example checkpoints, exactly as Flink would write them,
// with the project's own encoder (checkpoint.Write): operator IDs from uids, the savepoint
// trailer of format 4+, names and uids in format 5+, inline ByteStreamStateHandles up to 20 KiB
// and file handles above, and operator-state offsets that start after the operator backend's
// header. The README demo and the tests read the files it writes to testdata/. It owns no rules
// and no simulation; it must stay deterministic (same bytes on every run).
package scenarios

//go:generate go run ./cmd/genexamples -out ../../testdata -root ../.. -force

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/flinkpreflight/preflight/internal/atomicfile"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// Scenario is one example checkpoint.
type Scenario struct {
	// Name is the directory under testdata/ (the file is <Name>/_metadata).
	Name string
	// Summary is one line for the README.
	Summary string
	// Build returns the checkpoint.
	Build func() *checkpoint.Metadata
}

// All returns the scenarios committed to testdata/, in README order.
func All() []Scenario {
	return []Scenario{
		{Name: "compact-sink", Summary: "table filesystem sink with auto-compaction written at parallelism 4 (FLINK-31689)", Build: CompactSink},
		{Name: "kafka-orphan-union", Summary: "KafkaSource restored under the uid of a FlinkKafkaConsumer, carrying the orphaned union state (small variant)", Build: func() *checkpoint.Metadata { return KafkaOrphanUnionMetadata(KafkaSmallPerSubtask) }},
		{Name: "max-parallelism", Summary: "keyed window job with stored max parallelism 128 (format 4, no names)", Build: MaxParallelism},
		{Name: "custom-operator", Summary: "user-written operator unknown to the catalog, SPLIT_DISTRIBUTE pending-commit with one element per subtask, parallelism 4 (testdata/custom-operator/src)", Build: CustomOperator},
	}
}

// Encode writes the scenario's _metadata bytes.
func Encode(s Scenario) ([]byte, error) {
	var b bytes.Buffer
	if err := checkpoint.Write(&b, s.Build()); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	return b.Bytes(), nil
}

// WriteAll writes every scenario to dir/<name>/_metadata. A file that already holds the same bytes
// is left alone; one that differs is replaced only when overwrite is set.
func WriteAll(dir string, overwrite bool) error {
	for _, s := range All() {
		b, err := Encode(s)
		if err != nil {
			return err
		}
		path := filepath.Join(dir, s.Name, "_metadata")
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
			continue
		}
		if err := WriteFile(path, overwrite, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return err
		}
	}
	return nil
}

// ErrExists is returned by WriteFile when the file exists and overwrite is not set.
var ErrExists = errors.New("exists; pass the overwrite flag (-force) to replace it")

// WriteFile writes a file atomically: into a temporary file beside it, then renamed over it, so
// a reader never sees half a file and a failed write leaves the old one. An existing file is
// replaced only when overwrite is set.
func WriteFile(path string, overwrite bool, write func(io.Writer) error) error {
	if _, err := os.Stat(path); err == nil && !overwrite {
		return fmt.Errorf("%s: %w", path, ErrExists)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, write)
}

// operator starts an operator record whose ID is derived from its uid, as Flink does.
func operator(name, uid string, p, maxP int) checkpoint.OperatorState {
	return checkpoint.OperatorState{Name: name, UID: uid, ID: checkpoint.OperatorIDFromUID(uid), Parallelism: int32(p), MaxParallelism: int32(maxP)}
}

// stateless gives a stateless operator the empty subtask records Flink writes for every
// acknowledged subtask.
func stateless(op checkpoint.OperatorState) checkpoint.OperatorState {
	for i := int32(0); i < op.Parallelism; i++ {
		op.Subtasks = append(op.Subtasks, checkpoint.SubtaskEntry{Index: i, State: &checkpoint.SubtaskState{}})
	}
	return op
}

// fileOrder puts the operators (given in topological order) in the order Flink writes them: the
// iteration order of the checkpoint's HashMap<OperatorID, OperatorState>, by bucket of
// AbstractID.hashCode at the default capacity, ties in insertion order.
func fileOrder(ops ...checkpoint.OperatorState) []checkpoint.OperatorState {
	capacity := uint32(16)
	for float64(len(ops)) > 0.75*float64(capacity) {
		capacity <<= 1
	}
	bucket := func(id checkpoint.OperatorID) uint32 {
		lo, up := binary.BigEndian.Uint64(id[:8]), binary.BigEndian.Uint64(id[8:])
		h := uint32(lo) ^ uint32(lo>>32) ^ uint32(up) ^ uint32(up>>32)
		return (h ^ h>>16) & (capacity - 1)
	}
	out := append([]checkpoint.OperatorState(nil), ops...)
	sort.SliceStable(out, func(i, j int) bool { return bucket(out[i].ID) < bucket(out[j].ID) })
	return out
}

// CompactSink is a SQL job `INSERT INTO fs_table SELECT ... FROM orders` into a partitioned
// filesystem table with auto-compaction and the default process-time partition commit, written
// as a savepoint by Flink 2.x (format 5, names and uids set with table.exec.uid.format
// "<transformation>") at parallelism 4:
//
//   - Source: orders (KafkaSource, uid orders-source): SourceReaderState, 2 splits per subtask,
//     enumerator state in the coordinator;
//   - streaming-writer (uid streaming-writer): bucket-states SPLIT (one per active bucket),
//     max-part-counter UNION (one per subtask);
//   - compact-coordinator (uid compact-coordinator): parallelism 1, max parallelism 1, files-state;
//   - compact-operator (uid compact-operator): expired-files SPLIT, one element per subtask;
//   - PartitionCommitter (uid partition-committer): parallelism 1, max parallelism 1,
//     pending-partitions-with-time;
//   - Sink: end (uid discarding-sink): stateless, chained to the committer.
func CompactSink() *checkpoint.Metadata {
	const p = 4
	loc := location{dir: "file:/flink/savepoints/savepoint-" + hexOf("compact-sink/job", 6) + "-" + hexOf("compact-sink/sp", 12), savepoint: true, seed: "compact-sink"}
	day := "dt=2026-11-29"
	table := "file:/warehouse/orders_fs"

	src := operator("Source: orders", "orders-source", p, 128)
	src.CoordinatorState = &checkpoint.ByteStreamStateHandle{Name: src.ID.String(), Data: kafkaEnumerator("orders", 8, p)}
	for i := 0; i < p; i++ {
		src.Subtasks = append(src.Subtasks, loc.subtaskWithOperatorState("orders-source", i, []*listState{{
			name: "SourceReaderState", mode: checkpoint.SplitDistribute, serializer: bytesSnapshot,
			elements: [][]byte{kafkaSplit("orders", int32(i), 10_000+int64(i)*731), kafkaSplit("orders", int32(i+p), 9_800+int64(i)*517)},
		}}))
	}

	writer := operator("streaming-writer", "streaming-writer", p, 128)
	for i := 0; i < p; i++ {
		var buckets [][]byte
		for b := 0; b < 1+(i*7)%3; b++ {
			buckets = append(buckets, bucketState(fmt.Sprintf("%s/%s/hour=%02d", table, day, 20+b), i, b))
		}
		writer.Subtasks = append(writer.Subtasks, loc.subtaskWithOperatorState("streaming-writer", i, []*listState{
			{name: "bucket-states", mode: checkpoint.SplitDistribute, serializer: bytesSnapshot, elements: buckets},
			{name: "max-part-counter", mode: checkpoint.Union, serializer: longSnapshot, elements: [][]byte{long(int64(41 + i*3))}},
		}))
	}

	coord := operator("compact-coordinator", "compact-coordinator", 1, 1)
	coord.Subtasks = append(coord.Subtasks, loc.subtaskWithOperatorState("compact-coordinator", 0, []*listState{{
		name: "files-state", mode: checkpoint.SplitDistribute, serializer: mapSnapshot, nested: []string{longSnapshot, mapSnapshot, kryoSnapshot},
		elements: [][]byte{compactFiles(table, day, p)},
	}}))

	compact := operator("compact-operator", "compact-operator", p, 128)
	for i := 0; i < p; i++ {
		compact.Subtasks = append(compact.Subtasks, loc.subtaskWithOperatorState("compact-operator", i, []*listState{{
			name: "expired-files", mode: checkpoint.SplitDistribute, serializer: mapSnapshot, nested: []string{longSnapshot, kryoSnapshot},
			elements: [][]byte{expiredFiles(table, day, i)},
		}}))
	}

	committer := operator("PartitionCommitter", "partition-committer", 1, 1)
	committer.Subtasks = append(committer.Subtasks, loc.subtaskWithOperatorState("partition-committer", 0, []*listState{{
		name: "pending-partitions-with-time", mode: checkpoint.SplitDistribute, serializer: mapSnapshot, nested: []string{"org.apache.flink.api.common.typeutils.base.StringSerializer$StringSerializerSnapshot", longSnapshot},
		elements: [][]byte{pendingPartitions(day)},
	}}))

	end := stateless(operator("Sink: end", "discarding-sink", 1, 1))

	return &checkpoint.Metadata{
		Version:      5,
		CheckpointID: 1742,
		Operators:    fileOrder(src, writer, coord, compact, committer, end),
		Trailer:      savepointTrailer,
	}
}

// MaxParallelism is a DataStream click-counting job written as a savepoint by Flink 1.19
// (format 4: no names or uids in the file) at parallelism 4 with max parallelism 128:
// a KafkaSource (uid clicks-source) and a keyed tumbling window (uid click-window) whose heap
// keyed state covers 32 key groups per subtask. Asking for more than 128 is refused by Flink.
func MaxParallelism() *checkpoint.Metadata {
	const p, maxP = 4, 128
	loc := location{dir: "file:/flink/savepoints/savepoint-" + hexOf("max-p/job", 6) + "-" + hexOf("max-p/sp", 12), savepoint: true, seed: "max-parallelism"}
	src := operator("", "clicks-source", p, maxP)
	src.CoordinatorState = &checkpoint.ByteStreamStateHandle{Name: src.ID.String(), Data: kafkaEnumerator("clicks", 4, p)}
	for i := 0; i < p; i++ {
		src.Subtasks = append(src.Subtasks, loc.subtaskWithOperatorState("clicks-source", i, []*listState{{
			name: "SourceReaderState", mode: checkpoint.SplitDistribute, serializer: bytesSnapshot,
			elements: [][]byte{kafkaSplit("clicks", int32(i), 88_000+int64(i)*97)},
		}}))
	}
	window := operator("", "click-window", p, maxP)
	for i := 0; i < p; i++ {
		start, n := i*maxP/p, maxP/p
		offsets := make([]int64, n)
		pos := int64(412) // keyed backend header: serializers and state meta info
		for k := range offsets {
			offsets[k] = pos
			pos += 2048 + int64((start+k)*733%4096)
		}
		window.Subtasks = append(window.Subtasks, checkpoint.SubtaskEntry{Index: int32(i), State: &checkpoint.SubtaskState{
			ManagedKeyedState: &checkpoint.KeyGroupsStateHandle{Tag: 7, StartKeyGroup: int32(start), NumKeyGroups: int32(n), Offsets: offsets,
				Delegate: loc.handle(fmt.Sprintf("click-window/%d", i), nil, pos)},
		}})
	}
	sink := stateless(operator("", "clicks-sink", p, maxP))
	return &checkpoint.Metadata{
		Version:      4,
		CheckpointID: 311,
		Operators:    fileOrder(src, window, sink),
		Trailer:      savepointTrailer,
	}
}

func long(v int64) []byte {
	var w writer
	w.i64(v)
	return w.b
}

// kafkaEnumerator is a KafkaSourceEnumState in SimpleVersionedSerialization: the assigned
// partitions of the topic.
func kafkaEnumerator(topic string, partitions, p int) []byte {
	var in writer
	in.i32(int32(partitions))
	for i := 0; i < partitions; i++ {
		in.utf(topic)
		in.i32(int32(i))
		in.i32(1) // AssignmentStatus.ASSIGNED
	}
	in.i8(1) // initial discovery finished
	var w writer
	w.i32(2)
	w.i32(int32(len(in.b)))
	w.b = append(w.b, in.b...)
	return w.b
}

// bucketState is a serialized FileWriterBucketState (BucketStateSerializer v2) in
// SimpleVersionedSerialization.
func bucketState(bucket string, subtask, b int) []byte {
	var in writer
	in.utf(bucket)
	in.utf(bucket)
	in.i64(1_764_460_800_000 + int64(subtask*1000+b))
	in.i8(1) // has in-progress file
	in.utf(fmt.Sprintf("%s/.uncompacted-part-%s-%d-%d.inprogress.%s", bucket, uuid(bucket), subtask, 17+b, uuid(bucket + "tmp")[:8]))
	in.i64(1_048_576 + int64(subtask*4096+b*512))
	in.i32(0) // pending files per checkpoint
	var w writer
	w.i32(2)
	w.i32(int32(len(in.b)))
	w.b = append(w.b, in.b...)
	return bytesElement(w.b)
}

// expiredFiles is CompactOperator's expired-files element: a map checkpoint ID -> paths of
// compacted input files to delete, Kryo-serialized Paths.
func expiredFiles(table, day string, subtask int) []byte {
	var w writer
	w.i32(1) // map size
	w.i64(1741)
	w.i8(0) // not null
	w.i32(2)
	for f := 0; f < 2; f++ {
		w.i8(1) // Kryo class registration of org.apache.flink.core.fs.Path
		w.b = append(w.b, kryoString(fmt.Sprintf("%s/%s/.uncompacted-part-%s-%d-%d", table, day, uuid(fmt.Sprint(table, subtask)), subtask, 15+f))...)
	}
	return w.b
}

// compactFiles is CompactCoordinator's files-state element: checkpoint ID -> partition ->
// files written by all writers since the last compaction.
func compactFiles(table, day string, p int) []byte {
	var w writer
	w.i32(1)
	w.i64(1742)
	w.i32(1)
	w.utf(day)
	w.i32(int32(p))
	for i := 0; i < p; i++ {
		w.i8(1)
		w.b = append(w.b, kryoString(fmt.Sprintf("%s/%s/.uncompacted-part-%s-%d-17", table, day, uuid(fmt.Sprint(table, i)), i))...)
	}
	return w.b
}

// pendingPartitions is ProcTimeCommitTrigger's element: partition -> creation time.
func pendingPartitions(day string) []byte {
	var w writer
	w.i32(2)
	for h := 22; h <= 23; h++ {
		w.utf(fmt.Sprintf("%s/hour=%02d", day, h))
		w.i8(0)
		w.i64(1_764_453_600_000 + int64(h-22)*3_600_000)
	}
	return w.b
}
