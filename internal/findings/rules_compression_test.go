package findings

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	corpustest "github.com/flinkpreflight/preflight/internal/corpus"
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
	op := checkpoint.OperatorState{ID: checkpoint.OperatorIDFromUID("src"), Parallelism: 2, MaxParallelism: 128}
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
	if err := checkpoint.Write(&b, &checkpoint.Metadata{Version: 4, CheckpointID: 9, Operators: []checkpoint.OperatorState{op}}); err != nil {
		t.Fatal(err)
	}
	l, err := checkpoint.ReadLayout(bytes.NewReader(b.Bytes()))
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
		{"1.18.1 still affected", true, twoLists, rescaled, "1.18.1", Error, "elements are lost"},
		{"1.18.2 fixed: only the writer's caveat", true, twoLists, rescaled, "1.18.2", Info, "written by Flink 1.18.0 or 1.18.1"},
		{"unknown version assumed affected", true, twoLists, rescaled, "", Error, "assumed affected"},
		{"1.18.0 unchanged parallelism", true, twoLists, rescale.Plan{}, "1.18.0", SeverityUnspecified, ""},
		{"not compressed", false, twoLists, rescaled, "1.18.0", SeverityUnspecified, ""},
		{"1.18.0 broadcast next to a list fails at any parallelism", true, withBroadcast, rescale.Plan{}, "1.18.0", Error, "fails at any parallelism"},
		{"1.18.1 broadcast still affected", true, withBroadcast, rescale.Plan{}, "1.18.1", Error, "fails at any parallelism"},
		{"1.19.0 broadcast fixed", true, withBroadcast, rescale.Plan{}, "1.19.0", SeverityUnspecified, ""},
		{"single list state", true, []tState{splitState("SourceReaderState", 2, 2)}, rescaled, "1.18.0", SeverityUnspecified, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := compressedLayout(t, tc.compressed, tc.states...)
			rep := check(t, l, tc.plan, nil, Options{FlinkVersion: tc.version})
			if _, fired := soleFinding(t, rep, "PF135", tc.want != SeverityUnspecified, tc.want, tc.fragment); !fired {
				return
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

// TestCompressedOperatorStateCorpus reads a real savepoint of Flink's table restore tests whose
// sink keeps two list states in a compressed stream. As written (format 6, Flink 2.1+) no
// affected Flink reads it: PF135 stays silent. Rewritten as format 4 (what Flink 1.18-1.20
// write, same operator-state bytes), a rescale on 1.18.0/1.18.1 is refused and 1.18.2 gets the INFO.
func TestCompressedOperatorStateCorpus(t *testing.T) {
	const want = "stream-exec-process-table-function_1/to-changelog-upsert-restore/savepoint/_metadata"
	var path string
	for _, p := range corpustest.Metadata(t) {
		if strings.HasSuffix(p, want) && !strings.Contains(p, "_variants") {
			path = p
		}
	}
	if path == "" {
		t.Skip("corpus file " + want + " not present")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := checkpoint.ReadLayout(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	sink := ""
	for _, op := range l.Operators {
		for _, st := range op.Subtasks {
			if h := st.ManagedOperatorState; h != nil && h.Compression == checkpoint.CompressionSnappy && len(h.States) > 1 {
				sink = op.ID.String()
			}
		}
	}
	if sink == "" {
		t.Fatal("the corpus file no longer has a compressed stream with several list states")
	}
	plan := rescale.Plan{Parallelism: par(sink, 2)}
	for _, v := range []string{"1.18.0", "2.1.0"} {
		if fs := byRule(check(t, l, plan, nil, Options{FlinkVersion: v}), "PF135"); len(fs) != 0 {
			t.Errorf("format %d on %s: PF135 fired: %s", l.Version, v, fs[0].Message)
		}
	}
	m, err := checkpoint.ReadBytes(raw)
	if err != nil {
		t.Fatal(err)
	}
	m.Version = 4
	var b bytes.Buffer
	if err := checkpoint.Write(&b, m); err != nil {
		t.Skipf("cannot rewrite as format 4: %v", err)
	}
	l4, err := checkpoint.ReadLayout(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for v, sev := range map[string]Severity{"1.18.0": Error, "1.18.1": Error, "1.18.2": Info} {
		fs := byRule(check(t, l4, plan, nil, Options{FlinkVersion: v}), "PF135")
		if len(fs) != 1 || fs[0].Severity != sev || fs[0].OperatorID != sink {
			t.Errorf("format 4 on %s: want one PF135 %s on the sink, got %+v", v, sev, fs)
		}
	}
}
