// Package findings turns a simulated restore into findings, a verdict and the nearest safe
// parallelism. It owns the operator catalog (catalog.json, embedded; users add entries with
// LoadCatalog), the Flink version comparison that decides whether a known bug applies, and the
// rules (below). It reads the checkpoint Layout and the simulator's Result; it
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
// Rules: every rule is one RuleMeta table (ID, title, severity, grading, cause, remedies,
// references, the Flink bugs it models with their affected versions) next to the one Check
// function that detects it, in its own rules_*.go file, registered from that file's init. The
// list with all facts is generated into docs/rules.md (go run ./internal/findings/gen; a test
// fails while it is stale) and printed by `preflight rules`. Adding a rule touches one rules
// file, one test, and the generated doc.
//
// Verdict policy: DENY when a finding is at or above the fail level (default ERROR);
// ALLOW_WITH_WARNINGS when a finding below the fail level is WARNING or ERROR (an ERROR under a
// raised fail level still deserves a warning verdict); ALLOW when only INFO findings remain.
//
// Safe parallelism: for every vertex with a denying finding, the largest passing parallelism
// below the request and the smallest above it (up to the effective max parallelism). Rules
// that can state a bound answer in closed form (each rule's ...SafeAt); a candidate that passes
// every bound is confirmed by re-simulating the vertex at that parallelism and running all rules
// (at most Options.MaxResimulations re-simulations per vertex). 0 means none was found.
package findings
