package findings

import (
	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// CheckVertex applies the rules to a simulated restore and returns only the findings of one
// vertex (JobVertexID hex), without the verdict and the safe-parallelism search: the cheap test
// of one candidate parallelism (simulate with rescale.Plan.OnlyVertices naming the vertex).
func CheckVertex(layout *checkpoint.Layout, plan rescale.Plan, result *rescale.Result, cat *Catalog, opts Options, vertexID string) []Finding {
	if opts.AllowNonRestoredState {
		plan.AllowNonRestoredState = true
	}
	c := newContext(layout, plan, result, cat, opts, nil)
	var out []Finding
	for _, f := range runRules(c, enabledRules(opts)) {
		if f.VertexID == vertexID {
			out = append(out, f)
		}
	}
	return out
}
