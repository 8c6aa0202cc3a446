package scenarios

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// Kafka orphan-union scenario parameters.
const (
	kafkaParallelism = 4
	kafkaPartitions  = 64
	kafkaTopic       = "events"
	// kafkaUnionElementSize is one Tuple2<KafkaTopicPartition, Long>: Kryo class ID, topic,
	// partition, offset.
	kafkaUnionElementSize = 16
	// KafkaSmallPerSubtask is the union elements per subtask of the committed testdata variant
	// (about 1.3 MB of _metadata).
	KafkaSmallPerSubtask = 40_000
)

// KafkaOrphanUnionMetadata is a job whose KafkaSource (uid kafka-source) was restored from a
// FlinkKafkaConsumer savepoint under the same uid: besides SourceReaderState (16 splits per
// subtask) every one of its 4 subtasks still writes the legacy UNION state
// topic-partition-offset-states, grown to perSubtask elements by earlier restores (each
// subtask holds the whole union). Format 5 savepoint written by Flink 2.x; a stateless sink
// follows.
func KafkaOrphanUnionMetadata(perSubtask int64) *checkpoint.Metadata {
	m, _ := kafkaOrphanUnion(perSubtask, false)
	return m
}

// kafkaOrphanUnion builds the scenario; it also returns the union states, whose splice field
// is set when lazy.
func kafkaOrphanUnion(perSubtask int64, lazy bool) (*checkpoint.Metadata, []*listState) {
	var unions []*listState
	const p = kafkaParallelism
	loc := location{dir: "file:/flink/savepoints/savepoint-" + hexOf("kafka/job", 6) + "-" + hexOf("kafka/sp", 12), savepoint: true, seed: "kafka-orphan-union"}
	src := operator("Source: events", "kafka-source", p, 128)
	src.CoordinatorState = &checkpoint.ByteStreamStateHandle{Name: src.ID.String(), Data: kafkaEnumerator(kafkaTopic, kafkaPartitions, p)}
	for i := 0; i < p; i++ {
		var splits [][]byte
		for part := i; part < kafkaPartitions; part += p {
			splits = append(splits, kafkaSplit(kafkaTopic, int32(part), 5_000_000+int64(part)*1_237))
		}
		union := &listState{name: "topic-partition-offset-states", mode: checkpoint.Union, serializer: "org.apache.flink.api.java.typeutils.runtime.TupleSerializerSnapshot",
			nested: []string{kryoSnapshot, longSnapshot}}
		if lazy {
			union.count, union.size, union.lazy, union.sentinel = perSubtask, kafkaUnionElementSize, true, sentinel(i)
		} else if perSubtask*kafkaUnionElementSize > InlineThreshold {
			union.count, union.size = perSubtask, kafkaUnionElementSize
		} else {
			for k := int64(0); k < perSubtask; k++ {
				union.elements = append(union.elements, unionElement(k))
			}
		}
		unions = append(unions, union)
		src.Subtasks = append(src.Subtasks, loc.subtaskWithOperatorState("kafka-source", i, []*listState{
			{name: "SourceReaderState", mode: checkpoint.SplitDistribute, serializer: bytesSnapshot, elements: splits},
			union,
		}))
	}
	sink := stateless(operator("Sink: archive", "archive-sink", p, 128))
	return &checkpoint.Metadata{Version: 5, CheckpointID: 90211, Operators: fileOrder(src, sink), Trailer: savepointTrailer}, unions
}

// unionElement is one (KafkaTopicPartition, offset) of the legacy consumer's union state.
func unionElement(k int64) []byte {
	b := make([]byte, 0, kafkaUnionElementSize)
	b = append(b, 0x01)
	b = append(b, kryoString(kafkaTopic)...)
	b = append(b, byte(k%kafkaPartitions))
	return binary.BigEndian.AppendUint64(b, uint64(4_000_000+k/kafkaPartitions))
}

func sentinel(i int) int64 { return 0x7f5e_17e1_0000_0000 | int64(i) }

// KafkaPerSubtaskFor returns the union elements per subtask that make the _metadata of the
// Kafka orphan-union scenario about targetBytes long (at least 1).
func KafkaPerSubtaskFor(targetBytes int64) int64 {
	var b bytes.Buffer
	m, _ := kafkaOrphanUnion(1, true)
	_ = checkpoint.Write(&b, m)
	base := int64(b.Len()) - kafkaParallelism*8
	n := (targetBytes - base) / (kafkaParallelism * 8)
	return max(n, 1)
}

// KafkaOrphanUnion streams the Kafka orphan-union scenario sized to about targetBytes (the
// incident's 168 MB file: KafkaOrphanUnion(w, 168<<20)). Memory stays constant: the codec
// writes the file with one sentinel offset per subtask, and the union offsets are generated
// while copying. The bytes equal checkpoint.Write(KafkaOrphanUnionMetadata(KafkaPerSubtaskFor(targetBytes))).
func KafkaOrphanUnion(w io.Writer, targetBytes int64) error {
	n := KafkaPerSubtaskFor(targetBytes)
	if n*kafkaUnionElementSize <= InlineThreshold {
		return checkpoint.Write(w, KafkaOrphanUnionMetadata(n))
	}
	m, unions := kafkaOrphanUnion(n, true)
	var skel bytes.Buffer
	if err := checkpoint.Write(&skel, m); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	rest := skel.Bytes()
	var buf [8]byte
	for _, u := range unions {
		sp := u.splice
		pat := binary.BigEndian.AppendUint32(nil, 1)
		pat = binary.BigEndian.AppendUint64(pat, uint64(sp.sentinel))
		at := bytes.Index(rest, pat)
		if at < 0 {
			return fmt.Errorf("scenarios: union sentinel %x not found", sp.sentinel)
		}
		if _, err := bw.Write(rest[:at]); err != nil {
			return err
		}
		binary.BigEndian.PutUint32(buf[:4], uint32(sp.count))
		if _, err := bw.Write(buf[:4]); err != nil {
			return err
		}
		for k := int64(0); k < sp.count; k++ {
			binary.BigEndian.PutUint64(buf[:], uint64(sp.first+k*sp.size))
			if _, err := bw.Write(buf[:]); err != nil {
				return err
			}
		}
		rest = rest[at+len(pat):]
	}
	if _, err := bw.Write(rest); err != nil {
		return err
	}
	return bw.Flush()
}
