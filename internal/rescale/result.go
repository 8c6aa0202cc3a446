package rescale

import "github.com/flinkpreflight/preflight/internal/checkpoint"

// Result is the simulated restore: per vertex and operator what every new subtask receives, and
// the precondition failures Flink would raise.
type Result struct {
	// Vertices of the new job: vertices declared in the plan in plan order, then the vertices of
	// the remaining checkpoint operators in file order.
	Vertices []*VertexAssignment
	// Failures are the exceptions Flink would raise, in the order it would reach them. Flink stops
	// at the first one; the rest are what the user meets after fixing it.
	Failures []Failure
	// NonRestored lists the checkpoint operators that map to no operator of the new job.
	NonRestored []NonRestoredOperator
}

// Vertex returns the vertex with the given ID, or nil.
func (r *Result) Vertex(id checkpoint.OperatorID) *VertexAssignment {
	for _, v := range r.Vertices {
		if v.ID == id {
			return v
		}
	}
	return nil
}

// Operator returns the operator with the given (generated) ID, or nil.
func (r *Result) Operator(id checkpoint.OperatorID) *OperatorAssignment {
	for _, v := range r.Vertices {
		for _, o := range v.Operators {
			if o.ID == id {
				return o
			}
		}
	}
	return nil
}

// NonRestoredOperator is a checkpoint operator the new job does not have.
type NonRestoredOperator struct {
	ID        checkpoint.OperatorID
	Name, UID string // format 5+
	// HasState is true when the operator has coordinator state or a subtask with state (Flink's
	// test for refusing a savepoint restore without --allowNonRestoredState).
	HasState bool
	// Dropped is true when Flink skips the state (allowNonRestoredState, or empty state on the
	// savepoint path); false when it fails the restore (see Result.Failures).
	Dropped bool
}

// FailureKind identifies a precondition failure of §2.4 and §3.
type FailureKind uint8

// Failure kinds, in the order Flink checks them.
const (
	// FailureParallelismAboveMaxParallelism is §2.4 row 1 (JobException in ExecutionJobVertex).
	FailureParallelismAboveMaxParallelism FailureKind = iota + 1
	// FailureMaxParallelismMismatch is §2.4 row 2 (Checkpoints.loadAndValidateCheckpoint).
	FailureMaxParallelismMismatch
	// FailureOperatorNotInNewProgram is §2.4 row 3 (Checkpoints.loadAndValidateCheckpoint).
	FailureOperatorNotInNewProgram
	// FailureNoOperatorForState is §2.4 row 4 (StateAssignmentOperation.checkStateMappingCompleteness).
	FailureNoOperatorForState
	// FailureMixedFinishedState is §3.3 (VertexFinishedStateChecker).
	FailureMixedFinishedState
	// FailureChainedChannelState is §3.2: channel state on an operator that is no longer the
	// chain's input or output operator.
	FailureChainedChannelState
	// FailureMaxParallelismBelowParallelism is §2.4 row 5 (checkParallelismPreconditions).
	FailureMaxParallelismBelowParallelism
	// FailureMaxParallelismChanged is §2.4 row 6 (checkParallelismPreconditions).
	FailureMaxParallelismChanged
	// FailureUnsupportedChannelRescale is §3.2: channel state on a pointwise edge whose
	// parallelism changes (mapper UNSUPPORTED).
	FailureUnsupportedChannelRescale
)

// String names the kind.
func (k FailureKind) String() string {
	switch k {
	case FailureParallelismAboveMaxParallelism:
		return "parallelism-above-max-parallelism"
	case FailureMaxParallelismMismatch:
		return "max-parallelism-mismatch"
	case FailureOperatorNotInNewProgram:
		return "operator-not-in-new-program"
	case FailureNoOperatorForState:
		return "no-operator-for-state"
	case FailureMixedFinishedState:
		return "mixed-finished-state"
	case FailureChainedChannelState:
		return "chained-channel-state"
	case FailureMaxParallelismBelowParallelism:
		return "max-parallelism-below-parallelism"
	case FailureMaxParallelismChanged:
		return "max-parallelism-changed"
	case FailureUnsupportedChannelRescale:
		return "unsupported-channel-rescale"
	}
	return "unknown"
}

