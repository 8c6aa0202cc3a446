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
// the running job's chains as in CheckJobLayout.
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
	fail := findings.Severity(opts.GetFailLevel())
	if opts.GetFailLevel() == pb.Severity_SEVERITY_UNSPECIFIED {
		fail = findings.Severity(pb.Severity_SEVERITY_ERROR)
	}
	fs, err := findings.CheckVertexContext(ctx, layout, plan, res, e.catalog, findings.Options{
		FlinkVersion:          opts.GetFlinkVersion(),
		RPCFrameSize:          opts.GetRpcFrameSizeBytes(),
		InlineThreshold:       opts.GetInlineStateThresholdBytes(),
		JobManagerMemory:      opts.GetJobmanagerMemoryBytes(),
		AllowNonRestoredState: opts.GetAllowNonRestoredState(),
		FailLevel:             fail,
	}, vertexID)
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
