package rescale

import (
	"context"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// vertexPlan is a vertex of the new job before simulation.
type vertexPlan struct {
	ops    []checkpoint.OperatorID // generated IDs, head first
	states []int                   // index into layout.Operators of each op's state, -1 for none
	stIDs  []checkpoint.OperatorID // the ID the state is stored under
}

// soloVertex is a vertex of one operator that the plan does not chain (every operator of a
// checkpoint checked without a job graph). resolvedPlan.solo keeps most as 4 bytes (see there)
// instead of a vertexPlan's three slices (112 bytes): a checkpoint may hold a million operators.
type soloVertex struct {
	id, stID checkpoint.OperatorID // as vertexPlan.ops[0] and stIDs[0]
	state    int32                 // as vertexPlan.states[0]
}

// soloRef is one solo vertex: k ≥ 0 is the checkpoint operator with layout index k, restoring
// its own state (id = stID = its ID, state = k); k < 0 is soloFull[-k-1].
type soloRef int32

// Simulate restores layout with plan the way Flink would. The error is a *PlanError when the plan
// cannot be applied (a key that names no operator, a parallelism ≤ 0 or > 32768, contradictory
// chains); Flink's own precondition failures are not errors but Result.Failures.
func Simulate(layout *checkpoint.Layout, plan Plan) (*Result, error) {
	return SimulateContext(context.Background(), layout, plan)
}

// SimulateContext is Simulate that stops when ctx ends, returning ctx's error: every loop whose
// length grows with the input (operators, vertices, state names, old and new subtasks) checks it.
func SimulateContext(ctx context.Context, layout *checkpoint.Layout, plan Plan) (res *Result, err error) {
	stop, release := cancel.Watch(ctx)
	defer release()
	defer cancel.Recover(&err)
	stop.Check()
	return simulateWith(stop, layout, plan)
}

func simulateWith(stop *cancel.Flag, layout *checkpoint.Layout, plan Plan) (*Result, error) {
	rp, err := resolvePlan(stop, layout, plan)
	if err != nil {
		return nil, err
	}
	stop.Check()
	res := &Result{}
	s := &simulation{layout: layout, plan: plan, res: res, stop: stop, byHash: rp.byHash}
	for v := range rp.numVertices() {
		stop.Check()
		va := s.vertex(rp.vertex(v), rp.par[v], plan.DefaultParallelism, rp.maxPs[v])
		if va == nil {
			continue
		}
		va.skip = rp.only != nil && !rp.only[v]
		s.inMapper = append(s.inMapper, rp.inMappers[v])
		s.outMapper = append(s.outMapper, rp.outMappers[v])
		res.Vertices = append(res.Vertices, va)
	}
	res.NonRestored = nonRestored(stop, layout, rp)
	s.failures()
	s.distribute()
	return res, nil
}

// nonRestored lists the checkpoint's operators that no vertex of the plan restores.
func nonRestored(stop *cancel.Flag, layout *checkpoint.Layout, rp *resolvedPlan) []NonRestoredOperator {
	var out []NonRestoredOperator
	for i := range layout.Operators {
		stop.Check()
		op := &layout.Operators[i]
		if !rp.consumed[i] {
			out = append(out, NonRestoredOperator{ID: op.ID, Name: op.Name, UID: op.UID, HasState: operatorHasState(op)})
		}
	}
	return out
}

// resolvedPlan is a plan resolved against a layout: the new job's vertices and, by index into
// vps, what the plan's keys set for them.
type resolvedPlan struct {
	// The vertices: vps (the plan's chains) then solo (one operator each), numbered in that
	// order; vertex, head and operators read them.
	vps      []vertexPlan
	solo     []soloRef
	soloFull []soloVertex
	layout   *checkpoint.Layout
	consumed []bool // per layout operator: restored by some vertex
	par      map[int]int
	maxPs    map[int]MaxParallelism
	// inMappers and outMappers are the channel-state mappers per vertex.
	inMappers, outMappers map[int]SubtaskMapper
	only                  map[int]bool                     // nil: every vertex
	byHash                map[checkpoint.OperatorID]string // resolver.byHash
}

func (rp *resolvedPlan) numVertices() int { return len(rp.vps) + len(rp.solo) }

// soloVertex returns solo vertex k.
func (rp *resolvedPlan) soloVertex(k int) soloVertex {
	if r := rp.solo[k]; r < 0 {
		return rp.soloFull[-r-1]
	}
	i := int32(rp.solo[k])
	id := rp.layout.Operators[i].ID
	return soloVertex{id: id, stID: id, state: i}
}

// vertex is vertex v's plan (for a solo vertex, built on the call).
func (rp *resolvedPlan) vertex(v int) vertexPlan {
	if v < len(rp.vps) {
		return rp.vps[v]
	}
	sv := rp.soloVertex(v - len(rp.vps))
	return vertexPlan{ops: []checkpoint.OperatorID{sv.id}, states: []int{int(sv.state)}, stIDs: []checkpoint.OperatorID{sv.stID}}
}

// head is vertex v's ID, its first operator's.
func (rp *resolvedPlan) head(v int) checkpoint.OperatorID {
	if v < len(rp.vps) {
		return rp.vps[v].ops[0]
	}
	return rp.soloVertex(v - len(rp.vps)).id
}

// operators yields vertex v's operators, head first.
func (rp *resolvedPlan) operators(v int) iter.Seq[checkpoint.OperatorID] {
	return func(yield func(checkpoint.OperatorID) bool) {
		if v >= len(rp.vps) {
			yield(rp.soloVertex(v - len(rp.vps)).id)
			return
		}
		for _, id := range rp.vps[v].ops {
			if !yield(id) {
				return
			}
		}
	}
}

// states yields the layout index of vertex v's operators' state (-1: none), head first.
func (rp *resolvedPlan) states(v int) iter.Seq[int] {
	return func(yield func(int) bool) {
		if v >= len(rp.vps) {
			yield(int(rp.soloVertex(v - len(rp.vps)).state))
			return
		}
		for _, i := range rp.vps[v].states {
			if !yield(i) {
				return
			}
		}
	}
}

func resolvePlan(stop *cancel.Flag, layout *checkpoint.Layout, plan Plan) (*resolvedPlan, error) {
	if layout == nil {
		return nil, &PlanError{Field: "layout", Msg: "no checkpoint layout"}
	}
	if plan.DefaultParallelism < 0 || plan.DefaultParallelism > UpperBoundMaxParallelism {
		return nil, &PlanError{Field: "default_parallelism", Key: fmt.Sprint(plan.DefaultParallelism),
			Msg: fmt.Sprintf("parallelism must be between 1 and %d (0 keeps the stored parallelism)", UpperBoundMaxParallelism)}
	}
	r := newResolver(layout, stop)
	stop.Check()
	vps, solo, soloFull, consumed, err := buildVertices(r, plan)
	if err != nil {
		return nil, err
	}
	rp := &resolvedPlan{vps: vps, solo: solo, soloFull: soloFull, consumed: consumed, layout: layout}
	// byOp maps a generated ID to its vertex, for the plan's keys; without keys it stays empty
	// (one entry per operator would be most of the plan's memory for a large file).
	var byOp map[checkpoint.OperatorID]int
	if len(plan.Parallelism)+len(plan.MaxParallelism)+len(plan.InputChannelMappers)+len(plan.OutputChannelMappers)+len(plan.OnlyVertices) > 0 {
		byOp = make(map[checkpoint.OperatorID]int, rp.numVertices())
		for v := range rp.numVertices() {
			stop.Check()
			for id := range rp.operators(v) {
				byOp[id] = v
			}
		}
	}
	if rp.par, err = resolveInts(r, byOp, "vertex_parallelism", plan.Parallelism); err != nil {
		return nil, err
	}
	rp.maxPs = map[int]MaxParallelism{}
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
			if old, ok := rp.maxPs[v]; ok && old != mp {
				return nil, &PlanError{Field: "max_parallelism", Key: key, Msg: "contradicts another key for the same vertex"}
			}
			rp.maxPs[v] = mp
		}
	}
	if rp.inMappers, err = resolveMappers(r, byOp, "input_channel_mappers", plan.InputChannelMappers); err != nil {
		return nil, err
	}
	if rp.outMappers, err = resolveMappers(r, byOp, "output_channel_mappers", plan.OutputChannelMappers); err != nil {
		return nil, err
	}
	for _, key := range plan.OnlyVertices {
		vs, err := verticesOf(r, byOp, "only_vertices", key)
		if err != nil {
			return nil, err
		}
		if rp.only == nil {
			rp.only = map[int]bool{}
		}
		for _, v := range vs {
			rp.only[v] = true
		}
	}
	rp.byHash = r.byHash
	return rp, nil
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
	// stop is raised when the caller's context ends; loops that grow with the input check it.
	stop *cancel.Flag
	// byHash is resolvedPlan.byHash: the uid keys matched by hash, by operator.
	byHash map[checkpoint.OperatorID]string
	// single: some vertices simulated by a Resimulator; the checks of operators outside them are
	// skipped (they do not depend on their parallelism) and left to Resimulator.Unrestored.
	single bool
	// prev is a simulation of the same vertex whose operators' state groupings distribute
	// reuses (Resimulator.VertexFrom); nil: none.
	prev *VertexAssignment
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
			a.Layout, a.stateIdx = l, int32(i)
			a.Name, a.UID = l.Name, l.UID
			a.UIDByHash = s.byHash[l.ID]
			a.OldParallelism = l.Parallelism
			a.CheckpointMaxParallelism = l.MaxParallelism
			a.FullyFinished = l.FullyFinished
			if l.CoordinatorState != nil {
				a.CoordinatorBytes = l.CoordinatorState.Size
			}
			va.FullyFinished = va.FullyFinished || l.FullyFinished
			va.Repartitioned = va.Repartitioned || len(l.Subtasks) > 0 || l.FullyFinished
		}
		names = append(names, a.Name)
		va.Operators = append(va.Operators, a)
	}
	va.OldParallelism = storedParallelism(s.layout, slices.Values(vp.states))
	va.NewParallelism, va.JobParallelismNotApplied = plannedParallelism(s.layout, slices.Values(vp.states), override, def)
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

