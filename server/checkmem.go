package server

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// The file-size estimate (estimateBytes: RequestBaseBytes + MemoryPerFileByte × size) covers the
// decode, and the whole check of a file whose bytes are state: subtasks, handles, names,
// offsets. It under-counts files whose bytes are mostly operator and subtask records: an
// operator record costs 70–150 bytes of _metadata but about 0.15–0.55 KB of Layout and 0.3–0.4
// KB of report, plus the simulation of the range of vertices being checked (the engine checks a
// job range by range; bench/README.md, "Scale"); an empty subtask record
// about 22 bytes of _metadata against about 105 bytes of Layout. Once a file is decoded, its
// check reserves what the record counts need beyond the file-size estimate, so operator-heavy
// requests wait or are refused by the budget instead of growing past it.
const (
	// CheckBytesPerOperator is the memory one operator record costs a check at most: Layout,
	// simulation and report together (measured before checks ran by ranges: 1.5–1.9 KB for one
	// state, 0.9–1.2 KB stateless; kept: four 100k-operator checks with include_subtasks at once
	// peaked at 1.04 GiB of daemon RSS against 4 × 270 MiB estimated).
	CheckBytesPerOperator = 2 << 10
	// CheckBytesPerSubtaskRecord is the memory one subtask record costs a check beyond its state
	// (the record in the Layout, the simulation's per-old-subtask tables).
	CheckBytesPerSubtaskRecord = 128
	// CheckBytesPerSubtaskRow is the memory one row of include_subtasks costs: the
	// SubtaskAssignment message (measured: about 500 bytes) and its encoding (about 90).
	CheckBytesPerSubtaskRow = 640
)

// recordBytes is the memory the check of l needs by its record counts (operators, subtask
// records and, when opts asks for include_subtasks, report rows), with the request's base.
func recordBytes(l *checkpoint.Layout, plan *pb.RescalePlan, opts *pb.CheckOptions) (need int64, operators, records int, rows int64) {
	operators = len(l.Operators)
	for i := range l.Operators {
		records += len(l.Operators[i].Subtasks)
	}
	if opts.GetIncludeSubtasks() {
		rows = subtaskRows(l, plan)
	}
	need = RequestBaseBytes + CheckBytesPerOperator*int64(operators) + CheckBytesPerSubtaskRecord*int64(records) +
		CheckBytesPerSubtaskRow*rows
	return need, operators, records, rows
}

// subtaskRows bounds the new subtasks a report lists: each operator at the plan's default
// parallelism (or its stored one), plus every per-vertex parallelism of the plan once per
// operator it may name (a chain shares it). Resolving the plan's keys would be exact but costs
// a simulation; this errs high only for plans that raise a few vertices.
func subtaskRows(l *checkpoint.Layout, plan *pb.RescalePlan) int64 {
	var rows int64
	def := int64(plan.GetDefaultParallelism())
	for i := range l.Operators {
		if def > 0 {
			rows += def
		} else {
			rows += int64(max(l.Operators[i].Parallelism, 0))
		}
	}
	for _, p := range plan.GetVertexParallelism() {
		rows += int64(max(p, 0))
	}
	return rows
}

// checkExtraBytes is the memory a check of l needs beyond the file-size estimate the request
// already holds for it: 0 unless the file is operator- or subtask-record-heavy.
func checkExtraBytes(l *checkpoint.Layout, plan *pb.RescalePlan, opts *pb.CheckOptions) int64 {
	need, _, _, _ := recordBytes(l, plan, opts)
	return max(0, need-estimateBytes(l.Size))
}

// acquireCheck waits for a check slot and the memory the check of l needs beyond the file-size
// estimate (checkExtraBytes). A check that could never fit the budget is refused at once with
// RESOURCE_EXHAUSTED naming the budget and the record counts; one that does not fit now waits
// like any request (QueueWait) and is then refused as busy.
func (s *Server) acquireCheck(ctx context.Context, l *checkpoint.Layout, plan *pb.RescalePlan, opts *pb.CheckOptions) (*grant, error) {
	extra := checkExtraBytes(l, plan, opts)
	if total := extra + estimateBytes(l.Size); extra > 0 && total > s.cfg.MemoryBudget {
		_, ops, records, rows := recordBytes(l, plan, opts)
		return nil, status.Errorf(codes.ResourceExhausted,
			"checking %d operators with %d subtask records (%d report rows) needs an estimated %s of memory (%s + %s per operator + %d bytes per subtask record + %d bytes per row of include_subtasks), more than the server's memory budget of %s (--memory-budget)",
			ops, records, rows, fmtBytes(total), fmtBytes(RequestBaseBytes), fmtBytes(CheckBytesPerOperator), CheckBytesPerSubtaskRecord, CheckBytesPerSubtaskRow, fmtBytes(s.cfg.MemoryBudget))
	}
	return s.adm.acquire(ctx, true, extra, false)
}
