package rescale

import (
	"context"
	"fmt"
	"iter"

	"github.com/flinkpreflight/preflight/internal/cancel"
	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// Resimulator re-simulates one vertex of a plan at other parallelisms, for searches that test
// many candidate parallelisms of many vertices (the nearest safe parallelism, an autoscaler's
// key-group aligned candidates). The plan is resolved against the layout once; each Vertex call
// then costs what simulating that vertex costs (its operators' old and new subtasks), not the
// whole job, so a search over every vertex of a job stays linear in the number of vertices.
type Resimulator struct {
	layout *checkpoint.Layout
	plan   Plan
	rp     *resolvedPlan
	byID   map[checkpoint.OperatorID]int // vertex ID → index in rp.vps; built on the first Vertex call
}

// NewResimulator resolves plan against layout; it fails as Simulate does for a plan that cannot
// be applied. Plan.OnlyVertices is ignored.
func NewResimulator(ctx context.Context, layout *checkpoint.Layout, plan Plan) (rs *Resimulator, err error) {
	stop, release := cancel.Watch(ctx)
	defer release()
	defer cancel.Recover(&err)
	stop.Check()
	plan.OnlyVertices = nil
	rp, err := resolvePlan(stop, layout, plan)
	if err != nil {
		return nil, err
	}
	return &Resimulator{layout: layout, plan: plan, rp: rp}, nil
}

// Vertex simulates the vertex with the given ID at parallelism p. The Result holds that vertex
// only, exactly as Simulate of the plan with the vertex at p would give it (the same
// VertexAssignment, distributions and summaries), and the Failures that concern it: those
// naming the vertex or one of its operators. What concerns only other operators
// (NonRestored, their failures) is left out. A vertex ID the plan does not have gives a
// *PlanError.
func (rs *Resimulator) Vertex(ctx context.Context, vertexID checkpoint.OperatorID, p int) (*Result, error) {
	return rs.vertex(ctx, vertexID, p, nil)
}

// vertex is Vertex, reusing prev's groupings of its operators' states when prev is not nil.
func (rs *Resimulator) vertex(ctx context.Context, vertexID checkpoint.OperatorID, p int, prev *VertexAssignment) (res *Result, err error) {
	if p < 1 || p > UpperBoundMaxParallelism {
		return nil, &PlanError{Field: "vertex_parallelism", Key: vertexID.String(),
			Msg: fmt.Sprintf("parallelism %d not within 1..%d", p, UpperBoundMaxParallelism)}
	}
	stop, release := cancel.Watch(ctx)
	defer release()
	defer cancel.Recover(&err)
	stop.Check()
	if rs.byID == nil {
		rs.byID = make(map[checkpoint.OperatorID]int, rs.rp.numVertices())
		for v := range rs.rp.numVertices() {
			stop.Check()
			rs.byID[rs.rp.head(v)] = v
		}
	}
	v, ok := rs.byID[vertexID]
	if !ok {
		return nil, &PlanError{Field: "vertex", Key: vertexID.String(), Msg: "names no vertex of the plan"}
	}
	res = &Result{}
	s := &simulation{layout: rs.layout, plan: rs.plan, res: res, stop: stop, single: true, byHash: rs.rp.byHash, prev: prev}
	if !rs.add(s, v, p) {
		return res, nil
	}
	s.failures()
	s.distribute()
	return res, nil
}

// VertexFrom is Vertex of prev's vertex, reusing what simulating it found that does not depend
// on the parallelism: each operator's named states grouped in Flink's order, and their old
// entries. prev is the vertex as Simulate or a Resimulator of the same layout and plan gave it
// (at any parallelism); the Result shares those records with it, read only, and is otherwise
// the one Vertex gives. A search that tests a vertex of many state names at several
// parallelisms then holds one grouping of them, not one per candidate beside the check's.
func (rs *Resimulator) VertexFrom(ctx context.Context, prev *VertexAssignment, p int) (*Result, error) {
	return rs.vertex(ctx, prev.ID, p, prev)
}

// add adds the plan's vertex v at parallelism p (0: the planned one) to s's Result, unless
// Simulate leaves it out.
func (rs *Resimulator) add(s *simulation, v, p int) bool {
	if p == 0 {
		p = rs.rp.par[v]
	}
	va := s.vertex(rs.rp.vertex(v), p, rs.plan.DefaultParallelism, rs.rp.maxPs[v])
	if va == nil {
		return false
	}
	s.inMapper = append(s.inMapper, rs.rp.inMappers[v])
	s.outMapper = append(s.outMapper, rs.rp.outMappers[v])
	s.res.Vertices = append(s.res.Vertices, va)
	return true
}

// NumVertices is the number of vertices of the plan, the bound of Vertices' range (some may be
// left out of every Result: a vertex of new operators whose parallelism the plan does not give).
func (rs *Resimulator) NumVertices() int { return rs.rp.numVertices() }

// Vertices simulates the plan's vertices [from, to) at their planned parallelism: the Result
// holds them exactly as Simulate of the whole plan gives them, with the Failures that concern
// them. Simulate's Result is the union of Vertices over consecutive ranges covering
// [0, NumVertices()) and of Unrestored, in that order for Vertices (Failures in another order).
// A caller that checks a large job range by range keeps one range's simulation in memory at a
// time instead of the whole job's.
func (rs *Resimulator) Vertices(ctx context.Context, from, to int) (res *Result, err error) {
	if from < 0 || to > rs.rp.numVertices() || from > to {
		return nil, &PlanError{Field: "vertices", Key: fmt.Sprintf("%d..%d", from, to),
			Msg: fmt.Sprintf("not within the plan's %d vertices", rs.rp.numVertices())}
	}
	stop, release := cancel.Watch(ctx)
	defer release()
	defer cancel.Recover(&err)
	stop.Check()
	res = &Result{}
	s := &simulation{layout: rs.layout, plan: rs.plan, res: res, stop: stop, single: true, byHash: rs.rp.byHash}
	for v := from; v < to; v++ {
		stop.Check()
		rs.add(s, v, 0)
	}
	s.failures()
	s.distribute()
	return res, nil
}

// VertexSize is the number of operators of the plan's vertex v (0 ≤ v < NumVertices()) and the
// number of old subtasks their checkpoint state has: what simulating it costs, for callers
// that cut the job into ranges of about equal work.
func (rs *Resimulator) VertexSize(v int) (operators, oldSubtasks int) {
	for i := range rs.rp.states(v) {
		operators++
		if i >= 0 {
			oldSubtasks += len(rs.layout.Operators[i].Subtasks)
		}
	}
	return operators, oldSubtasks
}

// Unrestored is the part of Simulate's Result that concerns no vertex: the checkpoint
// operators the new job does not restore (NonRestored) and Flink's failures about them.
func (rs *Resimulator) Unrestored(ctx context.Context) (res *Result, err error) {
	stop, release := cancel.Watch(ctx)
	defer release()
	defer cancel.Recover(&err)
	stop.Check()
	res = &Result{NonRestored: nonRestored(stop, rs.layout, rs.rp)}
	s := &simulation{layout: rs.layout, plan: rs.plan, res: res, stop: stop, byHash: rs.rp.byHash}
	s.failures()
	return res, nil
}

// Operators yields the IDs of the operators Simulate's Result lists, in its order (vertex by
// vertex, head first), without simulating: a report can name them (short IDs) before any
// range is simulated.
func (rs *Resimulator) Operators() iter.Seq[checkpoint.OperatorID] {
	return func(yield func(checkpoint.OperatorID) bool) {
		for id := range rs.Parallelisms() {
			if !yield(id) {
				return
			}
		}
	}
}

// Parallelisms yields what Operators yields, each operator with its vertex's new parallelism as
// Simulate's Result gives it, without simulating.
func (rs *Resimulator) Parallelisms() iter.Seq2[checkpoint.OperatorID, int] {
	return func(yield func(checkpoint.OperatorID, int) bool) {
		for v := range rs.rp.numVertices() {
			p, _ := plannedParallelism(rs.layout, rs.rp.states(v), rs.rp.par[v], rs.plan.DefaultParallelism)
			if p == 0 {
				continue
			}
			for id := range rs.rp.operators(v) {
				if !yield(id, p) {
					return
				}
			}
		}
	}
}
