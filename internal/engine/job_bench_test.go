package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
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

// BenchmarkCheckJobPlanPerVertex is BenchmarkCheckJob with the plan an autoscaler sends (and
// decision.Decide passes on): every vertex's new parallelism keyed by its JobVertexID.
//
//	go test ./internal/engine -run '^$' -bench CheckJobPlanPerVertex -benchtime 5x
func BenchmarkCheckJobPlanPerVertex(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		_, l := scenariotest.SyntheticLayout(b, scenarios.SyntheticOperators(n))
		job := &flinkrest.Job{}
		plan := &pb.RescalePlan{VertexParallelism: map[string]int32{}}
		for _, op := range l.Operators {
			job.Vertices = append(job.Vertices, flinkrest.Vertex{ID: op.ID.String(), Name: op.Name, Parallelism: op.Parallelism,
				MaxParallelism: op.MaxParallelism, Operators: []string{op.Name}})
			plan.VertexParallelism[op.ID.String()] = int32(2 * op.Parallelism)
		}
		pl := placement.Place(l, job)
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

// BenchmarkCheckJobUnplaced checks a checkpoint without operator names against a job of n
// two-operator chains whose vertices share their parallelism in pairs: the heads are placed by
// ID, and every chained operator stays unplaced with two candidate vertices (n PF200 findings).
//
//	go test ./internal/engine -run '^$' -bench CheckJobUnplaced -benchtime 5x
func BenchmarkCheckJobUnplaced(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		l := &checkpoint.Layout{Version: 4}
		job := &flinkrest.Job{}
		for i := range n {
			p := 1 + i/2
			head := checkpoint.OperatorLayout{ID: checkpoint.OperatorIDFromUID(fmt.Sprintf("head-%d", i)), Parallelism: p, MaxParallelism: 32768}
			chained := checkpoint.OperatorLayout{ID: checkpoint.OperatorIDFromUID(fmt.Sprintf("chained-%d", i)), Parallelism: p, MaxParallelism: 32768}
			l.Operators = append(l.Operators, head, chained)
			job.Vertices = append(job.Vertices, flinkrest.Vertex{ID: head.ID.String(), Name: fmt.Sprintf("v%d", i), Parallelism: p, MaxParallelism: 32768})
		}
		pl := placement.Place(l, job)
		if len(pl.Unplaced) != n {
			b.Fatalf("%d unplaced", len(pl.Unplaced))
		}
		plan := &pb.RescalePlan{DefaultParallelism: 2}
		e := New()
		b.Run(fmt.Sprintf("unplaced-%d", n), func(b *testing.B) {
			for b.Loop() {
				rep, err := e.Check(context.Background(), Request{Layout: l, Source: "bench", Plan: plan, Placement: pl})
				if err != nil {
					b.Fatal(err)
				}
				if len(rep.GetFindings()) < n {
					b.Fatalf("%d findings", len(rep.GetFindings()))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/operator")
		})
	}
}

// BenchmarkCheckJobRefused is BenchmarkCheckJob with every vertex raised to 200, above its max
// parallelism (128, PF110): the safe-parallelism search then re-simulates every vertex alone.
//
//	go test ./internal/engine -run '^$' -bench CheckJobRefused -benchtime 3x
func BenchmarkCheckJobRefused(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		_, l := scenariotest.SyntheticLayout(b, scenarios.SyntheticOperators(n))
		job := &flinkrest.Job{}
		for _, op := range l.Operators {
			job.Vertices = append(job.Vertices, flinkrest.Vertex{ID: op.ID.String(), Name: op.Name, Parallelism: op.Parallelism,
				MaxParallelism: op.MaxParallelism, Operators: []string{op.Name}})
		}
		pl := placement.Place(l, job)
		plan := &pb.RescalePlan{DefaultParallelism: 200}
		e := New()
		b.Run(fmt.Sprintf("vertices-%d", n), func(b *testing.B) {
			for b.Loop() {
				rep, err := e.Check(context.Background(), Request{Layout: l, Source: "bench", Plan: plan, Placement: pl})
				if err != nil {
					b.Fatal(err)
				}
				if len(rep.GetSafeParallelism()) != n || rep.GetSafeParallelism()[0].GetBelow() != 128 {
					b.Fatalf("%d safe parallelisms: %v", len(rep.GetSafeParallelism()), rep.GetSafeParallelism()[:min(1, len(rep.GetSafeParallelism()))])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/vertex")
		})
	}
}

// BenchmarkCheckJobChains checks a job of n/2 two-operator chains (as Flink 1.x names them,
// "head -> chained"; the chained operator placed by name), every vertex keyed by its
// JobVertexID at twice its parallelism: the plan then declares n/2 chains (withChains).
//
//	go test ./internal/engine -run '^$' -bench CheckJobChains -benchtime 3x
func BenchmarkCheckJobChains(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		_, l := scenariotest.SyntheticLayout(b, scenarios.SyntheticOperators(n))
		job := &flinkrest.Job{}
		plan := &pb.RescalePlan{VertexParallelism: map[string]int32{}}
		for i := 0; i+1 < len(l.Operators); i += 2 {
			head, chained := l.Operators[i], l.Operators[i+1]
			job.Vertices = append(job.Vertices, flinkrest.Vertex{ID: head.ID.String(), Name: head.Name + " -> " + chained.Name, Parallelism: head.Parallelism,
				MaxParallelism: head.MaxParallelism, Operators: []string{head.Name, chained.Name}})
			plan.VertexParallelism[head.ID.String()] = int32(2 * head.Parallelism)
		}
		pl := placement.Place(l, job)
		if len(pl.Unplaced) > 0 || len(pl.Vertices[0].Operators) != 2 {
			b.Fatalf("%d unplaced, first vertex %v", len(pl.Unplaced), pl.Vertices[0].PlacedBy)
		}
		e := New()
		b.Run(fmt.Sprintf("operators-%d", n), func(b *testing.B) {
			for b.Loop() {
				rep, err := e.Check(context.Background(), Request{Layout: l, Source: "bench", Plan: plan, Placement: pl})
				if err != nil {
					b.Fatal(err)
				}
				if len(rep.GetJobVertices()) != n/2 || rep.GetOperators()[1].GetNewParallelism() != 2 {
					b.Fatalf("%d job vertices, %v", len(rep.GetJobVertices()), rep.GetOperators()[1])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/operator")
		})
	}
}

// BenchmarkCheckJobUnplacedWide checks a checkpoint without operator names against a job of n
// vertices alike (one parallelism and max parallelism, as parallelism.default leaves a job),
// one chained operator of which is unplaced with all n as candidates, every vertex rescaled and
// one differently: PF200 then denies each of the n candidates. Each finding lists at most
// maxListedCandidates of them, so the report grows with n, not n² (bench/README.md, "Checks
// against a running job").
//
//	go test ./internal/engine -run '^$' -bench CheckJobUnplacedWide -benchtime 3x
func BenchmarkCheckJobUnplacedWide(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		l := &checkpoint.Layout{Version: 4}
		job := &flinkrest.Job{}
		for i := range n {
			head := checkpoint.OperatorLayout{ID: checkpoint.OperatorIDFromUID(fmt.Sprintf("head-%d", i)), Parallelism: 4, MaxParallelism: 128}
			l.Operators = append(l.Operators, head)
			job.Vertices = append(job.Vertices, flinkrest.Vertex{ID: head.ID.String(), Name: fmt.Sprintf("v%d", i), Parallelism: 4, MaxParallelism: 128})
		}
		l.Operators = append(l.Operators, checkpoint.OperatorLayout{ID: checkpoint.OperatorIDFromUID("chained"), Parallelism: 4, MaxParallelism: 128})
		pl := placement.Place(l, job)
		if len(pl.Unplaced) != 1 || len(pl.Unplaced[0].Candidates) != n {
			b.Fatalf("%d unplaced", len(pl.Unplaced))
		}
		plan := &pb.RescalePlan{DefaultParallelism: 8, VertexParallelism: map[string]int32{job.Vertices[0].ID: 16}}
		e := New()
		b.Run(fmt.Sprintf("candidates-%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rep, err := e.Check(context.Background(), Request{Layout: l, Source: "bench", Plan: plan, Placement: pl})
				if err != nil {
					b.Fatal(err)
				}
				if len(rep.GetFindings()) < n {
					b.Fatalf("%d findings", len(rep.GetFindings()))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/candidate")
		})
	}
}
