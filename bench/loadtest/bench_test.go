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

// cachedRequest is the cached ghz case: compact-operator=8 is DENY, =4 is ALLOW.
func cachedRequest(path string, compactOperator int32) *pb.CheckRescaleRequest {
	return &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: path}},
		Plan: &pb.RescalePlan{Parallelism: map[string]int32{"compact-operator": compactOperator}}}
}

// BenchmarkRPC: the echo, then the cached check (DENY and ALLOW) answered from the result cache
// ("memo", the default), and with the result cache off and the source asked on every request
// ("nomemo": the layout cache only, as before issue #16's RPC work).
func BenchmarkRPC(b *testing.B) {
	path := compactSink(b)
	allow := []string{filepath.Dir(filepath.Dir(path))}
	for _, srv := range []struct {
		name string
		cfg  server.Config
	}{
		{"memo", server.Config{Allow: allow, QueueWait: 1 << 62}},
		{"nomemo", server.Config{Allow: allow, QueueWait: 1 << 62, ResultCacheBytes: -1, RevalidateInterval: -1}},
	} {
		benchRPC(b, srv.name, srv.cfg, path)
	}
}

func benchRPC(b *testing.B, name string, cfg server.Config, path string) {
	s, err := server.New(cfg)
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
	par := max(1, benchConcurrency/runtime.GOMAXPROCS(0))
	b.Run(name+"/Health", func(b *testing.B) {
		b.ReportAllocs()
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
	for _, c := range []struct {
		name string
		p    int32
	}{{"CheckRescaleCached/deny", 8}, {"CheckRescaleCached/allow", 4}} {
		req := cachedRequest(path, c.p)
		if _, err := api.CheckRescale(context.Background(), req); err != nil { // fills the caches
			b.Fatal(err)
		}
		b.Run(name+"/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
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