// Failure is one exception Flink would raise during the restore.
type Failure struct {
	Kind FailureKind
	// Exception is the Java exception's simple class name, e.g. "IllegalStateException".
	Exception string
	// VertexID and OperatorID name where it fires; zero when not applicable.
	VertexID   checkpoint.OperatorID
	OperatorID checkpoint.OperatorID
	// Message is Flink's message text. Where Flink prints an object the simulator cannot know
	// (the metadata object, an ExecutionJobVertex), the package doc says what is printed instead.
	Message string
}

// VertexAssignment is one job vertex of the new job.
type VertexAssignment struct {
	// ID is the JobVertexID: the head operator's generated ID.
	ID checkpoint.OperatorID
	// Name is the chain's operator names joined with " -> " when the checkpoint stores names
	// (format 5+), otherwise the ID hex.
	Name string
	// Operators of the chain, head first.
	Operators []*OperatorAssignment
	// OldParallelism is the stored parallelism of the vertex's first operator found in the
	// checkpoint; 0 when none is.
	OldParallelism int
	NewParallelism int
	// JobParallelismNotApplied is the plan's job-wide parallelism when it did not apply to this
	// vertex because its max parallelism is 1 (NewParallelism is then 1); 0 otherwise.
	JobParallelismNotApplied int
	// MaxParallelism is the effective max parallelism of the restore (after adoption).
	MaxParallelism int
	// NewJobMaxParallelism is the new job's max parallelism before the restore: the configured
	// value, or DefaultMaxParallelism(NewParallelism).
	NewJobMaxParallelism     int
	MaxParallelismConfigured bool
	// MaxParallelismAdopted is true when the vertex took the checkpoint's max parallelism.
	MaxParallelismAdopted bool
	// FullyFinished: every subtask is deployed as finished (FINISHED_ON_RESTORE).
	FullyFinished bool
	// Repartitioned is true when Flink runs the state assignment for the vertex: some operator of
	// it has collected subtask states (or it is fully finished). Otherwise its tasks get no
	// restore object.
	Repartitioned bool

	skip bool // outside Plan.OnlyVertices
}

// Rescaled reports whether the parallelism changes.
func (v *VertexAssignment) Rescaled() bool {
	return v.OldParallelism != 0 && v.OldParallelism != v.NewParallelism
}

// KeyGroupRange returns the key groups of new subtask i at the effective max parallelism.
func (v *VertexAssignment) KeyGroupRange(i int) checkpoint.KeyGroupRange {
	return KeyGroupRangeForSubtask(v.MaxParallelism, v.NewParallelism, i)
}

// OperatorPath says which of Flink's repartitioning paths applied to an operator's operator
// state (§1.2).
type OperatorPath uint8

const (
	// PathNotRestored: the vertex is not repartitioned (no collected state) or the operator is
	// not in the checkpoint; nothing is restored.
	PathNotRestored OperatorPath = iota
	// PathFinished: the operator is fully finished; every subtask is deployed as finished.
	PathFinished
	// PathUnchanged: same parallelism, no UNION and no partially reported BROADCAST names:
	// new subtask i gets exactly old subtask i's handles.
	PathUnchanged
	// PathUnchangedWithUnion: same parallelism with UNION or partially reported BROADCAST names
	// (§1.3).
	PathUnchangedWithUnion
	// PathRescale: the parallelism changes (§1.4).
	PathRescale
	// PathNotSimulated: the vertex is outside Plan.OnlyVertices; nothing was computed for it.
	PathNotSimulated
)

