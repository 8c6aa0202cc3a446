package checkpoint

// This file holds the faithful model of a _metadata file: the types Read returns and Write
// consumes, and the format's constants (magic, versions, tags), each named once.

// WrittenBy names the Flink releases whose writer emits each format version ("" for an unknown
// version).
func WrittenBy(version int) string {
	return writtenBy[version]
}

var writtenBy = map[int]string{
	0: "1.1", 1: "1.2", 2: "1.3-1.10", 3: "1.11-1.15", 4: "1.16-1.20", 5: "2.0", 6: "2.1+", 7: "unreleased",
}

// Magic is the header magic number of every headered _metadata file (bytes 49 60 67 2D).
const Magic = 0x4960672D

// masterStateMagic prefixes every master-hook state (bytes C9 6B 16 96).
const masterStateMagic = 0xC96B1696

// Handle tags, with Flink's constant names (MetadataV2V3SerializerBase). Stream, keyed and
// operator handles have separate tag spaces that share these numbers; TagKeyGroupsHandle is used
// in both the stream and the keyed space.
const (
	TagNullHandle                              = 0
	TagByteStreamStateHandle                   = 1  // stream
	TagFileStreamStateHandle                   = 2  // stream
	TagKeyGroupsHandle                         = 3  // stream and keyed (keyed: read only since 1.15)
	TagPartitionableOperatorStateHandle        = 4  // operator
	TagIncrementalKeyGroupsHandle              = 5  // keyed, read only since 1.15
	TagRelativeStreamStateHandle               = 6  // stream
	TagSavepointKeyGroupsHandle                = 7  // keyed
	TagChangelogHandle                         = 8  // keyed, read only since 1.16
	TagChangelogByteIncrementHandle            = 9  // keyed
	TagChangelogFileIncrementHandle            = 10 // keyed, read only since 1.16
	TagIncrementalKeyGroupsHandleV2            = 11 // keyed
	TagKeyGroupsHandleV2                       = 12 // keyed
	TagChangelogFileIncrementHandleV2          = 13 // keyed
	TagChangelogHandleV2                       = 14 // keyed
	TagSegmentFileHandle                       = 15 // stream (file merging)
	TagEmptySegmentFileHandle                  = 16 // stream (file merging)
	TagSegmentPartitionableOperatorStateHandle = 17 // operator (file merging)
)

// Channel state handle tags of format 6+ (ChannelStateHandleSerializerV2).
const (
	TagInputChannelHandle             = 1
	TagResultSubpartitionHandle       = 2
	TagMergedInputChannelHandle       = 3
	TagMergedResultSubpartitionHandle = 4
)

// Metadata is one _metadata file as written, decoded completely. Write(Read(b)) reproduces b
// byte for byte for every file Flink wrote in formats 2 to 7.
type Metadata struct {
	Version      int32
	CheckpointID int64
	MasterStates []MasterState   // format 2+
	Operators    []OperatorState // format 2+, in file order
	Tasks        []TaskState     // format 1 only (Flink 1.2): one record per job vertex
	// Trailer is the Java-serialized CheckpointProperties stream of format 4+, verbatim (all bytes
	// after the last operator). See Properties.
	Trailer []byte
	// Trailing holds bytes written after the body of a format 1-3 file. The readers refuse such
	// bytes (Flink never writes them), so a decoded Metadata has none; the writer emits them.
	Trailing []byte
}

// Properties decodes the format-4+ trailer. It returns nil, nil for a Java null trailer or a file
// without a trailer.
func (m *Metadata) Properties() (*CheckpointProperties, error) {
	if m.Version < 4 || len(m.Trailer) == 0 {
		return nil, nil
	}
	return decodeProperties(m.Trailer)
}

// MasterState is the state of one master hook (format 2+).
type MasterState struct {
	Version int32 // the hook serializer's version
	Name    string
	Payload []byte

	n int64 // payload length when Payload was not kept (ReadLayout)
}

// Size returns the payload length.
func (ms *MasterState) Size() int64 {
	if ms.Payload != nil {
		return int64(len(ms.Payload))
	}
	return ms.n
}

