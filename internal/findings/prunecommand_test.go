package findings

import "testing"

func TestPruneCommandLine(t *testing.T) {
	for _, tc := range []struct{ src, op, state, want string }{
		{"ckpt/chk-42", "61252f73", "topic-partition-offset-states", "preflight prune ckpt/chk-42 --operator 61252f73 --state topic-partition-offset-states --out ckpt/chk-42-pruned"},
		{"ckpt/chk-42/_metadata", "61252f73", "", "preflight prune ckpt/chk-42/_metadata --operator 61252f73 --out ckpt/chk-42-pruned"},
		{"_metadata", "61252f73", "", "preflight prune _metadata --operator 61252f73 --out savepoint-pruned"},
		{"my ckpts/chk-1/", "61252f73", "it's state", `preflight prune 'my ckpts/chk-1/' --operator 61252f73 --state 'it'\''s state' --out 'my ckpts/chk-1-pruned'`},
	} {
		if got := PruneCommand(tc.src, tc.op, tc.state); got != tc.want {
			t.Errorf("PruneCommand(%q, %q, %q)\n got %s\nwant %s", tc.src, tc.op, tc.state, got, tc.want)
		}
	}
}
