// Package findings turns a simulated restore into findings, a verdict and the nearest safe
// parallelism. It owns the operator catalog (catalog.json, embedded; users add entries with
// LoadCatalog), the Flink version comparison that decides whether a known bug applies, and the
// rules: one small type per check, each with a stable ID, a title, a severity, an explanation,
// references and a remediation. It reads the checkpoint Layout and the simulator's Result; it
// never decodes bytes, performs no I/O beyond LoadCatalog, and never re-implements Flink's
// redistribution (the safe-parallelism search asks rescale.Simulate).
//
// Use:
//
//	res, err := rescale.Simulate(layout, plan)
//	rep := findings.Check(layout, plan, res, cat, findings.Options{FlinkVersion: "1.19.1"})
//
// Finding mirrors preflight.v1.Finding field for field (Severity and Verdict share the proto
// enums' ordinals); Report.Safe mirrors preflight.v1.SafeParallelism.
//
// Rules (Rules() lists them with titles and explanations):
//
//	PF101 ERROR    state restored empty where the catalog says the operator needs an element
//	               (ONE-UNGUARDED, EXACTLY-ONE; e.g. CompactOperator expired-files, FLINK-31689)
//	PF102 WARNING  several elements handed to a FIRST-ONLY operator: the rest are dropped
//	PF103 ERROR    more elements than an AT-MOST-ONE / EXACTLY-ONE operator accepts
//	PF104 INFO     ORDER-DEPENDENT operator (KafkaSink POOLING) changes parallelism
//	PF105 (catalog) known rescale hazard of the implementation (sink-v2 committer stalls
//	               FLINK-37747/36368/29509, Kafka producer scale-down > 5x, Hudi, flink-agents)
//	PF110 ERROR    parallelism above the max parallelism (Flink's message)
//	PF111 ERROR    configured max parallelism differs from the stored one (Flink's message)
//	PF112 ERROR    pinned operator (max parallelism 1) asked to change parallelism (WARNING
//	               when only the catalog, not the checkpoint, pins it)
//	PF115 ERROR    the restoring Flink cannot read the _metadata format (or its file-merging
//	               handles)
//	PF116 INFO     the restoring Flink is newer than the latest release line Preflight models
//	PF120 ERROR    a subtask's deployment exceeds the RPC frame size (WARNING above 80%)
//	PF121 ERROR    all deployment payloads above the JobManager memory (WARNING above half)
//	PF130 WARNING  orphaned UNION state, with the growth forecast of the next restores
//	PF140 WARNING  keyed state skew or uneven key groups (INFO below the warning thresholds)
//	PF150 ERROR    channel state with a parallelism change: pointwise edge (ERROR), unknown
//	               mapper (WARNING), known mapper (INFO)
//	PF160 ERROR    checkpoint state without an operator in the new job (WARNING with
//	               allowNonRestoredState, INFO when empty)
//	PF170 INFO     an operator the catalog does not know (or a generic one, e.g. a sink-v2
//	               writer) restores empty SPLIT state on some subtasks
//	PF180 INFO     stateful operator without a uid (format 5+)
//	PF190 ERROR    any other restore failure the simulator predicts
//
// Verdict policy: DENY when a finding is at or above the fail level (default ERROR);
// ALLOW_WITH_WARNINGS when a finding below the fail level is WARNING or ERROR (an ERROR under a
// raised fail level still deserves a warning verdict); ALLOW when only INFO findings remain.
//
// Safe parallelism: for every vertex with a denying finding, the largest passing parallelism
// below the request and the smallest above it (up to the effective max parallelism). Rules
// that implement Bounder answer in closed form (PF101-PF103 from the element counts, PF110
// from the max parallelism, PF112 only 1, PF120 "never" when UNION state alone exceeds the
// frame, PF150 only the old parallelism, PF105 the hazard's direction); a candidate that passes
// every bound is confirmed by re-simulating the vertex at that parallelism and running all rules
// (at most Options.MaxResimulations re-simulations per vertex). 0 means none was found.
package findings
