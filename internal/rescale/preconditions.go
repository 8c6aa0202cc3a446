package rescale

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// operatorHasState is Flink's test in loadAndValidateCheckpoint: coordinator state, or a subtask
// with any state.
func operatorHasState(op *checkpoint.OperatorLayout) bool {
	if op.CoordinatorState != nil {
		return true
	}
	for i := range op.Subtasks {
		st := &op.Subtasks[i]
		if st.ManagedOperatorState != nil || st.RawOperatorState != nil || st.ManagedKeyedState != nil ||
			st.RawKeyedState != nil || len(st.InputChannels()) > 0 || len(st.OutputChannels()) > 0 {
			return true
		}
	}
	return false
}

// fail appends a failure.
func (s *simulation) fail(kind FailureKind, exception string, vertex, op checkpoint.OperatorID, msg string) {
	s.res.Failures = append(s.res.Failures, Failure{Kind: kind, Exception: exception, VertexID: vertex, OperatorID: op, Message: msg})
}

// failures runs Flink's checks in Flink's order (§0.3, §2.4, §3) and applies max-parallelism
// adoption.
func (s *simulation) failures() {
	s.parallelismChecks()
	if s.plan.Restore == RestoreSavepoint {
		s.savepointChecks()
	}
	s.finishedStateChecks()
	if s.plan.Restore == RestoreLatestCheckpoint {
		s.mappingCompletenessChecks()
	}
	s.assignmentChecks()
}

// parallelismChecks is ExecutionJobVertex creation: no vertex above its max parallelism.
func (s *simulation) parallelismChecks() {
	for _, v := range s.res.Vertices {
		if v.NewParallelism > v.NewJobMaxParallelism {
			s.fail(FailureParallelismAboveMaxParallelism, "JobException", v.ID, checkpoint.OperatorID{},
				fmt.Sprintf("Vertex %s's parallelism (%d) is higher than the max parallelism (%d). Please lower the parallelism or increase the max parallelism.",
					v.Name, v.NewParallelism, v.NewJobMaxParallelism))
		}
	}
}

// checkedOperators returns the checkpoint operators the savepoint checks visit, as layout
// indexes in file order, and the vertex restoring each (-1: none). For a single re-simulated
// vertex only its own operators are checked; the other operators' checks do not depend on its
// parallelism.
func (s *simulation) checkedOperators() (idx []int, vertex []int32) {
	res := s.res
	if s.single {
		singleVertex := map[int]int32{}
		for vi, v := range res.Vertices {
			for _, a := range v.Operators {
				if a.Layout != nil {
					singleVertex[int(a.stateIdx)] = int32(vi)
					idx = append(idx, int(a.stateIdx))
				}
			}
		}
		slices.Sort(idx)
		vertex = make([]int32, len(idx))
		for k, i := range idx {
			vertex[k] = singleVertex[i]
		}
		return idx, vertex
	}
	vertexOfState := make([]int32, len(s.layout.Operators))
	idx = make([]int, len(s.layout.Operators))
	for i := range vertexOfState {
		vertexOfState[i], idx[i] = -1, i
	}
	for vi, v := range res.Vertices {
		s.stop.Check()
		for _, a := range v.Operators {
			if a.Layout != nil {
				vertexOfState[a.stateIdx] = int32(vi)
			}
		}
	}
	return idx, vertexOfState
}

// savepointChecks is Checkpoints.loadAndValidateCheckpoint (savepoint / explicit path), in
// file order: max parallelism per restored operator, and state of operators the program lacks.
func (s *simulation) savepointChecks() {
	res := s.res
	pointer := s.plan.CheckpointPointer
	if pointer == "" {
		pointer = "<checkpoint>"
	}
	nonRestored := map[checkpoint.OperatorID]*NonRestoredOperator{}
	for i := range res.NonRestored {
		nonRestored[res.NonRestored[i].ID] = &res.NonRestored[i]
	}
	idx, vertex := s.checkedOperators()
	for k, i := range idx {
		s.stop.Check()
		op := &s.layout.Operators[i]
		if vi := int(vertex[k]); vi >= 0 {
			v := res.Vertices[vi]
			if s.declaredMaxP[vi] != op.MaxParallelism && v.MaxParallelismConfigured {
				s.fail(FailureMaxParallelismMismatch, "IllegalStateException", v.ID, op.ID,
					fmt.Sprintf("Failed to rollback to checkpoint/savepoint %s. Max parallelism mismatch between checkpoint/savepoint state and new program. Cannot map operator %s with max parallelism %d to new program with max parallelism %d. This indicates that the program has been changed in a non-compatible way after the checkpoint/savepoint.",
						"Checkpoint Metadata", op.ID, op.MaxParallelism, s.declaredMaxP[vi]))
			}
			continue
		}
		nr := nonRestored[op.ID]
		if nr == nil {
			continue
		}
		nr.Dropped = s.plan.AllowNonRestoredState || !nr.HasState
		if !nr.Dropped {
			s.fail(FailureOperatorNotInNewProgram, "IllegalStateException", checkpoint.OperatorID{}, op.ID,
				fmt.Sprintf("Failed to rollback to checkpoint/savepoint %s. Cannot map checkpoint/savepoint state for operator %s to the new program, because the operator is not available in the new program. If you want to allow to skip this, you can set the --allowNonRestoredState option on the CLI.",
					pointer, op.ID))
		}
	}
}

