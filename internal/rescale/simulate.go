package rescale

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// vertexPlan is a vertex of the new job before simulation.
type vertexPlan struct {
	ops    []checkpoint.OperatorID // generated IDs, head first
	states []int                   // index into layout.Operators of each op's state, -1 for none
	stIDs  []checkpoint.OperatorID // the ID the state is stored under
}

// Simulate restores layout with plan the way Flink would. The error is a *PlanError when the plan
// cannot be applied (a key that names no operator, a parallelism ≤ 0 or > 32768, contradictory
// chains); Flink's own precondition failures are not errors but Result.Failures.
func Simulate(layout *checkpoint.Layout, plan Plan) (*Result, error) {
	if layout == nil {
		return nil, &PlanError{Field: "layout", Msg: "no checkpoint layout"}
	}
	if plan.DefaultParallelism < 0 || plan.DefaultParallelism > UpperBoundMaxParallelism {
		return nil, &PlanError{Field: "default_parallelism", Key: fmt.Sprint(plan.DefaultParallelism),
			Msg: fmt.Sprintf("parallelism must be between 1 and %d (0 keeps the stored parallelism)", UpperBoundMaxParallelism)}
	}
	r := newResolver(layout)
	vps, consumed, err := buildVertices(r, plan)
	if err != nil {
		return nil, err
	}
	byOp := map[checkpoint.OperatorID]int{} // generated ID → vertex
	for v, vp := range vps {
		for _, id := range vp.ops {
			byOp[id] = v
		}
	}
	par, err := resolveInts(r, byOp, "parallelism", plan.Parallelism)
	if err != nil {
		return nil, err
	}
	maxPs := map[int]MaxParallelism{}
	for _, key := range sortedKeys(plan.MaxParallelism) {
		mp := plan.MaxParallelism[key]
		if mp.Value < 1 || mp.Value > UpperBoundMaxParallelism {
			return nil, &PlanError{Field: "max_parallelism", Key: key,
				Msg: fmt.Sprintf("max parallelism %d not within 1..%d", mp.Value, UpperBoundMaxParallelism)}
		}
		vs, err := verticesOf(r, byOp, "max_parallelism", key)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if old, ok := maxPs[v]; ok && old != mp {
				return nil, &PlanError{Field: "max_parallelism", Key: key, Msg: "contradicts another key for the same vertex"}
			}
			maxPs[v] = mp
		}
	}
	inMappers, err := resolveMappers(r, byOp, "input_channel_mappers", plan.InputChannelMappers)
	if err != nil {
		return nil, err
	}
	outMappers, err := resolveMappers(r, byOp, "output_channel_mappers", plan.OutputChannelMappers)
	if err != nil {
		return nil, err
	}

	res := &Result{}
	s := &simulation{layout: layout, plan: plan, res: res}
	for v, vp := range vps {
		va := s.vertex(vp, par[v], plan.DefaultParallelism, maxPs[v])
		if va == nil {
			continue
		}
		s.inMapper = append(s.inMapper, inMappers[v])
		s.outMapper = append(s.outMapper, outMappers[v])
		res.Vertices = append(res.Vertices, va)
	}
	for i := range layout.Operators {
		op := &layout.Operators[i]
		if !consumed[i] {
			res.NonRestored = append(res.NonRestored, NonRestoredOperator{ID: op.ID, Name: op.Name, UID: op.UID,
				HasState: operatorHasState(op)})
		}
	}
	s.failures()
	s.distribute()
	return res, nil
}

