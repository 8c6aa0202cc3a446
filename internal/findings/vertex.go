package findings

import (
	"context"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// CheckVertex applies the rules to a simulated restore and returns only the findings of one
// vertex (JobVertexID hex), without the verdict and the safe-parallelism search: the cheap test
// of one candidate parallelism (simulate with rescale.Plan.OnlyVertices naming the vertex).
func CheckVertex(layout *checkpoint.Layout, plan rescale.Plan, result *rescale.Result, cat *Catalog, opts Options, vertexID string) []Finding {
	fs, _ := CheckVertexContext(context.Background(), layout, plan, result, cat, opts, vertexID)
	return fs
}

// CheckVertexContext is CheckVertex that stops when ctx ends, returning ctx's error.
func CheckVertexContext(ctx context.Context, layout *checkpoint.Layout, plan rescale.Plan, result *rescale.Result, cat *Catalog, opts Options, vertexID string) (out []Finding, err error) {
	err = withContext(ctx, layout, plan, result, cat, opts, func(c *Context, rules []*Rule) {
		for _, f := range runRules(c, rules) {
			if f.VertexID == vertexID {
				out = append(out, f)
			}
		}
	})
	return out, err
}
