// Package memmodel is the memory model of a check, in one place: how much memory checking a
// _metadata file needs, estimated from its size before it is decoded and from its record counts
// after. The CLI bounds its process by it (ProcessBytes) and the daemon reserves every request's
// memory from its budget by it (RequestBytes, CheckBytes). It only estimates; it allocates,
// measures and refuses nothing (the figures behind the constants are in bench/README.md,
// "Figures behind constants").
package memmodel

import "github.com/flinkpreflight/preflight/internal/checkpoint"

// The file-size part. Checking a _metadata of S bytes needs at most PerFileByte × S while it
// decodes and simulates, on top of a constant: ProcessBaseBytes for a whole CLI process (binary,
// runtime, buffers), RequestBaseBytes for one request of the daemon, whose own baseline is paid
// once and left outside its budget. A check of a layout the daemon already holds needs
// RequestBaseBytes + CachedCheckFactor × the layout's retained bytes (Layout.RetainedBytes): the
// simulation's output is proportional to the layout, not to the file's state bytes.
const (
	PerFileByte       = 4
	ProcessBaseBytes  = 64 << 20
	RequestBaseBytes  = 2 << 20
	CachedCheckFactor = 2
)

// The record part. The file-size part covers the decode, and the whole check of a file whose
// bytes are state: subtasks, handles, names, offsets. It under-counts files whose bytes are
// mostly operator and subtask records, which cost a check far more memory than the _metadata
// spends on them (an operator record 70–150 bytes of _metadata; an empty subtask record about
// 22). The figures behind these constants are in bench/README.md, "Figures behind constants".
const (
	// PerOperator is the memory one operator record costs a check at most: Layout, the
	// simulation of its range of vertices and report together.
	PerOperator = 2 << 10
	// PerSubtaskRecord is the memory one subtask record costs a check beyond its state (the
	// record in the Layout, the simulation's per-old-subtask tables).
	PerSubtaskRecord = 128
	// PerSubtaskRow is the memory one row of include_subtasks costs: the SubtaskAssignment
	// message and its encoding.
	PerSubtaskRow = 640
	// PerOldSubtaskRead is what a row adds per old subtask it lists (from_old_subtasks, an int32
	// in the message and about as much in its encoding): a row of an operator with UNION or
	// BROADCAST state lists every old subtask, so that operator's rows cost old × new of these.
	PerOldSubtaskRead = 8
	// PiecesBytes is what a check answering in pieces holds of its rows whatever their number
	// (Rows.InPieces): the engine's chunk of rows and the server's page, each held at about
	// twice its encoded size, and the page gRPC is sending.
	PiecesBytes = 4 << 20
)

// FileBytes is the file-size part for a file of size bytes (unknown: negative, counted as 0).
func FileBytes(size int64) int64 {
	return PerFileByte * max(size, 0)
}

// ProcessBytes bounds the resident memory of a CLI process checking a file of size bytes.
func ProcessBytes(size int64) int64 {
	return ProcessBaseBytes + FileBytes(size)
}

// RuntimeFloorBytes is the least soft limit RuntimeLimit gives beyond what a process keeps live,
// however much of its bound the binary's pages take: the runtime's own memory at rest (heap,
// stacks, the collector's metadata) with room to collect (bench/README.md, "Figures behind
// constants").
const RuntimeFloorBytes = 16 << 20

// RuntimeLimit is the Go soft memory limit that keeps a process's resident memory within bound
// when fileBacked bytes of it are pages mapped from files (the binary's code and data: tens of
// MiB with the cloud SDKs), which the runtime does not count but resident memory does. Some of
// the bound stays for what is resident outside the runtime's count (libc, page tables) and for
// the collector's lag behind a soft limit: 4 MiB and a sixteenth, since a fixed margin alone fell
// short on a million operators (bench/README.md, "Operator-heavy files met"). The limit is at
// least RuntimeFloorBytes above live, what the process is expected to keep live, so that the
// collector has room above it even where the binary's pages take most of the bound.
func RuntimeLimit(bound, fileBacked, live int64) int64 {
	return max(bound-fileBacked-4<<20-bound/16, RuntimeFloorBytes+live)
}

// RequestBytes is what the daemon reserves for a request reading a file of size bytes.
func RequestBytes(size int64) int64 {
	return RequestBaseBytes + FileBytes(size)
}

// CachedRequestBytes is what the daemon reserves for a check of a layout it holds, whose
// retained bytes are retained.
func CachedRequestBytes(retained int64) int64 {
	return RequestBaseBytes + CachedCheckFactor*retained
}

// Records are the counts the record part is computed from.
type Records struct {
	Operators      int
	SubtaskRecords int
	Rows           int64 // report rows held at once; 0 when the report lists none or InPieces
	OldReads       int64 // the old subtasks those rows list, all together
	InPieces       bool  // the rows are handed on as they are built: PiecesBytes, not Rows
}