// buildVertices resolves the chains and the new job's operators (§3.4, §3.5). consumed marks the
// checkpoint operators whose state some operator of the new job takes.
func buildVertices(r *resolver, plan Plan) ([]vertexPlan, []bool, error) {
	var vps []vertexPlan
	inVertex := map[checkpoint.OperatorID]string{}
	for vi, spec := range plan.Vertices {
		var vp vertexPlan
		for oi, key := range spec.Operators {
			field := fmt.Sprintf("vertices[%d].operators[%d]", vi, oi)
			id, err := r.declare(field, key)
			if err != nil {
				return nil, nil, err
			}
			if prev, dup := inVertex[id]; dup {
				return nil, nil, &PlanError{Field: field, Key: key, Msg: "operator is already in " + prev}
			}
			inVertex[id] = fmt.Sprintf("vertices[%d]", vi)
			vp.ops = append(vp.ops, id)
		}
		if spec.ID != "" {
			field := fmt.Sprintf("vertices[%d].id", vi)
			id, err := r.declare(field, spec.ID)
			if err != nil {
				return nil, nil, err
			}
			switch {
			case len(vp.ops) == 0:
				if prev, dup := inVertex[id]; dup {
					return nil, nil, &PlanError{Field: field, Key: spec.ID, Msg: "operator is already in " + prev}
				}
				inVertex[id] = fmt.Sprintf("vertices[%d]", vi)
				vp.ops = append(vp.ops, id)
			case id != vp.ops[0]:
				return nil, nil, &PlanError{Field: field, Key: spec.ID,
					Msg: "a vertex ID is its head operator's ID, but this names another operator than operators[0]"}
			}
		}
		if len(vp.ops) == 0 {
			return nil, nil, &PlanError{Field: fmt.Sprintf("vertices[%d]", vi), Msg: "vertex without operators"}
		}
		vps = append(vps, vp)
	}
	newJob := map[checkpoint.OperatorID]bool{}
	for i, key := range plan.NewJobOperators {
		id, err := r.declare(fmt.Sprintf("new_job_operators[%d]", i), key)
		if err != nil {
			return nil, nil, err
		}
		newJob[id] = true
	}
	aliases := map[checkpoint.OperatorID]checkpoint.OperatorID{}
	for _, key := range sortedKeys(plan.UserDefinedOperatorIDs) {
		field := "user_defined_operator_ids"
		id, err := r.declare(field, key)
		if err != nil {
			return nil, nil, err
		}
		ud, err := checkpoint.ParseOperatorID(plan.UserDefinedOperatorIDs[key])
		if err != nil {
			return nil, nil, &PlanError{Field: field, Key: key, Msg: err.Error()}
		}
		aliases[id] = ud
		newJob[id] = true
	}
	aliasTarget := map[checkpoint.OperatorID]bool{} // restored by the operator that declares it
	for _, ud := range aliases {
		aliasTarget[ud] = true
	}
	consumed := make([]bool, len(r.layout.Operators))
	// stateOf picks the checkpoint state of a new-job operator: the user-defined ID when the
	// checkpoint holds state under it, else the generated ID (newer StateAssignmentOperation).
	stateOf := func(id checkpoint.OperatorID) (int, checkpoint.OperatorID) {
		if ud, ok := aliases[id]; ok {
			if i, ok := r.byID[ud]; ok && !consumed[i] {
				consumed[i] = true
				if g, ok := r.byID[id]; ok {
					// State under the generated ID too: Flink maps it (the ID belongs to the
					// vertex) but restores the user-defined one; the generated ID's state is ignored.
					consumed[g] = true
				}
				return i, ud
			}
		}
		if i, ok := r.byID[id]; ok && !consumed[i] {
			consumed[i] = true
			return i, id
		}
		return -1, id
	}
	fill := func(vp *vertexPlan) {
		for _, id := range vp.ops {
			i, st := stateOf(id)
			vp.states = append(vp.states, i)
			vp.stIDs = append(vp.stIDs, st)
		}
	}
	for v := range vps {
		fill(&vps[v])
	}
	// Operators named only in NewJobOperators or UserDefinedOperatorIDs: one vertex each,
	// checkpoint operators first (file order), then new ones.
	for i := range r.layout.Operators {
		id := r.layout.Operators[i].ID
		if consumed[i] || inVertex[id] != "" || aliasTarget[id] {
			continue
		}
		if plan.NewJobOperators != nil && !newJob[id] {
			continue
		}
		vp := vertexPlan{ops: []checkpoint.OperatorID{id}}
		inVertex[id] = "a vertex of its own"
		fill(&vp)
		vps = append(vps, vp)
	}
	for _, id := range sortedIDs(newJob) {
		if inVertex[id] != "" {
			continue
		}
		vp := vertexPlan{ops: []checkpoint.OperatorID{id}}
		inVertex[id] = "a vertex of its own"
		fill(&vp)
		vps = append(vps, vp)
	}
	return vps, consumed, nil
}

func sortedIDs(m map[checkpoint.OperatorID]bool) []checkpoint.OperatorID {
	out := make([]checkpoint.OperatorID, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].String() < out[b].String() })
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// verticesOf returns the vertices a plan key applies to.
func verticesOf(r *resolver, byOp map[checkpoint.OperatorID]int, field, key string) ([]int, error) {
	ids := r.lookup(key)
	if len(ids) == 0 {
		return nil, &PlanError{Field: field, Key: key, Msg: "names no operator of the checkpoint or the plan"}
	}
	var vs []int
	for _, id := range ids {
		if v, ok := byOp[id]; ok {
			vs = append(vs, v)
		}
	}
	return vs, nil
}

