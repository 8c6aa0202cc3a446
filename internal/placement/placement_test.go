package placement_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/flinkrest"
	"github.com/flinkpreflight/preflight/internal/placement"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

func op(uid, name string, p, maxP int) checkpoint.OperatorLayout {
	return checkpoint.OperatorLayout{ID: checkpoint.OperatorIDFromUID(uid), Name: name, Parallelism: p, MaxParallelism: maxP}
}

func id(uid string) string { return checkpoint.OperatorIDFromUID(uid).String() }

func TestPlace(t *testing.T) {
	tests := []struct {
		name     string
		ops      []checkpoint.OperatorLayout
		vertices []flinkrest.Vertex
		want     map[string]string // vertex ID → "uid:how,uid:how"
		unplaced map[string]int    // uid → candidates
		// candidates, when set: uid → its candidate vertex IDs, in order
		candidates map[string][]string
	}{
		{
			name: "format 5: heads by ID, chained operators by name",
			ops:  []checkpoint.OperatorLayout{op("src", "Source: a", 4, 128), op("map", "map", 4, 128), op("sink", "Sink: b", 2, 128)},
			vertices: []flinkrest.Vertex{
				{ID: id("src"), Parallelism: 4, MaxParallelism: 128, Operators: []string{"Source: a", "map"}},
				{ID: id("sink"), Parallelism: 2, MaxParallelism: 128, Operators: []string{"Sink: b"}},
			},
			want: map[string]string{id("src"): "src:id,map:name", id("sink"): "sink:id"},
		},
		{
			name: "format 4 (no names): the only vertex with the same parallelism and max parallelism",
			ops:  []checkpoint.OperatorLayout{op("src", "", 4, 128), op("map", "", 4, 128), op("agg", "", 2, 256)},
			vertices: []flinkrest.Vertex{
				{ID: id("src"), Parallelism: 4, MaxParallelism: 128, Operators: []string{"Source: a", "map"}},
				{ID: id("agg"), Parallelism: 2, MaxParallelism: 256, Operators: []string{"agg"}},
			},
			want: map[string]string{id("src"): "src:id,map:parallelism", id("agg"): "agg:id"},
		},
		{
			name: "format 4, two vertices alike: unplaced, with both candidates",
			ops:  []checkpoint.OperatorLayout{op("src", "", 4, 128), op("map", "", 4, 128), op("agg", "", 4, 128)},
			vertices: []flinkrest.Vertex{
				{ID: id("src"), Parallelism: 4, MaxParallelism: 128},
				{ID: id("agg"), Parallelism: 4, MaxParallelism: 128},
			},
			want:     map[string]string{id("src"): "src:id", id("agg"): "agg:id"},
			unplaced: map[string]int{"map": 2},
		},
		{
			name: "a duplicated name places nothing by name",
			ops:  []checkpoint.OperatorLayout{op("src", "Source: a", 4, 128), op("m1", "map", 4, 128), op("m2", "map", 2, 128)},
			vertices: []flinkrest.Vertex{
				{ID: id("src"), Parallelism: 4, MaxParallelism: 128, Operators: []string{"Source: a", "map"}},
				{ID: "ffffffffffffffffffffffffffffffff", Parallelism: 2, MaxParallelism: 128, Operators: []string{"map"}},
			},
			want: map[string]string{id("src"): "src:id,m1:parallelism", "ffffffffffffffffffffffffffffffff": "m2:parallelism"},
		},
		{
			name:     "an operator of no vertex",
			ops:      []checkpoint.OperatorLayout{op("src", "", 4, 128), op("old", "", 3, 128)},
			vertices: []flinkrest.Vertex{{ID: id("src"), Parallelism: 4, MaxParallelism: 128}},
			want:     map[string]string{id("src"): "src:id"},
			unplaced: map[string]int{"old": 0},
		},
		{
			name: "a vertex without max parallelism (an archived job's plan) is a candidate for any, in job order",
			ops:  []checkpoint.OperatorLayout{op("src", "", 4, 128), op("map", "", 4, 128), op("odd", "", 4, 0), op("agg", "", 2, 256)},
			vertices: []flinkrest.Vertex{
				{ID: "ffffffffffffffffffffffffffffffff", Parallelism: 4},
				{ID: id("src"), Parallelism: 4, MaxParallelism: 128},
				{ID: "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee", Parallelism: 4, MaxParallelism: 256},
				{ID: "dddddddddddddddddddddddddddddddd", Parallelism: 4, MaxParallelism: -1},
				{ID: "cccccccccccccccccccccccccccccccc", Parallelism: 2, MaxParallelism: 128},
				{ID: "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", Parallelism: 2},
			},
			want:     map[string]string{id("src"): "src:id", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb": "agg:parallelism"},
			unplaced: map[string]int{"map": 3, "odd": 2},
			candidates: map[string][]string{
				"map": {"ffffffffffffffffffffffffffffffff", id("src"), "dddddddddddddddddddddddddddddddd"},
				"odd": {"ffffffffffffffffffffffffffffffff", "dddddddddddddddddddddddddddddddd"},
			},
		},
	}
	uids := map[string]string{}
	for _, u := range []string{"src", "map", "sink", "agg", "m1", "m2", "old", "odd"} {
		uids[id(u)] = u
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := placement.Place(&checkpoint.Layout{Operators: tt.ops}, &flinkrest.Job{Vertices: tt.vertices})
			for _, v := range res.Vertices {
				var got []string
				for i, o := range v.Operators {
					got = append(got, uids[o.String()]+":"+v.PlacedBy[i])
				}
				if strings.Join(got, ",") != tt.want[v.ID] {
					t.Errorf("vertex %s: %s, want %s", v.ID, strings.Join(got, ","), tt.want[v.ID])
				}
			}
			if len(res.Unplaced) != len(tt.unplaced) {
				t.Fatalf("unplaced %+v, want %v", res.Unplaced, tt.unplaced)
			}
			for _, u := range res.Unplaced {
				if n, ok := tt.unplaced[uids[u.Operator.String()]]; !ok || n != len(u.Candidates) {
					t.Errorf("unplaced %s with %d candidates", uids[u.Operator.String()], len(u.Candidates))
				}
				if want, ok := tt.candidates[uids[u.Operator.String()]]; ok && !slices.Equal(u.Candidates, want) {
					t.Errorf("unplaced %s: candidates %v, want %v", uids[u.Operator.String()], u.Candidates, want)
				}
			}
		})
	}
}

