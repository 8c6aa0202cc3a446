package rescale

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// resimLayout is a job of several operators drawn from randomLayout (renumbered), some with
// keyed state, a fully finished one, and plans that chain two of them, configure a max
// parallelism or list the new job's operators (so that some are not restored).
func resimLayout(seed int64) (*checkpoint.Layout, Plan) {
	rng := newRand(seed)
	l := &checkpoint.Layout{Version: 3}
	n := 2 + rng.Intn(4)
	for k := 0; k < n; k++ {
		oldP := 1 + rng.Intn(9)
		o := randomLayout(rng, oldP, rng.Intn(2) == 0).Operators[0]
		o.ID = opID(k + 1)
		o.MaxParallelism = []int{8, 16, 128}[rng.Intn(3)]
		if o.MaxParallelism < oldP {
			o.MaxParallelism = oldP
		}
		if rng.Intn(3) == 0 {
			for j := range o.Subtasks {
				o.Subtasks[j].ManagedKeyedState = keyGroupsHandle(o.MaxParallelism, oldP, o.Subtasks[j].Index)
			}
		}
		if rng.Intn(10) == 0 {
			o.FullyFinished, o.Subtasks = true, nil
		}
		l.Operators = append(l.Operators, o)
	}
	plan := Plan{Parallelism: map[string]int{}, MaxParallelism: map[string]MaxParallelism{}}
	if rng.Intn(3) == 0 {
		plan.DefaultParallelism = 1 + rng.Intn(12)
	}
	for k := 0; k < n; k++ {
		if rng.Intn(2) == 0 {
			plan.Parallelism[opID(k+1).String()] = 1 + rng.Intn(20)
		}
	}
	if n >= 3 && rng.Intn(3) == 0 {
		plan.Vertices = []VertexSpec{{Operators: []string{opID(1).String(), opID(2).String()}}}
		delete(plan.Parallelism, opID(2).String())
	}
	if rng.Intn(4) == 0 {
		plan.MaxParallelism[opID(n).String()] = MaxParallelism{Value: []int{8, 16, 128}[rng.Intn(3)], Configured: rng.Intn(2) == 0}
	}
	if rng.Intn(4) == 0 {
		plan.NewJobOperators = []string{opID(1).String(), opID(2).String()}
		plan.AllowNonRestoredState = rng.Intn(2) == 0
	}
	if rng.Intn(4) == 0 {
		plan.Restore = RestoreLatestCheckpoint
	}
	return l, plan
}

// vertexDigest is what a search reads of one simulated vertex: the assignment's fields, each
// operator's path, summary and per-state summaries, every new subtask's totals, and the
// failures that name the vertex or one of its operators.
func vertexDigest(res *Result, v *VertexAssignment) string {
	ops := map[checkpoint.OperatorID]bool{}
	s := fmt.Sprintf("vertex %s %q p %d→%d maxP %d/%d conf %v adopted %v finished %v repart %v\n", v.ID, v.Name, v.OldParallelism, v.NewParallelism,
		v.MaxParallelism, v.NewJobMaxParallelism, v.MaxParallelismConfigured, v.MaxParallelismAdopted, v.FullyFinished, v.Repartitioned)
	for _, a := range v.Operators {
		ops[a.ID] = true
		s += fmt.Sprintf(" op %s path %s union %d summary %+v\n", a.ID, a.Path, a.UnionPayloadBytes(), a.Summary)
		for _, st := range a.States() {
			s += fmt.Sprintf("  state %s %s %+v\n", st.Name, st.Mode, st.Summary)
		}
		for i := 0; i < a.NewParallelism; i++ {
			t := a.SubtaskTotals(i)
			s += fmt.Sprintf("  %d: %d %d %d %d %d %d\n", i, t.Elements, t.StateBytes, t.Offsets, t.Handles, t.PayloadBytes, t.KeyedOwnedBytes)
		}
	}
	for _, f := range res.Failures {
		if f.VertexID == v.ID || ops[f.OperatorID] {
			s += fmt.Sprintf(" failure %+v\n", f)
		}
	}
	return s
}

