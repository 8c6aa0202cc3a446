package server

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/scenarios"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// TestVerifyFiles: CheckRescale verifies the state files when asked (off by default), Decide by
// default and vetoes on a missing file; files outside the allowlist and relative files of inline
// bytes are "cannot verify" warnings, not errors.
func TestVerifyFiles(t *testing.T) {
	allowed := t.TempDir()
	sp := filepath.Join(allowed, "savepoint-1")
	names, err := scenarios.WriteSyntheticFolder(sp, scenarios.SyntheticOperators(4))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(sp, names[0])); err != nil {
		t.Fatal(err)
	}
	// A checkpoint whose one file lies outside the allowlist.
	outside := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(outside, make([]byte, 10), 0o644); err != nil {
		t.Fatal(err)
	}
	chk := filepath.Join(allowed, "chk-2")
	op := checkpoint.OperatorState{ID: checkpoint.OperatorIDFromUID("op"), Parallelism: 1, MaxParallelism: 128, Subtasks: []checkpoint.SubtaskEntry{{State: &checkpoint.SubtaskState{
		ManagedOperatorState: checkpoint.OperatorStateSlot{Present: 1, Handle: &checkpoint.OperatorStateHandle{Tag: checkpoint.TagPartitionableOperatorStateHandle,
			States:   []checkpoint.StateEntry{{Name: "s", Offsets: []int64{0}}},
			Delegate: &checkpoint.FileStateHandle{Path: "file:" + outside, StateSize: 10}}}}}}}
	var b bytes.Buffer
	if err := checkpoint.Write(&b, &checkpoint.Metadata{Version: 3, CheckpointID: 2, Operators: []checkpoint.OperatorState{op}}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(chk, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(chk, "_metadata"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	spMeta, err := os.ReadFile(filepath.Join(sp, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	h := startInProcess(t, Config{Allow: []string{allowed}})
	uri := func(p string) *pb.CheckpointSource {
		return &pb.CheckpointSource{Source: &pb.CheckpointSource_Uri{Uri: p}}
	}
	on := &pb.CheckOptions{VerifyFiles: proto.Bool(true)}
	for _, c := range []struct {
		name        string
		src         *pb.CheckpointSource
		opts        *pb.CheckOptions
		wantVerdict pb.Verdict
		wantSummary string // "" = no verification
		wantRule    string
	}{
		{"off by default", uri(sp), nil, pb.Verdict_VERDICT_ALLOW, "", ""},
		{"missing file", uri(sp), on, pb.Verdict_VERDICT_DENY, "1 of 4 files missing or wrong (3 verified)", "PF210"},
		{"outside the allowlist", uri(chk), on, pb.Verdict_VERDICT_ALLOW_WITH_WARNINGS, "0 of 1 file verified (1 cannot be verified)", "PF211"},
		{"inline bytes: relative files have no folder", &pb.CheckpointSource{Source: &pb.CheckpointSource_Metadata{Metadata: spMeta}}, on,
			pb.Verdict_VERDICT_ALLOW_WITH_WARNINGS, "0 of 4 files verified (4 cannot be verified)", "PF211"},
		{"off again: the cached report was not changed", uri(sp), nil, pb.Verdict_VERDICT_ALLOW, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := h.c.Check(context.Background(), &pb.CheckRescaleRequest{Checkpoint: c.src, Options: c.opts})
			if err != nil {
				t.Fatal(err)
			}
			if rep.GetVerdict() != c.wantVerdict || rep.GetFileVerification().GetSummary() != c.wantSummary {
				t.Fatalf("verdict %v, files %q; want %v, %q", rep.GetVerdict(), rep.GetFileVerification().GetSummary(), c.wantVerdict, c.wantSummary)
			}
			if c.wantRule != "" && (len(rep.GetFindings()) == 0 || rep.GetFindings()[0].GetRuleId() != c.wantRule) {
				t.Errorf("findings %v, want %s first", rep.GetFindings(), c.wantRule)
			}
		})
	}
	for _, c := range []struct {
		name   string
		opts   *pb.CheckOptions
		want   pb.DecisionAction
		reason string
	}{
		{"decide verifies by default", nil, pb.DecisionAction_DECISION_ACTION_VETO, "PF210"},
		{"decide without verification", &pb.CheckOptions{VerifyFiles: proto.Bool(false)}, pb.DecisionAction_DECISION_ACTION_APPROVE, "without findings"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, err := h.c.Decide(context.Background(), &pb.DecideRequest{Checkpoint: uri(sp), ProposedParallelism: map[string]int32{"op-1": 1}, Options: c.opts})
			if err != nil {
				t.Fatal(err)
			}
			if resp.GetAction() != c.want || len(resp.GetVertices()) != 1 || !strings.Contains(resp.GetVertices()[0].GetReason(), c.reason) {
				t.Fatalf("decision %v %v, want %v with %q", resp.GetAction(), resp.GetVertices(), c.want, c.reason)
			}
		})
	}
}

// TestVerifyFilesUpload: an upload asked to verify its files says it could not.
func TestVerifyFilesUpload(t *testing.T) {
	h := startInProcess(t, Config{})
	m, err := os.ReadFile(filepath.Join(testdataDir(t), "compact-sink", "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := h.c.Upload(context.Background(), bytes.NewReader(m), &pb.UploadHeader{SizeBytes: int64(len(m)), Options: &pb.CheckOptions{VerifyFiles: proto.Bool(true)}})
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.GetFileVerification().GetSummary(); !strings.Contains(s, "not verified: an uploaded _metadata names no folder") {
		t.Errorf("summary %q", s)
	}
}