// An operator that cannot be placed is never silently left at its old parallelism: when its
// candidate vertices are rescaled differently, PF200 denies the restore of each rescaled
// candidate; when they all get one parallelism, it is simulated at that parallelism (PF200 INFO).
func TestUnplacedOperatorFinding(t *testing.T) {
	l := &checkpoint.Layout{Operators: []checkpoint.OperatorLayout{op("src", "", 4, 128), op("map", "", 4, 128), op("agg", "", 4, 128)}}
	for i := range l.Operators {
		for s := 0; s < 4; s++ {
			l.Operators[i].Subtasks = append(l.Operators[i].Subtasks, checkpoint.SubtaskLayout{Index: s})
		}
	}
	job := &flinkrest.Job{Vertices: []flinkrest.Vertex{{ID: id("src"), Parallelism: 4, MaxParallelism: 128}, {ID: id("agg"), Parallelism: 4, MaxParallelism: 128}}}
	pl := placement.Place(l, job)
	eng := engine.New()
	tests := []struct {
		name     string
		set      map[string]int32
		severity pb.Severity
		verdict  pb.Verdict
		mapP     int32
	}{
		{"candidates differ", map[string]int32{id("src"): 8}, pb.Severity_SEVERITY_ERROR, pb.Verdict_VERDICT_DENY, 4},
		{"candidates agree", map[string]int32{id("src"): 8, id("agg"): 8}, pb.Severity_SEVERITY_INFO, pb.Verdict_VERDICT_ALLOW, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := &pb.CheckOptions{IncludeSubtasks: true}
			rep, err := eng.Check(context.Background(), engine.Request{Layout: l, Source: "test", Plan: &pb.RescalePlan{VertexParallelism: tt.set}, Options: opts, Placement: pl})
			if err != nil {
				t.Fatal(err)
			}
			var pf200 []*pb.Finding
			for _, f := range rep.GetFindings() {
				if f.GetRuleId() == engine.UnplacedRuleID {
					pf200 = append(pf200, f)
				}
			}
			if len(pf200) != 1 || pf200[0].GetSeverity() != tt.severity || pf200[0].GetOperatorId() != id("map") {
				t.Fatalf("PF200 findings %v", pf200)
			}
			if tt.severity == pb.Severity_SEVERITY_ERROR && pf200[0].GetVertexId() != id("src") {
				t.Errorf("vertex %s", pf200[0].GetVertexId())
			}
			if (rep.GetVerdict() == pb.Verdict_VERDICT_DENY) != (tt.verdict == pb.Verdict_VERDICT_DENY) {
				t.Errorf("verdict %v", rep.GetVerdict())
			}
			for _, o := range rep.GetOperators() {
				if o.GetOperatorId() == id("map") && o.GetNewParallelism() != tt.mapP {
					t.Errorf("unplaced operator simulated at %d, want %d", o.GetNewParallelism(), tt.mapP)
				}
			}
			// In pieces, as a server answers with every row: the operators go out as they are
			// converted, and joined they are the whole report's.
			var ops []*pb.OperatorAssignment
			pieces, err := eng.Check(context.Background(), engine.Request{Layout: l, Source: "test", Plan: &pb.RescalePlan{VertexParallelism: tt.set}, Options: opts, Placement: pl,
				Pieces: func(op *pb.OperatorAssignment, continued bool) error {
					if continued {
						last := ops[len(ops)-1]
						last.Subtasks = append(last.Subtasks, op.Subtasks...)
						last.OldSubtasks = append(last.OldSubtasks, op.OldSubtasks...)
					} else {
						ops = append(ops, op)
					}
					return nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			if len(pieces.GetOperators()) > 0 {
				t.Errorf("the report in pieces kept %d operators", len(pieces.GetOperators()))
			}
			pieces.Operators = ops
			if !proto.Equal(pieces, rep) {
				t.Errorf("joined pieces differ from the whole report:\n%v\n%v", pieces, rep)
			}
		})
	}
}

// TestIndexVertex: the index answers every lookup as a scan comparing with strings.EqualFold
// does, the first of two vertices with one ID included.
func TestIndexVertex(t *testing.T) {
	r := &placement.Result{Vertices: []placement.Vertex{
		{ID: "0d9ffb4f280d028d86dadba01ac205d7", Name: "first"},
		{ID: "0d9ffb4f280d028d86dadba01ac205d7", Name: "second"},
		{ID: "a004e297ed656c7b8e968e04069ca1a0", Name: "other"},
		{ID: "s\u212a", Name: "not hex"},
	}}
	idx := r.Index()
	for _, key := range []string{"0d9ffb4f280d028d86dadba01ac205d7", "0D9FFB4F280D028D86DADBA01AC205D7", "a004e297ed656c7b8e968e04069ca1a0",
		"A004E297ED656C7B8E968E04069CA1A0", "a004e297ed656c7b8e968e04069ca1a", "", "sk", "\u017fK", "SK", "s"} {
		var want *placement.Vertex
		for i := range r.Vertices {
			if strings.EqualFold(r.Vertices[i].ID, key) {
				want = &r.Vertices[i]
				break
			}
		}
		got, gotOK := idx.Vertex(key)
		if got != want || gotOK != (want != nil) {
			t.Errorf("Index.Vertex(%q) = %v, %v; the scan finds %v", key, got, gotOK, want)
		}
	}
}

// TestUnplacedByID: the operators left unplaced come in the order of their IDs' hex strings,
// whatever their order in the checkpoint (PF200's findings follow it).
func TestUnplacedByID(t *testing.T) {
	var ops []checkpoint.OperatorLayout
	for i := range 20 {
		ops = append(ops, op(fmt.Sprintf("chained-%d", i), "", 4, 128))
	}
	job := &flinkrest.Job{Vertices: []flinkrest.Vertex{{ID: id("a"), Parallelism: 4, MaxParallelism: 128}, {ID: id("b"), Parallelism: 4, MaxParallelism: 128}}}
	res := placement.Place(&checkpoint.Layout{Operators: ops}, job)
	var got []string
	for _, u := range res.Unplaced {
		got = append(got, u.Operator.String())
	}
	if len(got) != len(ops) || !slices.IsSorted(got) {
		t.Errorf("unplaced %d of %d, in order %v", len(got), len(ops), got)
	}
}
