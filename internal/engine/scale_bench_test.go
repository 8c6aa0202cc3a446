package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"

	"github.com/flinkpreflight/preflight/internal/report"
	"github.com/flinkpreflight/preflight/internal/scenarios"
	"github.com/flinkpreflight/preflight/internal/testutil"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// The scale benchmarks run what `preflight check FILE -p P` runs in-process (a Check with Each and
// the text report to io.Discard) on generated files, and report the file size, the peak heap
// sampled during the check, and the memory model's bound for the file (64 MiB + 4 × size).
// The real CLI's peak RSS is measured by bench/scale.sh with /usr/bin/time.
//
//	go test ./internal/engine -run '^$' -bench Scale -benchtime 3x
//	PREFLIGHT_BENCH_LARGE=1 go test ./internal/engine -run '^$' -bench Scale/operators-1M -benchtime 1x

var scaleFiles sync.Map // spec → path, generated once per process

func scaleFile(b *testing.B, name string, s scenarios.Synthetic) string {
	b.Helper()
	if p, ok := scaleFiles.Load(name); ok {
		return p.(string)
	}
	dir, err := os.MkdirTemp("", "preflight-scale-")
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, name, "_metadata")
	if err := scenarios.WriteFile(path, false, func(w io.Writer) error { return scenarios.WriteSynthetic(w, s) }); err != nil {
		b.Fatal(err)
	}
	scaleFiles.Store(name, path)
	return path
}

// peakHeap samples the heap's object bytes (live and not yet swept) until stop is called.
func peakHeap() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	return testutil.SamplePeak(func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	})
}

// benchCheckFile runs check, one check of the file at path, b.N times and reports the file's
// size, the peak heap of a check and the memory bound for the file (64 MiB + 4 × its size). It
// returns the file's size.
func benchCheckFile(b *testing.B, path string, check func() error) int64 {
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	var peak uint64
	b.ResetTimer()
	for range b.N {
		runtime.GC()
		stop := peakHeap()
		if err := check(); err != nil {
			b.Fatal(err)
		}
		peak = max(peak, stop())
	}
	b.StopTimer()
	mib := func(v float64) float64 { return v / (1 << 20) }
	b.ReportMetric(mib(float64(st.Size())), "file-MiB")
	b.ReportMetric(mib(float64(peak)), "peak-heap-MiB")
	b.ReportMetric(64+4*mib(float64(st.Size())), "bound-MiB")
	return st.Size()
}

func BenchmarkScale(b *testing.B) {
	cases := []struct {
		name  string
		spec  scenarios.Synthetic
		p     int32
		large bool
	}{
		{"operators-100k", scenarios.SyntheticOperators(100_000), 1, false},
		// Rescaled to 2, each operator's one element leaves a subtask empty: 100,000 PF170
		// findings, one per operator (issue 29).
		{"operators-100k-findings-p2", scenarios.SyntheticOperators(100_000), 2, false},
		{"operators-1M-stateless", scenarios.Synthetic{Operators: 1_000_000, Parallelism: 1}, 1, true},
		{"union-4096-to-4096", scenarios.SyntheticUnion(4096), 4096, false},
		{"union-4096-to-8192", scenarios.SyntheticUnion(4096), 8192, false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if c.large && os.Getenv("PREFLIGHT_BENCH_LARGE") == "" {
				b.Skip("set PREFLIGHT_BENCH_LARGE=1 (generates a 70 MB file)")
			}
			path := scaleFile(b, c.name[:len(c.name)-len(fmt.Sprint(c.p))], c.spec)
			eng := New()
			plan := &pb.RescalePlan{DefaultParallelism: c.p}
			size := benchCheckFile(b, path, func() error {
				f, err := os.Open(path)
				if err != nil {
					return err
				}
				var table report.OperatorTable
				rep, err := eng.Check(context.Background(), Request{Input: Input{Reader: f, Source: path}, Plan: plan, Options: &pb.CheckOptions{},
					Detail: SubtasksForChart, Each: table.Add})
				f.Close()
				if err != nil {
					return err
				}
				err = report.WriteTextTable(io.Discard, rep, &table)
				runtime.KeepAlive(rep)
				return err
			})
			b.SetBytes(size)
		})
	}
}
