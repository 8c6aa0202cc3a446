package findings

import (
	"testing"

	"github.com/flinkpreflight/preflight/internal/rescale"
)

func TestRestoreFailureRule(t *testing.T) {
	ops := []tOp{
		{name: "src", uid: "src", p: 2, allFinished: true},
		{name: "map", uid: "map", p: 2, states: []tState{splitState("s", 1, 1)}},
	}
	l := layoutOf(t, 5, ops...)
	chained := rescale.Plan{Vertices: []rescale.VertexSpec{{Operators: []string{"src", "map"}}}}
	if fs := byRule(check(t, l, chained, nil, Options{}), "PF190"); len(fs) == 0 || fs[0].Severity != Error {
		t.Fatalf("PF190 should fire on a vertex with mixed finished operators: %+v", fs)
	}
	if fs := byRule(check(t, l, rescale.Plan{}, nil, Options{}), "PF190"); len(fs) != 0 {
		t.Fatalf("PF190 should be silent with separate vertices: %+v", fs)
	}
}

func TestVerdict(t *testing.T) {
	f := func(s ...Severity) []Finding {
		var out []Finding
		for _, x := range s {
			out = append(out, Finding{Severity: x})
		}
		return out
	}
	for _, tc := range []struct {
		fs   []Finding
		fail Severity
		want Verdict
	}{
		{nil, SeverityUnspecified, Allow},
		{f(Info, Info), SeverityUnspecified, Allow},
		{f(Info, Warning), SeverityUnspecified, AllowWithWarnings},
		{f(Error, Warning), SeverityUnspecified, Deny},
		{f(Warning), Warning, Deny},
		{f(Info), Info, Deny},
		{f(Info), Warning, Allow},
	} {
		if got := verdictOf(tc.fs, tc.fail); got != tc.want {
			t.Errorf("verdictOf(%v, %s) = %s, want %s", tc.fs, tc.fail, got, tc.want)
		}
	}
}

func TestFindingsOrderedAndDeterministic(t *testing.T) {
	l := layoutOf(t, 5, compactOp(4), kafkaSourceWithOrphan(64), tOp{name: "custom", uid: "custom", p: 2, states: []tState{splitState("my-list", 1, 1)}})
	plan := rescale.Plan{DefaultParallelism: 8}
	a := check(t, l, plan, nil, Options{})
	b := check(t, l, plan, nil, Options{})
	if dump(a) != dump(b) {
		t.Fatalf("non-deterministic:\n%s\n%s", dump(a), dump(b))
	}
	for i := 1; i < len(a.Findings); i++ {
		if a.Findings[i].Severity > a.Findings[i-1].Severity {
			t.Fatalf("not most severe first:\n%s", dump(a))
		}
	}
	if a.Verdict != Deny {
		t.Fatalf("verdict %s", a.Verdict)
	}
}

func TestDisabledRules(t *testing.T) {
	l := layoutOf(t, 5, compactOp(4))
	rep := check(t, l, rescale.Plan{DefaultParallelism: 8}, nil, Options{Disabled: []string{"pf101"}})
	if len(byRule(rep, "PF101")) != 0 || rep.Verdict == Deny {
		t.Fatalf("PF101 not disabled:\n%s", dump(rep))
	}
}

func TestSafeParallelism(t *testing.T) {
	for _, tc := range []struct {
		name         string
		version      int32
		ops          []tOp
		plan         rescale.Plan
		opts         Options
		below, above int32
	}{
		{"empty restore: bound from the element count", 5, []tOp{compactOp(4)}, rescale.Plan{Parallelism: par("compact-operator", 8)}, Options{}, 4, 0},
		{"fail level warning: scale-down drops, scale-up fails", 5, []tOp{compactOp(4)}, rescale.Plan{Parallelism: par("compact-operator", 2)}, Options{FailLevel: Warning}, 0, 4},
		{"above max parallelism with an empty-restore bound", 5, []tOp{compactOp(4)}, rescale.Plan{Parallelism: par("compact-operator", 200)}, Options{}, 4, 0},
		{"max parallelism", 4, []tOp{{uid: "w", p: 4, keyedKG: true}}, rescale.Plan{Parallelism: par("w", 200)}, Options{}, 128, 0},
		{"pinned", 5, []tOp{{name: "cc", uid: "compact-coordinator", p: 1, maxP: 1, states: []tState{splitState("files-state", 1)}}}, rescale.Plan{Parallelism: par("compact-coordinator", 3)}, Options{}, 1, 0},
		{"union frame size: no value helps", 5, []tOp{kafkaSourceWithOrphan(40000)}, rescale.Plan{DefaultParallelism: 2}, Options{RPCFrameSize: 1 << 20}, 0, 0},
		// 4 x 40000 SPLIT elements = 1.25 MB of offsets: at p=2 each subtask carries 640 KB, at
		// p=3 427 KB, against a 512 KiB frame: found by re-simulation.
		{"split frame size: re-simulated", 5, []tOp{{name: "big", uid: "big", p: 4, states: []tState{splitState("SourceReaderState", 40000, 40000, 40000, 40000)}, coord: 10}},
			rescale.Plan{DefaultParallelism: 2}, Options{RPCFrameSize: 512 << 10}, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := check(t, layoutOf(t, tc.version, tc.ops...), tc.plan, nil, tc.opts)
			if len(rep.Safe) != 1 {
				t.Fatalf("want one safe-parallelism entry:\n%s", dump(rep))
			}
			if s := rep.Safe[0]; s.Below != tc.below || s.Above != tc.above {
				t.Fatalf("safe below/above = %d/%d, want %d/%d\n%s", s.Below, s.Above, tc.below, tc.above, dump(rep))
			}
		})
	}
}

func TestRuleByID(t *testing.T) {
	if r := RuleByID("pf101"); r == nil || r.Meta().ID != "PF101" {
		t.Fatalf("RuleByID(pf101) = %v", r)
	}
	if RuleByID("PF999") != nil {
		t.Fatal("unknown rule found")
	}
}