// String names the path.
func (p OperatorPath) String() string {
	switch p {
	case PathNotRestored:
		return "not-restored"
	case PathFinished:
		return "finished"
	case PathUnchanged:
		return "unchanged"
	case PathUnchangedWithUnion:
		return "unchanged-with-union"
	case PathRescale:
		return "rescale"
	case PathNotSimulated:
		return "not-simulated"
	}
	return "unknown"
}

// OperatorAssignment is what one operator's new subtasks receive.
type OperatorAssignment struct {
	// ID is the operator's generated ID in the new job.
	ID checkpoint.OperatorID
	// StateID is the ID the state is stored under in the checkpoint: ID, or the user-defined ID
	// (setUidHash) when the state was found under it.
	StateID   checkpoint.OperatorID
	Name, UID string // from the checkpoint (format 5+)
	// UIDByHash is the plan key that named the operator through the hash of a uid the
	// checkpoint does not store (format 1-4); "" otherwise.
	UIDByHash string
	VertexID  checkpoint.OperatorID
	// Layout is the operator's checkpoint record; nil for an operator new to the job.
	Layout *checkpoint.OperatorLayout

	OldParallelism int // stored parallelism; 0 for a new operator
	NewParallelism int
	// MaxParallelism is the vertex's effective max parallelism; CheckpointMaxParallelism the
	// stored one (0 for a new operator).
	MaxParallelism           int
	CheckpointMaxParallelism int
	FullyFinished            bool
	Path                     OperatorPath
	// taskRestored: the vertex is repartitioned and not finished, so its tasks get a restore
	// object even where this operator restores nothing. (Beside the other small fields: this
	// struct exists once per operator.)
	taskRestored bool
	stateIdx     int32 // index of Layout in checkpoint.Layout.Operators

	// CoordinatorBytes is the operator coordinator's state, restored whole (§3.1).
	CoordinatorBytes int64

	// ManagedKeyed and RawKeyed are nil when the operator has no such keyed state.
	ManagedKeyed, RawKeyed *KeyedDistribution
	// InputChannels and OutputChannels are nil when the operator has no such channel state.
	InputChannels, OutputChannels *ChannelDistribution

	Summary OperatorSummary

	sim *operatorSim // per-subtask computation; nil when nothing is restored
}

// NumStates is the number of the operator's named operator states (see State).
func (a *OperatorAssignment) NumStates() int {
	if a.sim == nil {
		return 0
	}
	return len(a.sim.states)
}

// State returns the operator's k-th named operator state (0 <= k < NumStates): managed first,
// then raw; within each, SPLIT_DISTRIBUTE names in Flink's iteration order, then UNION, then
// BROADCAST names in Flink's iteration order. Each call builds the distribution afresh (its
// summary included) from a record of a few dozen bytes, so that an operator of many names does
// not hold a StateDistribution for each: callers keep only those they need.
func (a *OperatorAssignment) State(k int) *StateDistribution {
	s := new(StateDistribution)
	a.sim.stateInto(k, s)
	return s
}

// StateInto is State building into s, for a caller that reads the states one at a time: an
// operator of 300,000 states is as many allocations otherwise, which the collector must keep up
// with while the rest of the check is live.
func (a *OperatorAssignment) StateInto(k int, s *StateDistribution) { a.sim.stateInto(k, s) }

// States returns every named operator state, as State does one: for operators of few names.
func (a *OperatorAssignment) States() []*StateDistribution {
	out := make([]*StateDistribution, a.NumStates())
	for k := range out {
		out[k] = a.State(k)
	}
	return out
}

// StateName returns the name of the k-th state without building its distribution.
func (a *OperatorAssignment) StateName(k int) string { return a.sim.name(&a.sim.states[k]) }

// LayoutIndex returns the index of the operator's record in checkpoint.Layout.Operators, or -1
// for an operator new to the job: a dense key for per-operator tables of callers.
func (a *OperatorAssignment) LayoutIndex() int {
	if a.Layout == nil {
		return -1
	}
	return int(a.stateIdx)
}