// OperatorState is one operator record (format 2+).
type OperatorState struct {
	Name           string // format 5+; "" = not set
	UID            string // format 5+; "" = not set
	ID             OperatorID
	Parallelism    int32
	MaxParallelism int32
	ChainLength    int32 // format 2 only (Flink 1.3+ writes 1)
	// CoordinatorState is the operator coordinator's state (format 3+); nil when absent.
	CoordinatorState *ByteStreamStateHandle
	// FullyFinished marks an operator all of whose subtasks finished (format 3+, negative subtask
	// count); it then has no subtasks.
	FullyFinished bool
	Subtasks      []SubtaskEntry // in file order

	negCount int32 // the negative subtask count as written; 0 = use -1
	offset   int64 // byte offset of the record
}

// SubtaskEntry is one subtask of an operator: either finished (format 3+, no state) or its state.
type SubtaskEntry struct {
	Index    int32
	Finished bool
	State    *SubtaskState // nil when Finished
}

// SubtaskState is the state of one subtask (OperatorSubtaskState).
type SubtaskState struct {
	Duration int64               // format 2 only; ignored by Flink, writers put -1
	Legacy   []StreamStateHandle // format 2 only: Flink 1.3 legacy "Checkpointed" state

	ManagedOperatorState OperatorStateSlot
	RawOperatorState     OperatorStateSlot
	ManagedKeyedState    KeyedStateHandle // nil = none
	RawKeyedState        KeyedStateHandle

	InputChannels  []ChannelStateHandle // format 3+
	OutputChannels []ChannelStateHandle // format 3+: result subpartitions
	// RefMarker and RefCheckpointID are the format-7 refCheckpointId: marker 1 means present.
	RefMarker       uint8
	RefCheckpointID int64
}

// OperatorStateSlot is one of the two operator-state slots of a subtask: an i32 presence flag
// and, when present, a handle that may still be null.
type OperatorStateSlot struct {
	Present int32 // as written: 0 absent, any other value present (Flink writes 1)
	Handle  *OperatorStateHandle
}

// OperatorStateHandle is an OperatorStreamStateHandle (tag 4) or a file-merging
// FileMergingOperatorStreamStateHandle (tag 17).
type OperatorStateHandle struct {
	Tag          uint8 // 4 or 17
	States       []StateEntry
	TaskOwnedDir string // tag 17
	SharedDir    string // tag 17
	Empty        uint8  // tag 17: the isEmpty boolean byte as written
	Delegate     StreamStateHandle

	// layouts and ends replace States when a Layout is read (see operatorHandle): the Layout's
	// records of the entries, their sizes not yet finished.
	layouts []StateEntryLayout
	ends    []entryEnds
}

// StateEntry is one named operator state: its distribution mode and the offsets of its elements
// in the delegate stream.
type StateEntry struct {
	Name    string
	Mode    DistributionMode
	Offsets []int64

	sum offsetSummary // folded offsets; always filled by the reader
}

// StreamStateHandle is a stream handle: *ByteStreamStateHandle, *FileStateHandle,
// *RelativeFileStateHandle, *KeyGroupsStateHandle (tag 3), *SegmentFileStateHandle or
// *EmptySegmentFileStateHandle. A nil StreamStateHandle is the null tag.
type StreamStateHandle interface{ streamTag() uint8 }

// ByteStreamStateHandle (tag 1) holds its bytes inside _metadata.
type ByteStreamStateHandle struct {
	Name string // a label: coordinator operator ID or the path the file would have had
	Data []byte

	n int64 // data length when Data was not kept (ReadLayout)
	// head keeps the first bytes when Data is not kept: enough for an operator-state stream's
	// header version and compression flag (Layout's OperatorStateHandleLayout.Compression) and
	// for a source coordinator's two version numbers (CoordinatorStateRef.Head). Eight bytes
	// cost nothing: the record's size stays 56 bytes.
	head [8]byte
}

