package server

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
	"github.com/flinkpreflight/preflight/internal/engine"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

const compactOperatorID = "0d9ffb4f280d028d86dadba01ac205d7"

// planKey is the plan's part of a result key for layout l.
func planKey(t *testing.T, l *checkpoint.Layout, plan *pb.RescalePlan) []byte {
	t.Helper()
	b, err := appendPlanKey(nil, l, plan)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCanonicalPlan(t *testing.T) {
	l := checkpointtest.File(t, testdataDir(t)+"/compact-sink/_metadata")
	par := func(kv ...any) map[string]int32 {
		m := map[string]int32{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = int32(kv[i+1].(int))
		}
		return m
	}
	const sourceID = "45b0254a46cabbc3efeea5d2e170ea5b"
	for _, tc := range []struct {
		name string
		plan *pb.RescalePlan
		same *pb.RescalePlan // a plan written otherwise that must share the key; nil: none
		raw  bool            // the plan enters the key as written
	}{
		{"by name", &pb.RescalePlan{VertexParallelism: par("compact-operator", 8)}, &pb.RescalePlan{VertexParallelism: par(compactOperatorID, 8)}, false},
		{"by uid", &pb.RescalePlan{VertexParallelism: par("orders-source", 2)}, &pb.RescalePlan{VertexParallelism: par(sourceID, 2)}, false},
		{"by name, uid differs", &pb.RescalePlan{VertexParallelism: par("Source: orders", 2)}, &pb.RescalePlan{VertexParallelism: par(sourceID, 2)}, false},
		{"by upper-case ID", &pb.RescalePlan{VertexParallelism: par(strings.ToUpper(compactOperatorID), 8)}, &pb.RescalePlan{VertexParallelism: par(compactOperatorID, 8)}, false},
		{"map order and every map", &pb.RescalePlan{DefaultParallelism: 3, VertexParallelism: par("compact-operator", 8, "Source: orders", 2),
			MaxParallelism:       map[string]*pb.MaxParallelism{"streaming-writer": {Value: 256, Configured: true}},
			InputChannelMappers:  map[string]pb.SubtaskMapper{"compact-operator": pb.SubtaskMapper(1)},
			OutputChannelMappers: map[string]pb.SubtaskMapper{"Source: orders": pb.SubtaskMapper(2)}},
			&pb.RescalePlan{DefaultParallelism: 3, VertexParallelism: par(sourceID, 2, compactOperatorID, 8),
				MaxParallelism:       map[string]*pb.MaxParallelism{"99f336d29826c83259b04bd32f94ed26": {Value: 256, Configured: true}},
				InputChannelMappers:  map[string]pb.SubtaskMapper{compactOperatorID: pb.SubtaskMapper(1)},
				OutputChannelMappers: map[string]pb.SubtaskMapper{sourceID: pb.SubtaskMapper(2)}}, false},
		{"no plan", nil, &pb.RescalePlan{}, false},
		{"no keys", &pb.RescalePlan{DefaultParallelism: 2}, nil, false},
		{"ID not in the checkpoint", &pb.RescalePlan{VertexParallelism: par(strings.Repeat("AB", 16), 2)}, &pb.RescalePlan{VertexParallelism: par(strings.Repeat("ab", 16), 2)}, false},
		// Not provably the same question: the engine may answer with an error quoting the key.
		{"unknown key", &pb.RescalePlan{VertexParallelism: par("compact-operator", 8, "no-such-operator", 2)}, nil, true},
		{"name and ID of one operator", &pb.RescalePlan{VertexParallelism: par("compact-operator", 8, compactOperatorID, 8)}, nil, true},
		{"contradicting keys", &pb.RescalePlan{VertexParallelism: par("compact-operator", 8, compactOperatorID, 4)}, nil, true},
		{"empty key", &pb.RescalePlan{VertexParallelism: par("", 8)}, nil, true},
		// Chains and new-job operators change how keys resolve.
		{"vertices", &pb.RescalePlan{VertexParallelism: par(compactOperatorID, 8), Vertices: []*pb.Vertex{{Operators: []string{"compact-coordinator", "compact-operator"}}}}, nil, true},
		{"new job operators", &pb.RescalePlan{VertexParallelism: par(compactOperatorID, 8), NewJobOperators: []string{"compact-operator"}}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := planKey(t, l, tc.plan)
			if raw := k[0] == planRaw; raw != tc.raw {
				t.Errorf("raw %v, want %v", raw, tc.raw)
			}
			if tc.same != nil && !bytes.Equal(k, planKey(t, l, tc.same)) {
				t.Errorf("the key differs from the one of %v", tc.same)
			}
			// Any other value is another question.
			other := proto.Clone(tc.plan).(*pb.RescalePlan)
			if other == nil {
				other = &pb.RescalePlan{}
			}
			other.DefaultParallelism++
			if bytes.Equal(k, planKey(t, l, other)) {
				t.Error("another default parallelism gives the same key")
			}
			for key, v := range other.GetVertexParallelism() {
				other.DefaultParallelism--
				other.VertexParallelism[key] = v + 1
				if bytes.Equal(k, planKey(t, l, other)) {
					t.Errorf("another parallelism for %q gives the same key", key)
				}
				break
			}
		})
	}
	// Without the layout (not cached), or with more operators than the bound, names stay raw.
	byName := &pb.RescalePlan{VertexParallelism: par("compact-operator", 8)}
	big := &checkpoint.Layout{Operators: make([]checkpoint.OperatorLayout, maxCanonicalOperators+1)}
	copy(big.Operators, l.Operators)
	for name, ll := range map[string]*checkpoint.Layout{"no layout": nil, "above maxCanonicalOperators": big} {
		if k := planKey(t, ll, byName); k[0] != planRaw {
			t.Errorf("%s: canonical", name)
		}
	}
	if !needsLayout(byName) || needsLayout(&pb.RescalePlan{VertexParallelism: par(strings.ToUpper(compactOperatorID), 8)}) {
		t.Error("needsLayout")
	}
}