// finishedStateChecks is VertexFinishedStateChecker: uniform finished status inside a vertex.
func (s *simulation) finishedStateChecks() {
	for _, v := range s.res.Vertices {
		s.stop.Check()
		var seen [3]bool
		for _, a := range v.Operators {
			seen[finishedStatus(a.Layout)] = true
		}
		var list []string
		for st, ok := range seen {
			if ok {
				list = append(list, [...]string{"ALL_RUNNING", "PARTIALLY_FINISHED", "FULLY_FINISHED"}[st])
			}
		}
		if len(list) > 1 {
			s.fail(FailureMixedFinishedState, "FlinkRuntimeException", v.ID, checkpoint.OperatorID{},
				fmt.Sprintf("Can not restore vertex %s(%s) which contain mixed operator finished state: [%s]",
					v.Name, v.ID, strings.Join(list, ", ")))
		}
	}
}

// mappingCompletenessChecks is StateAssignmentOperation.checkStateMappingCompleteness (the
// savepoint path removed the unmapped operators already).
func (s *simulation) mappingCompletenessChecks() {
	for i := range s.res.NonRestored {
		nr := &s.res.NonRestored[i]
		s.fail(FailureNoOperatorForState, "IllegalStateException", checkpoint.OperatorID{}, nr.ID,
			"There is no operator for the state "+nr.ID.String())
	}
}

// assignmentChecks is assignAttemptState per repartitioned vertex: checkParallelismPreconditions
// (adopting the checkpoint's max parallelism where none is configured), then input channel
// state, then result subpartition state.
func (s *simulation) assignmentChecks() {
	for vi, v := range s.res.Vertices {
		s.stop.Check()
		if !v.Repartitioned || v.FullyFinished {
			continue
		}
		for _, a := range v.Operators {
			if a.Layout != nil {
				s.parallelismPreconditions(v, a)
			}
		}
		for _, input := range []bool{true, false} {
			s.channelChecks(vi, v, input)
		}
	}
}

// parallelismPreconditions is checkParallelismPreconditions for operator a of vertex v.
func (s *simulation) parallelismPreconditions(v *VertexAssignment, a *OperatorAssignment) {
	ckMaxP := a.CheckpointMaxParallelism
	if ckMaxP < v.NewParallelism {
		s.fail(FailureMaxParallelismBelowParallelism, "IllegalStateException", v.ID, a.ID,
			fmt.Sprintf("The state for task %s can not be restored. The maximum parallelism (%d) of the restored state is lower than the configured parallelism (%d). Please reduce the parallelism of the task to be lower or equal to the maximum parallelism.",
				v.ID, ckMaxP, v.NewParallelism))
	}
	if ckMaxP == v.MaxParallelism {
		return
	}
	if !v.MaxParallelismConfigured {
		v.MaxParallelism = ckMaxP
		v.MaxParallelismAdopted = ckMaxP != v.NewJobMaxParallelism
		return
	}
	s.fail(FailureMaxParallelismChanged, "IllegalStateException", v.ID, a.ID,
		fmt.Sprintf("The maximum parallelism (%d) with which the latest checkpoint of the execution job vertex %s has been taken and the current maximum parallelism (%d) changed. This is currently not supported.",
			ckMaxP, v.Name, v.MaxParallelism))
}

// channelChecks is StateAssignmentOperation's channel-state step for one side of a vertex: only
// the input operator (chain head) may hold input-channel state and only the output operator
// (chain tail) result-subpartition state; rescaling it over a pointwise edge is refused (§3.2).
func (s *simulation) channelChecks(vi int, v *VertexAssignment, input bool) {
	owner := len(v.Operators) - 1
	mapper := s.outMapper[vi]
	if input {
		owner, mapper = 0, s.inMapper[vi]
	}
	var ids []string
	for k, a := range v.Operators {
		if k != owner && a.Layout != nil && hasChannelState(a.Layout, input) {
			ids = append(ids, a.ID.String())
		}
	}
	if len(ids) > 0 {
		s.fail(FailureChainedChannelState, "IllegalStateException", v.ID, checkpoint.OperatorID{},
			"Cannot recover from unaligned checkpoint when topology changes, such that data exchanges with persisted data are now chained.\nThe following operators contain channel state: ["+strings.Join(ids, ", ")+"]")
		return
	}
	a := v.Operators[owner]
	if a.Layout != nil && hasChannelState(a.Layout, input) && a.OldParallelism != v.NewParallelism && mapper == MapperUnsupported {
		s.fail(FailureUnsupportedChannelRescale, "UnsupportedOperationException", v.ID, a.ID,
			"Cannot rescale the given pointwise partitioner.\nDid you change the partitioner to forward or rescale?\nIt may also help to add an explicit shuffle().")
	}
}

// finishedStatus is VertexFinishedStateChecker's OperatorFinishedState: 0 ALL_RUNNING,
// 1 PARTIALLY_FINISHED, 2 FULLY_FINISHED.
func finishedStatus(l *checkpoint.OperatorLayout) int {
	if l == nil {
		return 0
	}
	if l.FullyFinished {
		return 2
	}
	for i := range l.Subtasks {
		if l.Subtasks[i].Finished {
			return 1
		}
	}
	return 0
}
