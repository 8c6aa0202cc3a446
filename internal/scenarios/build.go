package scenarios

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// InlineThreshold is Flink's default execution.checkpointing.data-inline-threshold (20 KiB):
// streams of at most this many bytes are stored inside _metadata.
const InlineThreshold = 20 << 10

// Serializer snapshot classes written into the operator-state stream header.
const (
	bytesSnapshot = "org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer$BytePrimitiveArraySerializerSnapshot"
	longSnapshot  = "org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot"
	mapSnapshot   = "org.apache.flink.api.common.typeutils.base.MapSerializerSnapshot"
	tupleSnapshot = "org.apache.flink.api.java.typeutils.runtime.TupleSerializerSnapshot"
	kryoSnapshot  = "org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot"
)

// listState is one named operator list state of one subtask: its mode, the serializer
// snapshot the header names, and its elements (serialized).
type listState struct {
	name       string
	mode       checkpoint.DistributionMode
	serializer string
	nested     []string // nested serializer classes (composite snapshots)
	elements   [][]byte
	// count and size describe elements without materializing them (large generated states):
	// count elements of size bytes each, used when elements is nil.
	count, size int64
	// lazy, with count, leaves the offsets to a splice: the entry gets one sentinel offset that
	// KafkaOrphanUnion replaces while streaming (constant memory for huge states).
	lazy     bool
	sentinel int64
	splice   *splice
}

// splice describes offsets written on the fly: count offsets first, first+size, ...
type splice struct {
	sentinel           int64
	first, size, count int64
}

// writer is a tiny big-endian buffer in the style of Java's DataOutputStream.
type writer struct{ b []byte }

func (w *writer) i8(v byte)    { w.b = append(w.b, v) }
func (w *writer) i16(v int)    { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *writer) i32(v int32)  { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *writer) i64(v int64)  { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }
func (w *writer) utf(s string) { w.i16(len(s)); w.b = append(w.b, s...) }

// backendHeader is the OperatorBackendSerializationProxy (version 6, Flink 1.18+) that starts
// every operator-state stream: per state its name, backend state type, the distribution mode
// option and the value serializer's snapshot; then the broadcast-state count.
func backendHeader(states []*listState) []byte {
	var w writer
	w.i32(6)
	w.i8(0) // not compressed
	w.i16(len(states))
	for _, s := range states {
		w.utf(s.name)
		w.i32(1) // BackendStateType OPERATOR
		w.i32(1)
		w.utf("OPERATOR_STATE_DISTRIBUTION_MODE")
		w.utf(s.mode.String())
		w.i32(1)
		w.utf("VALUE_SERIALIZER")
		w.i32(2)
		w.utf(s.serializer)
		w.i32(3)
		if len(s.nested) > 0 {
			w.i32(int32(len(s.nested)))
			for _, n := range s.nested {
				w.utf(n)
				w.i32(3)
			}
		}
	}
	w.i16(0) // broadcast states
	return w.b
}

// operatorStream lays out one subtask's operator-state stream: the header, then the elements of
// each state in turn (the snapshot writes states in the backend's HashMap order). It returns the
// stream bytes (nil when a state has only a count) , the total size and the state entries with
// their offsets.
func operatorStream(states []*listState) (data []byte, size int64, entries []checkpoint.StateEntry) {
	byName := map[string]*listState{}
	var names []string
	for _, s := range states {
		byName[s.name] = s
		names = append(names, s.name)
	}
	ordered := make([]*listState, 0, len(states))
	for _, n := range rescale.HashMapOrder(names) {
		ordered = append(ordered, byName[n])
	}
	head := backendHeader(ordered)
	materialize := true
	for _, s := range ordered {
		materialize = materialize && s.elements != nil
	}
	if materialize {
		data = append(data, head...)
	}
	size = int64(len(head))
	for _, s := range ordered {
		e := checkpoint.StateEntry{Name: s.name, Mode: s.mode}
		if s.elements != nil {
			for _, el := range s.elements {
				e.Offsets = append(e.Offsets, size)
				size += int64(len(el))
				if materialize {
					data = append(data, el...)
				}
			}
		} else if s.lazy {
			s.splice = &splice{sentinel: s.sentinel, first: size, size: s.size, count: s.count}
			e.Offsets = []int64{s.sentinel}
			size += s.count * s.size
		} else {
			e.Offsets = make([]int64, s.count)
			for i := range e.Offsets {
				e.Offsets[i] = size
				size += s.size
			}
		}
		entries = append(entries, e)
	}
	return data, size, entries
}

// location is where a snapshot's files live, for handle names and paths.
type location struct {
	dir       string // e.g. file:/flink/savepoints/savepoint-5f2a1b-3c9d2e7f1a4b
	savepoint bool
	seed      string
}

// handle returns the stream handle Flink's FsCheckpointStreamFactory would produce: inline up
// to InlineThreshold bytes (named with the path the file would have had), a relative file
// handle in a savepoint, an absolute file handle in a checkpoint.
func (l location) handle(key string, data []byte, size int64) checkpoint.StreamStateHandle {
	name := uuid(l.seed + "/" + key)
	if data != nil && size <= InlineThreshold {
		return &checkpoint.ByteStreamStateHandle{Name: l.dir + "/" + name, Data: data}
	}
	if l.savepoint {
		return &checkpoint.RelativeFileStateHandle{RelativePath: name, StateSize: size}
	}
	return &checkpoint.FileStateHandle{Path: l.dir + "/" + name, StateSize: size}
}

// subtaskWithOperatorState is a subtask whose only state is managed operator state.
func (l location) subtaskWithOperatorState(opKey string, index int, states []*listState) checkpoint.SubtaskEntry {
	data, size, entries := operatorStream(states)
	h := &checkpoint.OperatorStateHandle{Tag: 4, States: entries, Delegate: l.handle(fmt.Sprintf("%s/%d", opKey, index), data, size)}
	return checkpoint.SubtaskEntry{Index: int32(index), State: &checkpoint.SubtaskState{
		ManagedOperatorState: checkpoint.OperatorStateSlot{Present: 1, Handle: h},
	}}
}

// uuid derives a random-looking, deterministic version-4 UUID from a seed.
func uuid(seed string) string {
	h := sha256.Sum256([]byte(seed))
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// hexOf derives n deterministic hex digits from a seed (job IDs, savepoint directory names).
func hexOf(seed string, n int) string {
	h := sha256.Sum256([]byte(seed))
	return fmt.Sprintf("%x", h[:])[:n]
}

// bytesElement is a BytePrimitiveArraySerializer element: length, then the bytes.
func bytesElement(payload []byte) []byte {
	var w writer
	w.i32(int32(len(payload)))
	w.b = append(w.b, payload...)
	return w.b
}

// kafkaSplit is a serialized KafkaPartitionSplit inside SimpleVersionedSerialization, as the
// SourceOperator stores it in SourceReaderState.
func kafkaSplit(topic string, partition int32, offset int64) []byte {
	var in writer
	in.utf(topic)
	in.i32(partition)
	in.i64(offset)
	in.i64(-9223372036854775808) // no stopping offset
	var w writer
	w.i32(0) // split serializer version
	w.i32(int32(len(in.b)))
	w.b = append(w.b, in.b...)
	return bytesElement(w.b)
}

// kryoString is Kryo's ASCII string encoding (last character with the high bit set).
func kryoString(s string) []byte {
	b := []byte(s)
	if len(b) > 0 {
		b[len(b)-1] |= 0x80
	}
	return b
}
