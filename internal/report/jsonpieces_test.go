package report

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// TestIndenterPieces: the indenter fed a document in pieces of any size writes what it writes
// for the document at once.
func TestIndenterPieces(t *testing.T) {
	compact, err := protojson.Marshal(sampleReport())
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range append(indentSeeds, string(compact)) {
		var whole bytes.Buffer
		if err := indentJSON(&whole, []byte(src)); err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{1, 2, 3, 7, 64} {
			var got bytes.Buffer
			d := newIndenter(&got)
			for k := 0; k < len(src); k += size {
				d.write([]byte(src[k:min(k+size, len(src))]))
			}
			if err := d.finish(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), whole.Bytes()) {
				t.Fatalf("pieces of %d bytes of %q:\n%s\nwant\n%s", size, src, got.String(), whole.String())
			}
		}
	}
}

// TestWriteJSONPieces: WriteJSON marshals a report in pieces (operators and states a chunk at a
// time); the bytes must be those of the whole report marshalled at once.
func TestWriteJSONPieces(t *testing.T) {
	ops := func(n, states int, name string) []*pb.OperatorAssignment {
		out := make([]*pb.OperatorAssignment, n)
		for i := range out {
			op := &pb.OperatorAssignment{OperatorId: strconv.Itoa(i), Name: name, NewParallelism: 4}
			for k := range states {
				op.States = append(op.States, &pb.StateAssignment{Name: name + strconv.Itoa(k), Mode: "SPLIT_DISTRIBUTE", Elements: int64(k)})
			}
			out[i] = op
		}
		return out
	}
	tricky := `"operators":[{}] "states":[{}] \"]}`
	cases := map[string][]*pb.OperatorAssignment{
		"one":                {{OperatorId: "a"}},
		"many operators":     ops(3*jsonChunk+5, 0, "op"),
		"many small":         ops(jsonChunk/2+3, 3, "s"),
		"one of many states": ops(1, 2*jsonChunk+1, "split-"),
		"exactly a chunk":    ops(2, jsonChunk, "x"),
		"tricky names":       ops(3, jsonChunk+2, tricky),
		"mixed": append(append(ops(5, 1, "a"), ops(1, jsonChunk+1, "b")...),
			append(ops(jsonChunk+1, 0, "c"), ops(1, 3*jsonChunk, tricky)...)...),
	}
	for name, list := range cases {
		t.Run(name, func(t *testing.T) {
			rep := proto.Clone(sampleReport()).(*pb.RescaleReport)
			rep.Operators = list
			rep.Findings = append(rep.Findings, &pb.Finding{RuleId: "PF170", Message: tricky, StateNames: []string{tricky}})
			compact, err := protojson.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			var want, got bytes.Buffer
			if err := indentJSON(&want, compact); err != nil {
				t.Fatal(err)
			}
			if err := WriteJSON(&got, rep); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("pieces differ from the whole (%d against %d bytes)", got.Len(), want.Len())
			}
		})
	}
}

