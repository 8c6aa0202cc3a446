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
			[]string{"new subtasks 0-1 of operator", "receive no element of some of its 12 SPLIT_DISTRIBUTE states: `s00`, `s01`, `s02`, `s03`, `s04` and 7 more (12 elements", "They are still restored, with empty lists"}},
		{"the states leave different subtasks empty", states(12, 2), 4, "[0 1 2 3]",
			[]string{"new subtasks 0-3 of operator", "some of its 12 SPLIT_DISTRIBUTE states: `s00`, `s01`, `s02`, `s03`, `s04` and 7 more (24 elements", "each leave some of them empty"}},
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

// TestMayReachBoundsEveryFinding: the safe-parallelism search skips rules that cannot reach the
// fail level (mayReach), so no finding may be more severe than its rule's Meta says, unless a
// catalog grades the rule.
func TestMayReachBoundsEveryFinding(t *testing.T) {
	for _, file := range []string{"compact-sink", "kafka-orphan-union", "max-parallelism"} {
		l := testdataLayout(t, file)
		for _, p := range []int{1, 2, 3, 8, 200} {
			for _, f := range check(t, l, rescale.Plan{DefaultParallelism: p}, nil, Options{RPCFrameSize: 1 << 20, JobManagerMemory: 1 << 20}).Findings {
				if m := ruleMeta(t, f.RuleID); f.Severity > m.Severity && !mayReach(m, Error) {
					t.Errorf("%s at p=%d: %s finding above its rule's %s:\n%s", file, p, f.Severity, m.Severity, f.Message)
				}
			}
		}
	}
	if mayReach(&unknownEmptySplit, Warning) || !mayReach(&orderDependent, Error) || !mayReach(&unknownEmptySplit, Info) {
		t.Error("mayReach: PF170 is INFO only; PF104 is graded by the catalog")
	}
}

func ruleMeta(t *testing.T, id string) *RuleMeta {
	t.Helper()
	for _, r := range Rules() {
		if r.Meta().ID == id {
			return r.Meta()
		}
	}
	t.Fatalf("no rule %s", id)
	return nil
}

// TestPF130OneFindingPerOperatorAndCause: an unknown operator whose every subtask copied many
// UNION states wholesale gets one finding that names five, lists all, and forecasts them
// together; one such state keeps the single-state wording.
func TestPF130OneFindingPerOperatorAndCause(t *testing.T) {
	unions := func(n int) []tState {
		var out []tState
		for i := range n {
			out = append(out, unionState(fmt.Sprintf("u%02d", i), 2, 2))
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		states []tState
		names  int // len(StateNames)
		want   []string
	}{
		{"one state", append(unions(1), splitState("s", 1, 1)), 0,
			[]string{"holds an orphaned UNION state: Every one of the 2 old subtasks stored the same 2 elements of `u00`", "It has 4 elements"}},
		{"seven states", unions(7), 7,
			[]string{"holds 7 orphaned UNION states: Every one of the 2 old subtasks stored the same number of elements of each of `u00`, `u01`, `u02`, `u03`, `u04` and 2 more",
				"They have 28 elements", "the next checkpoint holds 112 elements"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := layoutOf(t, 5, tOp{name: "custom", uid: "custom", p: 2, states: tc.states})
			fs := byRule(check(t, l, rescale.Plan{DefaultParallelism: 4}, nil, Options{}), "PF130")
			if len(fs) != 1 {
				t.Fatalf("%d PF130 findings, want 1:\n%+v", len(fs), fs)
			}
			f := fs[0]
			if f.StateName != "u00" || len(f.StateNames) != tc.names {
				t.Errorf("states %q / %q, want u00 and %d names", f.StateName, f.StateNames, tc.names)
			}
			for _, want := range tc.want {
				if !strings.Contains(f.Message, want) {
					t.Errorf("message lacks %q:\n%s", want, f.Message)
				}
			}
		})
	}
}