// plannedParallelism is the new parallelism of the vertex whose operators' layout indexes are
// states (-1: none) at the plan's override for it (0: none) and job-wide default def (0: none),
// 0 leaving it out of the Result, and the job-wide parallelism it did not apply, if any.
func plannedParallelism(layout *checkpoint.Layout, states iter.Seq[int], override, def int) (p, notApplied int) {
	p = newParallelism(storedParallelism(layout, states), override, def)
	if p == 0 || override > 0 || def <= 0 || def == 1 {
		return p, 0
	}
	for i := range states {
		if i >= 0 && layout.Operators[i].MaxParallelism == 1 {
			// A job-wide parallelism (-p, parallelism.default, spec.job.parallelism) never reaches an
			// operator whose max parallelism is 1: Flink builds it with an explicit parallelism of 1
			// (non-parallel sources and sinks, planner-pinned committers), so it stays at 1.
			return 1, def
		}
	}
	return p, 0
}

// storedParallelism is a vertex's old parallelism: that of its first operator with checkpoint
// state and a parallelism Flink could have written, else 0.
func storedParallelism(layout *checkpoint.Layout, states iter.Seq[int]) int {
	for i := range states {
		if i >= 0 && validParallelism(layout.Operators[i].Parallelism) {
			return layout.Operators[i].Parallelism
		}
	}
	return 0
}

