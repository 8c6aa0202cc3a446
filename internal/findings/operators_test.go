package findings

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// opFinding is a PF170-like finding on operator i (position i+1), with a message naming it as
// opLabel does; sub is its affected new subtask, note any text after the message.
func opFinding(i int, sub int32, note string) Finding {
	id := fmt.Sprintf("%032x", 1000+i)
	name := fmt.Sprintf("op-%d", i)
	return Finding{RuleID: "PF170", Title: "t", Severity: Info, OperatorID: id, OperatorName: name, OperatorUID: name, VertexID: id,
		StateName: "split-0", AffectedSubtasks: []int32{sub}, Position: int32(i + 1),
		Message:     fmt.Sprintf("At parallelism 2, new subtask %d of operator %q (uid %s, ID %s) receives nothing.%s", sub, name, name, id, note),
		Remediation: "Pass the job jar.", References: []string{"FLINK-1"}}
}

func TestOperatorMerger(t *testing.T) {
	many := func(n int, f func(i int) Finding) []Finding {
		var fs []Finding
		for i := range n {
			fs = append(fs, f(i))
		}
		return fs
	}
	alike := func(i int) Finding { return opFinding(i, 1, "") }
	cases := []struct {
		name string
		in   []Finding
		// want: per output finding, its operator count (len OperatorIDs, 0 for a finding of one
		// operator), sorted
		want        []int
		wantMessage string // a substring of the merged finding's message, when one is merged
	}{
		{name: "five alike stay five", in: many(5, alike), want: []int{0, 0, 0, 0, 0}},
		{name: "six alike merge", in: many(6, alike), want: []int{6},
			wantMessage: `6 operators alike (#1 op-0, #2 op-1, #3 op-2, #4 op-3, #5 op-4 and 1 more), each as the first: At parallelism 2, new subtask 1 of operator "op-0"`},
		{name: "a thousand alike merge", in: many(1000, alike), want: []int{1000},
			wantMessage: `1,000 operators alike (#1 op-0, #2 op-1, #3 op-2, #4 op-3, #5 op-4 and 995 more)`},
		{name: "other subtasks are another cause", in: many(12, func(i int) Finding { return opFinding(i, int32(i%2), "") }), want: []int{6, 6}},
		{name: "other text is another cause", in: many(13, func(i int) Finding { return opFinding(i, 1, strings.Repeat(" x", i%2)) }), want: []int{6, 7}},
		{name: "one operator twice counts once", in: append(many(5, alike), alike(0)), want: []int{0, 0, 0, 0, 0}},
		{name: "no operator passes through", in: append(many(6, alike), Finding{RuleID: "PF100", Message: "m"}, Finding{RuleID: "PF100", Message: "m"}), want: []int{0, 0, 6}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The answer does not depend on how the findings are cut into ranges or ordered.
			for trial := range 3 {
				in := slices.Clone(tc.in)
				rand.New(rand.NewPCG(uint64(trial), 1)).Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
				var m OperatorMerger
				for len(in) > 0 {
					k := min(len(in), 1+trial*3)
					m.Add(in[:k])
					in = in[k:]
				}
				out := m.Findings()
				var got []int
				seen := map[string]bool{}
				for _, f := range out {
					got = append(got, len(f.OperatorIDs))
					if len(f.OperatorIDs) == 0 {
						if f.OperatorID != "" && seen[f.OperatorID] {
							t.Errorf("operator %s has the same finding twice", f.OperatorID)
						}
						seen[f.OperatorID] = true
						continue
					}
					if !strings.Contains(f.Message, tc.wantMessage) {
						t.Errorf("message %q, want it to contain %q", f.Message, tc.wantMessage)
					}
					if f.OperatorIDs[0] != f.OperatorID || !slices.IsSortedFunc(f.OperatorIDs, strings.Compare) {
						t.Errorf("operator IDs %v: want the first's (%s) first and in report order", f.OperatorIDs[:2], f.OperatorID)
					}
				}
				slices.Sort(got)
				if !slices.Equal(got, tc.want) {
					t.Errorf("trial %d: operator counts %v, want %v", trial, got, tc.want)
				}
			}
		})
	}
}
