package server

import (
	"context"
	"fmt"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/memmodel"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// recordCounts counts the records a check of l needs memory for (memmodel.Count): with the
// report's rows when opts asks for include_subtasks or subtask_operators, unless the check hands
// them on in pieces as it builds them (Server.checkSending), holding a chunk and a page.
func recordCounts(l *checkpoint.Layout, plan *pb.RescalePlan, opts *pb.CheckOptions, inPieces bool) memmodel.Records {
	rows := memmodel.Rows{All: opts.GetIncludeSubtasks(), Operators: opts.GetSubtaskOperators(), InPieces: inPieces}
	return memmodel.Count(l, rows, plan.GetDefaultParallelism(), plan.GetVertexParallelism())
}

// acquireCheck waits for a check slot and the memory the check of l needs beyond the file-size
// estimate its request holds (memmodel.CheckExtraBytes), so operator-heavy requests wait or are
// refused by the budget instead of growing past it. A check that could never fit the budget is
// refused at once with a *BudgetError naming the record counts; one that does not fit now waits
// like any request (QueueWait) and is then refused as busy (*BusyError). inPieces: the check
// hands its operators on as it converts them (recordCounts).
func (s *Server) acquireCheck(ctx context.Context, l *checkpoint.Layout, plan *pb.RescalePlan, opts *pb.CheckOptions, inPieces bool) (*grant, error) {
	r := recordCounts(l, plan, opts, inPieces)
	extra := memmodel.CheckExtraBytes(r, l.Size)
	if total := extra + memmodel.RequestBytes(l.Size); extra > 0 && total > s.cfg.MemoryBudget {
		rows := fmt.Sprintf("%d bytes per row of include_subtasks or subtask_operators", memmodel.PerSubtaskRow)
		if r.OldReads > 0 {
			rows += fmt.Sprintf(" + %d bytes per old subtask those rows list (%d: UNION or BROADCAST state)", memmodel.PerOldSubtaskRead, r.OldReads)
		}
		if r.InPieces {
			rows = fmtBytes(memmodel.PiecesBytes) + " for the rows sent in pieces"
		}
		return nil, &BudgetError{
			What: fmt.Sprintf("checking %d operators with %d subtask records (%d report rows held) needs an estimated %s of memory (%s + %s per operator + %d bytes per subtask record + %s)",
				r.Operators, r.SubtaskRecords, r.Rows, fmtBytes(total), fmtBytes(memmodel.RequestBaseBytes), fmtBytes(memmodel.PerOperator), memmodel.PerSubtaskRecord, rows),
			Need: total, Budget: s.cfg.MemoryBudget,
		}
	}
	return s.adm.acquire(ctx, true, extra, false)
}
