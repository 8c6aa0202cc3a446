package findings

import (
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// changelogLayout writes a format-4 checkpoint with one keyed operator (uid "agg", parallelism
// 2) whose keyed state is a changelog handle of the given tag (8 or 14) over a heap snapshot and
// an in-memory delta, or plain heap key groups when tag is 0, and reads its Layout back.
func changelogLayout(t *testing.T, tag uint8) *checkpoint.Layout {
	t.Helper()
	op := checkpoint.OperatorState{ID: checkpoint.OperatorIDFromUID("agg"), Parallelism: 2, MaxParallelism: 128}
	for i := 0; i < 2; i++ {
		r := rescale.KeyGroupRangeForSubtask(128, 2, i)
		kg := &checkpoint.KeyGroupsStateHandle{Tag: 3, StartKeyGroup: int32(r.Start), NumKeyGroups: int32(r.NumKeyGroups),
			Offsets: make([]int64, r.NumKeyGroups), Delegate: &checkpoint.ByteStreamStateHandle{Name: "kg", Data: make([]byte, 64)}}
		var keyed checkpoint.KeyedStateHandle = kg
		if tag != 0 {
			keyed = &checkpoint.ChangelogStateBackendHandle{Tag: tag, StartKeyGroup: int32(r.Start), NumKeyGroups: int32(r.NumKeyGroups),
				CheckpointedSize: 64, Materialized: []checkpoint.KeyedStateHandle{kg},
				NonMaterialized: []checkpoint.KeyedStateHandle{&checkpoint.InMemoryChangelogStateHandle{StartKeyGroup: int32(r.Start),
					NumKeyGroups: int32(r.NumKeyGroups), From: 0, To: 1, Changes: []checkpoint.StateChange{{KeyGroup: int32(r.Start), Data: []byte{1}}},
					StateHandleID: "delta"}},
				MaterializationID: 3, CheckpointID: 7, StateHandleID: "changelog"}
		}
		op.Subtasks = append(op.Subtasks, checkpoint.SubtaskEntry{Index: int32(i), State: &checkpoint.SubtaskState{ManagedKeyedState: keyed}})
	}
	return checkpointtest.Layout(t, &checkpoint.Metadata{Version: 4, CheckpointID: 7, Operators: []checkpoint.OperatorState{op}})
}

func TestChangelogNoClaimRule(t *testing.T) {
	changelog, changelogV1, heap := changelogLayout(t, 14), changelogLayout(t, 8), changelogLayout(t, 0)
	tests := []struct {
		name   string
		layout *checkpoint.Layout
		flink  string
		mode   string
		want   Severity // SeverityUnspecified: silent
	}{
		{"no-claim on 1.15.0 (first release with restore modes)", changelog, "1.15.0", RestoreNoClaim, Error},
		{"1.14.6 has no restore modes", changelog, "1.14.6", RestoreNoClaim, SeverityUnspecified},
		{"no-claim on 1.20", changelog, "1.20.1", RestoreNoClaim, Error},
		{"no-claim on 2.0 (changelog backend still there)", changelog, "2.0.0", RestoreNoClaim, Error},
		{"changelog handle v1 (tag 8)", changelogV1, "1.19.2", RestoreNoClaim, Error},
		{"claim", changelog, "1.20.1", RestoreClaim, SeverityUnspecified},
		{"legacy", changelog, "2.1", RestoreLegacy, SeverityUnspecified},
		{"mode not given: default NO_CLAIM assumed", changelog, "1.18.1", "", Warning},
		{"mode and version unknown", changelog, "", "", Warning},
		{"heap keyed state without changelog", heap, "1.20.1", RestoreNoClaim, SeverityUnspecified},
		{"heap keyed state, mode unknown", heap, "", "", SeverityUnspecified},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newContext(tt.layout, rescale.Plan{}, &rescale.Result{}, nil, Options{FlinkVersion: tt.flink, RestoreMode: tt.mode}, nil)
			fs := checkChangelogNoClaim(c)
			if tt.want == SeverityUnspecified {
				if len(fs) != 0 {
					t.Fatalf("want silence, got %+v", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Severity != tt.want {
				t.Fatalf("got %+v, want one %v finding", fs, tt.want)
			}
			for _, s := range []string{"FLINK-38307", "FLINK-40476", "1 operator", checkpoint.OperatorIDFromUID("agg").String(), "does not support enforcing a full snapshot"} {
				if !strings.Contains(fs[0].Message, s) {
					t.Errorf("message lacks %q: %s", s, fs[0].Message)
				}
			}
			if !strings.Contains(fs[0].Remediation, "-claimMode CLAIM") {
				t.Errorf("remediation: %s", fs[0].Remediation)
			}
		})
	}
}
