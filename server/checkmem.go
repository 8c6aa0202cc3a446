package server

import (
	"context"
	"fmt"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/memmodel"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// recordCounts counts the records a check of l needs memory for (memmodel.Count): with the
// report's rows when opts asks for include_subtasks.
func recordCounts(l *checkpoint.Layout, plan *pb.RescalePlan, opts *pb.CheckOptions) memmodel.Records {
	return memmodel.Count(l, opts.GetIncludeSubtasks(), plan.GetDefaultParallelism(), plan.GetVertexParallelism())
}

// acquireCheck waits for a check slot and the memory the check of l needs beyond the file-size
// estimate its request holds (memmodel.CheckExtraBytes), so operator-heavy requests wait or are
// refused by the budget instead of growing past it. A check that could never fit the budget is
// refused at once with a *BudgetError naming the record counts; one that does not fit now waits
// like any request (QueueWait) and is then refused as busy (*BusyError).
func (s *Server) acquireCheck(ctx context.Context, l *checkpoint.Layout, plan *pb.RescalePlan, opts *pb.CheckOptions) (*grant, error) {
	r := recordCounts(l, plan, opts)
	extra := memmodel.CheckExtraBytes(r, l.Size)
	if total := extra + memmodel.RequestBytes(l.Size); extra > 0 && total > s.cfg.MemoryBudget {
		return nil, &BudgetError{
			What: fmt.Sprintf("checking %d operators with %d subtask records (%d report rows) needs an estimated %s of memory (%s + %s per operator + %d bytes per subtask record + %d bytes per row of include_subtasks)",
				r.Operators, r.SubtaskRecords, r.Rows, fmtBytes(total), fmtBytes(memmodel.RequestBaseBytes), fmtBytes(memmodel.PerOperator), memmodel.PerSubtaskRecord, memmodel.PerSubtaskRow),
			Need: total, Budget: s.cfg.MemoryBudget,
		}
	}
	return s.adm.acquire(ctx, true, extra, false)
}