// TestCanonicalPlanSameAnswer checks the canonical keys against the engine: for every operator
// of every example and corpus checkpoint, each way of naming it (hex ID in either case, uid,
// name) whose plan gets the same key as the plan by ID gets the same report, or the same kind of
// error.
func TestCanonicalPlanSameAnswer(t *testing.T) {
	eng := engine.New()
	seen := map[string]bool{}
	shared, errs := 0, 0
	for _, sc := range checkScenarios(t) {
		if seen[sc.path] {
			continue
		}
		seen[sc.path] = true
		l := checkpointtest.File(t, sc.path)
		for i := range l.Operators {
			op := &l.Operators[i]
			id := op.ID.String()
			plans := func(key string) []*pb.RescalePlan {
				return []*pb.RescalePlan{
					{VertexParallelism: map[string]int32{key: 2}},
					{DefaultParallelism: 3, VertexParallelism: map[string]int32{key: int32(max(1, 2*op.Parallelism))},
						MaxParallelism: map[string]*pb.MaxParallelism{key: {Value: int32(max(op.MaxParallelism, 2*op.Parallelism, 1)), Configured: true}}},
				}
			}
			for _, key := range []string{strings.ToUpper(id), op.UID, op.Name} {
				if key == "" {
					continue
				}
				for j, p := range plans(key) {
					c := plans(id)[j]
					if !bytes.Equal(planKey(t, l, p), planKey(t, l, c)) {
						continue
					}
					shared++
					a, aerr := eng.Check(context.Background(), engine.Request{Layout: l, Source: sc.path, Plan: p})
					b, berr := eng.Check(context.Background(), engine.Request{Layout: l, Source: sc.path, Plan: c})
					var ape, bpe *engine.PlanError
					switch {
					case aerr != nil || berr != nil:
						errs++
						if errors.As(aerr, &ape) != errors.As(berr, &bpe) || (aerr == nil) != (berr == nil) {
							t.Errorf("%s key %q: errors %v and %v", sc.path, key, aerr, berr)
						}
					case !proto.Equal(a, b):
						t.Errorf("%s key %q (%v): the same key as %v, another report", sc.path, key, p, c)
					}
				}
			}
		}
	}
	if shared == 0 {
		t.Fatal("no plan shared a key with its plan by ID")
	}
	t.Logf("%d plans shared the key of their plan by ID and got the same answer (%d the same kind of error)", shared, errs)
}