// TestResimulatorMatchesSimulate: re-simulating one vertex at p gives what Simulate of the
// whole plan with that vertex at p gives for it, on random jobs and plans.
// resimCase is seed's random layout and plan (resimLayout), with raw operator state too when
// raw, simulated whole and ready to re-simulate; ok is false when the draw made the plan
// contradictory.
func resimCase(t *testing.T, seed int64, raw bool) (l *checkpoint.Layout, plan Plan, whole *Result, rs *Resimulator, ok bool) {
	t.Helper()
	l, plan = resimLayout(seed)
	if raw {
		withRawState(l)
	}
	whole, err := Simulate(l, plan)
	if err != nil {
		return nil, plan, nil, nil, false
	}
	rs, err = NewResimulator(context.Background(), l, plan)
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	return l, plan, whole, rs, true
}

func TestResimulatorMatchesSimulate(t *testing.T) {
	ctx := context.Background()
	compared, withFailures := 0, 0
	defer func() {
		t.Logf("%d vertex re-simulations compared, %d with failures", compared, withFailures)
		if compared < 1000 || withFailures < 100 {
			t.Errorf("too few cases compared: %d, %d with failures", compared, withFailures)
		}
	}()
	for seed := int64(0); seed < 300; seed++ {
		l, plan, base, rs, ok := resimCase(t, seed, false)
		if !ok {
			continue
		}
		for _, v := range base.Vertices {
			for _, p := range []int{1, 2, 3, 5, 8, 13, 17, 129} {
				got, err := rs.Vertex(ctx, v.ID, p)
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				full := Plan(plan)
				full.Parallelism = map[string]int{}
				for k, x := range plan.Parallelism {
					full.Parallelism[k] = x
				}
				for _, a := range v.Operators { // drop keys of the vertex, then set it
					delete(full.Parallelism, a.ID.String())
				}
				full.Parallelism[v.ID.String()] = p
				want, err := Simulate(l, full)
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if len(got.Vertices) != 1 {
					t.Fatalf("seed %d: %d vertices", seed, len(got.Vertices))
				}
				compared++
				if len(got.Failures) > 0 {
					withFailures++
				}
				if g, w := vertexDigest(got, got.Vertices[0]), vertexDigest(want, want.Vertex(v.ID)); g != w {
					t.Fatalf("seed %d vertex %s at %d:\nresimulated\n%s\nsimulated\n%s", seed, v.ID, p, g, w)
				}
			}
		}
	}
}

