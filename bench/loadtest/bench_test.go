package main

// In-process Go benchmarks of what bench/run.sh measures from outside, for profiling:
//
//	go test ./bench/loadtest -run '^$' -bench . -cpuprofile /tmp/cpu.out
//	go tool pprof -top -nodecount 30 bench/loadtest/loadtest.test /tmp/cpu.out   # or loadtest.test in cwd
//
// BenchmarkRPC compares the cached CheckRescale with the Health/Check echo over a loopback TCP
// listener served by server.New (50 concurrent callers, like ghz -c 50). BenchmarkCheckLayout
// isolates the engine's part of a cached check (no gRPC). BenchmarkReadLayout decodes
// PREFLIGHT_BENCH_FILE (e.g. the 168 MiB file bench/run.sh generates) when set.

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/engine"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
	"github.com/flinkpreflight/preflight/server"
)

const benchConcurrency = 50

func compactSink(b *testing.B) string {
	b.Helper()
	p, err := filepath.Abs("../../testdata/compact-sink/_metadata")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		b.Skipf("example checkpoint missing: %v", err)
	}
	return p
}

func cachedRequest(path string) *pb.CheckRescaleRequest {
	return &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: path}},
		Plan: &pb.RescalePlan{Parallelism: map[string]int32{"compact-operator": 8}}}
}

func BenchmarkRPC(b *testing.B) {
	path := compactSink(b)
	s, err := server.New(server.Config{Allow: []string{filepath.Dir(filepath.Dir(path))}, QueueWait: 1 << 62})
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go s.ServeGRPC(l)
	defer s.Close()
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	api, health := pb.NewPreflightServiceClient(conn), healthpb.NewHealthClient(conn)
	req := cachedRequest(path)
	if _, err := api.CheckRescale(context.Background(), req); err != nil { // fills the cache
		b.Fatal(err)
	}
	par := max(1, benchConcurrency/runtime.GOMAXPROCS(0))
	b.Run("Health", func(b *testing.B) {
		b.SetParallelism(par)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := health.Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("CheckRescaleCached", func(b *testing.B) {
		b.SetParallelism(par)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := api.CheckRescale(context.Background(), req); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkCheckLayout is the engine's part of a cached check: the DENY plan of the cached ghz
// case (which searches the nearest safe parallelism) and an ALLOW plan (no search).
func BenchmarkCheckLayout(b *testing.B) {
	path := compactSink(b)
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	l, err := checkpoint.ReadLayout(f)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	eng := engine.New()
	for _, c := range []struct {
		name string
		p    int32
	}{{"deny/compact-operator=8", 8}, {"allow/compact-operator=4", 4}} {
		plan := &pb.RescalePlan{Parallelism: map[string]int32{"compact-operator": c.p}}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := eng.CheckLayout(context.Background(), l, path, plan, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkReadLayout(b *testing.B) {
	path := os.Getenv("PREFLIGHT_BENCH_FILE")
	if path == "" {
		b.Skip("set PREFLIGHT_BENCH_FILE to a _metadata file")
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		_, err = checkpoint.ReadLayout(f)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
}
