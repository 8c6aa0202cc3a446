package checkpoint

import (
	"fmt"
	"slices"
	"testing"
)

func TestSubtaskHandleIterators(t *testing.T) {
	managed := &OperatorStateHandleLayout{States: []StateEntryLayout{{Name: "a"}, {Name: "b"}}}
	raw := &OperatorStateHandleLayout{States: []StateEntryLayout{{Name: "c"}}}
	mk, rk := &KeyedStateHandleLayout{StateSize: 1}, &KeyedStateHandleLayout{StateSize: 2}
	names := func(st *SubtaskLayout, stopAfter int) []string {
		var out []string
		for e := range st.OperatorStates() {
			if out = append(out, e.Name); len(out) == stopAfter {
				break
			}
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		st      SubtaskLayout
		handles []*OperatorStateHandleLayout
		states  []string
		keyed   []*KeyedStateHandleLayout
	}{
		{"none", SubtaskLayout{}, nil, nil, nil},
		{"managed only", SubtaskLayout{ManagedOperatorState: managed, ManagedKeyedState: mk}, []*OperatorStateHandleLayout{managed}, []string{"a", "b"}, []*KeyedStateHandleLayout{mk}},
		{"raw only", SubtaskLayout{RawOperatorState: raw, RawKeyedState: rk}, []*OperatorStateHandleLayout{raw}, []string{"c"}, []*KeyedStateHandleLayout{rk}},
		{"both, managed first", SubtaskLayout{ManagedOperatorState: managed, RawOperatorState: raw, ManagedKeyedState: mk, RawKeyedState: rk},
			[]*OperatorStateHandleLayout{managed, raw}, []string{"a", "b", "c"}, []*KeyedStateHandleLayout{mk, rk}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(&tc.st, -1); !slices.Equal(got, tc.states) {
				t.Errorf("OperatorStates: %v, want %v", got, tc.states)
			}
			var got, want []string
			for e, raw := range tc.st.OperatorStatesRaw() {
				got = append(got, fmt.Sprint(e.Name, raw))
			}
			for _, n := range tc.states {
				want = append(want, fmt.Sprint(n, n == "c")) // c is the raw handle's
			}
			if !slices.Equal(got, want) {
				t.Errorf("OperatorStatesRaw: %v, want %v", got, want)
			}
			if got := slices.Collect(tc.st.KeyedStateHandles()); !slices.Equal(got, tc.keyed) {
				t.Errorf("KeyedStateHandles: %v, want %v", got, tc.keyed)
			}
			if got := slices.Collect(tc.st.OperatorStateHandles()); !slices.Equal(got, tc.handles) {
				t.Errorf("OperatorStateHandles: %v, want %v", got, tc.handles)
			}
		})
	}
	// A break stops the iteration (yield's false is honoured).
	st := SubtaskLayout{ManagedOperatorState: managed, RawOperatorState: raw}
	if got := names(&st, 1); !slices.Equal(got, []string{"a"}) {
		t.Errorf("break after one: %v", got)
	}
	n := 0
	for range st.OperatorStateHandles() {
		n++
		break
	}
	if n != 1 {
		t.Errorf("break in OperatorStateHandles: %d iterations", n)
	}
}
