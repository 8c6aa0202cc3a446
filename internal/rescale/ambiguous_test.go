package rescale

import (
	"errors"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
)

// TestAmbiguousKey: a plan key that names operators in more than one vertex (two operators
// named "Flat Map", or one operator's name that is another's uid) is a plan error listing the
// matches with their IDs, for every field that resolves vertices; a key that names several
// operators of one vertex, or one operator by name and uid, is not.
func TestAmbiguousKey(t *testing.T) {
	src := op(0, 2, 128, sub(0, handle("h0", split("s", 4))))
	src.UID, src.Name = "source", "Source: Kafka"
	flat1, flat2 := op(1, 2, 128), op(2, 2, 128)
	flat1.Name, flat1.UID = "Flat Map", "flat-1"
	flat2.Name, flat2.UID = "Flat Map", "flat-2"
	odd := op(3, 2, 128)
	odd.Name, odd.UID = "flat-1", "odd" // its name is flat1's uid
	l := layoutOf(src, flat1, flat2, odd)
	chainFlats := []VertexSpec{{Operators: []string{opID(1).String(), opID(2).String()}}}

	tests := []struct {
		name      string
		plan      Plan
		wantErr   string   // "" for no error
		wantInErr []string // the listed matches
	}{
		{"parallelism by shared name", Plan{Parallelism: map[string]int{"Flat Map": 3}},
			`parallelism "Flat Map": ambiguous: names 2 operators in different vertices`,
			[]string{`"Flat Map" (uid flat-1, #2 in the checkpoint, ID ` + opID(1).String() + ")",
				`"Flat Map" (uid flat-2, #3 in the checkpoint, ID ` + opID(2).String() + ")", "use one operator's ID (or its uid)"}},
		{"max parallelism by shared name", Plan{MaxParallelism: map[string]MaxParallelism{"Flat Map": {Value: 256, Configured: true}}},
			`max_parallelism "Flat Map": ambiguous`, []string{opID(1).String(), opID(2).String()}},
		{"only vertices by shared name", Plan{OnlyVertices: []string{"Flat Map"}},
			`only_vertices "Flat Map": ambiguous`, []string{opID(1).String(), opID(2).String()}},
		{"input mapper by shared name", Plan{Parallelism: map[string]int{"source": 2}, InputChannelMappers: map[string]SubtaskMapper{"Flat Map": 1}},
			`input_channel_mappers "Flat Map": ambiguous`, []string{opID(1).String(), opID(2).String()}},
		{"name of one is uid of another", Plan{Parallelism: map[string]int{"flat-1": 3}},
			`parallelism "flat-1": ambiguous: names 2 operators`, []string{`"Flat Map" (uid flat-1`, `"flat-1" (uid odd`}},
		{"chain member by shared name", Plan{Vertices: []VertexSpec{{Operators: []string{"source", "Flat Map"}}}},
			`vertices[0].operators[1] "Flat Map": ambiguous: names 2 operators of the checkpoint`, []string{opID(1).String(), opID(2).String()}},
		{"both in one chained vertex", Plan{Vertices: chainFlats, Parallelism: map[string]int{"Flat Map": 3}}, "", nil},
		{"by uid", Plan{Parallelism: map[string]int{"flat-2": 3}}, "", nil},
		{"by ID", Plan{Parallelism: map[string]int{opID(1).String(): 3}}, "", nil},
		{"name and uid of the same operator", Plan{Parallelism: map[string]int{"source": 3, "Source: Kafka": 3}}, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Simulate(l, tt.plan)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			var pe *PlanError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v, want a *PlanError", err)
			}
			for _, want := range append([]string{tt.wantErr}, tt.wantInErr...) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

// TestAmbiguousKeyPicksOne: the IDs the error lists are keys that work.
func TestAmbiguousKeyPicksOne(t *testing.T) {
	a, b := op(1, 2, 128), op(2, 2, 128)
	a.Name, b.Name = "Flat Map", "Flat Map"
	l := layoutOf(a, b)
	r := simulate(t, l, Plan{Parallelism: map[string]int{opID(2).String(): 5}})
	if got := r.Vertex(opID(2)).NewParallelism; got != 5 {
		t.Errorf("picked vertex at %d, want 5", got)
	}
	if got := r.Vertex(opID(1)).NewParallelism; got != 2 {
		t.Errorf("other vertex at %d, want 2", got)
	}
}

// TestNamedOperatorMatchesResolver: NamedOperator names the operator checkpointMatches finds
// when it finds exactly one, and nothing otherwise, for every name, uid and a few other keys of
// layouts with shared names, shared uids and a uid whose hash is another operator's ID.
func TestNamedOperatorMatchesResolver(t *testing.T) {
	hashOfShared := checkpoint.OperatorIDFromUID("shared-uid")
	l := &checkpoint.Layout{Version: 5, Operators: []checkpoint.OperatorLayout{
		{ID: opID(1), Name: "source", UID: "src"},
		{ID: opID(2), Name: "map", UID: "mapper"},
		{ID: opID(3), Name: "map", UID: "mapper-2"},
		{ID: opID(4), Name: "sink", UID: "shared-uid"},
		{ID: hashOfShared, Name: "hashed"},
		{ID: opID(6), Name: "window", UID: "source"}, // a uid equal to another operator's name
		{ID: checkpoint.OperatorIDFromUID("by-hash-only")},
	}}
	keys := []string{"", "nope", "by-hash-only", "map", "source", "src", "shared-uid", "hashed", "sink", "window", "mapper", "mapper-2",
		hashOfShared.String()[:8], strings.ToUpper(checkpoint.OperatorIDFromUID("by-hash-only").String()[:12]), // unique ID prefixes
		"a0000000", "a000", "a0000000zz"} // a prefix of several IDs, one too short, not hex
	compared, found := 0, 0
	check := func(t *testing.T, l *checkpoint.Layout, keys []string) {
		r := newResolver(l, nil)
		for _, k := range keys {
			if _, err := checkpoint.ParseOperatorID(k); err == nil {
				continue // hex IDs are not NamedOperator's
			}
			want := r.checkpointMatches(k)
			id, ok := NamedOperator(l, k)
			switch {
			case len(want) == 1 && (!ok || id != want[0]):
				t.Errorf("key %q: NamedOperator %v %v, resolver %v", k, id, ok, want)
			case len(want) != 1 && ok:
				t.Errorf("key %q: NamedOperator %v, resolver %d matches", k, id, len(want))
			}
			compared++
			if ok {
				found++
			}
		}
	}
	check(t, l, keys)
	if found < 6 {
		t.Errorf("only %d keys named one operator", found)
	}
	t.Run("corpus", func(t *testing.T) {
		for _, cl := range checkpointtest.Decodable(corpusMetadata(t)) {
			var ks []string
			for _, op := range cl.Operators {
				ks = append(ks, op.Name, op.UID, op.ID.String()[:checkpoint.MinIDPrefix])
			}
			check(t, cl, ks)
		}
	})
	t.Logf("%d keys compared, %d naming one operator", compared, found)
}
