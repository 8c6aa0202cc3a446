package findings

import (
	"testing"

	"github.com/flinkpreflight/preflight/internal/rescale"
)

func TestChainedMaxParallelismRule(t *testing.T) {
	src := func(maxP int) tOp {
		return tOp{uid: "src", p: 2, maxP: maxP, states: []tState{splitState("offsets", 1, 1)}}
	}
	keyed := func(maxP int) tOp { return tOp{uid: "keyed", p: 2, maxP: maxP, keyedKG: true} }
	chained := rescale.Plan{Vertices: []rescale.VertexSpec{{Operators: []string{"src", "keyed"}}}}
	tests := []struct {
		name    string
		ops     []tOp
		plan    rescale.Plan
		version string
		want    []string // message fragments; nil: no PF113 finding
	}{
		{"affected version restores silently", []tOp{src(128), keyed(256)}, chained, "1.20.1",
			[]string{"stored different max parallelisms", "256 key groups", "no error", "FLINK-40113 affects"}},
		{"fixed version refuses", []tOp{src(128), keyed(256)}, chained, "2.4.0",
			[]string{"Flink 2.4.0 refuses the restore with an IllegalStateException"}},
		{"unknown version says both", []tOp{src(128), keyed(256)}, chained, "",
			[]string{"without the FLINK-40113 fix", "fixed versions refuse"}},
		{"same max parallelism", []tOp{src(256), keyed(256)}, chained, "1.20.1", nil},
		{"not chained", []tOp{src(128), keyed(256)}, rescale.Plan{}, "1.20.1", nil},
		{"no keyed state", []tOp{src(128), {uid: "keyed", p: 2, maxP: 256, states: []tState{splitState("s", 1, 0)}}}, chained, "1.20.1", nil},
		{"configured max parallelism is PF111's", []tOp{src(128), keyed(256)},
			rescale.Plan{Vertices: chained.Vertices, MaxParallelism: map[string]rescale.MaxParallelism{"src": {Value: 256, Configured: true}}}, "1.20.1", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := layoutOf(t, 5, tc.ops...)
			rep := check(t, l, tc.plan, nil, Options{FlinkVersion: tc.version})
			f, fired := soleFinding(t, rep, "PF113", tc.want != nil, Error, tc.want...)
			if !fired {
				return
			}
			if f.OperatorUID != "keyed" {
				t.Fatalf("want PF113 on the keyed operator:\n%s", dump(rep))
			}
			if rep.Verdict != Deny {
				t.Errorf("verdict %s, want DENY", rep.Verdict)
			}
			// No parallelism resolves it: the safe-parallelism search finds none.
			for _, s := range rep.Safe {
				if s.VertexID == f.VertexID && (s.Below != 0 || s.Above != 0) {
					t.Errorf("safe parallelism %+v, want none", s)
				}
			}
		})
	}
}
