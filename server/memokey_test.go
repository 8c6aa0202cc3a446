package server

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/engine"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

func readLayoutFile(t *testing.T, path string) *checkpoint.Layout {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := checkpoint.ReadLayout(f)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

const compactOperatorID = "0d9ffb4f280d028d86dadba01ac205d7"

func TestCanonicalPlan(t *testing.T) {
	l := readLayoutFile(t, testdataDir(t)+"/compact-sink/_metadata")
	par := func(kv ...any) map[string]int32 {
		m := map[string]int32{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = int32(kv[i+1].(int))
		}
		return m
	}
	for _, tc := range []struct {
		name string
		plan *pb.RescalePlan
		want *pb.RescalePlan // nil: the plan is kept as it is
	}{
		{"by name", &pb.RescalePlan{Parallelism: par("compact-operator", 8)}, &pb.RescalePlan{Parallelism: par(compactOperatorID, 8)}},
		{"by uid", &pb.RescalePlan{Parallelism: par("orders-source", 2)}, &pb.RescalePlan{Parallelism: par("45b0254a46cabbc3efeea5d2e170ea5b", 2)}},
		{"by name, uid differs", &pb.RescalePlan{Parallelism: par("Source: orders", 2)}, &pb.RescalePlan{Parallelism: par("45b0254a46cabbc3efeea5d2e170ea5b", 2)}},
		{"by upper-case ID", &pb.RescalePlan{Parallelism: par(strings.ToUpper(compactOperatorID), 8)}, &pb.RescalePlan{Parallelism: par(compactOperatorID, 8)}},
		{"every field kept, every map rewritten", &pb.RescalePlan{DefaultParallelism: 3, Parallelism: par("compact-operator", 8),
			MaxParallelism:       map[string]*pb.MaxParallelism{"streaming-writer": {Value: 256, Configured: true}},
			InputChannelMappers:  map[string]pb.SubtaskMapper{"compact-operator": pb.SubtaskMapper(1)},
			OutputChannelMappers: map[string]pb.SubtaskMapper{"Source: orders": pb.SubtaskMapper(2)}},
			&pb.RescalePlan{DefaultParallelism: 3, Parallelism: par(compactOperatorID, 8),
				MaxParallelism:       map[string]*pb.MaxParallelism{"99f336d29826c83259b04bd32f94ed26": {Value: 256, Configured: true}},
				InputChannelMappers:  map[string]pb.SubtaskMapper{compactOperatorID: pb.SubtaskMapper(1)},
				OutputChannelMappers: map[string]pb.SubtaskMapper{"45b0254a46cabbc3efeea5d2e170ea5b": pb.SubtaskMapper(2)}}},
		{"already canonical", &pb.RescalePlan{Parallelism: par(compactOperatorID, 8)}, nil},
		{"no plan", nil, nil},
		{"no keys", &pb.RescalePlan{DefaultParallelism: 2}, nil},
		// Not provably the same question: the engine may answer with an error quoting the key.
		{"unknown key", &pb.RescalePlan{Parallelism: par("compact-operator", 8, "no-such-operator", 2)}, nil},
		{"ID not in the checkpoint", &pb.RescalePlan{Parallelism: par("compact-operator", 8, strings.Repeat("AB", 16), 2)}, nil},
		{"name and ID of one operator", &pb.RescalePlan{Parallelism: par("compact-operator", 8, compactOperatorID, 8)}, nil},
		{"contradicting keys", &pb.RescalePlan{Parallelism: par("compact-operator", 8, compactOperatorID, 4)}, nil},
		{"empty key", &pb.RescalePlan{Parallelism: par("", 8)}, nil},
		// Chains and new-job operators change how keys resolve.
		{"vertices", &pb.RescalePlan{Parallelism: par("compact-operator", 8), Vertices: []*pb.Vertex{{Operators: []string{"compact-coordinator", "compact-operator"}}}}, nil},
		{"new job operators", &pb.RescalePlan{Parallelism: par("compact-operator", 8), NewJobOperators: []string{"compact-operator"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := canonicalPlan(l, tc.plan)
			if tc.want == nil {
				if got != tc.plan {
					t.Errorf("rewritten to %v, want the plan as it is", got)
				}
				return
			}
			if !proto.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if got == tc.plan {
				t.Error("the request's plan was modified in place")
			}
		})
	}
	// A layout with more operators than the bound keeps plans as written.
	big := &checkpoint.Layout{Operators: make([]checkpoint.OperatorLayout, maxCanonicalOperators+1)}
	copy(big.Operators, l.Operators)
	if p := (&pb.RescalePlan{Parallelism: par("compact-operator", 8)}); canonicalPlan(big, p) != p {
		t.Error("a layout above maxCanonicalOperators was scanned")
	}
}

// TestCanonicalPlanSameAnswer checks canonicalPlan against the engine: for every operator of
// every example and corpus checkpoint, each way of naming it (hex ID in either case, uid, name)
// that canonicalPlan rewrites gives the same report, or the same error, as the canonical plan.
func TestCanonicalPlanSameAnswer(t *testing.T) {
	eng := engine.New()
	seen := map[string]bool{}
	rewritten, errs := 0, 0
	for _, sc := range checkScenarios(t) {
		if seen[sc.path] {
			continue
		}
		seen[sc.path] = true
		l := readLayoutFile(t, sc.path)
		for i := range l.Operators {
			op := &l.Operators[i]
			for _, key := range []string{op.ID.String(), strings.ToUpper(op.ID.String()), op.UID, op.Name} {
				if key == "" {
					continue
				}
				for _, p := range []*pb.RescalePlan{
					{Parallelism: map[string]int32{key: 2}},
					{DefaultParallelism: 3, Parallelism: map[string]int32{key: int32(max(1, 2*op.Parallelism))},
						MaxParallelism: map[string]*pb.MaxParallelism{key: {Value: int32(max(op.MaxParallelism, 2*op.Parallelism, 1)), Configured: true}}},
				} {
					c := canonicalPlan(l, p)
					if c == p {
						continue
					}
					rewritten++
					a, aerr := eng.CheckLayout(context.Background(), l, sc.path, p, nil)
					b, berr := eng.CheckLayout(context.Background(), l, sc.path, c, nil)
					var ape, bpe *engine.PlanError
					switch {
					case aerr != nil || berr != nil:
						if errors.As(aerr, &ape) != errors.As(berr, &bpe) || (aerr == nil) != (berr == nil) {
							t.Errorf("%s key %q: errors %v and %v", sc.path, key, aerr, berr)
						}
						errs++
					case !proto.Equal(a, b):
						t.Errorf("%s key %q (%v): the canonical plan %v gives another report", sc.path, key, p, c)
					}
				}
			}
		}
	}
	if rewritten == 0 {
		t.Fatal("no plan was rewritten")
	}
	t.Logf("%d rewritten plans gave the same answer (%d the same kind of error)", rewritten, errs)
}

// The same question with the operator named by name, uid or ID shares one memoized answer; other
// questions never share it.
func TestMemoCanonicalPlanSharesEntry(t *testing.T) {
	noLeaks(t)
	h, meta := memoHarness(t, Config{})
	req := func(key string, p int32) *pb.CheckRescaleRequest {
		return &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: meta}},
			Plan: &pb.RescalePlan{Parallelism: map[string]int32{key: p}}}
	}
	ctx := context.Background()
	var first *pb.RescaleReport
	for i, key := range []string{"compact-operator", compactOperatorID, strings.ToUpper(compactOperatorID), "compact-operator"} {
		rep, err := h.c.Check(ctx, req(key, 8))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = rep
		} else if !proto.Equal(rep, first) {
			t.Errorf("key %q: another answer than by name", key)
		}
	}
	if hits, misses := resultCounts(h); hits != 3 || misses != 1 || h.s.cache.resultLen() != 1 {
		t.Errorf("hits %v misses %v, %d cached; want 3, 1, 1", hits, misses, h.s.cache.resultLen())
	}
	// Other questions: another parallelism, another operator, the same operator in a plan that
	// also names an unknown one (an error, quoting its keys).
	if rep, err := h.c.Check(ctx, req(compactOperatorID, 4)); err != nil || rep.GetVerdict() == first.GetVerdict() {
		t.Errorf("compact-operator=4: %v %v, want another verdict than %v", rep.GetVerdict(), err, first.GetVerdict())
	}
	if _, err := h.c.Check(ctx, req("compact-coordinator", 8)); err != nil {
		t.Fatal(err)
	}
	bad := req("compact-operator", 8)
	bad.Plan.Parallelism["no-such-operator"] = 2
	if _, err := h.c.Check(ctx, bad); err == nil || !strings.Contains(err.Error(), "no-such-operator") {
		t.Errorf("unknown key: %v", err)
	}
	if hits, misses := resultCounts(h); hits != 3 || misses != 3 || h.s.cache.resultLen() != 3 {
		t.Errorf("hits %v misses %v, %d cached; want 3, 3, 3", hits, misses, h.s.cache.resultLen())
	}
}
