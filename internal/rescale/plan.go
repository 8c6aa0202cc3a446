package rescale

import "fmt"

// Plan describes the job that restores the checkpoint: its parallelism, chains, max parallelism
// and operators. Keys of the maps (and entries of Vertices and NewJobOperators) name operators the
// way RescalePlan does: a JobVertexID or OperatorID in hex (as Flink prints it), an operator uid
// (hashed the way Flink hashes it, murmur3_128), or, for format version 5 and later, an operator
// name or uid stored in the checkpoint. A key that names any operator of a vertex applies to the
// whole vertex.
type Plan struct {
	// DefaultParallelism applies to every vertex not named in Parallelism. 0 keeps each
	// operator's stored parallelism.
	DefaultParallelism int
	// Parallelism per vertex.
	Parallelism map[string]int
	// Vertices are the operator chains of the new job (vertex ID = the head operator's ID).
	// Checkpoint operators not listed form a vertex of their own. Operators listed here that are
	// not in the checkpoint are new operators: they restore nothing.
	Vertices []VertexSpec
	// MaxParallelism is the new job's max parallelism per vertex. A vertex not listed has an
	// auto-derived max parallelism (DefaultMaxParallelism), which Flink replaces with the
	// checkpoint's value.
	MaxParallelism map[string]MaxParallelism
	// NewJobOperators are the operators of the new job (ID hex or uid). nil means unknown: every
	// checkpoint operator is assumed to exist in the new job. Operators named in Vertices count as
	// new-job operators too.
	NewJobOperators []string
	// UserDefinedOperatorIDs maps a new-job operator (key) to the user-defined operator ID hex it
	// was given with setUidHash. Flink restores state stored under that ID into the operator (§3.5).
	UserDefinedOperatorIDs map[string]string
	// AllowNonRestoredState is --allowNonRestoredState (savepoint / explicit path only).
	AllowNonRestoredState bool
	// Restore selects the restore path; the zero value is a savepoint / explicit checkpoint path.
	Restore RestorePath
	// CheckpointPointer is the external pointer (path) of the checkpoint, used only in Flink's
	// failure messages. Empty renders as "<checkpoint>".
	CheckpointPointer string
	// InputChannelMappers is, per vertex, the SubtaskStateMapper of the vertex's input (the
	// downstream side of its input edge): how input-channel state of unaligned checkpoints is
	// redistributed.
	InputChannelMappers map[string]SubtaskMapper
	// OutputChannelMappers is, per vertex, the mapper that redistributes result-subpartition
	// state (the upstream side of its output edge, as declared by the downstream input).
	OutputChannelMappers map[string]SubtaskMapper
	// OnlyVertices, when set, limits the per-operator work (distributions and summaries) to the
	// vertices these keys name; the other vertices are resolved and checked as usual (their
	// parallelism, max parallelism and Failures are exact) but their operators get
	// PathNotSimulated and no distributions. For searches that re-simulate one vertex at many
	// parallelisms.
	OnlyVertices []string
	// HandleMaps is how the restoring Flink sizes the name map of each operator state handle it
	// reads; it decides the order of SPLIT_DISTRIBUTE names in rare layouts (see nameGrouping).
	// The zero value is Flink 1.18 and later.
	HandleMaps HandleMapSizing
}

// VertexSpec is one job vertex of the new job: a chain of operators deployed together.
type VertexSpec struct {
	// ID is the vertex key (JobVertexID hex = head operator's ID, uid or name). Empty means the
	// first entry of Operators.
	ID string
	// Operators of the chain, head first (ID hex, uid or name).
	Operators []string
}

// MaxParallelism is the new job's max parallelism for a vertex.
type MaxParallelism struct {
	Value int
	// Configured is true when set by the user (setMaxParallelism, pipeline.max-parallelism); a
	// configured value is never replaced by the checkpoint's.
	Configured bool
}

// RestorePath is how the job restores, which decides which of Flink's checks run (§0.3, §3.4).
type RestorePath uint8

const (
	// RestoreSavepoint is a restore from a savepoint or an explicit checkpoint path
	// (execution.state-recovery.path, CLI -s): Checkpoints.loadAndValidateCheckpoint runs and
	// AllowNonRestoredState is honoured.
	RestoreSavepoint RestorePath = iota
	// RestoreLatestCheckpoint is a JobManager failover or a redeploy that keeps the HA metadata:
	// the latest checkpoint is restored with allowNonRestoredState = false and without the
	// savepoint checks.
	RestoreLatestCheckpoint
)

// String names the path.
func (p RestorePath) String() string {
	switch p {
	case RestoreSavepoint:
		return "savepoint"
	case RestoreLatestCheckpoint:
		return "latest-checkpoint"
	}
	return fmt.Sprintf("RestorePath(%d)", uint8(p))
}

// SubtaskMapper is Flink's SubtaskStateMapper: it maps new subtasks to the old subtasks whose
// channel state they receive. The ordinals match the API's SubtaskMapper enum.
type SubtaskMapper uint8

const (
	// MapperUnspecified means the plan does not say; channel state then cannot be simulated.
	MapperUnspecified SubtaskMapper = iota
	// MapperFirst: new subtask 0 gets every old subtask's state.
	MapperFirst
	// MapperFull: every new subtask gets every old subtask's state.
	MapperFull
	// MapperRange: key-group ranges at max parallelism 32768 (keyBy edges).
	MapperRange
	// MapperRoundRobin: new i gets old i, i+newP, ... (rebalance, shuffle).
	MapperRoundRobin
	// MapperArbitrary behaves as MapperRoundRobin.
	MapperArbitrary
	// MapperUnsupported: pointwise edges (forward, rescale); rescaling is refused.
	MapperUnsupported
)

// String returns Flink's name of the mapper.
func (m SubtaskMapper) String() string {
	switch m {
	case MapperUnspecified:
		return "UNSPECIFIED"
	case MapperFirst:
		return "FIRST"
	case MapperFull:
		return "FULL"
	case MapperRange:
		return "RANGE"
	case MapperRoundRobin:
		return "ROUND_ROBIN"
	case MapperArbitrary:
		return "ARBITRARY"
	case MapperUnsupported:
		return "UNSUPPORTED"
	}
	return fmt.Sprintf("SubtaskMapper(%d)", uint8(m))
}

// PlanError reports a plan that cannot be applied to the checkpoint: a key that names no
// operator, a parallelism out of bounds, contradictory chains or values.
type PlanError struct {
	Field string // the plan field, e.g. "vertex_parallelism", "vertices[2].operators[0]"
	Key   string // the offending key or value, if any
	Msg   string
}

func (e *PlanError) Error() string {
	s := "invalid rescale plan: " + e.Field
	if e.Key != "" {
		s += fmt.Sprintf(" %q", e.Key)
	}
	return s + ": " + e.Msg
}
