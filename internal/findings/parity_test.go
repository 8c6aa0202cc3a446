package findings

import (
	"reflect"
	"testing"

	"github.com/flinkpreflight/preflight/internal/rescale"
)

// TestPF170NamesFlinksEmptySubtask is issue #17's minimal case through the codec and the rules:
// two old subtasks list `a` (1 element) then `ab` (2 elements), names that share a HashMap bucket.
// Flink distributes `ab` first (computeIfAbsent links it at the head of the bucket), so at
// parallelism 3 it is new subtask 0 that gets no element of `a`.
func TestPF170NamesFlinksEmptySubtask(t *testing.T) {
	l := layoutOf(t, 5, tOp{name: "custom", uid: "custom", p: 2,
		states: []tState{splitState("a", 1, 1), splitState("ab", 2, 2)}})
	fs := byRule(check(t, l, rescale.Plan{DefaultParallelism: 3}, nil, Options{}), "PF170")
	if len(fs) != 1 || fs[0].StateName != "a" || !reflect.DeepEqual(fs[0].AffectedSubtasks, []int32{0}) {
		t.Fatalf("PF170 findings %+v, want one for `a` naming subtask 0", fs)
	}
}
