package findings

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/rescale"
)

// TestPF170OneFindingPerOperatorAndCause: an operator whose states leave new subtasks empty
// gets one finding that counts the states, names the first few and lists all in StateNames;
// its new subtasks are those any state leaves empty (Flink rotates where each name's remainder
// starts, so different names leave different subtasks empty).
func TestPF170OneFindingPerOperatorAndCause(t *testing.T) {
	states := func(n, elements int) []tState {
		var out []tState
		for i := range n {
			out = append(out, splitState(fmt.Sprintf("s%02d", i), elements))
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		states   []tState
		p        int
		affected string
		want     []string
	}{
		{"one cause for every state", states(12, 1), 2, "[0 1]",
			[]string{"12 SPLIT_DISTRIBUTE states of operator", "(`s00`, `s01`, `s02`, `s03`, `s04` and 7 more; 12 elements", "new subtasks 0-1 between them"}},
		{"the states leave different subtasks empty", states(12, 2), 4, "[0 1 2 3]",
			[]string{"12 SPLIT_DISTRIBUTE states of operator", "(`s00`, `s01`, `s02`, `s03`, `s04` and 7 more; 24 elements", "each leave some new subtasks without an element, new subtasks 0-3 between them"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := layoutOf(t, 5, tOp{name: "custom", uid: "custom", p: 1, states: tc.states})
			fs := byRule(check(t, l, rescale.Plan{DefaultParallelism: tc.p}, nil, Options{}), "PF170")
			if len(fs) != 1 {
				t.Fatalf("%d PF170 findings, want 1:\n%+v", len(fs), fs)
			}
			f := fs[0]
			if f.StateName != "s00" || len(f.StateNames) != len(tc.states) || !slices.IsSorted(f.StateNames) {
				t.Errorf("states %q / %q, want s00 and all %d in order", f.StateName, f.StateNames, len(tc.states))
			}
			if got := fmt.Sprint(f.AffectedSubtasks); got != tc.affected {
				t.Errorf("affected subtasks %s, want %s", got, tc.affected)
			}
			for _, want := range tc.want {
				if !strings.Contains(f.Message, want) {
					t.Errorf("message lacks %q:\n%s", want, f.Message)
				}
			}
			if strings.Contains(f.Message, "`s05`") {
				t.Errorf("message names more than %d states:\n%s", namedStates, f.Message)
			}
		})
	}
}

func TestContainsSorted(t *testing.T) {
	if containsSorted([]int32{0, 2, 4}, []int32{1}) || containsSorted([]int32{0}, []int32{0, 1}) || !containsSorted([]int32{0, 2, 4}, []int32{2, 4}) {
		t.Error("containsSorted answers wrongly")
	}
}

func TestUnionSorted(t *testing.T) {
	for _, tc := range []struct{ a, b, want []int32 }{
		{nil, nil, []int32{}},
		{[]int32{0, 2}, []int32{1, 2, 5}, []int32{0, 1, 2, 5}},
		{[]int32{3}, nil, []int32{3}},
	} {
		if got := unionSorted(tc.a, tc.b); !slices.Equal(got, tc.want) {
			t.Errorf("unionSorted(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if !containsSorted(unionSorted(tc.a, tc.b), tc.a) || !containsSorted(unionSorted(tc.a, tc.b), tc.b) {
			t.Errorf("containsSorted: the union of %v and %v does not contain both", tc.a, tc.b)
		}
	}
}

func TestStatesText(t *testing.T) {
	names := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("n%d", i))
		}
		return out
	}
	for _, tc := range []struct {
		n    int
		want string
	}{
		{1, "`n0`"},
		{2, "`n0` and `n1`"},
		{5, "`n0`, `n1`, `n2`, `n3` and `n4`"},
		{6, "`n0`, `n1`, `n2`, `n3`, `n4` and `n5`"},
		{7, "`n0`, `n1`, `n2`, `n3`, `n4` and 2 more"},
		{30_000, "`n0`, `n1`, `n2`, `n3`, `n4` and 29,995 more"},
	} {
		if got := statesText(names(tc.n)); got != tc.want {
			t.Errorf("statesText(%d names) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
