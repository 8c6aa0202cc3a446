package lifecycle

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
	"github.com/flinkpreflight/preflight/internal/corpus"
	"github.com/flinkpreflight/preflight/internal/engine"
	"github.com/flinkpreflight/preflight/internal/report"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

const kafkaDir = "../../testdata/kafka-orphan-union"

// treeHash hashes every file name and content under dir.
func treeHash(t *testing.T, dir string) [32]byte {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		h.Write([]byte(p))
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// copyTree copies the _metadata of a testdata folder into a fresh temporary savepoint folder.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "savepoint-src")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(src, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_metadata"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func ruleIDs(t *testing.T, l *checkpoint.Layout) []string {
	t.Helper()
	rep, err := engine.New().Check(context.Background(), engine.Request{Layout: l, Source: "test", Plan: &pb.RescalePlan{}, Options: &pb.CheckOptions{RpcFrameSizeBytes: 10 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range rep.GetFindings() {
		ids = append(ids, f.GetRuleId())
	}
	return ids
}

func TestPruneKafkaOrphanUnion(t *testing.T) {
	before := treeHash(t, kafkaDir)
	out := filepath.Join(t.TempDir(), "pruned")
	res, err := PruneSavepoint(context.Background(), SavepointRequest{Source: kafkaDir, Out: out,
		Select: Selector{Operator: "kafka-source", State: "topic-partition-offset-states"}})
	if err != nil {
		t.Fatal(err)
	}
	if treeHash(t, kafkaDir) != before {
		t.Fatal("source folder changed")
	}
	// An independent read of the written file, not the result's copy.
	b, err := os.ReadFile(filepath.Join(out, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := checkpoint.ReadBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	orig := res.Original
	if len(got.Operators) != len(orig.Operators) {
		t.Fatalf("%d operators, want %d", len(got.Operators), len(orig.Operators))
	}
	for i := range got.Operators {
		g, o := &got.Operators[i], &orig.Operators[i]
		for _, st := range g.Subtasks {
			if st.State == nil || st.State.ManagedOperatorState.Handle == nil {
				continue
			}
			for _, e := range st.State.ManagedOperatorState.Handle.States {
				if e.Name == "topic-partition-offset-states" {
					t.Fatalf("state still present in operator %s", g.ID)
				}
			}
		}
		if o.UID == "kafka-source" {
			continue
		}
		a, _ := encodeOperator(orig, o)
		c, _ := encodeOperator(got, g)
		if !bytes.Equal(a, c) {
			t.Errorf("untouched operator %s changed", o.ID)
		}
	}
	if res.SizeAfter >= res.SizeBefore || int64(len(b)) != res.SizeAfter {
		t.Errorf("sizes %d → %d, file %d", res.SizeBefore, res.SizeAfter, len(b))
	}
	if f := ruleIDs(t, orig.Layout()); !slices.Contains(f, "PF130") {
		t.Fatalf("source findings %v lack PF130: the test would prove nothing", f)
	}
	if f := ruleIDs(t, got.Layout()); slices.Contains(f, "PF130") {
		t.Errorf("pruned findings %v still report PF130", f)
	}
	if len(res.Files) != 4 || res.Files[0].Action != "missing" {
		t.Errorf("files %+v: want the 4 state files reported missing (testdata ships only _metadata)", res.Files)
	}
}

func TestPruneRefusesAndChangesNothing(t *testing.T) {
	src := copyTree(t, kafkaDir)
	nonEmpty := t.TempDir()
	if err := os.WriteFile(filepath.Join(nonEmpty, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	union := Selector{Operator: "kafka-source", State: "topic-partition-offset-states"}
	tests := []struct {
		name string
		out  string
		sel  Selector
		opts PruneOptions
	}{
		{"out is the source", src, union, PruneOptions{}},
		{"out is the source's _metadata folder via ..", filepath.Join(src, "..", filepath.Base(src)), union, PruneOptions{}},
		{"out inside the source", filepath.Join(src, "sub"), union, PruneOptions{}},
		{"out not empty", nonEmpty, union, PruneOptions{}},
		{"no out", "", union, PruneOptions{}},
		{"unknown operator", filepath.Join(t.TempDir(), "o"), Selector{Operator: "nope"}, PruneOptions{}},
		{"unknown state", filepath.Join(t.TempDir(), "o"), Selector{Operator: "kafka-source", State: "nope"}, PruneOptions{}},
		{"operator still in the job", filepath.Join(t.TempDir(), "o"), union, PruneOptions{JobOperators: []string{"archive-sink", "kafka-source"}}},
		{"whole operator still in the job", filepath.Join(t.TempDir(), "o"), Selector{Operator: "Source: events"}, PruneOptions{JobOperators: []string{"61252f73469d3ffba207c548d29a0267"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := treeHash(t, src)
			var outBefore [32]byte
			if tt.out != "" {
				if _, err := os.Stat(tt.out); err == nil {
					outBefore = treeHash(t, tt.out)
				}
			}
			_, err := PruneSavepoint(context.Background(), SavepointRequest{Source: src, Out: tt.out, Select: tt.sel, Opts: tt.opts})
			if !errors.Is(err, ErrUsage) {
				t.Fatalf("err = %v, want a usage error", err)
			}
			if treeHash(t, src) != before {
				t.Fatal("source changed")
			}
			if tt.out == "" {
				return
			}
			if _, err := os.Stat(tt.out); err == nil && treeHash(t, tt.out) != outBefore {
				t.Fatal("out changed")
			}
		})
	}
}

func TestPruneForceAndKeyed(t *testing.T) {
	src := "../../testdata/max-parallelism"
	const keyedOp = "4b204d51cb71ba88d79b347eb5034174"
	_, err := PruneSavepoint(context.Background(), SavepointRequest{Source: src, Out: filepath.Join(t.TempDir(), "o"), Select: Selector{Operator: keyedOp}})
	if !errors.Is(err, ErrUsage) {
		t.Fatalf("keyed without --force: err = %v", err)
	}
	res, err := PruneSavepoint(context.Background(), SavepointRequest{Source: src, Out: filepath.Join(t.TempDir(), "o"), Select: Selector{Operator: keyedOp}, Opts: PruneOptions{Force: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pruned.Operators) != len(res.Original.Operators)-1 || len(res.Plan.Losses) == 0 {
		t.Fatalf("operators %d → %d, losses %v", len(res.Original.Operators), len(res.Pruned.Operators), res.Plan.Losses)
	}
}

func TestPruneRelocatesRelativeFiles(t *testing.T) {
	src := copyTree(t, kafkaDir)
	m := checkpointtest.Metadata(t, filepath.Join(src, "_metadata"))
	files := RelativeFiles(m)
	if len(files) == 0 {
		t.Fatal("scenario has no relative handles")
	}
	for i, f := range files {
		if err := os.WriteFile(filepath.Join(src, f), bytes.Repeat([]byte{byte(i)}, 100+i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := treeHash(t, src)
	// Dry run: a plan, nothing written.
	out := filepath.Join(t.TempDir(), "out")
	res, err := PruneSavepoint(context.Background(), SavepointRequest{Source: src, Out: out, DryRun: true, Select: Selector{Operator: "kafka-source", State: "topic-partition-offset-states"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) || len(res.Files) != len(files) {
		t.Fatalf("dry run: stat(out) = %v, files %+v", err, res.Files)
	}
	res, err = PruneSavepoint(context.Background(), SavepointRequest{Source: src, Out: out, Select: Selector{Operator: "kafka-source", State: "topic-partition-offset-states"}})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || len(b) != 100+i || b[0] != byte(i) {
			t.Errorf("%s: not relocated (%v, %d bytes)", f, err, len(b))
		}
		if a := res.Files[i].Action; a != "linked" && a != "copied" {
			t.Errorf("%s: action %q", f, a)
		}
	}
	if treeHash(t, src) != before {
		t.Fatal("source changed")
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != len(files)+1 {
		t.Errorf("out has %d entries, want %d (no temporary files left)", len(entries), len(files)+1)
	}
}

func TestPruneRefusesEscapingRelativePath(t *testing.T) {
	src := copyTree(t, kafkaDir)
	m := checkpointtest.Metadata(t, filepath.Join(src, "_metadata"))
	m.Operators[0].Subtasks[0].State.ManagedOperatorState.Handle.Delegate = &checkpoint.RelativeFileStateHandle{RelativePath: "../elsewhere", StateSize: 1}
	// Keep the operator that carries the escaping handle; prune the other's state.
	var b bytes.Buffer
	if err := checkpoint.Write(&b, m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "_metadata"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	op := m.Operators[0].ID.String()
	out := filepath.Join(t.TempDir(), "out")
	_, err := PruneSavepoint(context.Background(), SavepointRequest{Source: src, Out: out, Select: Selector{Operator: op, State: "topic-partition-offset-states"}})
	if !errors.Is(err, ErrUsage) {
		t.Fatalf("err = %v, want refusal", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("out left behind: %v", err)
	}
}

// TestPruneCorpusStable prunes every named operator state, and every whole operator, of every
// corpus file the codec writes: the result decodes, re-encodes to the same bytes, and passes
// Verify (untouched operators byte-identical, the state absent).
func TestPruneCorpusStable(t *testing.T) {
	paths := corpus.Metadata(t)
	var files, prunes int
	seen := map[[32]byte]bool{}
	for k, p := range paths {
		if testing.Short() && k%8 != 0 {
			continue // -short: every eighth file
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(b); seen[sum] {
			continue // the corpus holds many identical copies
		} else {
			seen[sum] = true
		}
		m, err := checkpoint.ReadBytes(b)
		if err != nil || m.Version < 2 {
			continue // malformed or format 0/1 corpus entries are the codec's tests' business
		}
		if again, err := Encode(m); err != nil || !bytes.Equal(again, b) {
			continue // not a round-trip file (the codec's tests cover those)
		}
		files++
		for i := range m.Operators {
			op := &m.Operators[i]
			sels := []Selector{{Operator: op.ID.String()}}
			for _, n := range stateNames(op) {
				sels = append(sels, Selector{Operator: op.ID.String(), State: n})
			}
			for _, sel := range sels {
				pruned, plan, err := Prune(m, sel, PruneOptions{Force: true})
				if err != nil {
					t.Errorf("%s %+v: %v", p, sel, err)
					continue
				}
				out, err := Encode(pruned)
				if err != nil {
					t.Errorf("%s %+v: encode: %v", p, sel, err)
					continue
				}
				if _, err := Verify(m, plan, out); err != nil {
					t.Errorf("%s %+v: %v", p, sel, err)
				}
				prunes++
			}
		}
		// The source model must be untouched by all those prunes.
		if again, _ := Encode(m); !bytes.Equal(again, b) {
			t.Fatalf("%s: Prune modified its input", p)
		}
	}
	t.Logf("%d corpus files, %d prunes verified", files, prunes)
}

func stateNames(op *checkpoint.OperatorState) []string {
	seen := map[string]bool{}
	var out []string
	for _, st := range op.Subtasks {
		if st.State == nil {
			continue
		}
		for _, slot := range []checkpoint.OperatorStateSlot{st.State.ManagedOperatorState, st.State.RawOperatorState} {
			if slot.Handle == nil {
				continue
			}
			for _, e := range slot.Handle.States {
				if !seen[e.Name] {
					seen[e.Name] = true
					out = append(out, e.Name)
				}
			}
		}
	}
	return out
}

// TestVerifyCatchesTampering: Verify must fail when anything beyond the removed state differs.
func TestVerifyCatchesTampering(t *testing.T) {
	m := checkpointtest.Metadata(t, filepath.Join(kafkaDir, "_metadata"))
	sel := Selector{Operator: "kafka-source", State: "topic-partition-offset-states"}
	tamper := map[string]func(p *checkpoint.Metadata){
		"untouched operator parallelism": func(p *checkpoint.Metadata) { p.Operators[1].MaxParallelism = 256 },
		"checkpoint id":                  func(p *checkpoint.Metadata) { p.CheckpointID++ },
		"kept state offsets": func(p *checkpoint.Metadata) {
			h := *p.Operators[0].Subtasks[0].State.ManagedOperatorState.Handle
			h.States = slices.Clone(h.States)
			h.States[0].Offsets = append(slices.Clone(h.States[0].Offsets[:len(h.States[0].Offsets)-1]), 1<<40)
			st := *p.Operators[0].Subtasks[0].State
			st.ManagedOperatorState.Handle = &h
			p.Operators[0].Subtasks = slices.Clone(p.Operators[0].Subtasks)
			p.Operators[0].Subtasks[0].State = &st
		},
		"operator dropped": func(p *checkpoint.Metadata) { p.Operators = p.Operators[:1] },
	}
	if m.Operators[0].UID != "kafka-source" {
		t.Fatalf("scenario order changed: operator 0 is %q", m.Operators[0].UID)
	}
	for name, f := range tamper {
		t.Run(name, func(t *testing.T) {
			pruned, plan, err := Prune(m, sel, PruneOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := Encode(pruned); b != nil {
				if _, err := Verify(m, plan, b); err != nil {
					t.Fatalf("honest prune fails verification: %v", err)
				}
			}
			cp := *pruned
			cp.Operators = slices.Clone(pruned.Operators)
			f(&cp)
			b, err := Encode(&cp)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Verify(m, plan, b); err == nil {
				t.Fatal("tampered file passed verification")
			}
		})
	}
}

// TestFindOperatorKeys: --operator takes an ID, a uid, a name or an ID prefix of at least 8 hex
// digits (the short IDs reports print); a prefix or name shared by several operators is refused.
func TestFindOperatorKeys(t *testing.T) {
	a, b := checkpoint.OperatorIDFromUID("kafka-source"), checkpoint.OperatorIDFromUID("writer")
	shared := a
	shared[15]++ // same first 30 digits as a
	ops := []checkpoint.OperatorState{{ID: a, UID: "kafka-source", Name: "Source"}, {ID: b, Name: "Sink"}, {ID: shared, Name: "Sink"}}
	for _, tc := range []struct {
		key  string
		want int // -1: an error
	}{
		{a.String(), 0}, {"kafka-source", 0}, {"Source", 0}, {"writer", 1},
		{b.String()[:8], 1}, {strings.ToUpper(b.String()[:12]), 1},
		{a.String()[:8], -1}, {"Sink", -1}, {b.String()[:7], -1}, {"", -1},
	} {
		got, err := FindOperator(ops, tc.key)
		if tc.want < 0 {
			if err == nil {
				t.Errorf("key %q: operator %d, want an error", tc.key, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("key %q: %d, %v; want %d", tc.key, got, err, tc.want)
		}
	}
}

// TestWritePruneNamesTheOperator: the prune report names the operator as the other verbs do,
// by position, name or uid, and full ID (an operator without either: "operator #1 (…)").
func TestWritePruneNamesTheOperator(t *testing.T) {
	const id = "1f2b5df5a1b2c3d4e5f60718293a4b5c"
	removed := []RemovedState{{Name: "topic-partition-offset-states", Mode: "UNION"}}
	for _, tc := range []struct {
		plan PrunePlan
		want string
	}{
		{PrunePlan{OperatorID: id, Position: 1, Removed: removed}, "removed from operator #1 (" + id + "):"},
		{PrunePlan{OperatorID: id, Position: 2, OperatorName: "Source: events", OperatorUID: "kafka-source", Removed: removed}, "removed from #2 Source: events (uid kafka-source, " + id + "):"},
		{PrunePlan{OperatorID: id, Position: 3, OperatorUID: "kafka-source", WholeOperator: true}, "removed the whole operator #3 uid kafka-source (" + id + "):"},
	} {
		var b bytes.Buffer
		s := &PruneSummary{SavepointResult: &SavepointResult{Source: "in/_metadata", Out: "out/_metadata", Plan: &tc.plan}}
		if err := WritePrune(&b, report.Text, s); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("prune report lacks %q:\n%s", tc.want, b.String())
		}
	}
}