// The same question with the operator named by name, uid or ID shares one memoized answer; other
// questions never share it.
func TestMemoCanonicalPlanSharesEntry(t *testing.T) {
	noLeaks(t)
	h, meta := memoHarness(t, Config{})
	req := func(key string, p int32) *pb.CheckRescaleRequest {
		return &pb.CheckRescaleRequest{Checkpoint: &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: meta}},
			Plan: &pb.RescalePlan{VertexParallelism: map[string]int32{key: p}}}
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
	bad.Plan.VertexParallelism["no-such-operator"] = 2
	if _, err := h.c.Check(ctx, bad); err == nil || !strings.Contains(err.Error(), "no-such-operator") {
		t.Errorf("unknown key: %v", err)
	}
	if hits, misses := resultCounts(h); hits != 3 || misses != 3 || h.s.cache.resultLen() != 3 {
		t.Errorf("hits %v misses %v, %d cached; want 3, 3, 3", hits, misses, h.s.cache.resultLen())
	}
}

// FuzzPlanKey: for any plan (decoded from fuzzed bytes), the plan's key does not depend on map
// order or on how its operators are written when it is canonical (the same plan with every key
// replaced by its lowercase hex ID has the same key), and another parallelism value is another key.
//
//	go test ./server -run '^$' -fuzz FuzzPlanKey -fuzztime 30s
func FuzzPlanKey(f *testing.F) {
	fh, err := os.Open("../testdata/compact-sink/_metadata")
	if err != nil {
		f.Skipf("example checkpoint missing: %v", err)
	}
	l, err := checkpoint.ReadLayout(fh)
	fh.Close()
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range []*pb.RescalePlan{
		{VertexParallelism: map[string]int32{"compact-operator": 8}},
		{DefaultParallelism: 3, VertexParallelism: map[string]int32{"Source: orders": 2, strings.ToUpper(compactOperatorID): 8},
			MaxParallelism: map[string]*pb.MaxParallelism{"streaming-writer": {Value: 256}}, InputChannelMappers: map[string]pb.SubtaskMapper{"x": 1}},
		{VertexParallelism: map[string]int32{"compact-operator": 8, compactOperatorID: 4}},
		{Vertices: []*pb.Vertex{{Operators: []string{"a"}}}, NewJobOperators: []string{"b"}},
	} {
		b, err := proto.Marshal(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p pb.RescalePlan
		if proto.Unmarshal(data, &p) != nil {
			return
		}
		k := planKey(t, l, &p)
		// Map order: a fresh copy iterates its maps otherwise.
		if c := proto.Clone(&p).(*pb.RescalePlan); !bytes.Equal(k, planKey(t, l, c)) {
			t.Fatal("the key depends on map order")
		}
		if k[0] == planCanonical {
			byID := proto.Clone(&p).(*pb.RescalePlan)
			byID.VertexParallelism = rekey(t, l, p.GetVertexParallelism())
			byID.MaxParallelism = rekey(t, l, p.GetMaxParallelism())
			byID.InputChannelMappers = rekey(t, l, p.GetInputChannelMappers())
			byID.OutputChannelMappers = rekey(t, l, p.GetOutputChannelMappers())
			if !bytes.Equal(k, planKey(t, l, byID)) {
				t.Fatal("the plan by IDs has another key")
			}
		}
		for key, v := range p.GetVertexParallelism() {
			other := proto.Clone(&p).(*pb.RescalePlan)
			other.VertexParallelism[key] = v + 1
			if bytes.Equal(k, planKey(t, l, other)) {
				t.Fatalf("parallelism %d and %d for %q give one key", v, v+1, key)
			}
		}
	})
}

// rekey is m with every key replaced by the lowercase hex ID it resolves to.
func rekey[V any](t *testing.T, l *checkpoint.Layout, m map[string]V) map[string]V {
	if len(m) == 0 {
		return nil
	}
	out := map[string]V{}
	for k, v := range m {
		id, ok := resolveOperatorKey(l, k)
		if !ok {
			t.Fatalf("a canonical plan's key %q does not resolve", k)
		}
		out[id.String()] = v
	}
	return out
}
