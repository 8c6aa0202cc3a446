package checkpoint

// This file holds the bounded-memory analysis view of a _metadata file (the Layout). It is what the
// rescale simulator and the findings rules consume. ReadLayout builds it from an io.Reader without
// holding the file: offset arrays are folded into counts and run-length-encoded element sizes,
// inline bytes are counted, not kept.

// Layout summarises one _metadata file for analysis.
type Layout struct {
	Version      int   // header version, 0..7
	CheckpointID int64 //
	Size         int64 // bytes read, the whole file
	MasterStates []MasterStateSummary
	Operators    []OperatorLayout // in file order
	// Properties is the decoded CheckpointProperties trailer (version 4+); nil when absent, a Java
	// null, or not decodable (then PropertiesError says why).
	Properties      *CheckpointProperties
	PropertiesError string
	TrailerSize     int // bytes of the format-4+ properties trailer
}

// MasterStateSummary describes one master-hook state.
type MasterStateSummary struct {
	Name        string
	Version     int32
	PayloadSize int
}

// CheckpointProperties is what Preflight decodes from the Java-serialized trailer of format 4+.
type CheckpointProperties struct {
	Forced            bool
	Unclaimed         bool
	DiscardSubsumed   bool
	DiscardFinished   bool
	DiscardCancelled  bool
	DiscardFailed     bool
	DiscardSuspended  bool
	Savepoint         bool   // SavepointType rather than CheckpointType
	Name              string // "Checkpoint", "Full Checkpoint", "Savepoint", "Suspend Savepoint", "Terminate Savepoint"
	SavepointFormat   string // "CANONICAL" or "NATIVE"; empty for checkpoints
	SharingStrategy   string // checkpoints: "FORWARD_BACKWARD", "FORWARD", "NO_SHARING"
	PostCheckpointAct string // savepoints: "NONE", "SUSPEND", "TERMINATE"
}

// OperatorLayout is one operator record (format 2+), or one task record of a format-1 file (then ID
// is the JobVertexID and ChainLength the number of chained operators).
type OperatorLayout struct {
	ID             OperatorID
	Name           string // format 5+; "" when not set
	UID            string // format 5+; "" when not set
	Parallelism    int
	MaxParallelism int
	ChainLength    int // formats 1 and 2 only; 0 otherwise
	// CoordinatorState is the operator coordinator's inline state (format 3+); nil when absent.
	CoordinatorState *CoordinatorStateRef
	FullyFinished    bool
	Subtasks         []SubtaskLayout // in file order; finished subtasks have Finished set and nothing else
	Offset           int64           // byte offset of the record in the file
}

// SubtaskLayout is one subtask's state.
type SubtaskLayout struct {
	Index                int
	Finished             bool
	ManagedOperatorState *OperatorStateHandleLayout // nil when absent
	RawOperatorState     *OperatorStateHandleLayout
	ManagedKeyedState    *KeyedStateHandleLayout // nil when absent
	RawKeyedState        *KeyedStateHandleLayout
	// Channels is the unaligned-checkpoint channel state; nil when there is none. One pointer
	// rather than two slices: a Layout holds a record per subtask, and almost none has channel
	// state (64 bytes a record instead of 112).
	Channels        *ChannelLayouts
	RefCheckpointID int64 // format 7 only; -1 when absent
}

// ChannelLayouts is a subtask's unaligned-checkpoint channel state.
type ChannelLayouts struct {
	Input  []ChannelStateLayout // input channel state
	Output []ChannelStateLayout // result subpartition state
}

// InputChannels is the subtask's input channel state (nil when none).
func (s *SubtaskLayout) InputChannels() []ChannelStateLayout {
	if s.Channels == nil {
		return nil
	}
	return s.Channels.Input
}

// OutputChannels is the subtask's result subpartition state (nil when none).
func (s *SubtaskLayout) OutputChannels() []ChannelStateLayout {
	if s.Channels == nil {
		return nil
	}
	return s.Channels.Output
}

