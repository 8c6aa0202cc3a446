package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/flinkpreflight/preflight/internal/flinkrest"
	"github.com/flinkpreflight/preflight/internal/placement"
	"github.com/flinkpreflight/preflight/internal/scenarios"
	"github.com/flinkpreflight/preflight/internal/scenarios/scenariotest"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// BenchmarkCheckJob checks generated files against a running job whose every vertex is one of
// their operators, placed by ID, at twice their parallelism: what a check with --flink-rest
// adds to a file's (placement's plan, the vertices' new parallelism). Its cost should grow
// with the operators as a file's check does (bench/README.md, "Checks against a running job").
//
//	go test ./internal/engine -run '^$' -bench CheckJob -benchtime 5x
func BenchmarkCheckJob(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		_, l := scenariotest.SyntheticLayout(b, scenarios.SyntheticOperators(n))
		job := &flinkrest.Job{}
		for _, op := range l.Operators {
			job.Vertices = append(job.Vertices, flinkrest.Vertex{ID: op.ID.String(), Name: op.Name, Parallelism: op.Parallelism,
				MaxParallelism: op.MaxParallelism, Operators: []string{op.Name}})
		}
		pl := placement.Place(l, job)
		if len(pl.Unplaced) > 0 {
			b.Fatalf("%d operators not placed", len(pl.Unplaced))
		}
		plan := &pb.RescalePlan{DefaultParallelism: 2}
		e := New()
		b.Run(fmt.Sprintf("vertices-%d", n), func(b *testing.B) {
			for b.Loop() {
				rep, err := e.Check(context.Background(), Request{Layout: l, Source: "bench", Plan: plan, Placement: pl})
				if err != nil {
					b.Fatal(err)
				}
				if len(rep.GetJobVertices()) != n {
					b.Fatalf("%d job vertices", len(rep.GetJobVertices()))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/vertex")
		})
	}
}
