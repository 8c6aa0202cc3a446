package placement_test

import (
	"fmt"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/flinkrest"
	"github.com/flinkpreflight/preflight/internal/placement"
)

// BenchmarkPlaceByParallelism places a checkpoint without operator names (format 4 and older)
// into a job of n two-operator chains, each vertex at its own parallelism (as an autoscaler
// leaves a job): the heads are placed by ID, every chained operator by parallelism. Its cost
// should grow with the operators (bench/README.md, "Checks against a running job").
//
//	go test ./internal/placement -run '^$' -bench PlaceByParallelism -benchtime 5x
func BenchmarkPlaceByParallelism(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		l := &checkpoint.Layout{}
		job := &flinkrest.Job{}
		for i := range n {
			head := op(fmt.Sprintf("head-%d", i), "", 1+i, 32768)
			l.Operators = append(l.Operators, head, op(fmt.Sprintf("chained-%d", i), "", 1+i, 32768))
			job.Vertices = append(job.Vertices, flinkrest.Vertex{ID: head.ID.String(), Name: fmt.Sprintf("v%d", i), Parallelism: 1 + i, MaxParallelism: 32768,
				Operators: []string{fmt.Sprintf("Head %d", i), fmt.Sprintf("Map %d", i)}})
		}
		b.Run(fmt.Sprintf("vertices-%d", n), func(b *testing.B) {
			for b.Loop() {
				pl := placement.Place(l, job)
				if len(pl.Unplaced) > 0 || len(pl.Vertices[n-1].Operators) != 2 {
					b.Fatalf("%d unplaced, last vertex %v", len(pl.Unplaced), pl.Vertices[n-1].PlacedBy)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/vertex")
		})
	}
}
