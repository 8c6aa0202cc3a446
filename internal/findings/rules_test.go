package findings

import (
	"slices"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// Synthetic checkpoints used by the rule tests.
func compactOp(p int) tOp {
	per := make([]int, p)
	for i := range per {
		per[i] = 1
	}
	return tOp{name: "compact-operator", uid: "compact-operator", p: p, states: []tState{splitState("expired-files", per...)}}
}

func kafkaSourceWithOrphan(per int) tOp {
	return tOp{name: "Source: events", uid: "kafka-source", p: 4, coord: 300, states: []tState{
		splitState("SourceReaderState", 4, 4, 4, 4),
		unionState("topic-partition-offset-states", per, per, per, per),
	}}
}

type ruleCase struct {
	name     string
	rule     string
	version  int32
	ops      []tOp
	plan     rescale.Plan
	opts     Options
	userCat  string
	want     Severity // SeverityUnspecified: silent
	subtasks []int32  // nil: not checked
	msg      string   // substring of the message, "" not checked
}

func TestRules(t *testing.T) {
	for _, tc := range []ruleCase{
		// PF101 empty restore
		{name: "PF101 fires on scale-up", rule: "PF101", version: 5, ops: []tOp{compactOp(4)}, plan: rescale.Plan{Parallelism: par("compact-operator", 8)},
			want: Error, subtasks: []int32{4, 5, 6, 7}, msg: "FLINK-31689"},
		{name: "PF101 silent at same parallelism", rule: "PF101", version: 5, ops: []tOp{compactOp(4)}, plan: rescale.Plan{Parallelism: par("compact-operator", 4)}},
		{name: "PF101 silent on scale-down", rule: "PF101", version: 5, ops: []tOp{compactOp(4)}, plan: rescale.Plan{Parallelism: par("compact-operator", 3)}},
		{name: "PF101 silent on an unaffected version", rule: "PF101", version: 5, ops: []tOp{compactOp(4)}, plan: rescale.Plan{Parallelism: par("compact-operator", 8)}, opts: Options{FlinkVersion: "1.11.6"}},
		{name: "PF101 names the version", rule: "PF101", version: 5, ops: []tOp{compactOp(4)}, plan: rescale.Plan{Parallelism: par("compact-operator", 5)}, opts: Options{FlinkVersion: "1.19.1"},
			want: Error, subtasks: []int32{4}, msg: "which includes 1.19.1"},
		{name: "PF101 format 4 via fingerprint", rule: "PF101", version: 4, ops: []tOp{{uid: "x", p: 2, states: []tState{splitState("expired-files", 1, 1)}}}, plan: rescale.Plan{DefaultParallelism: 3},
			want: Error, subtasks: []int32{2}},
		{name: "PF101 user catalog entry", rule: "PF101", version: 5, ops: []tOp{{name: "my-op", uid: "my-op", p: 2, states: []tState{splitState("x", 1, 1)}}}, plan: rescale.Plan{DefaultParallelism: 4},
			userCat: `{"entries": [{"id": "my-op", "name": "My operator", "fingerprint": {"uids": ["my-op"]}, "states": [{"name": "x", "assumption": "ONE-UNGUARDED", "consequence": "x must not be empty."}]}]}`,
			want:    Error, subtasks: []int32{2, 3}, msg: "x must not be empty"},
		// PF102 first-only
		{name: "PF102 fires on scale-down", rule: "PF102", version: 5, ops: []tOp{compactOp(4)}, plan: rescale.Plan{Parallelism: par("compact-operator", 2)},
			want: Warning, subtasks: []int32{0, 1}, msg: "old subtasks 1, 3 are dropped"},
		{name: "PF102 silent on scale-up", rule: "PF102", version: 5, ops: []tOp{compactOp(4)}, plan: rescale.Plan{Parallelism: par("compact-operator", 8)}},
		// PF103 at most one
		{name: "PF103 fires on several producer hints", rule: "PF103", version: 5, ops: []tOp{{name: "Sink: kafka", uid: "producer", p: 2, states: []tState{
			unionState("next-transactional-id-hint-v2", 1, 1), splitState("state", 1, 1)}}}, plan: rescale.Plan{DefaultParallelism: 2},
			want: Error, subtasks: []int32{0, 1}, msg: "at most one"},
		{name: "PF103 silent with one hint", rule: "PF103", version: 5, ops: []tOp{{name: "Sink: kafka", uid: "producer", p: 2, states: []tState{
			unionState("next-transactional-id-hint-v2", 1, 0), splitState("state", 1, 1)}}}, plan: rescale.Plan{DefaultParallelism: 4}},
		// PF104 order dependent
		{name: "PF104 fires when a KafkaSink writer is rescaled", rule: "PF104", version: 5, ops: []tOp{{name: "Sink: KafkaSink Writer", uid: "kafka-sink", p: 2, states: []tState{splitState("writer_raw_states", 1, 1)}}},
			plan: rescale.Plan{DefaultParallelism: 3}, want: Info},
		{name: "PF104 silent without rescale", rule: "PF104", version: 5, ops: []tOp{{name: "Sink: KafkaSink Writer", uid: "kafka-sink", p: 2, states: []tState{splitState("writer_raw_states", 1, 1)}}},
			plan: rescale.Plan{DefaultParallelism: 2}},
		// PF110 max parallelism
		{name: "PF110 fires above the stored max parallelism", rule: "PF110", version: 4, ops: []tOp{{uid: "w", p: 4, keyedKG: true}}, plan: rescale.Plan{Parallelism: par("w", 200)},
			want: Error, msg: "The maximum parallelism (128) of the restored state is lower than the configured parallelism (200)"},
		{name: "PF110 silent at the max parallelism", rule: "PF110", version: 4, ops: []tOp{{uid: "w", p: 4, keyedKG: true}}, plan: rescale.Plan{Parallelism: par("w", 128)}},
		// PF111 max parallelism changed
		{name: "PF111 fires on a configured new max parallelism", rule: "PF111", version: 4, ops: []tOp{{uid: "w", p: 4, keyedKG: true}},
			plan: rescale.Plan{MaxParallelism: map[string]rescale.MaxParallelism{"w": {Value: 256, Configured: true}}}, want: Error, msg: "Max parallelism mismatch"},
		{name: "PF111 silent when the configured value matches", rule: "PF111", version: 4, ops: []tOp{{uid: "w", p: 4, keyedKG: true}},
			plan: rescale.Plan{MaxParallelism: map[string]rescale.MaxParallelism{"w": {Value: 128, Configured: true}}}},
		// PF112 pinned
		{name: "PF112 fires on a pinned operator the plan names", rule: "PF112", version: 5, ops: []tOp{{name: "compact-coordinator", uid: "compact-coordinator", p: 1, maxP: 1, states: []tState{splitState("files-state", 1)}}},
			plan: rescale.Plan{Parallelism: par("compact-coordinator", 4)}, want: Error, subtasks: []int32{1, 2, 3}},
		{name: "PF112 only informs when a job-wide parallelism leaves it at 1", rule: "PF112", version: 5, ops: []tOp{{name: "compact-coordinator", uid: "compact-coordinator", p: 1, maxP: 1, states: []tState{splitState("files-state", 1)}}},
			plan: rescale.Plan{DefaultParallelism: 4}, want: Info, msg: "the job-wide parallelism 4 does not apply to it"},
		{name: "PF112 silent at 1", rule: "PF112", version: 5, ops: []tOp{{name: "compact-coordinator", uid: "compact-coordinator", p: 1, maxP: 1, states: []tState{splitState("files-state", 1)}}},
			plan: rescale.Plan{DefaultParallelism: 1}},
		// PF120 frame size
		{name: "PF120 fires on union offsets above the frame", rule: "PF120", version: 5, ops: []tOp{kafkaSourceWithOrphan(40000)}, plan: rescale.Plan{DefaultParallelism: 2},
			opts: Options{RPCFrameSize: 1 << 20}, want: Error, subtasks: []int32{0, 1}, msg: "No parallelism brings it under"},
		{name: "PF120 silent under the default frame", rule: "PF120", version: 5, ops: []tOp{kafkaSourceWithOrphan(40000)}, plan: rescale.Plan{DefaultParallelism: 2}},
		// PF121 JobManager memory
		{name: "PF121 fires above JobManager memory", rule: "PF121", version: 5, ops: []tOp{kafkaSourceWithOrphan(40000)}, plan: rescale.Plan{DefaultParallelism: 8},
			opts: Options{JobManagerMemory: 4 << 20}, want: Error},
		{name: "PF121 warns above half", rule: "PF121", version: 5, ops: []tOp{kafkaSourceWithOrphan(40000)}, plan: rescale.Plan{DefaultParallelism: 4},
			opts: Options{JobManagerMemory: 8 << 20}, want: Warning},
		{name: "PF121 silent when memory unknown", rule: "PF121", version: 5, ops: []tOp{kafkaSourceWithOrphan(40000)}, plan: rescale.Plan{DefaultParallelism: 8}},
		// PF130 orphan union
		{name: "PF130 fires on the legacy Kafka union", rule: "PF130", version: 5, ops: []tOp{kafkaSourceWithOrphan(64)}, plan: rescale.Plan{DefaultParallelism: 8},
			want: Warning, msg: "next checkpoint holds 2048 elements"},
		{name: "PF130 heuristic on an unknown operator", rule: "PF130", version: 5, ops: []tOp{{name: "mystery", uid: "m", p: 3, states: []tState{splitState("a", 1, 1, 1), unionState("u", 5, 5, 5)}}},
			plan: rescale.Plan{DefaultParallelism: 3}, want: Warning, msg: "heuristic"},
		{name: "PF130 silent on a legitimate union", rule: "PF130", version: 5, ops: []tOp{{name: "writer", uid: "streaming-writer", p: 4, states: []tState{
			splitState("bucket-states", 2, 1, 3, 1), unionState("max-part-counter", 1, 1, 1, 1)}}}, plan: rescale.Plan{DefaultParallelism: 8}},
		{name: "PF130 silent on the legacy consumer itself", rule: "PF130", version: 5, ops: []tOp{{name: "Source: legacy", uid: "legacy", p: 2, states: []tState{unionState("topic-partition-offset-states", 3, 3)}}},
			plan: rescale.Plan{DefaultParallelism: 4}},
		// PF140 keyed skew
		{name: "PF140 fires on uneven key groups", rule: "PF140", version: 4, ops: []tOp{{uid: "w", p: 4, keyedKG: true}}, plan: rescale.Plan{Parallelism: par("w", 100)}, want: Info},
		{name: "PF140 silent when p divides max parallelism", rule: "PF140", version: 4, ops: []tOp{{uid: "w", p: 4, keyedKG: true}}, plan: rescale.Plan{Parallelism: par("w", 64)}},
		// PF150 channel state
		{name: "PF150 fires without a mapper", rule: "PF150", version: 5, ops: []tOp{{name: "map", uid: "map", p: 2, inputChans: 2}}, plan: rescale.Plan{DefaultParallelism: 3},
			want: Warning, msg: "cannot be simulated"},
		{name: "PF150 fires on a pointwise edge", rule: "PF150", version: 5, ops: []tOp{{name: "map", uid: "map", p: 2, inputChans: 2}},
			plan: rescale.Plan{DefaultParallelism: 3, InputChannelMappers: map[string]rescale.SubtaskMapper{"map": rescale.MapperUnsupported}}, want: Error, msg: "pointwise"},
		{name: "PF150 informs with a mapper", rule: "PF150", version: 5, ops: []tOp{{name: "map", uid: "map", p: 2, inputChans: 2}},
			plan: rescale.Plan{DefaultParallelism: 3, InputChannelMappers: map[string]rescale.SubtaskMapper{"map": rescale.MapperRoundRobin}}, want: Info},
		{name: "PF150 silent without rescale", rule: "PF150", version: 5, ops: []tOp{{name: "map", uid: "map", p: 2, inputChans: 2}}, plan: rescale.Plan{DefaultParallelism: 2}},
		// PF160 non-restored state
		{name: "PF160 fires without allowNonRestoredState", rule: "PF160", version: 5, ops: []tOp{compactOp(2), {name: "old", uid: "old", p: 2, states: []tState{splitState("s", 1, 1)}}},
			plan: rescale.Plan{NewJobOperators: []string{"compact-operator"}}, want: Error, msg: "allowNonRestoredState"},
		{name: "PF160 warns with allowNonRestoredState", rule: "PF160", version: 5, ops: []tOp{compactOp(2), {name: "old", uid: "old", p: 2, states: []tState{splitState("s", 1, 1)}}},
			plan: rescale.Plan{NewJobOperators: []string{"compact-operator"}, AllowNonRestoredState: true}, want: Warning, msg: "Skipping savepoint state"},
		{name: "PF160 silent when the new job is unknown", rule: "PF160", version: 5, ops: []tOp{compactOp(2), {name: "old", uid: "old", p: 2, states: []tState{splitState("s", 1, 1)}}},
			plan: rescale.Plan{}},
		// PF170 unknown operator with empty split
		{name: "PF170 fires for an unknown operator", rule: "PF170", version: 5, ops: []tOp{{name: "custom", uid: "custom", p: 2, states: []tState{splitState("my-list", 1, 1)}}},
			plan: rescale.Plan{DefaultParallelism: 4}, want: Info, subtasks: []int32{2, 3}},
		{name: "PF170 silent for a known operator", rule: "PF170", version: 5, ops: []tOp{{name: "src", uid: "src", p: 2, coord: 10, states: []tState{splitState("SourceReaderState", 1, 1)}}},
			plan: rescale.Plan{DefaultParallelism: 4}},
		// PF180 missing uid
		{name: "PF180 fires for a stateful operator without uid", rule: "PF180", version: 5, ops: []tOp{{name: "Map", id: "7d246211b2be972287522fe7978b38c1", p: 2, states: []tState{splitState("s", 1, 1)}}},
			plan: rescale.Plan{}, want: Info},
		{name: "PF180 silent for a stateless operator", rule: "PF180", version: 5, ops: []tOp{{name: "Map", id: "7d246211b2be972287522fe7978b38c1", p: 2}}, plan: rescale.Plan{}},
		{name: "PF180 silent before format 5", rule: "PF180", version: 4, ops: []tOp{{id: "7d246211b2be972287522fe7978b38c1", p: 2, states: []tState{splitState("s", 1, 1)}}}, plan: rescale.Plan{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := layoutOf(t, tc.version, tc.ops...)
			cat := DefaultCatalog()
			if tc.userCat != "" {
				if err := cat.MergeJSON([]byte(tc.userCat), "test"); err != nil {
					t.Fatal(err)
				}
			}
			rep := check(t, l, tc.plan, cat, tc.opts)
			fs := byRule(rep, tc.rule)
			if tc.want == SeverityUnspecified {
				if len(fs) > 0 {
					t.Fatalf("want %s silent, got:\n%s", tc.rule, dump(rep))
				}
				return
			}
			if len(fs) == 0 {
				t.Fatalf("want %s to fire, got:\n%s", tc.rule, dump(rep))
			}
			f := fs[0]
			if f.Severity != tc.want {
				t.Errorf("severity %s, want %s", f.Severity, tc.want)
			}
			if tc.subtasks != nil && !slices.Equal(f.AffectedSubtasks, tc.subtasks) {
				t.Errorf("affected subtasks %v, want %v", f.AffectedSubtasks, tc.subtasks)
			}
			if tc.msg != "" && !strings.Contains(f.Message, tc.msg) {
				t.Errorf("message lacks %q:\n%s", tc.msg, f.Message)
			}
			if f.Title == "" || f.RuleID == "" {
				t.Errorf("finding without rule ID or title: %+v", f)
			}
		})
	}
}

func TestRulesHaveMetadata(t *testing.T) {
	seen := map[string]bool{}
	prev := ""
	for _, r := range Rules() {
		m := r.Meta()
		if seen[m.ID] {
			t.Errorf("duplicate rule ID %s", m.ID)
		}
		seen[m.ID] = true
		if m.ID <= prev {
			t.Errorf("Rules() not in ID order: %s after %s", m.ID, prev)
		}
		prev = m.ID
		if !strings.HasPrefix(m.ID, "PF") || m.Title == "" || m.Cause == "" || m.Severity == SeverityUnspecified || len(m.Remedies) == 0 {
			t.Errorf("rule %s lacks metadata (title, cause, severity, a remedy)", m.ID)
		}
		for _, r := range m.Remedies {
			if strings.Contains(remedyLine(r), "<…>") {
				t.Errorf("rule %s: remedy %q has a fmt verb without a name in Args", m.ID, r.When)
			}
		}
		for _, b := range m.Bugs {
			if !strings.HasPrefix(b.ID, "FLINK-") || b.Summary == "" || len(b.Affected) == 0 || b.FixedIn == "" {
				t.Errorf("rule %s: bug %s needs a FLINK id, a summary, affected versions and where it is fixed", m.ID, b.ID)
			}
			for _, r := range b.Affected {
				for _, v := range []string{r.Introduced, r.Fixed} {
					if _, err := ParseVersion(v); v != "" && err != nil {
						t.Errorf("rule %s: bug %s: %v", m.ID, b.ID, err)
					}
				}
			}
		}
	}
}

var _ = checkpoint.Union

func TestEmptyRestoreOfNewOperator(t *testing.T) {
	l := layoutOf(t, 5, tOp{name: "streaming-writer", uid: "streaming-writer", p: 1, maxP: 1, states: []tState{splitState("bucket-states", 2), unionState("max-part-counter", 1)}})
	// compact-coordinator is new to the job and chained behind a restored operator.
	chained := rescale.Plan{Vertices: []rescale.VertexSpec{{Operators: []string{"streaming-writer", "compact-coordinator"}}}}
	fs := byRule(check(t, l, chained, nil, Options{}), "PF101")
	if len(fs) != 1 || fs[0].StateName != "files-state" || !strings.Contains(fs[0].Message, "new to the job") {
		t.Fatalf("PF101 for the new coordinator: %+v", fs)
	}
	alone := rescale.Plan{Vertices: []rescale.VertexSpec{{Operators: []string{"compact-coordinator"}}}}
	if fs := byRule(check(t, l, alone, nil, Options{}), "PF101"); len(fs) != 0 {
		t.Fatalf("a new operator in its own vertex is not restored: %+v", fs)
	}
}

func TestHazardRule(t *testing.T) {
	committer := tOp{name: "Sink: Committer", uid: "committer", p: 2, states: []tState{splitState("streaming_committer_raw_states", 1, 1)}}
	producer := tOp{name: "Sink: kafka", uid: "producer", p: 10, states: []tState{
		unionState("next-transactional-id-hint-v2", 1, 0, 0, 0, 0, 0, 0, 0, 0, 0), splitState("state", 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)}}
	for _, tc := range []struct {
		name    string
		op      tOp
		p       int
		version string
		want    Severity
		msg     string
	}{
		{"committer scale-up on 1.20", committer, 4, "1.20.1", Warning, "FLINK-37747"},
		{"committer scale-up on 2.1", committer, 4, "2.1.0", SeverityUnspecified, ""},
		{"committer unchanged", committer, 2, "", SeverityUnspecified, ""},
		{"producer scale-down by 10", producer, 1, "", Warning, "SAFE_SCALE_DOWN_FACTOR"},
		{"producer scale-down by 2", producer, 5, "", SeverityUnspecified, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := check(t, layoutOf(t, 5, tc.op), rescale.Plan{DefaultParallelism: tc.p}, nil, Options{FlinkVersion: tc.version})
			fs := byRule(rep, "PF105")
			if tc.want == SeverityUnspecified {
				if len(fs) != 0 {
					t.Fatalf("want silent:\n%s", dump(rep))
				}
				return
			}
			found := false
			for _, f := range fs {
				found = found || (f.Severity == tc.want && strings.Contains(f.Message, tc.msg))
			}
			if !found {
				t.Fatalf("want %s with %q:\n%s", tc.want, tc.msg, dump(rep))
			}
		})
	}
}

