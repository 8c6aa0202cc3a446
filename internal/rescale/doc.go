// Package rescale simulates how Flink redistributes a checkpoint's state when a job restores it,
// possibly at a new parallelism: operator list state (SPLIT_DISTRIBUTE, UNION, BROADCAST), keyed
// state by key-group ranges, max-parallelism adoption, channel state of unaligned checkpoints,
// coordinator state, finished and missing operators, and the precondition failures Flink raises,
// with Flink's exact messages. It owns Flink's assignment algorithms and nothing else: pure
// functions over a checkpoint.Layout and a Plan, no I/O, no findings, no reporting. Section
// numbers (§) refer to ../shared/spec/flink-rescaling-semantics.md.
//
// # Using it
//
// Simulate(layout, plan) returns a *Result or a *PlanError (a plan key that names no operator, a
// parallelism outside 1..32768, contradictory chains or values). Flink's own refusals are not
// errors: Result.Failures lists them in the order Flink reaches them (it stops at the first),
// each with a FailureKind, the vertex and operator, the Java exception class and Flink's message.
// Result.NonRestored lists checkpoint operators the new job does not have (dropped or fatal).
//
// Per vertex (VertexAssignment): old and new parallelism, the max parallelism Flink ends up with
// (configured, derived by DefaultMaxParallelism, or adopted from the checkpoint), finished and
// repartitioned flags. Per operator (OperatorAssignment): the repartitioning path (§1.2), one
// StateDistribution per named operator state (managed, then raw), KeyedDistribution for managed
// and raw keyed state, ChannelDistribution for input and output channel state, coordinator bytes,
// and an eager OperatorSummary. Per new subtask, ask: StateDistribution.Share(i) (elements,
// bytes, and the slices of old entries, empty entries included) or ShareCounts(i) (the same
// totals without slices, no allocation), KeyedDistribution.Share(i),
// ChannelDistribution.Share(i), or OperatorAssignment.Subtask(i) for everything at once (totals,
// inline bytes, deployment payload, old subtasks read). A loop over every new subtask should use
// OperatorAssignment.SubtaskTotals(i) (the same totals, nothing listed) and, for a report row,
// OldSubtasksRead32(i): Share and Subtask list one slice per old entry, which for a UNION state is
// every old subtask's entry, so calling them for every new subtask costs old × new. Rules and
// reports should read the summaries and these accessors rather than recompute Flink's logic. A search that re-simulates
// one vertex at many parallelisms can set Plan.OnlyVertices: every check still runs, but only
// the named vertices get distributions.
//
// The exact helpers are exported for other packages: KeyGroupRangeForSubtask,
// OperatorIndexForKeyGroup, DefaultMaxParallelism, IntersectKeyGroups, NewKeyGroupRange,
// MurmurHash and KeyGroupForKeyHash (key → key group), MapSubtasks (SubtaskStateMapper),
// SplitCounts and SplitCountsByName (the SPLIT_DISTRIBUTE cursor on plain counts),
// JavaStringHashCode and HashMapOrder (iteration order of a Java HashMap<String,?> filled with
// put), and
// AutoscalerParallelism (the Kubernetes operator autoscaler's choice of parallelism, §6.1,
// release-1.15.0).
//
// # Which Flink
//
// The simulator follows recent Flink (1.17 to 2.x): StateAssignmentOperation after FLINK-31963,
// RoundRobinOperatorStateRepartitioner with the partly-finished BROADCAST rule, the 1.15+
// savepoint check that also refuses unmapped coordinator state. Points that differ by version:
//
//   - Partially reported BROADCAST names at unchanged parallelism (§1.3): newer versions redo
//     "entry i mod n" for them, and because Flink sizes its BitSet in multiples of 64 every
//     BROADCAST name counts as partial unless the parallelism is a multiple of 64. 1.12-era
//     versions keep the old assignment.
//   - Every subtask of a repartitioned vertex gets a restore object (SubtaskAssignment.Restored),
//     so isRestored() is true even with no state; 1.12-era Flink skipped stateless subtasks.
//   - User-defined operator IDs (setUidHash): the state under the user-defined ID is used when
//     the checkpoint has it, else the generated ID's (1.12-era: the user-defined ID whenever set).
//   - The order of SPLIT_DISTRIBUTE names (§1.4) is Java HashMap iteration order, modelled
//     exactly in javahash.go: each handle's name map as Flink reads it from _metadata (sized
//     new HashMap<>(n) before 1.18, newHashMapWithExpectedSize(n) since FLINK-32410, Plan.HandleMaps),
//     then groupByStateMode's computeIfAbsent into a default HashMap, which links a new name at
//     the head of its bucket. Checked against the JDK on 10,250 name sets (tools/javahash).
//   - Channel state: the 1.13-1.18 model (SubtaskStateMapper per vertex side). Newer versions do
//     not persist in-flight data on pointwise or broadcast edges and may move output buffers
//     downstream; the plan's mappers decide what is simulated.
//
// # What is simulated exactly, and what is estimated
//
// Exact: which old entry (stream, offsets) every new subtask receives for every named operator
// state, including Flink's cursor with the remainder rotating across SPLIT_DISTRIBUTE names in
// Java HashMap order, empty entries attached to the subtask that reaches them, names absent from
// subtasks that get no element, UNION fan-out, BROADCAST i mod n, and handles without names kept
// by their subtask at unchanged parallelism; key-group ranges and which old
// keyed handles each new subtask reads (narrowed key-group handles, whole incremental ones);
// max-parallelism adoption; the failure messages of §2.4 rows 1-6 and §3.
//
// Estimated, and documented where it is computed:
//   - Element bytes come from the Layout's run-length-encoded element sizes; when a state has
//     none, bytes are shared proportionally.
//   - Owned keyed bytes of handles without per-key-group sizes (incremental, changelog) are the
//     handle's size times the fraction of its key groups in the subtask's range. Changelog
//     handles are treated as read whole.
//   - The deployment payload (SubtaskAssignment.PayloadBytes, OperatorSummary.MaxPayloadBytes)
//     estimates the restore part of the TaskDeploymentDescriptor: per distinct operator-state
//     stream a subtask references, PayloadHandleOverhead plus its path plus its inline bytes
//     (an inline stream travels whole even for one element); per named entry
//     PayloadEntryOverhead plus the name; 8 bytes per offset; per keyed handle the overhead, its
//     path, its inline bytes, the overhead again per file of an incremental handle, and 8 bytes
//     per key-group offset of key-group handles; per channel-state handle the overhead, path and
//     inline bytes. Coordinator state is not in the payload (coordinators restore on the
//     JobManager).
//
// Flink prints some objects the simulator cannot know; the messages then carry: for row 1 the
// vertex name (operator names joined with " -> " when the checkpoint has names, else the vertex
// ID); for row 2 "Checkpoint Metadata" (CheckpointMetadata.toString); for row 3
// Plan.CheckpointPointer (or "<checkpoint>"); for row 6 the vertex name instead of
// ExecutionJobVertex.toString; for the mixed-finished message the distinct states in enum order.
//
// Not simulated: topology-dependent checks (VertexFinishedStateChecker's predecessor rules, the
// FLINK-31963 restore objects of stateless neighbours of vertices with channel state, "Incompatible
// subtask mappings" between several producers), serializer compatibility and state-name mode
// changes (they fail at registration, after restore), the restore order of elements inside a
// subtask across streams (unspecified in Flink), and the adaptive scheduler's own max-parallelism
// store. A format-1 task record lists chained operators' states together; a name listed twice in
// one handle is merged into one entry.
//
// # Shape and performance
//
// Nothing is materialised per (state, new subtask): a SPLIT_DISTRIBUTE name keeps the cursor
// parameters (start, base, remainder) and prefix sums over the concatenated old entries, so Share
// is O(log entries + slices); UNION gives everyone everything; BROADCAST is i mod n; keyed state
// keeps the old handles in range order (binary search); channel state keeps the mapper's mapping.
// Per-state summaries are analytic (SPLIT element counts, UNION, BROADCAST multiplicities). The
// operator summaries (payload, inline bytes, per-subtask totals, keyed skew) need the distinct old
// streams each subtask references, so Simulate makes one tight pass per operator: it walks
// Flink's cursor once per SPLIT name (skipping the runs that get no element), adds UNION as a
// constant, and counts distinct streams with a bitset over the old streams, a block of subtasks at
// a time. Operators are built and summarised on GOMAXPROCS workers. Old entries hold no pointers,
// so the garbage collector does not scan them.
//
// UNION state is represented once: "all old entries, to every new subtask". The operator pass
// adds it as one constant (elements, bytes, payload, the union streams' bitset) and SubtaskTotals
// adds the same constant, so a check is linear in old + new parallelism; only an explicit Share or
// Subtask call lists the entries.
//
// Memory (what a Result holds): per vertex a VertexAssignment; per operator an
// OperatorAssignment and, when restored, its operatorSim with one stream slot per old subtask
// that has operator state (two with raw operator state) and, for keyed state, a handle index per
// old subtask; per named state a StateDistribution (128 bytes: the cursor's working view,
// stateDist, is built on demand from it) and one old entry (40 bytes) per old subtask that lists
// it. Nothing is kept per new subtask: the operator pass uses a few words per new subtask of
// scratch, reused across operators. Simulate builds no map entry per operator unless the plan has
// keys to resolve.
//
// # Benchmarks
//
// Measured figures live in bench/README.md (with the machine and load they were taken at), not
// here, where they would go stale. The benchmarks of this package: BenchmarkSimulate1000x10x4096
// (1,000 operators × 10 states of every mode, new parallelism 4,096, from two old
// parallelisms), BenchmarkSimulateStoredParallelism (the same job at unchanged parallelism),
// BenchmarkSplit10M (10⁷ SPLIT_DISTRIBUTE elements between small and large parallelisms: it
// must not visit elements one by one), BenchmarkSimulateContextOverhead (the cost of the
// cancellation checks), BenchmarkGroupingEqualHashes and BenchmarkNamesInOneSubtask. Run them
// with go test -run '^$' -bench . ./internal/rescale; they report CPU time per simulation,
// the reliable figure on a shared machine.
package rescale
