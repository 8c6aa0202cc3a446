package engine

import (
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"

	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// PlanError is the simulator's invalid-plan error; callers map it to INVALID_ARGUMENT / exit 2.
type PlanError = rescale.PlanError

// toRescalePlan converts the API's plan into the simulator's.
func toRescalePlan(p *pb.RescalePlan, opts *pb.CheckOptions) rescale.Plan {
	plan := rescale.Plan{
		DefaultParallelism:    int(p.GetDefaultParallelism()),
		NewJobOperators:       p.GetNewJobOperators(),
		AllowNonRestoredState: opts.GetAllowNonRestoredState(),
	}
	if len(p.GetVertexParallelism()) > 0 {
		plan.Parallelism = make(map[string]int, len(p.GetVertexParallelism()))
		for k, v := range p.GetVertexParallelism() {
			plan.Parallelism[k] = int(v)
		}
	}
	for _, v := range p.GetVertices() {
		plan.Vertices = append(plan.Vertices, rescale.VertexSpec{ID: v.GetId(), Operators: v.GetOperators()})
	}
	if len(p.GetMaxParallelism()) > 0 {
		plan.MaxParallelism = make(map[string]rescale.MaxParallelism, len(p.GetMaxParallelism()))
		for k, v := range p.GetMaxParallelism() {
			plan.MaxParallelism[k] = rescale.MaxParallelism{Value: int(v.GetValue()), Configured: v.GetConfigured()}
		}
	}
	if v, err := findings.ParseVersion(opts.GetFlinkVersion()); err == nil && (v.Major < 1 || v.Major == 1 && v.Minor < 18) {
		// Before FLINK-32410 (1.18) a handle's name map was created with new HashMap<>(n).
		plan.HandleMaps = rescale.HandleMapCapacityN
	}
	plan.InputChannelMappers = toMappers(p.GetInputChannelMappers())
	plan.OutputChannelMappers = toMappers(p.GetOutputChannelMappers())
	return plan
}

func toMappers(m map[string]pb.SubtaskMapper) map[string]rescale.SubtaskMapper {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]rescale.SubtaskMapper, len(m))
	for k, v := range m {
		// The API's enum and the simulator's share ordinals.
		out[k] = rescale.SubtaskMapper(v)
	}
	return out
}