func TestOrphanPartCounterAfterFileSinkMigration(t *testing.T) {
	l := layoutOf(t, 5, tOp{name: "Sink: Writer", uid: "file-sink", p: 4, states: []tState{splitState("writer_raw_states", 2, 1, 0, 1), unionState("max-part-counter", 1, 1, 1, 1)}})
	fs := byRule(check(t, l, rescale.Plan{}, nil, Options{}), "PF130")
	if len(fs) != 1 || fs[0].Severity != Warning || !strings.Contains(fs[0].Message, "StreamingFileSink") {
		t.Fatalf("%+v", fs)
	}
}

func TestPinnedByCatalogOnly(t *testing.T) {
	// An Iceberg committer whose checkpoint does not pin max parallelism: Flink accepts the
	// plan, the committer's single-instance design does not.
	l := layoutOf(t, 5, tOp{name: "IcebergFilesCommitter", uid: "iceberg-committer", p: 1, maxP: 128, states: []tState{
		splitState("iceberg-flink-job-id", 1), splitState("iceberg-files-committer-state", 1)}})
	rep := check(t, l, rescale.Plan{DefaultParallelism: 2}, nil, Options{})
	fs := byRule(rep, "PF112")
	if len(fs) != 1 || fs[0].Severity != Warning {
		t.Fatalf("want a PF112 warning:\n%s", dump(rep))
	}
}

