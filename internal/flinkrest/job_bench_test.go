package flinkrest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/flinkpreflight/preflight/internal/flinkrest"
	"github.com/flinkpreflight/preflight/internal/flinkrest/flinkresttest"
)

// BenchmarkJob reads a job of n two-operator chains from a fake REST API (Flink 1.20: chain
// names; 2.1: the stream graph as well), the HTTP round trips included. Its cost should grow
// with the vertices (bench/README.md, "Checks against a running job").
//
//	go test ./internal/flinkrest -run '^$' -bench 'BenchmarkJob$' -benchtime 5x
func BenchmarkJob(b *testing.B) {
	for _, version := range []string{"1.20", "2.1"} {
		for _, n := range []int{1000, 10000} {
			var vs []flinkresttest.Vertex
			for i := range n {
				vs = append(vs, flinkresttest.Vertex{ID: fmt.Sprintf("%032x", i), Operators: []string{fmt.Sprintf("Source %d", i), fmt.Sprintf("Map %d", i)},
					Parallelism: 4, MaxParallelism: 128})
			}
			fake := flinkresttest.Start(b, flinkresttest.Job{Version: version, CheckpointPath: "file:/data/ck/job/chk-1742", Vertices: vs})
			c, err := flinkrest.New(fake.URL, flinkrest.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("flink-%s/vertices-%d", version, n), func(b *testing.B) {
				for b.Loop() {
					job, err := c.Job(context.Background(), flinkresttest.DefaultJobID)
					if err != nil {
						b.Fatal(err)
					}
					if len(job.Vertices) != n || len(job.Vertices[n-1].Operators) != 2 {
						b.Fatalf("%d vertices, the last %+v", len(job.Vertices), job.Vertices[len(job.Vertices)-1])
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/vertex")
			})
		}
	}
}
