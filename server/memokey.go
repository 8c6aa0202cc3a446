package server

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"slices"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// The plan's part of a result key. A plan's per-vertex maps (parallelism, max_parallelism, the
// channel mappers) may name an operator by its hex ID (any case), its uid or its name, and these
// are the same question when they name the same operator. So where that is provably the case
// the plan enters the key in a canonical form, with every key replaced by the 16 bytes of the
// operator's ID, and questions written differently share one memoized answer:
//
//   - the plan declares no vertices (chains) and no new-job operators, and has no other field
//     than default_parallelism and the four maps (a field added to RescalePlan later makes every
//     plan raw until it is handled here): then every checkpoint operator is a vertex of its own,
//     and the engine resolves a key to the operators it names as internal/rescale's
//     resolver.checkpointMatches does: a hex ID that the checkpoint holds; otherwise the uid
//     hash, uids and names (format 5+) of the checkpoint's operators. A key naming exactly one
//     operator X then sets exactly X's vertex, as X's hex ID does;
//   - every key of every map names exactly one operator (a hex key is taken as its ID without
//     the layout: if the checkpoint lacks it the engine refuses the plan, and errors are never
//     memoized), and no two keys of one map name the same one. Otherwise the engine may answer
//     with an error (no such operator, ambiguous, contradicting keys) that quotes the keys as
//     written, so the plan enters the key raw: its deterministic protobuf encoding.
//
// ValidateRequest's verdict depends on the values only, which the canonical form keeps, so a
// question whose key equals a memoized one's is valid too. The report itself does not quote plan
// keys (the engine reports vertices by the checkpoint's IDs, names and uids), which
// TestCanonicalPlanSameAnswer checks against the engine. The check runs the plan as written.
// The check options enter the key raw: flink_version is quoted as written in findings' messages,
// so "1.19" and "1.19.0" are different answers.
//
// Resolving a uid or a name reads the layout: the cached one of the file version the key names
// (without it, the plan enters raw, which only costs a miss). It scans the operators (no index
// is kept per layout); layouts with more than maxCanonicalOperators operators keep such plans raw.
// The canonical form also spares the hot path the map sorting of a deterministic encoding.

// maxCanonicalOperators bounds the operators resolveOperatorKey scans per key.
const maxCanonicalOperators = 4096

// The first byte of a plan's part of the key.
const (
	planRaw       = 0
	planCanonical = 1
)

// rescalePlanFields is the number of fields of RescalePlan that canonical plans handle.
const rescalePlanFields = 8

// appendPlanKey appends the plan's part of a result key for layout l (nil when not at hand).
func appendPlanKey(b []byte, l *checkpoint.Layout, plan *pb.RescalePlan) ([]byte, error) {
	if c, ok := appendCanonicalPlan(b, l, plan); ok {
		return c, nil
	}
	b = append(b, planRaw)
	return appendMessage(b, plan)
}

// appendCanonicalPlan appends the canonical form of plan, or reports false (b unchanged in
// content) when the plan has none.
func appendCanonicalPlan(b []byte, l *checkpoint.Layout, plan *pb.RescalePlan) ([]byte, bool) {
	// The deprecated alias `parallelism` is merged into vertex_parallelism only by validation,
	// which runs after the key is computed: such plans are keyed raw.
	if len(plan.GetVertices()) > 0 || len(plan.GetNewJobOperators()) > 0 || len(plan.GetParallelism()) > 0 {
		return b, false
	}
	if plan != nil {
		m := plan.ProtoReflect()
		if m.Descriptor().Fields().Len() != rescalePlanFields || len(m.GetUnknown()) > 0 {
			return b, false
		}
	}
	n := len(b)
	b = append(b, planCanonical)
	b = binary.AppendUvarint(b, uint64(uint32(plan.GetDefaultParallelism())))
	var ok bool
	if b, ok = appendCanonicalMap(b, l, plan.GetVertexParallelism(), func(b []byte, v int32) []byte {
		return binary.AppendUvarint(b, uint64(uint32(v)))
	}); !ok {
		return b[:n], false
	}
	if b, ok = appendCanonicalMap(b, l, plan.GetMaxParallelism(), func(b []byte, v *pb.MaxParallelism) []byte {
		b, err := appendMessage(b, v)
		if err != nil {
			return nil
		}
		return b
	}); !ok {
		return b[:n], false
	}
	mapper := func(b []byte, v pb.SubtaskMapper) []byte { return binary.AppendUvarint(b, uint64(uint32(v))) }
	if b, ok = appendCanonicalMap(b, l, plan.GetInputChannelMappers(), mapper); !ok {
		return b[:n], false
	}
	if b, ok = appendCanonicalMap(b, l, plan.GetOutputChannelMappers(), mapper); !ok {
		return b[:n], false
	}
	return b, true
}

// keyedValue is one entry of a plan map with its key resolved.
type keyedValue[V any] struct {
	id checkpoint.OperatorID
	v  V
}

// appendCanonicalMap appends the count of m's entries and then, in the order of their IDs, each
// entry's operator ID and value. It reports false when a key names no operator or several, two
// keys the same one, or appendValue fails (returns nil).
func appendCanonicalMap[V any](b []byte, l *checkpoint.Layout, m map[string]V, appendValue func([]byte, V) []byte) ([]byte, bool) {
	b = binary.AppendUvarint(b, uint64(len(m)))
	if len(m) == 0 {
		return b, true
	}
	var small [8]keyedValue[V]
	entries := small[:0]
	for k, v := range m {
		id, ok := resolveOperatorKey(l, k)
		if !ok {
			return b, false
		}
		entries = append(entries, keyedValue[V]{id, v})
	}
	slices.SortFunc(entries, func(x, y keyedValue[V]) int { return bytes.Compare(x.id[:], y.id[:]) })
	for i := range entries {
		if i > 0 && entries[i].id == entries[i-1].id {
			return b, false // two keys name one operator: the engine decides, quoting them
		}
		b = append(b, entries[i].id[:]...)
		if b = appendValue(b, entries[i].v); b == nil {
			return nil, false
		}
	}
	return b, true
}

// resolveOperatorKey is the one checkpoint operator a plan key names, as the engine's resolver
// matches keys when the plan declares no operators of its own (see the comment above). A hex key
// is its ID, whatever l holds; other keys need l (rescale.NamedOperator).
func resolveOperatorKey(l *checkpoint.Layout, key string) (checkpoint.OperatorID, bool) {
	if id, ok := hexOperatorID(key); ok {
		return id, true
	}
	if l == nil || len(l.Operators) > maxCanonicalOperators {
		return checkpoint.OperatorID{}, false
	}
	return rescale.NamedOperator(l, key)
}

// hexOperatorID is key as an operator ID when it is 32 hex digits (any case). Unlike
// checkpoint.ParseOperatorID it builds no error for the other keys, which the hot path meets.
func hexOperatorID(key string) (id checkpoint.OperatorID, ok bool) {
	if len(key) != 2*len(id) {
		return id, false
	}
	_, err := hex.Decode(id[:], []byte(key))
	return id, err == nil
}

// needsLayout reports whether a plan has a key that only the layout can resolve (a uid or name).
func needsLayout(plan *pb.RescalePlan) bool {
	return !hexKeys(plan.GetVertexParallelism()) || !hexKeys(plan.GetMaxParallelism()) ||
		!hexKeys(plan.GetInputChannelMappers()) || !hexKeys(plan.GetOutputChannelMappers())
}

func hexKeys[V any](m map[string]V) bool {
	for k := range m {
		if _, ok := hexOperatorID(k); !ok {
			return false
		}
	}
	return true
}