// DistributionMode is OperatorStateHandle.Mode: how a named operator state is redistributed.
type DistributionMode uint8

// The modes, with Flink's ordinals.
const (
	SplitDistribute DistributionMode = 0
	Union           DistributionMode = 1
	Broadcast       DistributionMode = 2
)

// String returns Flink's name of the mode.
func (m DistributionMode) String() string {
	switch m {
	case SplitDistribute:
		return "SPLIT_DISTRIBUTE"
	case Union:
		return "UNION"
	case Broadcast:
		return "BROADCAST"
	}
	return "MODE(" + itoa(int64(m)) + ")"
}

// OperatorStateHandleLayout is an OperatorStreamStateHandle (tag 4) or a file-merging one (tag 17).
type OperatorStateHandleLayout struct {
	States      []StateEntryLayout // in file order (the writer's HashMap order)
	Stream      StreamRef          // the delegate stream the offsets point into
	FileMerging bool               // tag 17
	Empty       bool               // tag 17 placeholder without states
	// Compression is what the managed stream's header says about snapshot compression; only
	// streams inside _metadata can be read (raw operator state has no header: always unknown).
	Compression Compression
}

// Compression says whether a managed operator-state stream was written with snapshot
// compression (execution.checkpointing.snapshot-compression), as the stream's
// OperatorBackendSerializationProxy header records it: version 6 (Flink 1.18+, FLINK-30113)
// writes a flag after the version; versions up to 5 cannot compress operator state.
type Compression uint8

// Compression values.
const (
	CompressionUnknown Compression = iota // the stream is in a file, or its header is not recognised
	CompressionNone
	CompressionSnappy
)

// String names the value.
func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionSnappy:
		return "snappy"
	}
	return "unknown"
}

// StateEntryLayout is one named state of an operator state handle.
type StateEntryLayout struct {
	Name string
	Mode DistributionMode
	// SizesApproximate is set when the sizes are not exact: this state's offsets interleave with
	// another state's in the stream (so an element's end is not the next offset), its offsets do
	// not ascend, the stream is shorter than the last offset, or ReadLayout's budget of one million
	// size runs was spent and the remaining sizes were folded into their average (Bytes and the
	// element count stay exact in that case). (Beside Mode: one entry exists per name and
	// subtask, 64 bytes.)
	SizesApproximate bool
	Elements         int64 // number of offsets: list elements (one for a broadcast state)
	Bytes            int64 // sum of the element sizes
	// Sizes holds the per-element sizes, run-length encoded, for SPLIT_DISTRIBUTE states (the
	// simulator cuts them into contiguous runs). UNION and BROADCAST states are handed out whole,
	// so only Elements and Bytes are kept for them.
	Sizes ElementSizes
}

// StreamKind says where a stream handle's bytes live.
type StreamKind uint8

// Stream kinds, by stream-handle tag.
const (
	StreamNone         StreamKind = iota // tag 0
	StreamInline                         // tag 1 ByteStreamStateHandle: bytes inside _metadata
	StreamFile                           // tag 2 FileStateHandle
	StreamKeyGroups                      // tag 3 KeyGroupsStateHandle nested as a stream
	StreamRelativeFile                   // tag 6 RelativeFileStateHandle
	StreamSegment                        // tag 15 SegmentFileStateHandle (file merging)
	StreamEmptySegment                   // tag 16 EmptySegmentFileStateHandle
)

// String names the kind.
func (k StreamKind) String() string {
	switch k {
	case StreamNone:
		return "none"
	case StreamInline:
		return "inline"
	case StreamFile:
		return "file"
	case StreamKeyGroups:
		return "key-groups"
	case StreamRelativeFile:
		return "relative-file"
	case StreamSegment:
		return "segment"
	case StreamEmptySegment:
		return "empty-segment"
	}
	return "unknown"
}

