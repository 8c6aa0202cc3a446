package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/findings"
	"github.com/flinkpreflight/preflight/internal/flinkrest"
	"github.com/flinkpreflight/preflight/internal/placement"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// TestWithChainsKeys: how withChains turns a plan's vertex_parallelism keys into the keys the
// simulation knows, for each way a key can name (or not name) a placed vertex.
func TestWithChainsKeys(t *testing.T) {
	opID := func(uid string) checkpoint.OperatorID { return checkpoint.OperatorIDFromUID(uid) }
	head, chained, other := opID("head"), opID("chained"), opID("other")
	headless := "45b0254a46cabbc3efeea5d2e170ea5b" // a vertex whose head is not in the checkpoint
	stateless := "a004e297ed656c7b8e968e04069ca1a0"
	pl := &placement.Result{Vertices: []placement.Vertex{
		{ID: head.String(), Operators: []checkpoint.OperatorID{head}},
		{ID: headless, Operators: []checkpoint.OperatorID{chained}},
		{ID: stateless},
	}}
	upper := func(s string) string {
		b := []byte(s)
		for i, c := range b {
			if c >= 'a' && c <= 'z' {
				b[i] = c - 'a' + 'A'
			}
		}
		return string(b)
	}
	tests := []struct {
		name string
		in   map[string]int32
		want map[string]int32
	}{
		{"a head's vertex keeps its key", map[string]int32{head.String(): 4}, map[string]int32{head.String(): 4}},
		{"in any case", map[string]int32{upper(head.String()): 4}, map[string]int32{upper(head.String()): 4}},
		{"a headless vertex becomes its first placed operator", map[string]int32{upper(headless): 3}, map[string]int32{chained.String(): 3}},
		{"a vertex without state is left out", map[string]int32{stateless: 2, head.String(): 4}, map[string]int32{head.String(): 4}},
		{"a key naming no vertex stays", map[string]int32{other.String(): 5}, map[string]int32{other.String(): 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := withChains(&pb.RescalePlan{VertexParallelism: tt.in}, pl).GetVertexParallelism()
			if !maps.Equal(got, tt.want) {
				t.Errorf("vertex_parallelism %v, want %v", got, tt.want)
			}
		})
	}
}

// TestUnplacedFindingsList: a PF200 message lists at most maxListedCandidates candidates, then
// how many more; each ERROR finding still names its own vertex, listed or not.
func TestUnplacedFindingsList(t *testing.T) {
	vertexID := func(i int) string { return fmt.Sprintf("%032x", i) }
	tests := []struct {
		name       string
		candidates int
		newP       func(i int) int // new parallelism of candidate i (every vertex runs at 4)
		findings   int
		listed     int    // candidates in each message
		more       string // the list's tail, "" for none
	}{
		{"two, agreeing", 2, func(int) int { return 8 }, 1, 2, ""},
		{"ten, differing", 10, func(i int) int { return 5 + i }, 10, 10, ""},
		{"eleven, agreeing", 11, func(int) int { return 8 }, 1, 10, "and 1 more vertex"},
		{"twelve, differing", 12, func(i int) int { return 5 + i }, 12, 10, "and 2 more vertices"},
		{"twelve, two rescaled", 12, func(i int) int { return 4 + i%6/5*4 }, 2, 10, "and 2 more vertices"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := &placement.Result{}
			u := placement.Unplaced{Operator: checkpoint.OperatorIDFromUID("chained")}
			newP := map[string]int{}
			for i := range tt.candidates {
				pl.Vertices = append(pl.Vertices, placement.Vertex{ID: vertexID(i), Name: fmt.Sprintf("v%d", i), Parallelism: 4})
				u.Candidates = append(u.Candidates, vertexID(i))
				newP[vertexID(i)] = tt.newP(i)
			}
			pl.Unplaced = []placement.Unplaced{u}
			fs := unplacedFindings(pl, pl.Index(), newP, commons(pl, newP))
			if len(fs) != tt.findings {
				t.Fatalf("%d findings, want %d", len(fs), tt.findings)
			}
			for _, f := range fs {
				listed := 0
				for i := range tt.candidates {
					if strings.Contains(f.GetMessage(), fmt.Sprintf("%s %q (→ %d)", vertexID(i), fmt.Sprintf("v%d", i), tt.newP(i))) {
						listed++
					}
				}
				if listed != tt.listed || tt.more != "" && !strings.Contains(f.GetMessage(), ", "+tt.more+";") && !strings.Contains(f.GetMessage(), ", "+tt.more+",") {
					t.Errorf("%d candidates listed (want %d), tail %q: %s", listed, tt.listed, tt.more, f.GetMessage())
				}
				if tt.findings > 1 && (f.GetVertexId() == "" || !strings.Contains(f.GetMessage(), "this restore of vertex "+f.GetVertexId()+" ")) {
					t.Errorf("finding of vertex %q: %s", f.GetVertexId(), f.GetMessage())
				}
			}
		})
	}
}