// newParallelism is a vertex's parallelism in the new job: the plan's for it, else the plan's
// default, else the stored one; 0 leaves the vertex out of the Result.
func newParallelism(stored, override, def int) int {
	switch {
	case override > 0:
		return override
	case def > 0:
		return def
	}
	return stored
}

func slicesAllSet(names []string) bool {
	for _, n := range names {
		if n == "" {
			return false
		}
	}
	return len(names) > 0
}

// distribute builds every operator's distributions and runs the operator pass, on all cores when
// the work is large.
func (s *simulation) distribute() {
	var sims []*operatorSim
	var work int
	for vi, v := range s.res.Vertices {
		for _, a := range v.Operators {
			s.stop.Check()
			switch {
			case v.skip:
				a.Path = PathNotSimulated
				continue
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
			sim.stop = s.stop
			sim.maxP, sim.inMapper, sim.outMapper = v.MaxParallelism, s.inMapper[vi], s.outMapper[vi]
			sim.handleSizing = s.plan.HandleMaps
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
	if work < parallelWork || workers < 2 || len(sims) < 2 {
		var sc scratch
		for _, sim := range sims {
			s.stop.Check()
			sim.build(s.prevSim(sim))
			sim.summarize(&sc)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int, len(sims))
	for k := range sims {
		next <- k
	}
	close(next)
	for range workers {
		wg.Go(func() {
			var sc scratch
			for k := range next {
				// A stopped worker drains nothing more; the others stop at their next check.
				if cancel.Run(func() { sims[k].build(s.prevSim(sims[k])); sims[k].summarize(&sc) }) {
					return
				}
			}
		})
	}
	wg.Wait()
	s.stop.Check()
}

// prevSim returns the simulation of sim's operator in s.prev whose state grouping sim can
// share: the same checkpoint record, read with the same handle map sizing; nil when there is
// none. It only reads s.prev: distribute's workers call it at once.
func (s *simulation) prevSim(sim *operatorSim) *operatorSim {
	if s.prev == nil {
		return nil
	}
	a := sim.a
	for _, b := range s.prev.Operators {
		if b.ID == a.ID && b.Layout == a.Layout && b.sim != nil && b.sim.oldP == sim.oldP && b.sim.handleSizing == sim.handleSizing {
			return b.sim
		}
	}
	return nil
}

// build sets up the operator's distributions (§1, §2, §3.2), its named states from base's
// grouping when base is not nil (see prevSim).
func (sim *operatorSim) build(base *operatorSim) {
	a := sim.a
	if base != nil {
		a.Path = sim.adoptStates(base)
	} else {
		p1 := sim.buildOperatorStates(false)
		p2 := sim.buildOperatorStates(true)
		a.Path = max(p1, p2)
	}
	a.ManagedKeyed = newKeyedDistribution(sim, false, sim.maxP)
	a.RawKeyed = newKeyedDistribution(sim, true, sim.maxP)
	if c := newChannelDistribution(sim, true); c != nil {
		c.resolve(sim.inMapper, sim.oldP, sim.newP)
		a.InputChannels = c
	}
	if c := newChannelDistribution(sim, false); c != nil {
		c.resolve(sim.outMapper, sim.oldP, sim.newP)
		a.OutputChannels = c
	}
}

func validParallelism(p int) bool { return p >= 1 && p <= UpperBoundMaxParallelism }

// parallelWork is the estimated work (new subtasks × old subtasks, summed over operators) from
// which operators are built and summarised on several goroutines. A variable for tests.
var parallelWork = 1 << 16
