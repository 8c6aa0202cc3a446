package scenarios

import (
	"bytes"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

func TestWriteManyStateNames(t *testing.T) {
	for _, n := range []int{1, 2, 1000} {
		var b bytes.Buffer
		if err := WriteManyStateNames(&b, n); err != nil {
			t.Fatal(err)
		}
		l, err := checkpoint.ReadLayout(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if len(l.Operators) != 1 || len(l.Operators[0].Subtasks) != 1 {
			t.Fatalf("n=%d: %d operators", n, len(l.Operators))
		}
		states := l.Operators[0].Subtasks[0].ManagedOperatorState.States
		seen := map[string]bool{}
		for _, s := range states {
			if s.Mode != checkpoint.SplitDistribute || s.Elements != 1 || seen[s.Name] {
				t.Fatalf("n=%d: state %+v", n, s)
			}
			seen[s.Name] = true
		}
		if len(seen) != n {
			t.Fatalf("n=%d: %d distinct names", n, len(seen))
		}
	}
	if err := WriteManyStateNames(&bytes.Buffer{}, 0); err == nil {
		t.Fatal("n=0 accepted")
	}
}