// OperatorSummary aggregates an operator's assignment over its new subtasks, so that rules and
// reports need not iterate subtasks.
type OperatorSummary struct {
	// Operator state (all names, modes, managed and raw) per new subtask.
	MinElements, MaxElements int64
	MinStateBytes            int64
	MaxStateBytes            int64
	// EmptySubtasks receive no operator-state element.
	EmptySubtasks int
	// Deployment payload (the restore part of the TaskDeploymentDescriptor; see
	// SubtaskAssignment.PayloadBytes): the largest, the subtask that has it (lowest index on
	// ties), the sum over subtasks, and the most inline bytes one subtask carries.
	MaxPayloadBytes   int64
	MaxPayloadSubtask int
	TotalPayloadBytes int64
	MaxInlineBytes    int64
	// MaxOffsets is the most operator-state offsets (one per element) one subtask receives.
	MaxOffsets int64
	// TotalStateBytes is the operator-state bytes of all new subtasks together (UNION state
	// counted once per subtask); KeyedTotalOwnedBytes the keyed bytes they own together.
	TotalStateBytes      int64
	KeyedTotalOwnedBytes int64
	// Keyed state (managed and raw together).
	KeyedBytes          int64
	KeyedMaxReadBytes   int64
	KeyedMaxOwnedBytes  int64
	KeyedMeanOwnedBytes float64
	// KeyedSkew is max owned / mean owned (0 without keyed state).
	KeyedSkew float64
	// ChannelBytes is all channel state (input and output) in the checkpoint;
	// MaxChannelBytes the most one new subtask receives (-1 when a mapper is unknown).
	ChannelBytes    int64
	MaxChannelBytes int64
}

// StateDistribution is how one named operator state (managed or raw) is spread over the new
// subtasks. Per-subtask detail comes from Share. OperatorAssignment.State builds one from what
// the simulation keeps of the state (stateRec), with its Summary.
type StateDistribution struct {
	Name string
	// Elements in the checkpoint (all old subtasks); Bytes beside it.
	Elements int64
	stateRec
	NewParallelism int32
	Summary        StateSummary

	op *operatorSim
}

// stateRec is what the simulation keeps of one named state: a StateDistribution without what
// State derives again (the summary, the operator's fields), a few dozen bytes, as an operator can
// have hundreds of thousands of names (bench/README.md, "Many state names, round 4").
type stateRec struct {
	// Bytes in the checkpoint (all old subtasks).
	Bytes int64
	// minBytes and maxBytes are Summary.MinBytes and MaxBytes of SPLIT_DISTRIBUTE on
	// PathRescale, which only the operator pass over the subtasks computes.
	minBytes, maxBytes int64
	// nameJ and nameK are where the name is in the Layout: the k-th state of old subtask j's
	// handle of the list (its first), a string header less per name (see operatorSim.name).
	nameJ, nameK int32
	// start is where the SPLIT_DISTRIBUTE cursor starts on PathRescale.
	start int32
	// OldEntries is the number of old handles that list the name (including empty entries).
	OldEntries int32
	// first is where the name's old entries (OldEntries of them, in Flink's traversal order)
	// start in the operator's entries of the list: one slab, not a slice header per name.
	first int32
	Mode  checkpoint.DistributionMode
	Raw   bool
	// path is the list's repartitioning path: PathUnchanged, PathUnchangedWithUnion or
	// PathRescale; partial marks a BROADCAST name "partially reported" (§1.3) on
	// PathUnchangedWithUnion.
	path    OperatorPath
	partial bool
}

// stateOverlay is what a simulation that shares another's records (operatorSim.adoptStates)
// keeps of its own: what of each record depends on the new parallelism.
type stateOverlay struct {
	paths [2]OperatorPath // of the managed and the raw list
	at    []stateAt       // as sim.states
}

