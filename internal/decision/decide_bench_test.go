package decision_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/decision"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/flinkrest"
	"github.com/flinkpreflight/preflight/internal/placement"
	"github.com/flinkpreflight/preflight/internal/scenarios"
	"github.com/flinkpreflight/preflight/internal/scenarios/scenariotest"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// The decide benchmarks decide an autoscaler's proposal for every vertex of a running job whose
// every vertex is one operator of a generated file, placed by ID, at n = 1,000 and 10,000. The
// cost per vertex should not grow with n (bench/README.md, "Checks against a running job").
//
//	go test ./internal/decision -run '^$' -bench Decide -benchtime 3x

// benchDecide proposes propose(op) for every vertex (aligned to key groups when align) and
// fails unless want accepts the answer.
func benchDecide(b *testing.B, propose func(checkpoint.OperatorLayout) int32, align bool, want func(resp *pb.DecideResponse, n int) error) {
	for _, n := range []int{1000, 10000} {
		_, l := scenariotest.SyntheticLayout(b, scenarios.SyntheticOperators(n))
		job := &flinkrest.Job{}
		proposal := map[string]int32{}
		for _, op := range l.Operators {
			job.Vertices = append(job.Vertices, flinkrest.Vertex{ID: op.ID.String(), Name: op.Name, Parallelism: op.Parallelism,
				MaxParallelism: op.MaxParallelism, Operators: []string{op.Name}})
			proposal[op.ID.String()] = propose(op)
		}
		in := decision.Input{Layout: l, Source: "bench", Job: job, Placement: placement.Place(l, job),
			Request: &pb.DecideRequest{ProposedParallelism: proposal, AlignToKeyGroups: align}}
		eng := engine.New()
		b.Run(fmt.Sprintf("vertices-%d", n), func(b *testing.B) {
			for b.Loop() {
				resp, err := decision.Decide(context.Background(), eng, in)
				if err == nil {
					err = want(resp, n)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/vertex")
		})
	}
}

// BenchmarkDecideEveryVertex: every vertex doubled.
func BenchmarkDecideEveryVertex(b *testing.B) {
	benchDecide(b, func(op checkpoint.OperatorLayout) int32 { return int32(2 * op.Parallelism) }, false, func(resp *pb.DecideResponse, n int) error {
		if len(resp.GetVertices()) != n {
			return fmt.Errorf("%d vertices decided", len(resp.GetVertices()))
		}
		return nil
	})
}

// BenchmarkDecideAligned: key-group alignment asked and every vertex proposed at 3, which does
// not divide its max parallelism (128): each vertex is probed at the divisors nearest the
// proposal (NewProber once, then DenyingAt per candidate).
func BenchmarkDecideAligned(b *testing.B) {
	benchDecide(b, func(checkpoint.OperatorLayout) int32 { return 3 }, true, func(resp *pb.DecideResponse, n int) error {
		if v := resp.GetVertices(); len(v) != n || v[0].GetAction() != pb.DecisionAction_DECISION_ACTION_ADJUST {
			return fmt.Errorf("%d vertices decided, the first %v", len(v), v[0])
		}
		return nil
	})
}