// prefix returns the first bytes of the data, at most eight.
func (h *ByteStreamStateHandle) prefix() []byte {
	if h.Data != nil {
		return h.Data[:min(len(h.Data), len(h.head))]
	}
	return h.head[:min(h.n, int64(len(h.head)))]
}

// Size returns the data length.
func (h *ByteStreamStateHandle) Size() int64 {
	if h.Data != nil {
		return int64(len(h.Data))
	}
	return h.n
}

// FileStateHandle (tag 2) is an absolute file.
type FileStateHandle struct {
	Path      string
	StateSize int64
}

// RelativeFileStateHandle (tag 6) is a file relative to the _metadata directory.
type RelativeFileStateHandle struct {
	RelativePath string
	StateSize    int64
}

// SegmentFileStateHandle (tag 15) is a segment of a merged physical file (file merging).
type SegmentFileStateHandle struct {
	StartPos      int64
	StateSize     int64
	Scope         int32 // CheckpointedStateScope ordinal: 0 EXCLUSIVE, 1 SHARED
	PhysicalPath  string
	LogicalFileID string
}

// EmptySegmentFileStateHandle (tag 16) is the file-merging placeholder without bytes.
type EmptySegmentFileStateHandle struct{}

func (*ByteStreamStateHandle) streamTag() uint8       { return TagByteStreamStateHandle }
func (*FileStateHandle) streamTag() uint8             { return TagFileStreamStateHandle }
func (*RelativeFileStateHandle) streamTag() uint8     { return TagRelativeStreamStateHandle }
func (*KeyGroupsStateHandle) streamTag() uint8        { return TagKeyGroupsHandle }
func (*SegmentFileStateHandle) streamTag() uint8      { return TagSegmentFileHandle }
func (*EmptySegmentFileStateHandle) streamTag() uint8 { return TagEmptySegmentFileHandle }

// KeyedStateHandle is a keyed state handle: *KeyGroupsStateHandle (tags 3, 7, 12),
// *IncrementalKeyedStateHandle (5, 11), *ChangelogStateBackendHandle (8, 14),
// *InMemoryChangelogStateHandle (9) or *ChangelogStateHandleStreamImpl (10, 13). A nil
// KeyedStateHandle is the null tag.
type KeyedStateHandle interface{ keyedTag() uint8 }

// KeyGroupsStateHandle is a full snapshot of a key-group range: one offset per key group into
// the delegate stream. Tag 3 (also when nested as a stream handle), 12 (with a state-handle ID) or
// 7 (KeyGroupsSavepointStateHandle, a canonical savepoint).
type KeyGroupsStateHandle struct {
	Tag           uint8
	StartKeyGroup int32
	NumKeyGroups  int32
	Offsets       []int64 // one per key group, 0 = no data
	Delegate      StreamStateHandle
	StateHandleID string // tag 12

	// keyGroupBytes replaces Offsets when ReadLayout summarizes (see keyGroupBytes).
	keyGroupBytes KeyGroupSizes
}

// IncrementalKeyedStateHandle is an IncrementalRemoteKeyedStateHandle (RocksDB/ForSt native
// snapshot): tag 5 or 11.
type IncrementalKeyedStateHandle struct {
	Tag              uint8
	CheckpointID     int64
	BackendID        string
	StartKeyGroup    int32
	NumKeyGroups     int32
	CheckpointedSize int64 // tag 11
	MetaData         StreamStateHandle
	SharedFiles      []HandleAndLocalPath
	PrivateFiles     []HandleAndLocalPath
	StateHandleID    string // tag 11
}

// HandleAndLocalPath is one file of an incremental snapshot.
type HandleAndLocalPath struct {
	LocalPath string
	Handle    StreamStateHandle
}

// ChangelogStateBackendHandle (tag 8 as read by Flink 1.15+, or 14) combines a materialized
// snapshot and the non-materialized changelog.
type ChangelogStateBackendHandle struct {
	Tag               uint8
	StartKeyGroup     int32
	NumKeyGroups      int32
	CheckpointedSize  int64
	Materialized      []KeyedStateHandle // entries may be nil (null tag)
	NonMaterialized   []KeyedStateHandle
	MaterializationID int64
	CheckpointID      int64 // tag 14
	StateHandleID     string
}