// TestWriteJSONSpilled: a report whose operators arrive in pages, an operator's subtasks and old
// subtasks continued over several in any order, is written from an OperatorSpill byte for byte
// as WriteJSON writes the joined report.
func TestWriteJSONSpilled(t *testing.T) {
	rows := func(from, to int) []*pb.SubtaskAssignment {
		var out []*pb.SubtaskAssignment
		for i := from; i < to; i++ {
			out = append(out, &pb.SubtaskAssignment{Index: int32(i), FromOldSubtasks: []int32{0, int32(i)}, StateBytes: int64(i),
				States: []*pb.SubtaskStateShare{{Name: "offsets", Mode: "UNION", Elements: 2}}})
		}
		return out
	}
	old := func(from, to int) []*pb.OldSubtaskState {
		var out []*pb.OldSubtaskState
		for i := from; i < to; i++ {
			out = append(out, &pb.OldSubtaskState{Index: int32(i), Bytes: 100})
		}
		return out
	}
	op := func(id string, subtasks []*pb.SubtaskAssignment, olds []*pb.OldSubtaskState) *pb.OperatorAssignment {
		return &pb.OperatorAssignment{OperatorId: id, Name: "op " + id, NewParallelism: 6, MaxSubtaskPayloadBytes: 7, Position: 2,
			States: []*pb.StateAssignment{{Name: "offsets", Mode: "UNION"}}, Subtasks: subtasks, OldSubtasks: olds}
	}
	contStatesFirst := func(first *pb.OperatorAssignment, sts []*pb.StateAssignment) *pb.OperatorAssignment {
		first.States = sts
		return first
	}
	cont := func(id string, subtasks []*pb.SubtaskAssignment, olds []*pb.OldSubtaskState) *pb.OperatorAssignment {
		return &pb.OperatorAssignment{OperatorId: id, Subtasks: subtasks, OldSubtasks: olds}
	}
	states := func(from, to int) []*pb.StateAssignment {
		var out []*pb.StateAssignment
		for i := from; i < to; i++ {
			out = append(out, &pb.StateAssignment{Name: "s" + strconv.Itoa(i), Mode: "SPLIT_DISTRIBUTE", Elements: 2})
		}
		return out
	}
	contStates := func(id string, sts []*pb.StateAssignment) *pb.OperatorAssignment {
		return &pb.OperatorAssignment{OperatorId: id, States: sts}
	}
	page := func(continued bool, ops ...*pb.OperatorAssignment) *pb.OperatorPage {
		return &pb.OperatorPage{Operators: ops, Continued: continued}
	}
	rep := &pb.RescaleReport{Verdict: pb.Verdict_VERDICT_DENY, Findings: []*pb.Finding{{RuleId: "PF110", Message: `"operators":[{}] \"]}`}},
		SafeParallelism: []*pb.SafeParallelism{{VertexId: "v", Requested: 6, Below: 4}}, Checkpoint: &pb.CheckpointSummary{Source: "s"}}
	for name, pages := range map[string][]*pb.OperatorPage{
		"none":              nil,
		"one part each":     {page(false, op("a", nil, nil), op("b", rows(0, 3), old(0, 2))), page(false, op("c", rows(0, 1), nil))},
		"rows continued":    {page(false, op("a", nil, nil), op("b", rows(0, 2), nil)), page(true, cont("b", rows(2, 4), nil)), page(true, cont("b", rows(4, 6), old(0, 3)), op("c", nil, nil))},
		"old interleaved":   {page(false, op("b", rows(0, 2), old(0, 1))), page(true, cont("b", nil, old(1, 2))), page(true, cont("b", rows(2, 6), nil))},
		"only old subtasks": {page(false, op("b", nil, old(0, 1))), page(true, cont("b", nil, old(1, 3)))},
		"last continued":    {page(false, op("a", rows(0, 1), nil)), page(true, cont("a", rows(1, 2), nil))},
		"old continued":     {page(false, op("b", rows(0, 2), nil)), page(true, cont("b", rows(2, 3), old(0, 2))), page(true, cont("b", nil, old(2, 4))), page(true, cont("b", nil, old(4, 5)), op("c", nil, nil))},
		// States continued (engine.Request.StatesInPieces), one part longer than jsonChunk.
		"states continued": {page(false, op("a", nil, nil), contStatesFirst(op("b", nil, nil), states(0, 3))), page(true, contStates("b", states(3, 5000))),
			page(true, contStates("b", states(5000, 5002)), op("c", rows(0, 1), nil)), page(false, contStatesFirst(op("d", nil, nil), nil)), page(true, contStates("d", states(0, 2))), page(true, cont("d", rows(0, 2), old(0, 1)))},
	} {
		t.Run(name, func(t *testing.T) {
			joined := proto.Clone(rep).(*pb.RescaleReport)
			spill, err := NewOperatorSpill()
			if err != nil {
				t.Fatal(err)
			}
			defer spill.Close()
			for _, p := range pages {
				if err := spill.AddPage(p); err != nil {
					t.Fatal(err)
				}
				for i, op := range p.GetOperators() {
					op = proto.Clone(op).(*pb.OperatorAssignment)
					if i == 0 && p.GetContinued() {
						last := joined.Operators[len(joined.Operators)-1]
						last.Subtasks, last.OldSubtasks = append(last.Subtasks, op.Subtasks...), append(last.OldSubtasks, op.OldSubtasks...)
						last.States = append(last.States, op.States...)
						continue
					}
					joined.Operators = append(joined.Operators, op)
				}
			}
			var want, got bytes.Buffer
			if err := WriteJSON(&want, joined); err != nil {
				t.Fatal(err)
			}
			if err := WriteJSONSpilled(&got, rep, spill); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("spilled:\n%s\nwant\n%s", got.String(), want.String())
			}
		})
	}
}

// TestSpillLeavesNoFile: the spill's file has no name from the start (where the system allows
// it), so a process killed mid-check leaves nothing in the temporary folder.
func TestSpillLeavesNoFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("an open file cannot lose its name on Windows: Close removes it")
	}
	s, err := NewOperatorSpill()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(s.f.Name()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the spill's file %s is still named in the temporary folder (%v)", s.f.Name(), err)
	}
	if err := s.AddPage(&pb.OperatorPage{Operators: []*pb.OperatorAssignment{{OperatorId: "a"}}}); err != nil {
		t.Fatal(err)
	}
}