// stateAt is stateRec's part that depends on the new parallelism, less what the list gives
// (path) or the entries do (partial).
type stateAt struct {
	minBytes, maxBytes int64
	start              int32
}

// rec returns the k-th state's record as this simulation sees it: sim.states[k] itself, or,
// where the records are shared (sim.over), a copy in tmp with this simulation's parts.
func (sim *operatorSim) rec(k int, tmp *stateRec) *stateRec {
	r := &sim.states[k]
	if sim.over == nil {
		return r
	}
	*tmp = *r
	at := &sim.over.at[k]
	tmp.path = sim.over.paths[listOf(r.Raw)]
	tmp.start, tmp.minBytes, tmp.maxBytes = at.start, at.minBytes, at.maxBytes
	tmp.partial = r.Mode == checkpoint.Broadcast && tmp.path == PathUnchangedWithUnion &&
		broadcastPartiallyReported(sim.entriesOf(r), sim.oldP)
	return tmp
}

// keepBytes keeps the operator pass's bytes of the k-th state, r from rec, where the records
// are shared (rec's copy would lose them).
func (sim *operatorSim) keepBytes(k int, r *stateRec) {
	if sim.over != nil {
		at := &sim.over.at[k]
		at.minBytes, at.maxBytes = r.minBytes, r.maxBytes
	}
}

// listOf is the index of a record's list: 0 managed, 1 raw.
func listOf(raw bool) int {
	if raw {
		return 1
	}
	return 0
}

// entriesOf returns r's old entries.
func (sim *operatorSim) entriesOf(r *stateRec) []oldEntry {
	list := sim.entries[0]
	if r.Raw {
		list = sim.entries[1]
	}
	return list[r.first : r.first+r.OldEntries : r.first+r.OldEntries]
}

// dist returns the working view of the distribution (see stateDist).
func (s *StateDistribution) dist() stateDist {
	if s.op == nil {
		return stateDist{mode: s.Mode, path: s.path, partial: s.partial, newP: int(s.NewParallelism)}
	}
	return s.op.dist(&s.stateRec)
}

// dist returns the working view of r's distribution: what it derives from the mode and the
// operator is not kept per name. Its nameOverhead is left zero (see namedDist).
func (sim *operatorSim) dist(r *stateRec) stateDist {
	d := stateDist{op: sim, mode: r.Mode, path: r.path, partial: r.partial, newP: sim.newP, entries: sim.entriesOf(r),
		start: int64(r.start), sizes: sim.sizes}
	if r.Raw {
		d.streamBase = int32(sim.oldP)
	}
	if r.Mode == checkpoint.SplitDistribute && r.path == PathRescale && sim.newP > 0 {
		n := int64(sim.newP)
		elements := sim.elements(r)
		d.base, d.rem = elements/n, elements%n
	}
	return d
}

// namedDist is dist with nameOverhead, for the callers that estimate payload: the name is read
// from the Layout, a few pointers away, which the others need not follow.
func (sim *operatorSim) namedDist(r *stateRec) stateDist {
	d := sim.dist(r)
	d.nameOverhead = sim.nameOverhead(r)
	return d
}

// stateInto builds the distribution of the operator's k-th state from its record into s.
func (sim *operatorSim) stateInto(k int, s *StateDistribution) {
	var tmp stateRec
	r := sim.rec(k, &tmp)
	*s = StateDistribution{Name: sim.name(r), Elements: sim.elements(r), stateRec: *r, NewParallelism: int32(sim.newP), op: sim}
	d := sim.dist(r)
	s.Summary = d.analyticSummary(r, s.Elements)
	if r.Mode == checkpoint.SplitDistribute && r.path == PathRescale {
		s.Summary.MinBytes, s.Summary.MaxBytes = r.minBytes, r.maxBytes
	}
}

// nameOverhead is the payload estimate of one entry of the name: PayloadEntryOverhead plus the
// name's bytes.
func (sim *operatorSim) nameOverhead(r *stateRec) int64 {
	return PayloadEntryOverhead + int64(len(sim.name(r)))
}

