package findings

import (
	"cmp"
	"slices"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// setPositions gives each finding the 1-based position in the checkpoint of its operator (else
// of its vertex's head operator), so that reports list findings in the operators table's order
// rather than by hex ID. It looks the IDs up among the simulated vertices of c.Result and, when
// wholeLayout is set (the job-wide pass, whose findings may name operators the new job drops),
// among every operator of the checkpoint: one pass, with a map only as large as the findings' IDs.
func setPositions(c *Context, fs []Finding, wholeLayout bool) {
	// Each finding's parsed IDs, the operator's first, in one slice: finding i's are
	// ids[ends[i-1]:ends[i]].
	ids := make([]checkpoint.OperatorID, 0, 2*len(fs))
	ends := make([]int, len(fs))
	want := make(map[checkpoint.OperatorID]int32, len(fs))
	for i := range fs {
		for _, h := range [2]string{fs[i].OperatorID, fs[i].VertexID} {
			if id, err := checkpoint.ParseOperatorID(h); err == nil {
				ids = append(ids, id)
				want[id] = 0
			}
		}
		ends[i] = len(ids)
	}
	if len(want) == 0 {
		return
	}
	note := func(id checkpoint.OperatorID, idx int) {
		if p, ok := want[id]; ok && p == 0 && idx >= 0 {
			want[id] = int32(idx + 1)
		}
	}
	if c.Result != nil {
		for _, v := range c.Result.Vertices {
			c.stop.Check()
			for _, o := range v.Operators {
				note(o.ID, o.LayoutIndex())
				note(o.StateID, o.LayoutIndex())
			}
		}
	}
	if wholeLayout && c.Layout != nil {
		for i := range c.Layout.Operators {
			c.stop.Check()
			note(c.Layout.Operators[i].ID, i)
		}
	}
	start := 0
	for i := range fs {
		for _, id := range ids[start:ends[i]] {
			if want[id] > 0 {
				fs[i].Position = want[id]
				break
			}
		}
		start = ends[i]
	}
}

// byPosition orders nearest-safe parallelisms as their vertices appear in the checkpoint (a
// vertex of no checkpoint operator, position 0, first), then by ID.
func byPosition(a, b SafeParallelism) int {
	return cmp.Or(cmp.Compare(a.Position, b.Position), cmp.Compare(a.VertexID, b.VertexID))
}

func sortSafe(s []SafeParallelism) { slices.SortStableFunc(s, byPosition) }

// vertexPosition is the position of the vertex's first operator found in the checkpoint.
func vertexPosition(v *rescale.VertexAssignment) int32 {
	for _, o := range v.Operators {
		if i := o.LayoutIndex(); i >= 0 {
			return int32(i + 1)
		}
	}
	return 0
}
