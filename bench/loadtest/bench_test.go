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
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/testutil"
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
		Plan: &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": compactOperator}}}
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

// serveGRPC starts a server with cfg on a loopback port; it stops when the benchmark ends.
func serveGRPC(b *testing.B, cfg server.Config) string {
	s, err := server.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return testutil.ServeLoopback(b, s.ServeGRPC, s.Close)
}

func benchRPC(b *testing.B, name string, cfg server.Config, path string) {
	addr := serveGRPC(b, cfg)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
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
	l := checkpointtest.File(b, path)
	eng := engine.New()
	for _, c := range []struct {
		name string
		p    int32
	}{{"deny/compact-operator=8", 8}, {"allow/compact-operator=4", 4}} {
		plan := &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": c.p}}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := eng.Check(context.Background(), engine.Request{Layout: l, Source: path, Plan: plan}); err != nil {
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
		checkpointtest.File(b, path)
	}
}

// BenchmarkGenerator runs the native generator of (a) (gen.go) in process against server.New on
// loopback TCP, 50 callers on one connection: the echo and the cached DENY and ALLOW checks, with
// the raw codec (pre-encoded requests, answers compared byte for byte) and the generated client
// ("pb", every answer decoded). Client and server share the process, so ns/op and allocs/op are
// both sides together; compare with BenchmarkRPC, whose callers use the generated client.
func BenchmarkGenerator(b *testing.B) {
	path := compactSink(b)
	addr := serveGRPC(b, server.Config{Allow: []string{filepath.Dir(filepath.Dir(path))}, QueueWait: 1 << 62})
	calls := []genCall{echoCall(), checkCall("deny", cachedRequest(path, 8), pb.Verdict_VERDICT_DENY), checkCall("allow", cachedRequest(path, 4), pb.Verdict_VERDICT_ALLOW)}
	for _, codec := range []string{"raw", "pb"} {
		g, err := newNativeGen(addr, 1, codec, 20*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range calls {
			want, err := g.reference(context.Background(), c) // and fills the caches
			if err != nil {
				b.Fatal(err)
			}
			reqBytes, err := proto.MarshalOptions{Deterministic: true}.Marshal(c.req)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(codec+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				if _, err := g.loop(ctx, c, benchConcurrency, b.N, want, reqBytes, nil); err != nil {
					b.Fatal(err)
				}
			})
		}
		g.close()
	}
}