// name is r's name, from the Layout.
func (sim *operatorSim) name(r *stateRec) string {
	return sim.handle(int(r.nameJ), r.Raw).States[r.nameK].Name
}

// elements is the number of r's elements in the checkpoint (all old subtasks): where its last
// entry ends, once setUpDistribution has placed them.
func (sim *operatorSim) elements(r *stateRec) int64 {
	if r.OldEntries == 0 {
		return 0
	}
	last := &sim.entriesOf(r)[r.OldEntries-1]
	return last.pre + last.n
}

// StateSummary aggregates one named state over the new subtasks.
type StateSummary struct {
	MinElements, MaxElements int64
	MinBytes, MaxBytes       int64
	// EmptySubtasks receive no element of the name (an empty entry counts as none).
	EmptySubtasks int32
	// AbsentSubtasks have no entry for the name at all, not even an empty one; after restore the
	// name exists in their backend only if another restored stream's meta info lists it.
	AbsentSubtasks int32
	// TotalElements is the sum over new subtasks (UNION: NewParallelism × Elements).
	TotalElements int64
}

// Share is what one new subtask receives of one named state.
type Share struct {
	// Present is true when the subtask has at least one entry for the name (possibly empty).
	Present         bool
	Elements, Bytes int64
	// Slices are the entries, in Flink's order for the name: one per old handle read.
	Slices []Slice
}

// Slice is one (stream, offsets) entry a new subtask receives.
type Slice struct {
	OldSubtask int // the old subtask that wrote the stream
	// First is the index of the first element within the old entry; Elements how many follow.
	// Elements == 0 is an empty entry (§1.4): no element, but the stream is read.
	First, Elements int64
	Bytes           int64
	Stream          checkpoint.StreamRef
}

// OldSubtasks returns the distinct old subtasks of the share's slices, in slice order.
func (s Share) OldSubtasks() []int {
	var out []int
	for _, sl := range s.Slices {
		if len(out) == 0 || out[len(out)-1] != sl.OldSubtask {
			out = append(out, sl.OldSubtask)
		}
	}
	return out
}

// KeyedDistribution is how managed or raw keyed state is spread over the new subtasks.
type KeyedDistribution struct {
	Raw            bool
	MaxParallelism int // effective
	OldParallelism int
	NewParallelism int
	// Kinds present, in order of first appearance.
	Kinds []checkpoint.KeyedHandleKind
	// Bytes is the state size over all old handles; InlineBytes the part inside _metadata.
	Bytes, InlineBytes int64
	Summary            KeyedSummary

	d keyedDist
}

// KeyedSummary aggregates keyed state over the new subtasks.
type KeyedSummary struct {
	MaxReadBytes   int64
	MaxReadSubtask int
	MaxOwnedBytes  int64
	MeanOwnedBytes float64
	// Skew is max owned / mean owned; 0 when nothing is owned.
	Skew float64
	// MaxOldSubtasksRead is the most old handles one new subtask reads.
	MaxOldSubtasksRead int
}

// KeyedShare is what one new subtask receives of keyed state.
type KeyedShare struct {
	KeyGroups checkpoint.KeyGroupRange
	// ReadBytes is what the subtask reads: narrowed key-group handles count only their
	// intersection, incremental and changelog handles count whole. OwnedBytes is the part in the
	// subtask's own key groups (estimated proportionally for handles without per-key-group sizes).
	ReadBytes, OwnedBytes int64
	// InlineBytes of the handles (travel in the deployment).
	InlineBytes int64
	Handles     []KeyedSlice
}

// KeyedSlice is one old keyed handle a new subtask receives.
type KeyedSlice struct {
	OldSubtask int
	Kind       checkpoint.KeyedHandleKind
	// KeyGroups is the intersection with the subtask's range (the handle's own range when the
	// parallelism is unchanged).
	KeyGroups checkpoint.KeyGroupRange
	// Whole is true when the handle is passed unchanged (incremental, changelog, or unchanged
	// parallelism).
	Whole                 bool
	ReadBytes, OwnedBytes int64
	InlineBytes           int64
}

