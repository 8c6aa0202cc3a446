package decision_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/flinkpreflight/preflight/internal/decision"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/flinkrest"
	"github.com/flinkpreflight/preflight/internal/placement"
	"github.com/flinkpreflight/preflight/internal/scenarios"
	"github.com/flinkpreflight/preflight/internal/scenarios/scenariotest"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// BenchmarkDecideEveryVertex decides an autoscaler's proposal that doubles every vertex of a
// running job whose every vertex is one operator of a generated file, placed by ID. Its cost
// should grow with the vertices (bench/README.md, "Checks against a running job").
//
//	go test ./internal/decision -run '^$' -bench DecideEveryVertex -benchtime 5x
func BenchmarkDecideEveryVertex(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		_, l := scenariotest.SyntheticLayout(b, scenarios.SyntheticOperators(n))
		job := &flinkrest.Job{}
		proposal := map[string]int32{}
		for _, op := range l.Operators {
			job.Vertices = append(job.Vertices, flinkrest.Vertex{ID: op.ID.String(), Name: op.Name, Parallelism: op.Parallelism,
				MaxParallelism: op.MaxParallelism, Operators: []string{op.Name}})
			proposal[op.ID.String()] = int32(2 * op.Parallelism)
		}
		in := decision.Input{Layout: l, Source: "bench", Job: job, Placement: placement.Place(l, job), Request: &pb.DecideRequest{ProposedParallelism: proposal}}
		eng := engine.New()
		b.Run(fmt.Sprintf("vertices-%d", n), func(b *testing.B) {
			for b.Loop() {
				resp, err := decision.Decide(context.Background(), eng, in)
				if err != nil {
					b.Fatal(err)
				}
				if len(resp.GetVertices()) != n {
					b.Fatalf("%d vertices decided", len(resp.GetVertices()))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/vertex")
		})
	}
}

// BenchmarkDecideAligned is BenchmarkDecideEveryVertex with key-group alignment asked and every
// vertex proposed at 3, which does not divide its max parallelism (128): each vertex is probed
// at the divisors nearest the proposal (NewProber once, then DenyingAt per candidate).
//
//	go test ./internal/decision -run '^$' -bench DecideAligned -benchtime 3x
func BenchmarkDecideAligned(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		_, l := scenariotest.SyntheticLayout(b, scenarios.SyntheticOperators(n))
		job := &flinkrest.Job{}
		proposal := map[string]int32{}
		for _, op := range l.Operators {
			job.Vertices = append(job.Vertices, flinkrest.Vertex{ID: op.ID.String(), Name: op.Name, Parallelism: op.Parallelism,
				MaxParallelism: op.MaxParallelism, Operators: []string{op.Name}})
			proposal[op.ID.String()] = 3
		}
		in := decision.Input{Layout: l, Source: "bench", Job: job, Placement: placement.Place(l, job),
			Request: &pb.DecideRequest{ProposedParallelism: proposal, AlignToKeyGroups: true}}
		eng := engine.New()
		b.Run(fmt.Sprintf("vertices-%d", n), func(b *testing.B) {
			for b.Loop() {
				resp, err := decision.Decide(context.Background(), eng, in)
				if err != nil {
					b.Fatal(err)
				}
				if len(resp.GetVertices()) != n || resp.GetVertices()[0].GetAction() != pb.DecisionAction_DECISION_ACTION_ADJUST {
					b.Fatalf("%d vertices decided, the first %v", len(resp.GetVertices()), resp.GetVertices()[0])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/vertex")
		})
	}
}
