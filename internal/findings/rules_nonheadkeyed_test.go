package findings

import (
	"testing"

	"github.com/flinkpreflight/preflight/internal/rescale"
)

func TestNonHeadKeyedStateRule(t *testing.T) {
	ops := []tOp{{uid: "src", p: 2, states: []tState{splitState("offsets", 1, 1)}}, {uid: "keyed", p: 2, keyedKG: true}}
	keyedBehind := rescale.Plan{Vertices: []rescale.VertexSpec{{Operators: []string{"src", "keyed"}}}}
	keyedHead := rescale.Plan{Vertices: []rescale.VertexSpec{{Operators: []string{"keyed", "src"}}}}
	tests := []struct {
		name    string
		plan    rescale.Plan
		version string
		fires   bool
	}{
		{"1.6.2 drops it", keyedBehind, "1.6.2", true},
		{"1.5.6 drops it (never fixed on 1.5)", keyedBehind, "1.5.6", true},
		{"unknown version assumed affected", keyedBehind, "", true},
		{"1.6.3 fixed", keyedBehind, "1.6.3", false},
		{"1.7.0 fixed", keyedBehind, "1.7.0", false},
		{"keyed operator is the head", keyedHead, "1.6.2", false},
		{"not chained", rescale.Plan{}, "1.6.2", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := check(t, layoutOf(t, 2, ops...), tc.plan, nil, Options{FlinkVersion: tc.version})
			if _, fired := soleFinding(t, rep, "PF141", tc.fires, Error, "chained behind", "FLINK-10809"); !fired {
				return
			}
			if rep.Verdict != Deny || len(rep.Safe) != 1 || rep.Safe[0].Below != 0 || rep.Safe[0].Above != 0 {
				t.Errorf("verdict %s safe %+v: want DENY and no safe parallelism (the chain, not the parallelism, matters)", rep.Verdict, rep.Safe)
			}
		})
	}
}