// TestUnplacedWithStatelessCandidate: a candidate vertex holding no checkpoint operator (new
// since the checkpoint) gets the parallelism the plan gives it, else the job-wide one, else the
// one it runs at, not 0: an unplaced operator whose candidates all keep their parallelism is not
// an ERROR, and one whose candidates are rescaled differently denies only the rescaled ones.
func TestUnplacedWithStatelessCandidate(t *testing.T) {
	head := checkpoint.OperatorIDFromUID("head")
	chained := checkpoint.OperatorIDFromUID("chained")
	fresh := "ffffffffffffffffffffffffffffffff" // its head is not in the checkpoint
	// Two new vertices of max parallelism 1, candidates of an operator of max parallelism 1,
	// which the job-wide parallelism does not reach.
	lone := checkpoint.OperatorIDFromUID("lone")
	single, single2 := "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee", "dddddddddddddddddddddddddddddddd"
	l := &checkpoint.Layout{Version: 4, Operators: []checkpoint.OperatorLayout{
		{ID: head, Parallelism: 4, MaxParallelism: 128},
		{ID: chained, Parallelism: 4, MaxParallelism: 128},
		{ID: lone, Parallelism: 1, MaxParallelism: 1},
	}}
	job := &flinkrest.Job{Vertices: []flinkrest.Vertex{
		{ID: head.String(), Name: "head", Parallelism: 4, MaxParallelism: 128},
		{ID: fresh, Name: "fresh", Parallelism: 4, MaxParallelism: 128},
		{ID: single, Name: "single", Parallelism: 1, MaxParallelism: 1},
		{ID: single2, Name: "single2", Parallelism: 1, MaxParallelism: 1},
	}}
	pl := placement.Place(l, job)
	if len(pl.Unplaced) != 2 || len(pl.Unplaced[0].Candidates) != 2 || len(pl.Unplaced[1].Candidates) != 2 {
		t.Fatalf("unplaced %+v", pl.Unplaced)
	}
	tests := []struct {
		name    string
		plan    *pb.RescalePlan
		verdict pb.Verdict
		denied  []string // vertices with a PF200 ERROR
		listed  string   // in the PF200 messages
	}{
		{"nothing rescaled", &pb.RescalePlan{}, pb.Verdict_VERDICT_ALLOW, nil, `"fresh" (→ 4)`},
		{"the job-wide parallelism reaches both", &pb.RescalePlan{DefaultParallelism: 8}, pb.Verdict_VERDICT_ALLOW, nil, `"fresh" (→ 8)`},
		{"the new vertex alone, in any case", &pb.RescalePlan{VertexParallelism: map[string]int32{strings.ToUpper(fresh): 8}},
			pb.Verdict_VERDICT_DENY, []string{fresh}, `"fresh" (→ 8)`},
		{"the head alone", &pb.RescalePlan{VertexParallelism: map[string]int32{head.String(): 8}},
			pb.Verdict_VERDICT_DENY, []string{head.String()}, `"fresh" (→ 4)`},
		{"both alike by key", &pb.RescalePlan{DefaultParallelism: 2, VertexParallelism: map[string]int32{head.String(): 6, fresh: 6}},
			pb.Verdict_VERDICT_ALLOW, nil, `"fresh" (→ 6)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := New().Check(context.Background(), Request{Layout: l, Source: "test", Plan: tt.plan, Placement: pl})
			if err != nil {
				t.Fatal(err)
			}
			var denied []string
			listed := false
			for _, f := range rep.GetFindings() {
				if f.GetRuleId() != UnplacedRuleID {
					continue
				}
				listed = listed || strings.Contains(f.GetMessage(), tt.listed)
				if f.GetSeverity() == pb.Severity_SEVERITY_ERROR {
					denied = append(denied, f.GetVertexId())
				}
			}
			if rep.GetVerdict() != tt.verdict || !slices.Equal(denied, tt.denied) || !listed {
				t.Errorf("verdict %v, PF200 errors on %v, %q listed: %v; want %v on %v, %q", rep.GetVerdict(), denied, tt.listed, listed,
					tt.verdict, tt.denied, tt.listed)
				for _, f := range rep.GetFindings() {
					t.Log(f.GetRuleId(), f.GetSeverity(), f.GetMessage())
				}
			}
		})
	}
}

// TestUnplacedFindingsPerVertex: a rescaled candidate vertex denied for more than
// findings.MergedOperators unplaced operators gets one PF200 finding naming the first few and
// listing all in operator_ids; for that many or fewer, one finding per operator as before. The
// INFO of an operator whose candidates agree is never merged.
func TestUnplacedFindingsPerVertex(t *testing.T) {
	vertexID := func(i int) string { return fmt.Sprintf("%032x", i) }
	pl := &placement.Result{}
	newP := map[string]int{}
	for i := range 3 {
		pl.Vertices = append(pl.Vertices, placement.Vertex{ID: vertexID(i), Name: fmt.Sprintf("v%d", i), Parallelism: 4})
		newP[vertexID(i)] = 4 + 4*min(i, 1) + i // v0 kept at 4, v1 at 9, v2 at 10
	}
	for _, n := range []int{findings.MergedOperators, findings.MergedOperators + 1, 40} {
		pl.Unplaced = nil
		for k := range n {
			pl.Unplaced = append(pl.Unplaced, placement.Unplaced{Operator: checkpoint.OperatorIDFromUID(fmt.Sprintf("chained-%d", k)), Name: fmt.Sprintf("op-%d", k),
				Candidates: []string{vertexID(0), vertexID(1), vertexID(2)}})
		}
		us := pl.Unplaced
		fs := unplacedFindings(pl, pl.Index(), newP, commons(pl, newP))
		perVertex := map[string][]*pb.Finding{}
		for _, f := range fs {
			perVertex[f.GetVertexId()] = append(perVertex[f.GetVertexId()], f)
		}
		if len(perVertex) != 2 || len(perVertex[vertexID(0)]) != 0 {
			t.Fatalf("n=%d: findings on %d vertices, %d on the vertex kept at its parallelism", n, len(perVertex), len(perVertex[vertexID(0)]))
		}
		for _, v := range []string{vertexID(1), vertexID(2)} {
			got := perVertex[v]
			if n <= findings.MergedOperators {
				if len(got) != n || len(got[0].GetOperatorIds()) != 0 {
					t.Errorf("n=%d: vertex %s has %d findings (want %d, one per operator)", n, v, len(got), n)
				}
				continue
			}
			if len(got) != 1 || len(got[0].GetOperatorIds()) != n || got[0].GetOperatorId() != us[0].Operator.String() ||
				!strings.HasPrefix(got[0].GetMessage(), fmt.Sprintf("%d operators alike (op-0, op-1, op-2, op-3, op-4 and %d more), each as the first: Operator op-0", n, n-5)) ||
				!strings.Contains(got[0].GetMessage(), "this restore of vertex "+v+" ") {
				t.Errorf("n=%d: vertex %s: %d findings, the first with %d operator IDs: %s", n, v, len(got), len(got[0].GetOperatorIds()), got[0].GetMessage())
			}
			for k, id := range got[0].GetOperatorIds() {
				if id != us[k].Operator.String() {
					t.Fatalf("n=%d: operator_ids[%d] = %s, want %s", n, k, id, us[k].Operator)
				}
			}
		}
	}
}

// commons is the commonParallelism of each of pl's unplaced operators, as checkJob passes them.
func commons(pl *placement.Result, newP map[string]int) []int {
	out := make([]int, len(pl.Unplaced))
	for k, u := range pl.Unplaced {
		out[k] = commonParallelism(u, newP)
	}
	return out
}