// InMemoryChangelogStateHandle (tag 9) carries state changes inline.
type InMemoryChangelogStateHandle struct {
	StartKeyGroup int32
	NumKeyGroups  int32
	From, To      int64 // sequence numbers [From, To)
	Changes       []StateChange
	StateHandleID string
}

// StateChange is one changelog entry; KeyGroup -1 marks a metadata change.
type StateChange struct {
	KeyGroup int32
	Data     []byte

	n int64 // data length when Data was not kept
}

// Size returns the data length.
func (c *StateChange) Size() int64 {
	if c.Data != nil {
		return int64(len(c.Data))
	}
	return c.n
}

// ChangelogStateHandleStreamImpl (tag 10 or 13) points into changelog files.
type ChangelogStateHandleStreamImpl struct {
	Tag               uint8
	StartKeyGroup     int32
	NumKeyGroups      int32
	Handles           []ChangelogSegment
	StateSize         int64
	CheckpointedSize  int64
	StateHandleID     string
	StorageIdentifier string // tag 13
}

// ChangelogSegment is an offset within a changelog file.
type ChangelogSegment struct {
	Offset int64
	Handle StreamStateHandle
}

func (h *KeyGroupsStateHandle) keyedTag() uint8           { return h.Tag }
func (h *IncrementalKeyedStateHandle) keyedTag() uint8    { return h.Tag }
func (h *ChangelogStateBackendHandle) keyedTag() uint8    { return h.Tag }
func (*InMemoryChangelogStateHandle) keyedTag() uint8     { return TagChangelogByteIncrementHandle }
func (h *ChangelogStateHandleStreamImpl) keyedTag() uint8 { return h.Tag }

// ChannelStateHandle is the in-flight data of unaligned checkpoints: an input channel or result
// subpartition handle, or (format 6+, tags 3 and 4) a merged handle covering several channels
// of one subtask that share a delegate.
type ChannelStateHandle struct {
	// Tag is the format-6+ tag (1 input, 2 output, 3 merged input, 4 merged output); 0 in formats
	// 3 to 5, where channel handles are untagged.
	Tag          uint8
	SubtaskIndex int32
	Info1, Info2 int32   // unmerged: gate/channel or partition/subpartition
	Offsets      []int64 // unmerged: chunk offsets in the delegate
	StateSize    int64
	Delegate     StreamStateHandle
	// Channels are the channels of a merged handle, decoded from its serialized offsets blob.
	Channels []MergedChannel
	// BlobTrailing holds bytes of a merged handle's offsets blob after the channel list (Flink
	// ignores them).
	BlobTrailing []byte

	nOffsets int64 // number of offsets when Offsets was not kept
}

// Merged reports whether h is a merged (format 6+) handle.
func (h *ChannelStateHandle) Merged() bool {
	return h.Tag == TagMergedInputChannelHandle || h.Tag == TagMergedResultSubpartitionHandle
}

// MergedChannel is one channel inside a merged channel state handle.
type MergedChannel struct {
	Info1, Info2 int32
	StateSize    int64
	Offsets      []int64

	nOffsets int64
}

// TaskState is a format-1 (Flink 1.2) task record: a job vertex with its operator chain.
type TaskState struct {
	JobVertexID    OperatorID
	Parallelism    int32
	MaxParallelism int32
	ChainLength    int32
	Subtasks       []TaskSubtaskState

	offset int64
}

// TaskSubtaskState is a format-1 subtask: per chained operator a legacy handle and two
// operator-state handles, and keyed state for the chain head.
type TaskSubtaskState struct {
	Index                int32
	Duration             int64
	Legacy               []StreamStateHandle
	ManagedOperatorState []*OperatorStateHandle
	RawOperatorState     []*OperatorStateHandle
	ManagedKeyedState    KeyedStateHandle
	RawKeyedState        KeyedStateHandle
}