func TestResimulatorErrors(t *testing.T) {
	l := layoutOf(op(1, 2, 128, sub(0, handle("a", split("s", 1))), sub(1, handle("b", split("s", 1)))))
	if _, err := NewResimulator(context.Background(), l, Plan{Parallelism: map[string]int{"nope": 2}}); err == nil {
		t.Fatal("unknown key accepted")
	}
	rs, err := NewResimulator(context.Background(), l, Plan{})
	if err != nil {
		t.Fatal(err)
	}
	var pe *PlanError
	if _, err := rs.Vertex(context.Background(), opID(9), 2); !errors.As(err, &pe) {
		t.Fatalf("unknown vertex: %v", err)
	}
	if _, err := rs.Vertex(context.Background(), opID(1), 0); !errors.As(err, &pe) {
		t.Fatalf("parallelism 0: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := rs.Vertex(ctx, opID(1), 3); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if r, err := rs.Vertex(context.Background(), opID(1), 3); err != nil || !reflect.DeepEqual(r.Vertices[0].NewParallelism, 3) {
		t.Fatalf("%v %v", r, err)
	}
}

// TestUnionPayloadBytesIsAFloor: every new subtask's payload includes the operator's UNION
// payload, which is the same at every parallelism.
func TestUnionPayloadBytesIsAFloor(t *testing.T) {
	for seed := int64(0); seed < 200; seed++ {
		rng := newRand(seed)
		l := randomLayout(rng, 1+rng.Intn(9), true)
		var first int64 = -1
		for _, p := range []int{1, 2, 3, 7, 16} {
			res := simulate(t, l, Plan{DefaultParallelism: p})
			a := res.Vertices[0].Operators[0]
			u := a.UnionPayloadBytes()
			if first >= 0 && u != first {
				t.Fatalf("seed %d: union payload %d at %d, %d before", seed, u, p, first)
			}
			first = u
			for i := 0; i < p; i++ {
				if pb := a.SubtaskTotals(i).PayloadBytes; pb < u {
					t.Fatalf("seed %d p %d subtask %d: payload %d below the union payload %d", seed, p, i, pb, u)
				}
			}
		}
	}
}

// TestSplitPayloadFloor: at every parallelism, the new subtasks' payloads beyond the UNION part
// sum to at least PayloadFloor.Total, and the largest is at least MaxAt(p) and the average.
func TestSplitPayloadFloor(t *testing.T) {
	checked := 0
	for seed := int64(0); seed < 300; seed++ {
		l, _ := resimLayout(seed)
		for _, p := range []int{1, 2, 3, 5, 8, 13} {
			res := simulate(t, l, Plan{DefaultParallelism: p})
			for _, v := range res.Vertices {
				for _, a := range v.Operators {
					f, u := a.SplitPayloadFloor(), a.UnionPayloadBytes()
					var sum, most int64
					for i := 0; i < a.NewParallelism; i++ {
						x := a.SubtaskTotals(i).PayloadBytes - u
						sum += x
						most = max(most, x)
					}
					if a.NewParallelism == 0 || a.Path == PathNotRestored || a.Path == PathFinished {
						continue
					}
					checked++
					n := int64(a.NewParallelism)
					if sum < f.Total || most < f.MaxAt(a.NewParallelism) || most < (f.Total+n-1)/n {
						t.Fatalf("seed %d p %d op %s (%s): payloads beyond UNION sum to %d, largest %d; floor %+v, MaxAt %d",
							seed, p, a.ID, a.Path, sum, most, f, f.MaxAt(a.NewParallelism))
					}
				}
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d operators checked", checked)
	}
}

// TestSplitPayloadFloorManyNames: with many names the floor keeps a few per term and stays a
// lower bound.
func TestSplitPayloadFloorManyNames(t *testing.T) {
	var subs []checkpoint.SubtaskLayout
	for j := 0; j < 6; j++ {
		var states []checkpoint.StateEntryLayout
		for k := 0; k < 40; k++ {
			states = append(states, split(fmt.Sprintf("name-%0*d", 1+k%7, k), int64((j*k)%5)))
		}
		subs = append(subs, sub(j, handle(fmt.Sprintf("s%d", j), states...)))
	}
	l := layoutOf(op(1, 6, 128, subs...))
	for _, p := range []int{1, 2, 4, 5, 7, 12, 40} {
		a := simulate(t, l, Plan{DefaultParallelism: p}).Vertices[0].Operators[0]
		f := a.SplitPayloadFloor()
		if len(f.States) > 2*maxFloorStates {
			t.Fatalf("%d names kept", len(f.States))
		}
		var most int64
		for i := 0; i < p; i++ {
			most = max(most, a.SubtaskTotals(i).PayloadBytes-a.UnionPayloadBytes())
		}
		if most < f.MaxAt(p) || f.MaxAt(p) <= 0 {
			t.Fatalf("p %d: largest payload %d, floor %d", p, most, f.MaxAt(p))
		}
	}
}

// resultDigest is vertexDigest of every vertex in order, then the failures and the non-restored
// operators, each sorted (a range-by-range simulation lists failures range by range).
func resultDigest(res *Result) string {
	s := ""
	for _, v := range res.Vertices {
		s += vertexDigest(&Result{}, v)
	}
	var lines []string
	for _, f := range res.Failures {
		lines = append(lines, fmt.Sprintf("failure %+v", f))
	}
	for _, nr := range res.NonRestored {
		lines = append(lines, fmt.Sprintf("non-restored %+v", nr))
	}
	slices.Sort(lines)
	return s + strings.Join(lines, "\n")
}

// TestVerticesAndUnrestoredMatchSimulate: simulating a plan range by range (every range size
// from one vertex to all) and adding Unrestored gives Simulate's Result.
func TestVerticesAndUnrestoredMatchSimulate(t *testing.T) {
	ctx := context.Background()
	compared, withFailures, withNonRestored := 0, 0, 0
	for seed := int64(0); seed < 300; seed++ {
		_, _, want, rs, ok := resimCase(t, seed, false)
		if !ok {
			continue
		}
		var listed, simulated []checkpoint.OperatorID
		for id := range rs.Operators() {
			listed = append(listed, id)
		}
		for _, v := range want.Vertices {
			for _, a := range v.Operators {
				simulated = append(simulated, a.ID)
			}
		}
		if !slices.Equal(listed, simulated) {
			t.Fatalf("seed %d: Operators lists %v, Simulate %v", seed, listed, simulated)
		}
		if got, want := plannedParallelisms(rs), simulatedParallelisms(want); !slices.Equal(got, want) {
			t.Fatalf("seed %d: Parallelisms gives %v, Simulate %v", seed, got, want)
		}
		for size := 1; size <= rs.NumVertices(); size++ {
			got, err := rs.Unrestored(ctx)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			for from := 0; from < rs.NumVertices(); from += size {
				part, err := rs.Vertices(ctx, from, min(from+size, rs.NumVertices()))
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				got.Vertices = append(got.Vertices, part.Vertices...)
				got.Failures = append(got.Failures, part.Failures...)
			}
			if g, w := resultDigest(got), resultDigest(want); g != w {
				t.Fatalf("seed %d, ranges of %d:\nby range\n%s\nwhole\n%s", seed, size, g, w)
			}
			compared++
		}
		if len(want.Failures) > 0 {
			withFailures++
		}
		if len(want.NonRestored) > 0 {
			withNonRestored++
		}
	}
	t.Logf("%d range simulations compared; %d plans with failures, %d with non-restored operators", compared, withFailures, withNonRestored)
	if compared < 500 || withFailures < 30 || withNonRestored < 30 {
		t.Errorf("too few cases: %d compared, %d with failures, %d with non-restored operators", compared, withFailures, withNonRestored)
	}
	rs, _ := NewResimulator(ctx, layoutOf(op(1, 2, 128, sub(0, handle("a", split("s", 1))))), Plan{})
	for _, r := range [][2]int{{-1, 1}, {0, 2}, {1, 0}} {
		var pe *PlanError
		if _, err := rs.Vertices(ctx, r[0], r[1]); !errors.As(err, &pe) {
			t.Errorf("range %v: %v", r, err)
		}
	}
}

// sharesDigest is every new subtask's Share of every state of the vertex, with the subtasks'
// full detail (Subtask): what VertexFrom must give as Vertex does, beyond vertexDigest.
func sharesDigest(v *VertexAssignment) string {
	s := ""
	for _, a := range v.Operators {
		for k := 0; k < a.NumStates(); k++ {
			st := a.State(k)
			s += fmt.Sprintf("%s %s %v %d %d %+v:", st.Name, st.Mode, st.Raw, st.OldEntries, st.Bytes, st.Summary)
			for i := 0; i < a.NewParallelism; i++ {
				sh := st.Share(i)
				s += fmt.Sprintf(" %d:%v/%d/%d[%s]", i, sh.Present, sh.Elements, sh.Bytes, sliceString(sh))
			}
			s += "\n"
		}
		for i := 0; i < a.NewParallelism; i++ {
			s += fmt.Sprintf(" subtask %d %+v olds %v\n", i, a.Subtask(i), a.OldSubtasksRead32(i))
		}
	}
	return s
}

// withRawState gives every old subtask of the layout's first operator a raw operator state
// handle too (SPLIT, UNION and BROADCAST names, one handle without names), so that both
// lists are shared.
func withRawState(l *checkpoint.Layout) {
	o := &l.Operators[0]
	for j := range o.Subtasks {
		st := &o.Subtasks[j]
		if j%4 == 3 {
			st.RawOperatorState = handle(fmt.Sprintf("raw-%d", j)) // a handle without names
			continue
		}
		st.RawOperatorState = handle(fmt.Sprintf("raw-%d", j), split("r-split", int64(j+1)), split("r-Aa", 2),
			union("r-union", int64(j%3)), bcast("r-bcast", 1))
	}
}

// TestVertexFromMatchesVertex: re-simulating a vertex from the check's simulation of it
// (sharing its grouping of the states) gives what re-simulating it afresh gives, at lower,
// equal and higher parallelisms, and leaves the check's simulation as it was.
func TestVertexFromMatchesVertex(t *testing.T) {
	ctx := context.Background()
	compared, shared := 0, 0
	for seed := int64(0); seed < 60; seed++ {
		_, _, base, rs, ok := resimCase(t, seed, seed%2 == 1)
		if !ok {
			continue
		}
		for _, v := range base.Vertices {
			before := vertexDigest(base, v) + sharesDigest(v)
			ps := []int{1, 2, 3, 5, 8, 13, 129, v.OldParallelism, v.NewParallelism}
			for _, p := range ps {
				if p < 1 {
					continue
				}
				got, err := rs.VertexFrom(ctx, v, p)
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				want, err := rs.Vertex(ctx, v.ID, p)
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if len(got.Vertices) != len(want.Vertices) {
					t.Fatalf("seed %d vertex %s at %d: %d vertices, want %d", seed, v.ID, p, len(got.Vertices), len(want.Vertices))
				}
				if len(got.Vertices) == 0 {
					continue
				}
				g, w := got.Vertices[0], want.Vertices[0]
				if gd, wd := vertexDigest(got, g)+sharesDigest(g), vertexDigest(want, w)+sharesDigest(w); gd != wd {
					t.Fatalf("seed %d vertex %s at %d:\nfrom the check's\n%s\nafresh\n%s", seed, v.ID, p, gd, wd)
				}
				compared++
				for k, a := range g.Operators {
					if a.NumStates() > 0 && &a.sim.states[0] == &v.Operators[k].sim.states[0] {
						shared++
					}
				}
			}
			if after := vertexDigest(base, v) + sharesDigest(v); after != before {
				t.Fatalf("seed %d vertex %s changed by the re-simulations:\n%s\nwas\n%s", seed, v.ID, after, before)
			}
		}
	}
	t.Logf("%d re-simulations compared, %d operators' states shared", compared, shared)
	if compared < 400 || shared < 300 {
		t.Errorf("too few cases: %d compared, %d shared", compared, shared)
	}
}

// TestParallelismsOfNonParallelOperators: a job-wide parallelism leaves an operator whose max
// parallelism is 1 at 1, in Parallelisms as in Simulate, unless the plan names it.
func TestParallelismsOfNonParallelOperators(t *testing.T) {
	l := &checkpoint.Layout{Version: 3, Operators: []checkpoint.OperatorLayout{
		{ID: opID(1), Parallelism: 1, MaxParallelism: 1},
		{ID: opID(2), Parallelism: 4, MaxParallelism: 128},
		{ID: opID(3), Parallelism: 1, MaxParallelism: 1},
	}}
	for _, plan := range []Plan{
		{DefaultParallelism: 8},
		{DefaultParallelism: 8, Parallelism: map[string]int{opID(3).String(): 1}},
		{DefaultParallelism: 1},
		{Parallelism: map[string]int{opID(2).String(): 2}},
		{DefaultParallelism: 8, Vertices: []VertexSpec{{Operators: []string{opID(2).String(), opID(3).String()}}}},
	} {
		whole, err := Simulate(l, plan)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := NewResimulator(context.Background(), l, plan)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := plannedParallelisms(rs), simulatedParallelisms(whole); !slices.Equal(got, want) {
			t.Errorf("plan %+v: Parallelisms gives %v, Simulate %v", plan, got, want)
		}
		if plan.DefaultParallelism == 8 && len(plan.Vertices) == 0 && whole.Vertices[0].NewParallelism != 1 {
			t.Errorf("plan %+v: a non-parallel operator at %d", plan, whole.Vertices[0].NewParallelism)
		}
	}
}

// plannedParallelisms lists rs.Parallelisms as "ID@p".
func plannedParallelisms(rs *Resimulator) []string {
	var out []string
	for id, p := range rs.Parallelisms() {
		out = append(out, fmt.Sprintf("%s@%d", id, p))
	}
	return out
}

// simulatedParallelisms lists a Result's operators with their vertex's new parallelism as "ID@p".
func simulatedParallelisms(res *Result) []string {
	var out []string
	for _, v := range res.Vertices {
		for _, a := range v.Operators {
			out = append(out, fmt.Sprintf("%s@%d", a.ID, v.NewParallelism))
		}
	}
	return out
}
