package findings

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// compressedLayout writes a checkpoint whose operator "src" (parallelism 2) keeps its managed
// operator state inline, in streams whose header (version 6) carries the compression flag, and
// reads its Layout back.
func compressedLayout(t *testing.T, compressed bool, states ...tState) *checkpoint.Layout {
	t.Helper()
	flag := byte(0)
	if compressed {
		flag = 1
	}
	op := checkpoint.OperatorState{ID: checkpoint.OperatorIDFromUID("src"), UID: "src", Name: "src", Parallelism: 2, MaxParallelism: 128}
	for i := 0; i < 2; i++ {
		h := &checkpoint.OperatorStateHandle{Tag: 4}
		pos := int64(64) // after the header
		for _, s := range states {
			e := checkpoint.StateEntry{Name: s.name, Mode: s.mode, Offsets: []int64{}}
			for k := 0; k < s.perSubtask[i]; k++ {
				e.Offsets = append(e.Offsets, pos)
				pos += 16
			}
			h.States = append(h.States, e)
		}
		data := make([]byte, pos)
		copy(data, []byte{0, 0, 0, 6, flag})
		h.Delegate = &checkpoint.ByteStreamStateHandle{Name: "file:/cp/src-" + string(rune('0'+i)), Data: data}
		op.Subtasks = append(op.Subtasks, checkpoint.SubtaskEntry{Index: int32(i), State: &checkpoint.SubtaskState{
			ManagedOperatorState: checkpoint.OperatorStateSlot{Present: 1, Handle: h}}})
	}
	var b bytes.Buffer
	if err := checkpoint.Write(&b, &checkpoint.Metadata{Version: 5, CheckpointID: 9, Operators: []checkpoint.OperatorState{op}}); err != nil {
		t.Fatal(err)
	}
	l, err := checkpoint.ReadLayoutBytes(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestCompressedOperatorStateRule(t *testing.T) {
	twoLists := []tState{splitState("SourceReaderState", 2, 2), splitState("other", 1, 1)}
	withBroadcast := []tState{splitState("SourceReaderState", 1, 1), {name: "rules", mode: checkpoint.Broadcast, perSubtask: []int{1, 1}}}
	rescaled := rescale.Plan{Parallelism: par("src", 3)}
	tests := []struct {
		name       string
		compressed bool
		states     []tState
		plan       rescale.Plan
		version    string
		want       Severity // SeverityUnspecified: no PF135 finding
		fragment   string
	}{
		{"1.18.0 rescale loses elements", true, twoLists, rescaled, "1.18.0", Error, "elements are lost"},
		{"1.18.1 fixed: only the writer's caveat", true, twoLists, rescaled, "1.18.1", Info, "written by Flink 1.18.0"},
		{"unknown version assumed affected", true, twoLists, rescaled, "", Error, "assumed affected"},
		{"1.18.0 unchanged parallelism", true, twoLists, rescale.Plan{}, "1.18.0", SeverityUnspecified, ""},
		{"not compressed", false, twoLists, rescaled, "1.18.0", SeverityUnspecified, ""},
		{"1.18.0 broadcast next to a list fails at any parallelism", true, withBroadcast, rescale.Plan{}, "1.18.0", Error, "fails at any parallelism"},
		{"1.19.0 broadcast fixed", true, withBroadcast, rescale.Plan{}, "1.19.0", SeverityUnspecified, ""},
		{"single list state", true, []tState{splitState("SourceReaderState", 2, 2)}, rescaled, "1.18.0", SeverityUnspecified, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := compressedLayout(t, tc.compressed, tc.states...)
			rep := check(t, l, tc.plan, nil, Options{FlinkVersion: tc.version})
			fs := byRule(rep, "PF135")
			if tc.want == SeverityUnspecified {
				if len(fs) != 0 {
					t.Fatalf("PF135 fired:\n%s", dump(rep))
				}
				return
			}
			if len(fs) != 1 || fs[0].Severity != tc.want || !strings.Contains(fs[0].Message, tc.fragment) {
				t.Fatalf("want one PF135 %s mentioning %q:\n%s", tc.want, tc.fragment, dump(rep))
			}
			if tc.want == Error {
				if rep.Verdict != Deny {
					t.Errorf("verdict %s, want DENY", rep.Verdict)
				}
				// Rescaling is what breaks a multi-list stream: the old parallelism is safe.
				if tc.plan.Parallelism != nil && (len(rep.Safe) != 1 || rep.Safe[0].Below != 2) {
					t.Errorf("safe parallelism %+v, want 2 below", rep.Safe)
				}
			}
		})
	}
}
