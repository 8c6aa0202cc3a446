// Package rescale simulates how Flink redistributes a checkpoint's state when a job restores it,
// possibly at a new parallelism: operator list state (SPLIT_DISTRIBUTE, UNION, BROADCAST), keyed
// state by key-group ranges, max-parallelism adoption, channel state of unaligned checkpoints,
// coordinator state, finished and missing operators, and the precondition failures Flink raises,
// with Flink's exact messages. It owns Flink's assignment algorithms and nothing else: pure
// functions over a checkpoint.Layout and a Plan, no I/O, no findings, no reporting.
//
// The semantics follow ../shared/spec/flink-rescaling-semantics.md (section numbers in comments
// refer to it).
package rescale