func TestFrameForecast(t *testing.T) {
	for _, tc := range []struct {
		offsets, p, frame int64
		want              string
	}{
		{1_280_000, 4, 10 << 20, "at the 2nd restore after this one"},
		{6 << 20, 4, 10 << 20, "at the 1st restore after this one"},
		{11 << 20, 4, 10 << 20, "already exceed"},
		{1 << 20, 1, 10 << 20, "does not grow"},
	} {
		if got := frameForecast(tc.offsets, tc.p, tc.frame); !strings.Contains(got, tc.want) {
			t.Errorf("frameForecast(%d, %d, %d) = %q, want %q", tc.offsets, tc.p, tc.frame, got, tc.want)
		}
	}
}

func TestEmptySinkWriterInfo(t *testing.T) {
	l := layoutOf(t, 5, tOp{name: "Sink: Writer", uid: "sink", p: 2, states: []tState{splitState("writer_raw_states", 1, 1)}})
	fs := byRule(check(t, l, rescale.Plan{DefaultParallelism: 4}, nil, Options{}), "PF170")
	if len(fs) != 1 || fs[0].CatalogEntry != "sink-v2-writer" || !strings.Contains(fs[0].Message, "FLINK-40043") {
		t.Fatalf("%+v", fs)
	}
	if fs := byRule(check(t, l, rescale.Plan{DefaultParallelism: 2}, nil, Options{}), "PF170"); len(fs) != 0 {
		t.Fatalf("%+v", fs)
	}
}

// TestBugAffectsMatchesApplies: the note-free check the bounds use decides like Bug.Applies.
func TestBugAffectsMatchesApplies(t *testing.T) {
	versions := []string{"", "1.5.6", "1.6.2", "1.6.3", "1.17.2", "1.18.0", "1.18.1", "1.18.2", "1.19.0", "1.20.1", "2.3.0", "2.4.0", "x.y"}
	for _, r := range Rules() {
		m := r.Meta()
		for i := range m.Bugs {
			for _, v := range versions {
				want, _ := m.Bugs[i].Applies(Options{FlinkVersion: v})
				if got := m.bugAffects(m.Bugs[i].ID, v); got != want {
					t.Errorf("%s %s at %q: bugAffects %v, Applies %v", m.ID, m.Bugs[i].ID, v, got, want)
				}
			}
		}
	}
}
