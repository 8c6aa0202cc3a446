package server

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// BenchmarkCheckRescaleHandler is the CheckRescale handler alone (no gRPC, no interceptors but
// the request's log fields, which the interceptor puts in every context) on the cached
// compact-sink example: "hit" answers from the result cache (DENY and ALLOW, the operator named
// by name as the CLI's --set does, and by ID), "first" is a first question (the answers are
// evicted before each; the layout stays cached): the lookup, a flight, the check and memoizing,
// and "miss" runs the check on the cached layout with the result cache off.
//
//	go test ./server -run '^$' -bench CheckRescaleHandler -benchmem
func BenchmarkCheckRescaleHandler(b *testing.B) {
	td := testdataDir(b)
	meta := filepath.Join(td, "compact-sink", "_metadata")
	req := func(key string, p int32) *pb.CheckRescaleRequest {
		return &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: meta}},
			Plan: &pb.RescalePlan{VertexParallelism: map[string]int32{key: p}}}
	}
	for _, srv := range []struct {
		name string
		cfg  Config
	}{
		{"hit", Config{}},
		{"first", Config{}},
		{"miss", Config{ResultCacheBytes: -1}},
	} {
		cfg := srv.cfg
		cfg.Allow, cfg.Logger, cfg.RevalidateInterval = []string{td}, slog.New(slog.DiscardHandler), time.Hour
		s, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct {
			name string
			req  *pb.CheckRescaleRequest
		}{
			{"deny", req("compact-operator", 8)},
			{"allow", req("compact-operator", 4)},
			{"deny-by-id", req("0d9ffb4f280d028d86dadba01ac205d7", 8)},
		} {
			if _, err := s.svc.CheckRescale(context.Background(), c.req); err != nil { // fills the caches
				b.Fatal(err)
			}
			b.Run(srv.name+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if srv.name == "first" {
						b.StopTimer()
						s.cache.mu.Lock()
						for s.cache.results.len() > 0 {
							s.cache.results.removeOldest()
						}
						s.cache.mu.Unlock()
						b.StartTimer()
					}
					ctx := context.WithValue(context.Background(), logFieldsKey{}, &logFields{})
					if _, err := s.svc.CheckRescale(ctx, c.req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		s.Close()
	}
}
