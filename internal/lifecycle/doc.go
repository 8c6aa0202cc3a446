// Package lifecycle holds Preflight's tools for a checkpoint's life after it is written: Prune
// removes an orphaned operator state (or a whole operator) from a savepoint and writes the result
// as a new savepoint, verified byte for byte; Diff compares two checkpoints operator by operator;
// Trend follows a series of checkpoints of one job and forecasts when _metadata outgrows the
// RPC frame size. Prune works on the codec's faithful model (checkpoint.Metadata) because it
// must re-encode; Diff and Trend work on bounded-memory Layouts.
package lifecycle
