package findings

import (
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// unionPayloadConstant is the deployment payload every new subtask of the vertex receives at
// any parallelism: the UNION streams, names and offsets of its restored operators
// (rescale.OperatorAssignment.UnionPayloadBytes), exactly as the simulation adds them to each
// subtask's PayloadBytes. v must come from a simulation that distributed the vertex.
func unionPayloadConstant(v *rescale.VertexAssignment) int64 {
	if v.FullyFinished {
		return 0
	}
	var n int64
	for _, op := range v.Operators {
		if op.Layout != nil && op.Path != rescale.PathNotRestored && op.Path != rescale.PathNotSimulated {
			n += op.UnionPayloadBytes()
		}
	}
	return n
}

// frameSizeSafeAt is FrameSizeRule's bound: the UNION part of the payload does not depend on
// the parallelism, so when it alone reaches the level that denies (above the frame size for an
// ERROR; at 80% of it when WARNING findings deny too), every parallelism is refused without
// re-simulating. Otherwise the payload at p depends on how SPLIT_DISTRIBUTE state falls, and
// the search re-simulates.
func frameSizeSafeAt(c *Context, v *rescale.VertexAssignment, _ int) (safe, known bool) {
	frame := c.Options.frameSize()
	floor := unionPayloadConstant(v)
	if floor > frame {
		return false, true
	}
	if c.Options.failLevel() <= Warning && floor >= frame/10*8 {
		return false, true
	}
	return false, false
}