// Rows says which subtask rows a check's report carries, and whether it holds them.
type Rows struct {
	// All is include_subtasks: every new subtask of every operator.
	All bool
	// Operators is subtask_operators: every new subtask of these operators (the report's
	// operator IDs, hex; case does not matter).
	Operators []string
	// InPieces: the check hands its operators on as it converts them, the rows a chunk at a
	// time (a server answering in pieces), so it holds none of them beyond PiecesBytes.
	InPieces bool
}

// Count counts l's operator and subtask records, and the report rows the check holds for a plan
// of default parallelism def (0: each operator's own) and per-vertex parallelisms vertex:
// every operator's with rows.All (subtaskRows), the named operators' with rows.Operators
// (namedRows), none with rows.InPieces.
func Count(l *checkpoint.Layout, rows Rows, def int32, vertex map[string]int32) Records {
	r := Records{Operators: len(l.Operators)}
	for i := range l.Operators {
		r.SubtaskRecords += len(l.Operators[i].Subtasks)
	}
	switch {
	case rows.InPieces:
		r.InPieces = rows.All || len(rows.Operators) > 0
	case rows.All:
		r.Rows, r.OldReads = subtaskRows(l, def, vertex)
	case len(rows.Operators) > 0:
		r.Rows, r.OldReads = namedRows(l, rows.Operators, def, vertex)
	}
	return r
}

// Bytes is the record part: what a check of these records needs, without a base.
func (r Records) Bytes() int64 {
	b := PerOperator*int64(r.Operators) + PerSubtaskRecord*int64(r.SubtaskRecords) + PerSubtaskRow*r.Rows + PerOldSubtaskRead*r.OldReads
	if r.InPieces {
		b += PiecesBytes
	}
	return b
}

// subtaskRows bounds the new subtasks a report lists: each operator at the plan's default
// parallelism (or its stored one), plus every per-vertex parallelism of the plan once per
// operator it may name (a chain shares it). Resolving the plan's keys would be exact but costs a
// simulation; this errs high only for plans that raise a few vertices.
func subtaskRows(l *checkpoint.Layout, def int32, vertex map[string]int32) (rows, oldReads int64) {
	var most int64 // the most old subtasks a row lists
	for i := range l.Operators {
		op := &l.Operators[i]
		p, reads := planned(op, def), oldRead(op)
		rows += p
		oldReads += p * reads
		most = max(most, reads)
	}
	for _, p := range vertex {
		rows += int64(max(p, 0))
		oldReads += int64(max(p, 0)) * most
	}
	return rows, oldReads
}

// planned is op's new parallelism at the plan's default def, or its stored one when def is 0.
func planned(op *checkpoint.OperatorLayout, def int32) int64 {
	if def > 0 {
		return int64(def)
	}
	return int64(max(op.Parallelism, 0))
}

// oldRead is how many old subtasks each new subtask's row of op lists at most: all of them when
// op has UNION or BROADCAST state (every new subtask reads every old one), else none beyond
// what PerSubtaskRow counts (a SPLIT_DISTRIBUTE row reads a few neighbours).
func oldRead(op *checkpoint.OperatorLayout) int64 {
	for i := range op.Subtasks {
		for e := range op.Subtasks[i].OperatorStates() {
			if e.Mode == checkpoint.Union || e.Mode == checkpoint.Broadcast {
				return int64(len(op.Subtasks))
			}
		}
	}
	return 0
}

// namedRows bounds the new subtasks of the operators of l named by ids: each at the largest
// parallelism the plan may give it, the default (or its stored one) or any per-vertex
// parallelism (which vertex is an operator's would take resolving the plan's keys, a
// simulation). An ID naming no operator of l gets no rows (the report lists none for it).
func namedRows(l *checkpoint.Layout, ids []string, def int32, vertex map[string]int32) (rows, oldReads int64) {
	named := make(map[checkpoint.OperatorID]bool, len(ids))
	for _, s := range ids {
		if id, err := checkpoint.ParseOperatorID(s); err == nil {
			named[id] = true
		}
	}
	var most int64
	for _, p := range vertex {
		most = max(most, int64(p))
	}
	for i := range l.Operators {
		op := &l.Operators[i]
		if !named[op.ID] {
			continue
		}
		p := max(planned(op, def), most)
		rows += p
		oldReads += p * oldRead(op)
	}
	return rows, oldReads
}

// CheckExtraBytes is the memory a daemon's check of a decoded file needs beyond the
// RequestBytes its request already holds for the file: 0 unless the file is operator- or
// subtask-record-heavy.
func CheckExtraBytes(r Records, size int64) int64 {
	return max(0, RequestBaseBytes+r.Bytes()-RequestBytes(size))
}
