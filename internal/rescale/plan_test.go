package rescale

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// TestPlanKeys: a parallelism key may be a vertex ID, an operator ID, a uid (hashed as Flink
// does) or a format-5 name or uid; a key on any chain member applies to the whole vertex.
func TestPlanKeys(t *testing.T) {
	src := op(0, 2, 128, sub(0, handle("h0", split("s", 4))))
	src.ID, src.UID, src.Name = checkpoint.OperatorIDFromUID("source"), "source", "Source: Kafka"
	mapOp := op(2, 2, 128)
	mapOp.Name = "Map"
	sink := op(3, 2, 128)
	l := layoutOf(src, mapOp, sink)
	chain := []VertexSpec{{Operators: []string{"source", opID(2).String()}}}
	for _, key := range []string{"source", "Source: Kafka", src.ID.String(), "Map", opID(2).String()} {
		r := simulate(t, l, Plan{Vertices: chain, Parallelism: map[string]int{key: 5}})
		v := r.Vertex(src.ID)
		if v == nil || v.NewParallelism != 5 || len(v.Operators) != 2 || v.Operators[1].NewParallelism != 5 {
			t.Fatalf("key %q: vertex %+v", key, v)
		}
		if other := r.Vertex(opID(3)); other.NewParallelism != 2 {
			t.Errorf("key %q changed the sink to %d", key, other.NewParallelism)
		}
		if v.Name != "Source: Kafka -> Map" {
			t.Errorf("vertex name %q", v.Name)
		}
	}
	// A new operator named by uid in a chain restores nothing and takes the vertex parallelism.
	r := simulate(t, l, Plan{Vertices: []VertexSpec{{Operators: []string{"source", "new-filter"}}}, DefaultParallelism: 3})
	v := r.Vertex(src.ID)
	nf := v.Operators[1]
	if nf.ID != checkpoint.OperatorIDFromUID("new-filter") || nf.Layout != nil || nf.Path != PathNotRestored || nf.NewParallelism != 3 || !nf.Subtask(0).Restored {
		t.Errorf("new operator: %+v", nf)
	}
}

// TestPlanKeyIDPrefix: the short IDs reports print (8 hex digits or more) are plan keys; a prefix
// of several IDs is ambiguous; a key that names nothing suggests the closest operators.
func TestPlanKeyIDPrefix(t *testing.T) {
	src := op(0, 2, 128)
	src.ID, src.UID, src.Name = checkpoint.OperatorIDFromUID("source"), "source", "Source: Kafka"
	l := layoutOf(src, op(2, 2, 128), op(0x300, 2, 128)) // opID(2) and opID(0x300) share their first 28 digits
	for _, tc := range []struct {
		key     string
		want    checkpoint.OperatorID // zero: an error
		errText string
		closest bool // the error suggests operators
	}{
		{key: src.ID.String()[:8], want: src.ID},
		{key: strings.ToUpper(src.ID.String()[:20]), want: src.ID},
		{key: opID(2).String()[:31], want: opID(2)},
		{key: opID(2).String()[:8], errText: "ambiguous: names 2 operators"},
		{key: src.ID.String()[:7], errText: "names no operator"},
		{key: "sourc", errText: `closest: "Source: Kafka" (uid source`, closest: true},
		{key: flipLast(src.ID.String()[:8]), errText: `closest: "Source: Kafka" (uid source`, closest: true},
		{key: "completely-unrelated", errText: "names no operator"},
	} {
		r, err := Simulate(l, Plan{Parallelism: map[string]int{tc.key: 5}})
		if tc.errText != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errText) || strings.Contains(err.Error(), "closest") != tc.closest {
				t.Errorf("key %q: error %v, want it to contain %q (suggestions: %v)", tc.key, err, tc.errText, tc.closest)
			}
			continue
		}
		if err != nil {
			t.Fatalf("key %q: %v", tc.key, err)
		}
		if v := r.Vertex(tc.want); v == nil || v.NewParallelism != 5 {
			t.Errorf("key %q: vertex %+v", tc.key, v)
		}
	}
}

func flipLast(s string) string {
	b := []byte(s)
	b[len(b)-1] = map[bool]byte{true: '0', false: '1'}[b[len(b)-1] != '0']
	return string(b)
}

