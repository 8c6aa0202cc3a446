package findings

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
	"github.com/flinkpreflight/preflight/internal/rescale"
	"github.com/flinkpreflight/preflight/internal/scenarios"
)

func testdataLayout(t *testing.T, name string) *checkpoint.Layout {
	t.Helper()
	return checkpointtest.File(t, filepath.Join("..", "..", "testdata", name, "_metadata"))
}

// The outcomes promised in testdata/README.md.
func TestScenarioOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		file      string
		plan      rescale.Plan
		opts      Options
		verdict   Verdict
		rule      string // a finding of this rule must be present
		state     string
		subtasks  []int32
		msg       string
		ref       string
		below     int32
		above     int32
		checkSafe bool
	}{
		{name: "compact-operator=8", file: "compact-sink", plan: rescale.Plan{Parallelism: par("compact-operator", 8)},
			verdict: Deny, rule: "PF101", state: "expired-files", subtasks: []int32{4, 5, 6, 7}, msg: "NoSuchElementException", ref: "FLINK-31689", below: 4, above: 0, checkSafe: true},
		{name: "compact-operator=8 on Flink 1.19.1", file: "compact-sink", plan: rescale.Plan{Parallelism: par("compact-operator", 8)}, opts: Options{FlinkVersion: "1.19.1"},
			verdict: Deny, rule: "PF101", msg: "which includes 1.19.1"},
		{name: "compact-operator=2", file: "compact-sink", plan: rescale.Plan{Parallelism: par("compact-operator", 2)},
			verdict: AllowWithWarnings, rule: "PF102", state: "expired-files", msg: "dropped"},
		{name: "compact-operator=4", file: "compact-sink", plan: rescale.Plan{Parallelism: par("compact-operator", 4)}, verdict: Allow},
		{name: "compact-operator by operator ID", file: "compact-sink", plan: rescale.Plan{Parallelism: par(checkpoint.OperatorIDFromUID("compact-operator").String(), 8)},
			verdict: Deny, rule: "PF101"},
		{name: "compact-coordinator=2", file: "compact-sink", plan: rescale.Plan{Parallelism: par("compact-coordinator", 2)},
			verdict: Deny, rule: "PF112", below: 1, checkSafe: true},
		{name: "kafka default options", file: "kafka-orphan-union", plan: rescale.Plan{DefaultParallelism: 8},
			verdict: AllowWithWarnings, rule: "PF130", state: "topic-partition-offset-states", msg: "Forecast"},
		{name: "kafka at stored parallelism", file: "kafka-orphan-union", plan: rescale.Plan{},
			verdict: AllowWithWarnings, rule: "PF130"},
		{name: "kafka frame 1 MiB", file: "kafka-orphan-union", plan: rescale.Plan{DefaultParallelism: 8}, opts: Options{RPCFrameSize: 1 << 20},
			verdict: Deny, rule: "PF120", msg: "No parallelism brings it under", checkSafe: true},
		{name: "kafka frame 1 MiB at 1", file: "kafka-orphan-union", plan: rescale.Plan{DefaultParallelism: 1}, opts: Options{RPCFrameSize: 1 << 20},
			verdict: Deny, rule: "PF120"},
		{name: "click-window=200", file: "max-parallelism", plan: rescale.Plan{Parallelism: par("click-window", 200)},
			verdict: Deny, rule: "PF110", msg: "The maximum parallelism (128) of the restored state is lower than the configured parallelism (200)", below: 128, checkSafe: true},
		{name: "click-window=128", file: "max-parallelism", plan: rescale.Plan{Parallelism: par("click-window", 128)}, verdict: Allow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := check(t, testdataLayout(t, tc.file), tc.plan, nil, tc.opts)
			if rep.Verdict != tc.verdict {
				t.Fatalf("verdict %s, want %s\n%s", rep.Verdict, tc.verdict, dump(rep))
			}
			if tc.rule == "" {
				return
			}
			fs := byRule(rep, tc.rule)
			if len(fs) == 0 {
				t.Fatalf("no %s finding\n%s", tc.rule, dump(rep))
			}
			f := fs[0]
			if tc.state != "" && f.StateName != tc.state {
				t.Errorf("state %q, want %q", f.StateName, tc.state)
			}
			if tc.subtasks != nil && !slices.Equal(f.AffectedSubtasks, tc.subtasks) {
				t.Errorf("subtasks %v, want %v", f.AffectedSubtasks, tc.subtasks)
			}
			if !strings.Contains(f.Message, tc.msg) {
				t.Errorf("message lacks %q: %s", tc.msg, f.Message)
			}
			if tc.ref != "" && !slices.Contains(f.References, tc.ref) {
				t.Errorf("references %v lack %s", f.References, tc.ref)
			}
			if f.OperatorID == "" || f.VertexID == "" {
				t.Errorf("finding does not name operator and vertex: %+v", f)
			}
			if tc.checkSafe {
				if len(rep.Safe) != 1 || rep.Safe[0].Below != tc.below || rep.Safe[0].Above != tc.above {
					t.Errorf("safe %+v, want below %d above %d", rep.Safe, tc.below, tc.above)
				}
			}
		})
	}
}

// The incident's file at a size just above the default frame: denied at every parallelism.
func TestKafkaOrphanUnionAboveDefaultFrame(t *testing.T) {
	var b bytes.Buffer
	if err := scenarios.KafkaOrphanUnion(&b, 12<<20); err != nil {
		t.Fatal(err)
	}
	l, err := checkpoint.ReadLayout(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{1, 4, 16} {
		rep := check(t, l, rescale.Plan{DefaultParallelism: p}, nil, Options{})
		if rep.Verdict != Deny || len(byRule(rep, "PF120")) == 0 || len(byRule(rep, "PF130")) == 0 {
			t.Fatalf("p=%d:\n%s", p, dump(rep))
		}
		if s := rep.Safe; len(s) != 1 || s[0].Below != 0 || s[0].Above != 0 {
			t.Errorf("p=%d: safe %+v, want none", p, s)
		}
	}
}