// ChannelStatus says whether channel state could be simulated.
type ChannelStatus uint8

const (
	// ChannelUnchanged: same parallelism, subtask i gets old subtask i's channel state.
	ChannelUnchanged ChannelStatus = iota + 1
	// ChannelMapped: redistributed with the plan's mapper.
	ChannelMapped
	// ChannelUnknownMapper: the parallelism changes and the plan gives no mapper for the vertex.
	ChannelUnknownMapper
	// ChannelUnsupported: mapper UNSUPPORTED (pointwise edge); Flink refuses the rescale.
	ChannelUnsupported
)

// String names the status.
func (s ChannelStatus) String() string {
	switch s {
	case ChannelUnchanged:
		return "unchanged"
	case ChannelMapped:
		return "mapped"
	case ChannelUnknownMapper:
		return "unknown-partitioner"
	case ChannelUnsupported:
		return "unsupported"
	}
	return "unknown"
}

// ChannelDistribution is how input-channel or result-subpartition state (unaligned checkpoints)
// is spread over the new subtasks.
type ChannelDistribution struct {
	Input  bool // input channels; false: result subpartitions
	Mapper SubtaskMapper
	Status ChannelStatus
	// Bytes and Handles in the checkpoint.
	Bytes   int64
	Handles int
	// Mapping is new subtask → old subtasks (nil unless Status is ChannelMapped or ChannelUnchanged).
	Mapping [][]int

	perOld []channelOld
}

// ChannelShare is what one new subtask receives of channel state.
type ChannelShare struct {
	// Known is false when the distribution cannot be simulated (unknown or unsupported mapper).
	Known       bool
	OldSubtasks []int
	Bytes       int64
	InlineBytes int64
	Handles     int
}

// SubtaskAssignment is everything one new subtask of an operator receives. It is computed on
// demand by OperatorAssignment.Subtask.
type SubtaskAssignment struct {
	Index int
	// Finished: deployed as finished (fully finished vertex).
	Finished bool
	// Restored: the subtask gets a restore object (every subtask of a repartitioned vertex in
	// Flink 1.17+, see the package doc).
	Restored bool
	// States[k] is the share of the operator's state k (OperatorAssignment.State(k),
	// k < NumStates).
	States []Share
	// Operator state totals over all names.
	Elements, StateBytes int64
	// Offsets is the number of offsets (longs) in the subtask's operator state handles.
	Offsets int64
	// Handles is the number of operator state handles (distinct old streams).
	Handles int
	// InlineBytes travel inside the deployment: distinct inline operator-state streams, inline
	// keyed-state bytes and inline channel-state streams referenced by the subtask's handles.
	InlineBytes int64
	// FileReferences counts the file (non-inline) streams the subtask's handles reference:
	// operator-state streams, keyed handles' streams and the files of incremental handles, channel
	// state streams. The task reads them from checkpoint storage on restore.
	FileReferences int
	// Keyed state (managed and raw).
	KeyGroups        checkpoint.KeyGroupRange
	ManagedKeyed     KeyedShare
	RawKeyed         KeyedShare
	KeyedReadBytes   int64
	KeyedOwnedBytes  int64
	InputChannels    ChannelShare
	OutputChannels   ChannelShare
	CoordinatorBytes int64 // not part of the payload: coordinators are reset on the JobManager
	// FromOldSubtasks are the old subtasks whose state this subtask reads (any kind), ascending.
	FromOldSubtasks []int
	// PayloadBytes estimates the restore part of the TaskDeploymentDescriptor (see package doc).
	PayloadBytes int64
	// BytesBefore is the state (operator + keyed + channel) old subtask Index held; -1 if the
	// index is new.
	BytesBefore int64
}
