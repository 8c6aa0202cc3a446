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

// The job benchmarks check a checkpoint against a running job (a Placement) at n = 1,000 and
// 10,000 and report the cost per vertex, operator or candidate: it should not grow with n
// (bench/README.md, "Checks against a running job").
//
//	go test ./internal/engine -run '^$' -bench CheckJob -benchtime 3x

// jobBench is one shape: the checkpoint, the job and the plan for n, what the report must hold,
// and what the cost is counted per.
type jobBench struct {
	name, per string
	build     func(b *testing.B, n int) (*checkpoint.Layout, *flinkrest.Job, *pb.RescalePlan)
	want      func(rep *pb.RescaleReport, n int) error
	sizes     []int // the n to run at; nil: 1,000 and 10,000
}

func (jb jobBench) run(b *testing.B) {
	sizes := jb.sizes
	if sizes == nil {
		sizes = []int{1000, 10000}
	}
	for _, n := range sizes {
		l, job, plan := jb.build(b, n)
		pl := placement.Place(l, job)
		e := New()
		b.Run(fmt.Sprintf("%s-%d", jb.name, n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rep, err := e.Check(context.Background(), Request{Layout: l, Source: "bench", Plan: plan, Placement: pl})
				if err == nil {
					err = jb.want(rep, n)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/"+jb.per)
		})
	}
}

// vertexEach is a generated file of n single-state operators and a job whose every vertex is one
// of them, placed by ID.
func vertexEach(b *testing.B, n int) (*checkpoint.Layout, *flinkrest.Job) {
	_, l := scenariotest.SyntheticLayout(b, scenarios.SyntheticOperators(n))
	job := &flinkrest.Job{}
	for _, op := range l.Operators {
		job.Vertices = append(job.Vertices, flinkrest.Vertex{ID: op.ID.String(), Name: op.Name, Parallelism: op.Parallelism,
			MaxParallelism: op.MaxParallelism, Operators: []string{op.Name}})
	}
	return l, job
}

// unnamedHeads is a checkpoint without operator names (format 4) of n operators, the i-th at
// parallelism p(i), and a job whose vertices they head, placed by ID.
func unnamedHeads(n, maxP int, p func(i int) int) (*checkpoint.Layout, *flinkrest.Job) {
	l := &checkpoint.Layout{Version: 4}
	job := &flinkrest.Job{}
	for i := range n {
		head := checkpoint.OperatorLayout{ID: checkpoint.OperatorIDFromUID(fmt.Sprintf("head-%d", i)), Parallelism: p(i), MaxParallelism: maxP}
		l.Operators = append(l.Operators, head)
		job.Vertices = append(job.Vertices, flinkrest.Vertex{ID: head.ID.String(), Name: fmt.Sprintf("v%d", i), Parallelism: p(i), MaxParallelism: maxP})
	}
	return l, job
}

// jobVertices wants a report listing n job vertices.
func jobVertices(rep *pb.RescaleReport, n int) error {
	if len(rep.GetJobVertices()) != n {
		return fmt.Errorf("%d job vertices", len(rep.GetJobVertices()))
	}
	return nil
}

// atLeastFindings wants a report of n findings or more.
func atLeastFindings(rep *pb.RescaleReport, n int) error {
	if len(rep.GetFindings()) < n {
		return fmt.Errorf("%d findings", len(rep.GetFindings()))
	}
	return nil
}

// BenchmarkCheckJob: every vertex at twice its parallelism (-p 2): what a check with
// --flink-rest adds to a file's (placement's plan, the vertices' new parallelism).
func BenchmarkCheckJob(b *testing.B) {
	jobBench{name: "vertices", per: "vertex", want: jobVertices,
		build: func(b *testing.B, n int) (*checkpoint.Layout, *flinkrest.Job, *pb.RescalePlan) {
			l, job := vertexEach(b, n)
			return l, job, &pb.RescalePlan{DefaultParallelism: 2}
		}}.run(b)
}

// BenchmarkCheckJobPlanPerVertex: the plan an autoscaler sends (and decision.Decide passes on),
// every vertex's new parallelism keyed by its JobVertexID.
func BenchmarkCheckJobPlanPerVertex(b *testing.B) {
	jobBench{name: "vertices", per: "vertex", want: jobVertices,
		build: func(b *testing.B, n int) (*checkpoint.Layout, *flinkrest.Job, *pb.RescalePlan) {
			l, job := vertexEach(b, n)
			plan := &pb.RescalePlan{VertexParallelism: map[string]int32{}}
			for _, op := range l.Operators {
				plan.VertexParallelism[op.ID.String()] = int32(2 * op.Parallelism)
			}
			return l, job, plan
		}}.run(b)
}

// BenchmarkCheckJobRefused: every vertex raised to 200, above its max parallelism (128, PF110):
// the safe-parallelism search then re-simulates every vertex alone.
func BenchmarkCheckJobRefused(b *testing.B) {
	jobBench{name: "vertices", per: "vertex",
		build: func(b *testing.B, n int) (*checkpoint.Layout, *flinkrest.Job, *pb.RescalePlan) {
			l, job := vertexEach(b, n)
			return l, job, &pb.RescalePlan{DefaultParallelism: 200}
		},
		want: func(rep *pb.RescaleReport, n int) error {
			if s := rep.GetSafeParallelism(); len(s) != n || s[0].GetBelow() != 128 {
				return fmt.Errorf("%d safe parallelisms: %v", len(s), s[:min(1, len(s))])
			}
			return nil
		}}.run(b)
}

// BenchmarkCheckJobChains: n/2 two-operator chains (as Flink 1.x names them, "head -> chained";
// the chained operator placed by name), every vertex keyed by its JobVertexID at twice its
// parallelism: the plan then declares n/2 chains (withChains).
func BenchmarkCheckJobChains(b *testing.B) {
	jobBench{name: "operators", per: "operator",
		build: func(b *testing.B, n int) (*checkpoint.Layout, *flinkrest.Job, *pb.RescalePlan) {
			_, l := scenariotest.SyntheticLayout(b, scenarios.SyntheticOperators(n))
			job := &flinkrest.Job{}
			plan := &pb.RescalePlan{VertexParallelism: map[string]int32{}}
			for i := 0; i+1 < len(l.Operators); i += 2 {
				head, chained := l.Operators[i], l.Operators[i+1]
				job.Vertices = append(job.Vertices, flinkrest.Vertex{ID: head.ID.String(), Name: head.Name + " -> " + chained.Name, Parallelism: head.Parallelism,
					MaxParallelism: head.MaxParallelism, Operators: []string{head.Name, chained.Name}})
				plan.VertexParallelism[head.ID.String()] = int32(2 * head.Parallelism)
			}
			if pl := placement.Place(l, job); len(pl.Unplaced) > 0 || len(pl.Vertices[0].Operators) != 2 {
				b.Fatalf("%d unplaced, first vertex %v", len(pl.Unplaced), pl.Vertices[0].PlacedBy)
			}
			return l, job, plan
		},
		want: func(rep *pb.RescaleReport, n int) error {
			if err := jobVertices(rep, n/2); err != nil || rep.GetOperators()[1].GetNewParallelism() != 2 {
				return fmt.Errorf("%v, %v", err, rep.GetOperators()[1])
			}
			return nil
		}}.run(b)
}

// BenchmarkCheckJobUnplaced: a checkpoint without operator names against a job of n
// two-operator chains whose vertices share their parallelism in pairs: the heads are placed by
// ID, and every chained operator stays unplaced with two candidate vertices (n PF200 findings).
func BenchmarkCheckJobUnplaced(b *testing.B) {
	jobBench{name: "unplaced", per: "operator", want: atLeastFindings,
		build: func(b *testing.B, n int) (*checkpoint.Layout, *flinkrest.Job, *pb.RescalePlan) {
			l, job := unnamedHeads(n, 32768, func(i int) int { return 1 + i/2 })
			for i := range n {
				l.Operators = append(l.Operators, checkpoint.OperatorLayout{ID: checkpoint.OperatorIDFromUID(fmt.Sprintf("chained-%d", i)),
					Parallelism: 1 + i/2, MaxParallelism: 32768})
			}
			if pl := placement.Place(l, job); len(pl.Unplaced) != n {
				b.Fatalf("%d unplaced", len(pl.Unplaced))
			}
			return l, job, &pb.RescalePlan{DefaultParallelism: 2}
		}}.run(b)
}

// BenchmarkCheckJobUnplacedWide: a checkpoint without operator names against a job of n
// vertices alike (one parallelism and max parallelism, as parallelism.default leaves a job), one
// chained operator of which is unplaced with all n as candidates, every vertex rescaled and one
// differently: PF200 then denies each of the n candidates. Each finding lists at most
// maxListedCandidates of them, so the report grows with n, not n².
func BenchmarkCheckJobUnplacedWide(b *testing.B) {
	jobBench{name: "candidates", per: "candidate", want: atLeastFindings,
		build: func(b *testing.B, n int) (*checkpoint.Layout, *flinkrest.Job, *pb.RescalePlan) {
			l, job := unnamedHeads(n, 128, func(int) int { return 4 })
			l.Operators = append(l.Operators, checkpoint.OperatorLayout{ID: checkpoint.OperatorIDFromUID("chained"), Parallelism: 4, MaxParallelism: 128})
			if pl := placement.Place(l, job); len(pl.Unplaced) != 1 || len(pl.Unplaced[0].Candidates) != n {
				b.Fatalf("%d unplaced", len(pl.Unplaced))
			}
			return l, job, &pb.RescalePlan{DefaultParallelism: 8, VertexParallelism: map[string]int32{job.Vertices[0].ID: 16}}
		}}.run(b)
}

// BenchmarkCheckJobUnplacedAlike: a checkpoint without operator names of n vertex heads and n
// chained operators, all at one parallelism and max parallelism, against a job of the n
// vertices, every one rescaled and one differently: each chained operator is unplaced with all n
// vertices as candidates and every vertex is denied for all of them. PF200 states that once per
// vertex (n findings listing n operators each), not once per operator and vertex (n²).
func BenchmarkCheckJobUnplacedAlike(b *testing.B) {
	jobBench{name: "vertices", per: "vertex", sizes: []int{100, 1000},
		build: func(b *testing.B, n int) (*checkpoint.Layout, *flinkrest.Job, *pb.RescalePlan) {
			l, job := unnamedHeads(n, 128, func(int) int { return 4 })
			for i := range n {
				l.Operators = append(l.Operators, checkpoint.OperatorLayout{ID: checkpoint.OperatorIDFromUID(fmt.Sprintf("chained-%d", i)), Parallelism: 4, MaxParallelism: 128})
			}
			return l, job, &pb.RescalePlan{DefaultParallelism: 8, VertexParallelism: map[string]int32{job.Vertices[0].ID: 16}}
		},
		want: func(rep *pb.RescaleReport, n int) error {
			if fs := rep.GetFindings(); len(fs) < n || len(fs) > 2*n {
				return fmt.Errorf("%d findings for %d vertices", len(fs), n)
			}
			return nil
		}}.run(b)
}