// StreamRef describes a stream state handle without its bytes.
type StreamRef struct {
	Kind StreamKind
	// Size is the stream size: inline data length, file state size, or segment length.
	Size int64
	// Path is the file path (absolute, or relative to the _metadata directory), the segment's
	// physical file, or, for inline streams, the handle name (a label; nothing is read from it).
	Path         string
	SegmentStart int64 // tag 15
}

// CoordinatorStateRef is an operator coordinator's state: its stream (always inline) and its
// first bytes, which for a source coordinator are its serde version and the split enumerator's
// serializer version (SourceCoordinator.writeCoordinatorSerdeVersion, then the enumerator
// checkpoint serializer's version: both big-endian i32).
type CoordinatorStateRef struct {
	StreamRef
	Head [8]byte // the first min(Size, 8) bytes; see Prefix
}

// Prefix returns the state's first bytes, at most eight.
func (c *CoordinatorStateRef) Prefix() []byte {
	return c.Head[:min(max(c.Size, 0), int64(len(c.Head)))]
}

// Inline reports whether the stream's bytes are stored in _metadata.
func (s StreamRef) Inline() bool { return s.Kind == StreamInline }

// KeyedHandleKind classifies keyed state handles.
type KeyedHandleKind uint8

// Keyed handle kinds.
const (
	KeyGroupsHandle          KeyedHandleKind = iota + 1 // tags 3, 12: heap full snapshot
	SavepointKeyGroupsHandle                            // tag 7: canonical savepoint
	IncrementalHandle                                   // tags 5, 11: RocksDB/ForSt native
	ChangelogHandle                                     // tags 8, 14
	ChangelogBytesHandle                                // tag 9
	ChangelogFileHandle                                 // tags 10, 13
)

// String names the kind.
func (k KeyedHandleKind) String() string {
	switch k {
	case KeyGroupsHandle:
		return "key-groups"
	case SavepointKeyGroupsHandle:
		return "savepoint-key-groups"
	case IncrementalHandle:
		return "incremental"
	case ChangelogHandle:
		return "changelog"
	case ChangelogBytesHandle:
		return "changelog-bytes"
	case ChangelogFileHandle:
		return "changelog-file"
	}
	return "unknown"
}

// KeyGroupRange is Flink's inclusive key-group range; NumKeyGroups == 0 is the empty range.
type KeyGroupRange struct {
	Start        int
	NumKeyGroups int
}

// End returns the last key group (inclusive); Start-1 for the empty range.
func (r KeyGroupRange) End() int { return r.Start + r.NumKeyGroups - 1 }

// KeyedStateHandleLayout describes one keyed state handle.
type KeyedStateHandleLayout struct {
	Kind      KeyedHandleKind
	Tag       uint8
	KeyGroups KeyGroupRange
	// KeyGroupBytes has the bytes per key group of KeyGroupRange (tags 3, 7, 12), derived from the
	// offsets and the delegate's size (offset 0 means no data); empty for other kinds.
	KeyGroupBytes KeyGroupSizes
	// Stream is the delegate (key-group handles) or the meta-data file (incremental handles).
	Stream           StreamRef
	CheckpointedSize int64 // bytes uploaded for this checkpoint (Flink's getCheckpointedSize); -1 when unknown (tag 5)
	StateSize        int64 // all bytes this handle refers to (files and inline)
	InlineBytes      int64 // bytes stored inside _metadata
	SharedFiles      FileSet
	PrivateFiles     FileSet
	BackendID        string
	CheckpointID     int64
	Nested           []KeyedStateHandleLayout // changelog: materialized base, then non-materialized delta
}

// FileSet summarises a list of (local path, stream handle) pairs of an incremental handle.
type FileSet struct {
	Count       int
	Bytes       int64
	InlineBytes int64
}

// ChannelStateLayout is the in-flight data of one input channel or result subpartition (a merged
// V6 handle is expanded into one entry per channel, with Merged set).
type ChannelStateLayout struct {
	SubtaskIndex int   // the old subtask that wrote it
	Info1, Info2 int32 // input: gate, channel; output: partition, subpartition
	Size         int64
	Stream       StreamRef
	Merged       bool
}
