package engine

import (
	"maps"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/placement"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// TestWithChainsKeys: how withChains turns a plan's vertex_parallelism keys into the keys the
// simulation knows, for each way a key can name (or not name) a placed vertex.
func TestWithChainsKeys(t *testing.T) {
	opID := func(uid string) checkpoint.OperatorID { return checkpoint.OperatorIDFromUID(uid) }
	head, chained, other := opID("head"), opID("chained"), opID("other")
	headless := "45b0254a46cabbc3efeea5d2e170ea5b" // a vertex whose head is not in the checkpoint
	stateless := "a004e297ed656c7b8e968e04069ca1a0"
	pl := &placement.Result{Vertices: []placement.Vertex{
		{ID: head.String(), Operators: []checkpoint.OperatorID{head}},
		{ID: headless, Operators: []checkpoint.OperatorID{chained}},
		{ID: stateless},
	}}
	upper := func(s string) string {
		b := []byte(s)
		for i, c := range b {
			if c >= 'a' && c <= 'z' {
				b[i] = c - 'a' + 'A'
			}
		}
		return string(b)
	}
	tests := []struct {
		name string
		in   map[string]int32
		want map[string]int32
	}{
		{"a head's vertex keeps its key", map[string]int32{head.String(): 4}, map[string]int32{head.String(): 4}},
		{"in any case", map[string]int32{upper(head.String()): 4}, map[string]int32{upper(head.String()): 4}},
		{"a headless vertex becomes its first placed operator", map[string]int32{upper(headless): 3}, map[string]int32{chained.String(): 3}},
		{"a vertex without state is left out", map[string]int32{stateless: 2, head.String(): 4}, map[string]int32{head.String(): 4}},
		{"a key naming no vertex stays", map[string]int32{other.String(): 5}, map[string]int32{other.String(): 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := withChains(&pb.RescalePlan{VertexParallelism: tt.in}, pl).GetVertexParallelism()
			if !maps.Equal(got, tt.want) {
				t.Errorf("vertex_parallelism %v, want %v", got, tt.want)
			}
		})
	}
}
