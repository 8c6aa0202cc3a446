package rescale

import (
	"context"
	"fmt"

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
	byID   map[checkpoint.OperatorID]int // vertex ID → index in rp.vps
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
	rs = &Resimulator{layout: layout, plan: plan, rp: rp, byID: make(map[checkpoint.OperatorID]int, len(rp.vps))}
	for v, vp := range rp.vps {
		stop.Check()
		rs.byID[vp.ops[0]] = v
	}
	return rs, nil
}

// Vertex simulates the vertex with the given ID at parallelism p. The Result holds that vertex
// only, exactly as Simulate of the plan with the vertex at p would give it (the same
// VertexAssignment, distributions and summaries), and the Failures that concern it: those
// naming the vertex or one of its operators. What concerns only other operators
// (NonRestored, their failures) is left out. A vertex ID the plan does not have gives a
// *PlanError.
func (rs *Resimulator) Vertex(ctx context.Context, vertexID checkpoint.OperatorID, p int) (res *Result, err error) {
	if p < 1 || p > UpperBoundMaxParallelism {
		return nil, &PlanError{Field: "parallelism", Key: vertexID.String(),
			Msg: fmt.Sprintf("parallelism %d not within 1..%d", p, UpperBoundMaxParallelism)}
	}
	v, ok := rs.byID[vertexID]
	if !ok {
		return nil, &PlanError{Field: "vertex", Key: vertexID.String(), Msg: "names no vertex of the plan"}
	}
	stop, release := cancel.Watch(ctx)
	defer release()
	defer cancel.Recover(&err)
	stop.Check()
	res = &Result{}
	s := &simulation{layout: rs.layout, plan: rs.plan, res: res, stop: stop, single: true}
	va := s.vertex(rs.rp.vps[v], p, rs.plan.DefaultParallelism, rs.rp.maxPs[v])
	if va == nil {
		return res, nil
	}
	s.inMapper = append(s.inMapper, rs.rp.inMappers[v])
	s.outMapper = append(s.outMapper, rs.rp.outMappers[v])
	res.Vertices = append(res.Vertices, va)
	s.failures()
	s.distribute()
	return res, nil
}