// TestPayloadEstimate pins the payload formula on one subtask.
func TestPayloadEstimate(t *testing.T) {
	// Old subtask 0: inline stream of 300 bytes with SPLIT "s" (3 elements) and UNION "u" (2);
	// old subtask 1: file stream "f1" with SPLIT "s" (3) and UNION "u" (2). Restored at 1.
	h0 := inlineHandle("i0", split("s", 3), union("u", 2))
	h0.Stream.Size = 300
	h1 := handle("f1", split("s", 3), union("u", 2))
	r := simulate(t, layoutOf(op(1, 2, 128, sub(0, h0), sub(1, h1))), Plan{DefaultParallelism: 1})
	st := r.Vertices[0].Operators[0].Subtask(0)
	// Two handles: the inline one (overhead + path "i0" + 300 bytes), the file one (overhead +
	// path "f1"); entries: "s" twice and "u" twice; offsets: 6 + 4.
	want := int64(PayloadHandleOverhead+2+300) + int64(PayloadHandleOverhead+2) +
		2*int64(PayloadEntryOverhead+1) + 2*int64(PayloadEntryOverhead+1) + 8*10
	if st.PayloadBytes != want || st.InlineBytes != 300 || st.Handles != 2 || st.FileReferences != 1 || st.Offsets != 10 {
		t.Errorf("payload %d (want %d), inline %d, handles %d, files %d, offsets %d",
			st.PayloadBytes, want, st.InlineBytes, st.Handles, st.FileReferences, st.Offsets)
	}
	if s := r.Vertices[0].Operators[0].Summary; s.MaxPayloadBytes != want || s.TotalPayloadBytes != want || s.MaxInlineBytes != 300 {
		t.Errorf("summary %+v", s)
	}
}

// TestOnlyVertices: restricting the work to one vertex gives that vertex the same figures, the
// same failures overall, and no distributions elsewhere.
func TestOnlyVertices(t *testing.T) {
	l := benchLayout(5, 4, 3)
	plan := Plan{DefaultParallelism: 200, MaxParallelism: map[string]MaxParallelism{opID(3).String(): {Value: 100, Configured: true}}}
	full := simulate(t, l, plan)
	plan.OnlyVertices = []string{opID(2).String()}
	part := simulate(t, l, plan)
	if !reflect.DeepEqual(full.Failures, part.Failures) || len(part.Failures) == 0 {
		t.Fatalf("failures differ: %v vs %v", full.Failures, part.Failures)
	}
	for v := range full.Vertices {
		a, b := full.Vertices[v].Operators[0], part.Vertices[v].Operators[0]
		if a.ID == opID(2) {
			if !reflect.DeepEqual(a.Summary, b.Summary) || len(b.States()) != len(a.States()) {
				t.Errorf("simulated vertex differs: %+v vs %+v", a.Summary, b.Summary)
			}
			continue
		}
		if b.Path != PathNotSimulated || b.NumStates() != 0 || b.ManagedKeyed != nil || part.Vertices[v].NewParallelism != full.Vertices[v].NewParallelism {
			t.Errorf("vertex %s was simulated: %v", b.ID, b.Path)
		}
	}
	if _, err := Simulate(l, Plan{OnlyVertices: []string{"nope"}}); err == nil {
		t.Error("unknown key in OnlyVertices must be a PlanError")
	}
}

// TestManyNamesGrouped: beyond 16 names the lists are found through the index by the names' Java
// hash; names of one hash ("AaAa", "AaBB", "BBAa", "BBBB") and one name in two modes are still
// told apart, whatever order the handles list them in, and a name twice in a handle is merged.
func TestManyNamesGrouped(t *testing.T) {
	names := []string{"AaAa", "AaBB", "BBAa", "BBBB"}
	for k := range 20 {
		names = append(names, fmt.Sprintf("n%d", k))
	}
	const oldP = 3
	var subs []checkpoint.SubtaskLayout
	for j := range oldP {
		var states []checkpoint.StateEntryLayout
		for k := range names {
			name := names[(k+7*j)%len(names)] // each handle in its own order; the second lists half
			if j != 1 || k%2 == 0 {
				states = append(states, split(name, int64(j+1)))
			}
		}
		states = append(states, union("AaBB", 1))
		if j == 2 {
			states = append(states, split("BBAa", 5)) // a second entry of one name in one handle
		}
		subs = append(subs, sub(j, handle(fmt.Sprintf("s%d", j), states...)))
	}
	// What each (mode, name) must hold, counted from the handles.
	type key struct {
		mode checkpoint.DistributionMode
		name string
	}
	wantEntries, wantElements := map[key]int32{}, map[key]int64{}
	for _, s := range subs {
		seen := map[key]bool{}
		for _, st := range s.ManagedOperatorState.States {
			k := key{st.Mode, st.Name}
			if !seen[k] {
				wantEntries[k]++
			}
			seen[k] = true
			wantElements[k] += st.Elements
		}
	}
	a := simulate(t, layoutOf(op(1, oldP, 128, subs...)), Plan{DefaultParallelism: 2}).Vertices[0].Operators[0]
	if len(a.States()) != len(wantEntries) {
		t.Fatalf("%d states, want %d", len(a.States()), len(wantEntries))
	}
	for _, s := range a.States() {
		k := key{s.Mode, s.Name}
		if s.OldEntries != wantEntries[k] || s.Elements != wantElements[k] {
			t.Errorf("%v: %d entries and %d elements, want %d and %d", k, s.OldEntries, s.Elements, wantEntries[k], wantElements[k])
		}
	}
}
