package findings

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// bruteForceSafe is the reference of the safe-parallelism search: for every vertex with a
// denying finding, every candidate from the request outwards (down to 1, up to searchLimit),
// each tested by simulating the whole job with the vertex at that parallelism and running every
// rule, with no bound, shortcut or budget.
func bruteForceSafe(t *testing.T, l *checkpoint.Layout, plan rescale.Plan, opts Options, rep Report) []SafeParallelism {
	t.Helper()
	fail := opts.failLevel()
	base, err := rescale.Simulate(l, plan)
	if err != nil {
		t.Fatal(err)
	}
	denies := func(v *rescale.VertexAssignment, p int) bool {
		p2 := withVertexParallelism(plan, v, p)
		p2.OnlyVertices = nil // the whole job
		res, err := rescale.Simulate(l, p2)
		if err != nil {
			t.Fatalf("simulate at %d: %v", p, err)
		}
		c := newContext(l, p2, res, nil, opts, nil)
		for _, r := range enabledRules(opts) {
			for _, f := range r.Check(c) {
				if f.VertexID == v.ID.String() && f.Severity >= fail {
					return true
				}
			}
		}
		return false
	}
	var out []SafeParallelism
	for _, s := range rep.Safe {
		v := vertexByHex(base, s.VertexID)
		sp := SafeParallelism{VertexID: s.VertexID, VertexName: v.Name, Requested: int32(v.NewParallelism), Position: vertexPosition(v)}
		for p := v.NewParallelism - 1; p >= 1; p-- {
			if !denies(v, p) {
				sp.Below = int32(p)
				break
			}
		}
		for p := v.NewParallelism + 1; p <= searchLimit(v); p++ {
			if !denies(v, p) {
				sp.Above = int32(p)
				break
			}
		}
		out = append(out, sp)
	}
	return out
}

// TestSafeSearchMatchesBruteForce: the search with its bounds, early ends and single-vertex
// re-simulations finds the same nearest safe parallelisms as simulating the whole job at every
// candidate, on random jobs (several operators, SPLIT, UNION and BROADCAST state, catalog
// state names, keyed state, coordinator state, frame sizes around the UNION payload,
// JobManager memory, both fail levels) under random plans. Deterministic seeds.
func TestSafeSearchMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(propSeed, 23))
	names := append(slices.Clip(randomStates), namedState{"b", checkpoint.Broadcast})
	iterations := 250
	if testing.Short() {
		iterations = 60
	}
	searched, withSafe := 0, 0
	for it := 0; it < iterations; it++ {
		ops := randomOps{maxOps: 4, maxP: 8, maxPs: []int{1, 4, 8, 16, 32}, coordOneIn: 3, stateOneIn: 3, maxElements: 4, maxSize: 400}.draw(rng, names)
		l := layoutOf(t, 5, ops...)
		plan := rescale.Plan{Parallelism: map[string]int{}}
		for _, op := range ops {
			if rng.IntN(3) != 0 {
				plan.Parallelism[op.uid] = 1 + rng.IntN(24)
			}
		}
		if rng.IntN(4) == 0 {
			plan.DefaultParallelism = 1 + rng.IntN(12)
		}
		opts := Options{RPCFrameSize: int64(1+rng.IntN(8)) << 9, FailLevel: []Severity{Error, Warning}[rng.IntN(2)],
			MaxResimulations: 1 << 20}
		if rng.IntN(3) == 0 {
			opts.JobManagerMemory = int64(1+rng.IntN(16)) << 10
		}
		if rng.IntN(5) == 0 {
			opts.FlinkVersion = "1.16.0"
		}
		res, err := rescale.Simulate(l, plan)
		if err != nil {
			t.Fatalf("it %d: %v", it, err)
		}
		rep := Check(l, plan, res, nil, opts)
		want := bruteForceSafe(t, l, plan, opts, rep)
		searched += len(rep.Safe)
		for k, s := range rep.Safe {
			if s.Below != 0 || s.Above != 0 {
				withSafe++
			}
			if s != want[k] {
				t.Fatalf("it %d: search %+v, brute force %+v\nplan %v opts %+v\n%s", it, s, want[k], plan.Parallelism, opts, dump(rep))
			}
		}
	}
	t.Logf("%d denied vertices searched, %d with a safe parallelism", searched, withSafe)
	if searched < iterations/2 || withSafe < iterations/8 {
		t.Fatalf("too few searches exercised: %d, %d with a safe value", searched, withSafe)
	}
}

// TestVertexProbe: a probe's denying rules for a vertex at p are those of a whole-job check
// with the vertex at p, with the JobManager-memory rule on (the probe reads the session's
// payload pass, which it needs first); a cancelled context and an unknown vertex are errors.
func TestVertexProbe(t *testing.T) {
	per := func(n, p int) []int {
		out := make([]int, p)
		for i := range out {
			out[i] = n
		}
		return out
	}
	l := layoutOf(t, 5,
		tOp{name: "compact-operator", uid: "compact-operator", p: 4, maxP: 128, states: []tState{splitState("expired-files", per(1, 4)...)}},
		tOp{name: "src", uid: "src", p: 4, maxP: 16, states: []tState{unionState("u", per(2, 4)...), splitState("s", per(3, 4)...)}, keyedKG: true},
		tOp{name: "pinned", uid: "pinned", p: 1, maxP: 1, coord: 10},
	)
	plan := rescale.Plan{Parallelism: par("compact-operator", 6, "src", 8)}
	opts := Options{RPCFrameSize: 1500, JobManagerMemory: 6 << 10}
	res, err := rescale.Simulate(l, plan)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := NewSession(ctx, l, plan, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Probe(); err == nil {
		t.Fatal("a probe before the payload pass")
	}
	if err := s.PayloadPass(ctx, 0, s.Resimulator().NumVertices()); err != nil {
		t.Fatal(err)
	}
	probe, err := s.Probe()
	if err != nil {
		t.Fatal(err)
	}
	denied := 0
	for _, v := range res.Vertices {
		for p := 1; p <= 20; p++ {
			got, err := probe.DenyingAt(ctx, v.ID.String(), p)
			if err != nil {
				t.Fatal(err)
			}
			whole := withVertexParallelism(plan, v, p)
			whole.OnlyVertices = nil
			again := check(t, l, whole, nil, opts)
			var want []string
			for _, f := range again.Findings {
				if f.VertexID == v.ID.String() && f.Severity >= Error && !slices.Contains(want, f.RuleID) {
					want = append(want, f.RuleID)
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("vertex %s at %d: probe %v, whole job %v\n%s", v.Name, p, got, want, dump(again))
			}
			if len(got) > 0 {
				denied++
			}
		}
	}
	if denied < 10 {
		t.Fatalf("only %d denied probes", denied)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := probe.DenyingAt(cancelled, res.Vertices[0].ID.String(), 3); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	for _, id := range []string{"00000000000000000000000000000000", "not hex", ""} {
		var pe *rescale.PlanError
		if _, err := probe.DenyingAt(ctx, id, 3); !errors.As(err, &pe) || pe.Field != "vertex" {
			t.Fatalf("unknown vertex %q: %v", id, err)
		}
	}
}