func resolveInts(r *resolver, byOp map[checkpoint.OperatorID]int, field string, m map[string]int) (map[int]int, error) {
	out := map[int]int{}
	for _, key := range sortedKeys(m) {
		p := m[key]
		if p < 1 || p > UpperBoundMaxParallelism {
			return nil, &PlanError{Field: field, Key: key,
				Msg: fmt.Sprintf("parallelism %d not within 1..%d", p, UpperBoundMaxParallelism)}
		}
		vs, err := verticesOf(r, byOp, field, key)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if old, ok := out[v]; ok && old != p {
				return nil, &PlanError{Field: field, Key: key,
					Msg: fmt.Sprintf("parallelism %d contradicts %d given for the same vertex", p, old)}
			}
			out[v] = p
		}
	}
	return out, nil
}

func resolveMappers(r *resolver, byOp map[checkpoint.OperatorID]int, field string, m map[string]SubtaskMapper) (map[int]SubtaskMapper, error) {
	out := map[int]SubtaskMapper{}
	for _, key := range sortedKeys(m) {
		vs, err := verticesOf(r, byOp, field, key)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if old, ok := out[v]; ok && old != m[key] {
				return nil, &PlanError{Field: field, Key: key, Msg: "contradicts another key for the same vertex"}
			}
			out[v] = m[key]
		}
	}
	return out, nil
}

// operatorHasState is Flink's test in loadAndValidateCheckpoint: coordinator state, or a subtask
// with any state.
func operatorHasState(op *checkpoint.OperatorLayout) bool {
	if op.CoordinatorState != nil {
		return true
	}
	for i := range op.Subtasks {
		st := &op.Subtasks[i]
		if st.ManagedOperatorState != nil || st.RawOperatorState != nil || st.ManagedKeyedState != nil ||
			st.RawKeyedState != nil || len(st.InputChannels) > 0 || len(st.OutputChannels) > 0 {
			return true
		}
	}
	return false
}

// simulation carries the state of one Simulate call.
type simulation struct {
	layout    *checkpoint.Layout
	plan      Plan
	res       *Result
	inMapper  []SubtaskMapper // per result vertex
	outMapper []SubtaskMapper
	// declaredMaxP is each result vertex's max parallelism before adoption.
	declaredMaxP []int
}

// vertex builds a vertex's assignment shell: parallelism, max parallelism, flags. It returns nil
// for a vertex of new operators only whose parallelism the plan does not give.
func (s *simulation) vertex(vp vertexPlan, override, def int, mp MaxParallelism) *VertexAssignment {
	va := &VertexAssignment{ID: vp.ops[0]}
	var names []string
	for k, id := range vp.ops {
		a := &OperatorAssignment{ID: id, StateID: vp.stIDs[k], VertexID: va.ID}
		if i := vp.states[k]; i >= 0 {
			l := &s.layout.Operators[i]
			a.Layout = l
			a.Name, a.UID = l.Name, l.UID
			a.OldParallelism = l.Parallelism
			a.CheckpointMaxParallelism = l.MaxParallelism
			a.FullyFinished = l.FullyFinished
			if l.CoordinatorState != nil {
				a.CoordinatorBytes = l.CoordinatorState.Size
			}
			if va.OldParallelism == 0 && validParallelism(l.Parallelism) {
				va.OldParallelism = l.Parallelism
			}
			va.FullyFinished = va.FullyFinished || l.FullyFinished
			va.Repartitioned = va.Repartitioned || len(l.Subtasks) > 0 || l.FullyFinished
		}
		names = append(names, a.Name)
		va.Operators = append(va.Operators, a)
	}
	switch {
	case override > 0:
		va.NewParallelism = override
	case def > 0:
		va.NewParallelism = def
	default:
		va.NewParallelism = va.OldParallelism
	}
	if va.NewParallelism == 0 {
		return nil
	}
	if slicesAllSet(names) {
		va.Name = strings.Join(names, " -> ")
	} else {
		va.Name = va.ID.String()
	}
	if mp.Value > 0 {
		va.NewJobMaxParallelism, va.MaxParallelismConfigured = mp.Value, mp.Configured
	} else {
		va.NewJobMaxParallelism = DefaultMaxParallelism(va.NewParallelism)
	}
	va.MaxParallelism = va.NewJobMaxParallelism
	for _, a := range va.Operators {
		a.NewParallelism = va.NewParallelism
	}
	s.declaredMaxP = append(s.declaredMaxP, va.NewJobMaxParallelism)
	return va
}

