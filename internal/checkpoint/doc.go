// Package checkpoint reads and writes Apache Flink checkpoint and savepoint _metadata files
// (format versions 1 to 7, Flink 1.2 to 2.2 and the unreleased version 7). It owns the byte
// format and nothing else: it does not open the state files a _metadata file points to, does not
// simulate rescaling (internal/rescale) and does not judge a restore (internal/findings).
//
// # Two views of a file
//
// Read and ReadBytes return a *Metadata: the faithful model. Every field of the format is
// decoded — master-hook states, operators (ID, name and UID in format 5+, parallelism, max
// parallelism, coordinator state), subtasks (finished markers of Flink 1.14+), operator state
// handles (tags 4 and 17) with their named states, distribution modes and element offsets, keyed
// state handles (tags 3, 5, 7, 8–14) with key-group offsets, incremental file lists and changelog
// entries, stream handles (tags 1, 2, 3, 6, 15, 16), unaligned-checkpoint channel state (untagged
// in formats 3–5, tagged and possibly merged in 6+), and the format-7 refCheckpointId. What Flink
// ignores or cannot interpret is kept verbatim so that Write reproduces the input byte for byte:
// presence flags and boolean bytes as written, negative counts, the Java-serialized
// CheckpointProperties trailer of format 4+ (Metadata.Trailer; Metadata.Properties decodes it),
// bytes after the body of formats 2–3, and bytes after the channel list of a merged channel
// handle. Write encodes formats 2 to 7 and rejects strings longer than 65535 modified-UTF-8
// bytes, as Java's writeUTF does. Format 1 (Flink 1.2: tasks with operator chains,
// Metadata.Tasks) is decoded but not written; format 0 (Flink 1.1) is reported as unsupported.
//
// ReadLayout (and ReadLayoutSized, which honours a context) returns a *Layout: the
// analysis view the rescale simulator and the rules consume, built by the same decoder in a
// summarizing mode (Metadata.Layout derives the same view from a decoded file). It reads from an io.Reader in one pass with a
// 256 KiB buffer and never holds the file; each operator record is mapped onto its
// OperatorLayout as soon as it is decoded, so the decoded model of the whole file is never held
// beside the Layout: operator-state offsets are folded into an element
// count and byte total, plus (for SPLIT_DISTRIBUTE states only) run-length-encoded element sizes;
// channel-state offsets are counted; inline bytes (ByteStreamStateHandle data, changelog
// changes, master-state payloads) are skipped and counted. Its memory is proportional
// to the number of handles and states, the key groups of key-group handles (2, 4 or 8 bytes each: KeyGroupSizes),
// and the number of size changes between consecutive elements of SPLIT_DISTRIBUTE states — not
// to the number of elements or inline bytes, so the heap of a file dominated by offsets or
// inline bytes does not grow with it (bench/README.md, "Decode: keyed offsets and many small
// files"). Element sizes follow the spec: an element ends at the next larger offset of any state
// of the same handle, the last one at the stream size; when two states' offset ranges
// interleave the sizes are marked SizesApproximate.
//
// A Decoder reads the Layouts of many files one after another, reusing its buffers, and
// ReadLayoutFiles runs Decoders on a bounded pool of workers over a list of paths, handing the
// Layouts to its callback in the order of the paths with at most workers + 1 of them alive at
// once. Every Layout, however it was read, belongs to whoever got it.
//
// The Layout's bytes per record (64-bit): OperatorLayout 120 plus its name and uid; per subtask
// a SubtaskLayout (64; its channel-state lists, when it has any, 48 more); per operator-state handle 80 plus its path; per named
// state entry 64, which holds one size run inline (a state whose elements are all of one
// size); a SPLIT_DISTRIBUTE state of two runs or more adds a moreRuns of 48 plus 16 per run, and
// beyond 8 runs 16 more per run for the prefix sums; per keyed handle 216 plus 2, 4 or 8 per
// key group of key-group handles (the width that holds its largest key group); per channel-state handle 72. An operator at parallelism 1 with one
// SPLIT_DISTRIBUTE state in a savepoint-relative file (145 bytes of _metadata) takes about 400
// bytes (328 of records, the rest its strings); an empty subtask record (20 bytes of _metadata) takes 64, except that the records of
// an operator whose subtasks 0..n-1 all hold nothing (a stateless operator) point into one array
// per Layout and cost nothing of their own. An operator's subtask list is one allocation, and
// each handle record, its state-entry list, its size runs and its strings one each (rounded up
// to the allocator's size classes, at most an eighth more), so memory stays proportional to the
// records decoded. Nothing in a Layout is shared with another Layout or reused after it is
// returned: a Layout belongs to whoever got it.
//
// ReadLayoutSized stops when its context ends, also between reads: the conversion of a
// buffered record (a subtask listing a million state names) checks it per entry.
//
// OperatorIDFromUID computes the OperatorID Flink derives from a user-set UID (murmur3_128).
//
// # Errors
//
// Every malformed input yields a *FormatError naming the byte offset, the field path (for
// example operators[3].subtasks[2].managedOperatorState.states["expired-files"].offsets) and the
// value found. The decoder checks every count against the bytes that remain before allocating
// (a stream of unknown length grows slices as elements arrive instead), caps handle nesting at
// 64, and enforces the invariants Flink enforces when it loads a file: magic numbers, subtask
// index within [0, parallelism), parallelism ≤ max parallelism, distribution-mode and scope
// ordinals, coordinator handle kind, tag-17 delegates, master-state framing. It never panics
// and never loops without consuming input. A trailer that does not decode as
// CheckpointProperties is not an error: Layout.PropertiesError says why.
//
// The byte layouts are specified in shared/spec/flink-checkpoint-metadata.md.
package checkpoint
