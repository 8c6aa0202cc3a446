package engine

import (
	"context"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/placement"
	"github.com/flinkpreflight/preflight/internal/rescale"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// DenyingAt simulates the plan for one vertex only (the others are resolved but not
// distributed) and returns the rule IDs of that vertex's findings at or above the fail level:
// empty means the vertex's parallelism in the plan is safe. The plan must already give the
// vertex the parallelism to test. It is how the autoscaler decision tests candidates that the
// report's safe-parallelism search does not cover (key-group aligned ones). pl, when set, adds
// the running job's chains as a Check with a Placement does.
func (e *Engine) DenyingAt(ctx context.Context, layout *checkpoint.Layout, p *pb.RescalePlan, opts *pb.CheckOptions, pl *placement.Result, vertexID string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if pl != nil {
		p = withChains(p, pl)
	}
	plan := toRescalePlan(p, opts)
	plan.OnlyVertices = []string{vertexID}
	res, err := rescale.SimulateContext(ctx, layout, plan)
	if err != nil {
		return nil, err
	}
	fo := probeOptions(opts)
	fail := fo.FailLevel
	fs, err := findings.CheckVertexContext(ctx, layout, plan, res, e.catalog, fo, vertexID)
	if err != nil {
		return nil, err
	}
	var ids []string
	seen := map[string]bool{}
	for _, f := range fs {
		if f.Severity >= fail && !seen[f.RuleID] {
			seen[f.RuleID] = true
			ids = append(ids, f.RuleID)
		}
	}
	return ids, nil
}

// Prober tests candidate parallelisms of single vertices of one plan, as DenyingAt does, but
// resolves the plan once: each test then re-simulates only the vertex it names
// (findings.VertexProbe), so testing every vertex of a large job stays linear in the job and
// never holds the whole job's simulation. The rule that weighs all vertices together
// (JobManager memory) sees the others as planned, from a first pass over the job by ranges.
// Not safe for concurrent use.
type Prober struct {
	probe *findings.VertexProbe
}

// NewProber resolves the plan (with the running job's chains when pl is set) for later probes.
func (e *Engine) NewProber(ctx context.Context, layout *checkpoint.Layout, p *pb.RescalePlan, opts *pb.CheckOptions, pl *placement.Result) (*Prober, error) {
	if pl != nil {
		p = withChains(p, pl)
	}
	s, err := findings.NewSession(ctx, layout, toRescalePlan(p, opts), e.catalog, probeOptions(opts))
	if err != nil {
		return nil, err
	}
	if err := payloadPass(ctx, s); err != nil {
		return nil, err
	}
	probe, err := s.Probe()
	if err != nil {
		return nil, err
	}
	return &Prober{probe: probe}, nil
}

// DenyingAt returns the rule IDs of the vertex's findings at or above the fail level with the
// vertex (JobVertexID hex) at parallelism p and every other vertex as planned: empty means safe.
func (pr *Prober) DenyingAt(ctx context.Context, vertexID string, p int) ([]string, error) {
	return pr.probe.DenyingAt(ctx, vertexID, p)
}