func slicesAllSet(names []string) bool {
	for _, n := range names {
		if n == "" {
			return false
		}
	}
	return len(names) > 0
}

// fail appends a failure.
func (s *simulation) fail(kind FailureKind, exception string, vertex, op checkpoint.OperatorID, msg string) {
	s.res.Failures = append(s.res.Failures, Failure{Kind: kind, Exception: exception, VertexID: vertex, OperatorID: op, Message: msg})
}

// failures runs Flink's checks in Flink's order (§0.3, §2.4, §3) and applies max-parallelism
// adoption.
func (s *simulation) failures() {
	res := s.res
	// 1. ExecutionJobVertex creation.
	for _, v := range res.Vertices {
		if v.NewParallelism > v.NewJobMaxParallelism {
			s.fail(FailureParallelismAboveMaxParallelism, "JobException", v.ID, checkpoint.OperatorID{},
				fmt.Sprintf("Vertex %s's parallelism (%d) is higher than the max parallelism (%d). Please lower the parallelism or increase the max parallelism.",
					v.Name, v.NewParallelism, v.NewJobMaxParallelism))
		}
	}
	pointer := s.plan.CheckpointPointer
	if pointer == "" {
		pointer = "<checkpoint>"
	}
	byState := map[int]*OperatorAssignment{}
	vertexOf := map[*OperatorAssignment]int{}
	for vi, v := range res.Vertices {
		for _, a := range v.Operators {
			if a.Layout != nil {
				byState[s.layoutIndex(a.Layout)] = a
				vertexOf[a] = vi
			}
		}
	}
	nonRestored := map[checkpoint.OperatorID]*NonRestoredOperator{}
	for i := range res.NonRestored {
		nonRestored[res.NonRestored[i].ID] = &res.NonRestored[i]
	}
	// 2. Checkpoints.loadAndValidateCheckpoint (savepoint / explicit path), in file order.
	if s.plan.Restore == RestoreSavepoint {
		for i := range s.layout.Operators {
			op := &s.layout.Operators[i]
			if a, ok := byState[i]; ok {
				vi := vertexOf[a]
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
	// 3. VertexFinishedStateChecker: uniform finished status inside a vertex.
	for _, v := range res.Vertices {
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
	// 4. StateAssignmentOperation.checkStateMappingCompleteness (the savepoint path removed the
	// unmapped operators already).
	if s.plan.Restore == RestoreLatestCheckpoint {
		for i := range res.NonRestored {
			nr := &res.NonRestored[i]
			s.fail(FailureNoOperatorForState, "IllegalStateException", checkpoint.OperatorID{}, nr.ID,
				"There is no operator for the state "+nr.ID.String())
		}
	}
	// 5. TaskStateAssignment: channel state only on the chain's input and output operators.
	for _, v := range res.Vertices {
		var ids []string
		for k, a := range v.Operators {
			if a.Layout == nil || a.FullyFinished {
				continue
			}
			if k != 0 && hasChannelState(a.Layout, true) || k != len(v.Operators)-1 && hasChannelState(a.Layout, false) {
				ids = append(ids, a.ID.String())
			}
		}
		if len(ids) > 0 {
			s.fail(FailureChainedChannelState, "IllegalStateException", v.ID, checkpoint.OperatorID{},
				"Cannot recover from unaligned checkpoint when topology changes, such that data exchanges with persisted data are now chained.\nThe following operators contain channel state: ["+strings.Join(ids, ", ")+"]")
		}
	}
	// 6. assignAttemptState per repartitioned vertex: checkParallelismPreconditions, then channel
	// state rescaling.
	for vi, v := range res.Vertices {
		if !v.Repartitioned || v.FullyFinished {
			continue
		}
		for _, a := range v.Operators {
			if a.Layout == nil {
				continue
			}
			ckMaxP := a.CheckpointMaxParallelism
			if ckMaxP < v.NewParallelism {
				s.fail(FailureMaxParallelismBelowParallelism, "IllegalStateException", v.ID, a.ID,
					fmt.Sprintf("The state for task %s can not be restored. The maximum parallelism (%d) of the restored state is lower than the configured parallelism (%d). Please reduce the parallelism of the task to be lower or equal to the maximum parallelism.",
						v.ID, ckMaxP, v.NewParallelism))
			}
			if ckMaxP != v.MaxParallelism {
				if !v.MaxParallelismConfigured {
					v.MaxParallelism = ckMaxP
					v.MaxParallelismAdopted = ckMaxP != v.NewJobMaxParallelism
				} else {
					s.fail(FailureMaxParallelismChanged, "IllegalStateException", v.ID, a.ID,
						fmt.Sprintf("The maximum parallelism (%d) with which the latest checkpoint of the execution job vertex %s has been taken and the current maximum parallelism (%d) changed. This is currently not supported.",
							ckMaxP, v.Name, v.MaxParallelism))
				}
			}
		}
		if v.Rescaled() {
			for k, a := range v.Operators {
				if a.Layout == nil {
					continue
				}
				if k == 0 && hasChannelState(a.Layout, true) && s.inMapper[vi] == MapperUnsupported ||
					k == len(v.Operators)-1 && hasChannelState(a.Layout, false) && s.outMapper[vi] == MapperUnsupported {
					s.fail(FailureUnsupportedChannelRescale, "UnsupportedOperationException", v.ID, a.ID,
						"Cannot rescale the given pointwise partitioner.\nDid you change the partitioner to forward or rescale?\nIt may also help to add an explicit shuffle().")
				}
			}
		}
	}
}

func (s *simulation) layoutIndex(l *checkpoint.OperatorLayout) int {
	for i := range s.layout.Operators {
		if &s.layout.Operators[i] == l {
			return i
		}
	}
	return -1
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

// distribute builds every operator's distributions and runs the operator pass, on all cores when
// the work is large.
func (s *simulation) distribute() {
	var sims []*operatorSim
	var work int
	for vi, v := range s.res.Vertices {
		for _, a := range v.Operators {
			switch {
			case v.FullyFinished:
				a.Path = PathFinished
				a.Summary.EmptySubtasks = v.NewParallelism
				continue
			case a.Layout == nil || !v.Repartitioned || !validParallelism(a.Layout.Parallelism):
				// (A stored parallelism outside 1..32768 comes from a malformed file; Flink could
				// not have written it, and simulating it would allocate without bound.)
				a.Path = PathNotRestored
				a.Summary.EmptySubtasks = v.NewParallelism
				continue
			}
			a.MaxParallelism = v.MaxParallelism
			sim := newOperatorSim(a, a.Layout, v.NewParallelism)
			sim.maxP, sim.inMapper, sim.outMapper = v.MaxParallelism, s.inMapper[vi], s.outMapper[vi]
			a.sim = sim
			sims = append(sims, sim)
			work += sim.newP * (len(a.Layout.Subtasks) + 1)
		}
		for _, a := range v.Operators {
			a.MaxParallelism = v.MaxParallelism
			a.NewParallelism = v.NewParallelism
			a.taskRestored = v.Repartitioned && !v.FullyFinished
		}
	}
	workers := runtime.GOMAXPROCS(0)
	if work < 1<<16 || workers < 2 || len(sims) < 2 {
		var sc scratch
		for _, sim := range sims {
			sim.build()
			sim.summarize(&sc)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan *operatorSim, len(sims))
	for _, sim := range sims {
		next <- sim
	}
	close(next)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sc scratch
			for sim := range next {
				sim.build()
				sim.summarize(&sc)
			}
		}()
	}
	wg.Wait()
}

// build sets up the operator's distributions (§1, §2, §3.2).
func (sim *operatorSim) build() {
	a := sim.a
	managed, p1 := sim.buildOperatorStates(false)
	raw, p2 := sim.buildOperatorStates(true)
	a.States = append(managed, raw...)
	a.Path = max(p1, p2)
	a.ManagedKeyed = newKeyedDistribution(sim, false, sim.maxP)
	a.RawKeyed = newKeyedDistribution(sim, true, sim.maxP)
	if c := newChannelDistribution(sim, true); c != nil {
		c.resolve(true, sim.inMapper, sim.oldP, sim.newP)
		a.InputChannels = c
	}
	if c := newChannelDistribution(sim, false); c != nil {
		c.resolve(true, sim.outMapper, sim.oldP, sim.newP)
		a.OutputChannels = c
	}
}

func validParallelism(p int) bool { return p >= 1 && p <= UpperBoundMaxParallelism }
