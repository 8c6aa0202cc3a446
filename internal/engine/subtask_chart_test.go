package engine

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	pb "github.com/flinkpreflight/preflight/proto/preflight/v1"
)

// TestSubtaskChartData: with include_subtasks, every old and every new subtask is described
// per state name, for scale-up and scale-down, and the totals agree on both sides.
func TestSubtaskChartData(t *testing.T) {
	compact := readTestdata(t, "compact-sink")
	tests := []struct {
		name      string
		newP      int
		wantEmpty int // new subtasks without an expired-files element
	}{
		{"up to 8", 8, 4},
		{"down to 2", 2, 0},
		{"same 4", 4, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := New().Check(context.Background(), Request{Input: Input{Reader: bytes.NewReader(compact), Source: "compact-sink"},
				Plan: &pb.RescalePlan{VertexParallelism: map[string]int32{"compact-operator": int32(tt.newP)}}, Options: &pb.CheckOptions{IncludeSubtasks: true}})
			if err != nil {
				t.Fatal(err)
			}
			var op *pb.OperatorAssignment
			for _, o := range rep.GetOperators() {
				for _, s := range o.GetStates() {
					if s.GetName() == "expired-files" {
						op = o
					}
				}
			}
			if op == nil {
				t.Fatal("no operator with expired-files")
			}
			if got := len(op.GetOldSubtasks()); got != int(op.GetOldParallelism()) {
				t.Fatalf("%d old subtasks, want %d", got, op.GetOldParallelism())
			}
			if got := len(op.GetSubtasks()); got != tt.newP {
				t.Fatalf("%d new subtasks, want %d", got, tt.newP)
			}
			var oldElems, newElems int64
			for _, o := range op.GetOldSubtasks() {
				if len(o.GetStates()) != len(op.GetStates()) {
					t.Fatalf("old subtask %d has %d states, want %d", o.GetIndex(), len(o.GetStates()), len(op.GetStates()))
				}
				oldElems += o.GetElements()
				if o.GetBytes() != op.GetSubtasks()[0].GetBytesBefore() && o.GetIndex() == 0 {
					t.Errorf("old subtask 0: %d bytes, bytes_before says %d", o.GetBytes(), op.GetSubtasks()[0].GetBytesBefore())
				}
			}
			empty := 0
			for _, s := range op.GetSubtasks() {
				newElems += s.GetElements()
				for _, sh := range s.GetStates() {
					if sh.GetName() == "expired-files" && sh.GetElements() == 0 {
						empty++
					}
				}
			}
			if oldElems != newElems && op.GetStates()[0].GetMode() == "SPLIT_DISTRIBUTE" {
				t.Errorf("split state elements: %d before, %d after", oldElems, newElems)
			}
			if empty != tt.wantEmpty {
				t.Errorf("%d new subtasks without expired-files elements, want %d", empty, tt.wantEmpty)
			}
		})
	}
}

// TestCheckChartSubtasks: chart_subtasks gives the rows the text chart draws (at most
// ChartRows subtasks of at most ChartOperators operators), not every subtask as include_subtasks
// does; include_subtasks wins when both are set.
func TestCheckChartSubtasks(t *testing.T) {
	l, err := checkpoint.ReadLayout(bytes.NewReader(readTestdata(t, "kafka-orphan-union")))
	if err != nil {
		t.Fatal(err)
	}
	plan := &pb.RescalePlan{DefaultParallelism: 64}
	for _, tc := range []struct {
		name          string
		opts          *pb.CheckOptions
		wantAll       bool
		wantOperators int // with rows, at most
	}{
		{"chart", &pb.CheckOptions{ChartSubtasks: true}, false, ChartOperators},
		{"all", &pb.CheckOptions{IncludeSubtasks: true}, true, 0},
		{"both", &pb.CheckOptions{IncludeSubtasks: true, ChartSubtasks: true}, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := New().Check(context.Background(), Request{Layout: l, Source: "kafka-orphan-union", Plan: plan, Options: tc.opts})
			if err != nil {
				t.Fatal(err)
			}
			withRows := 0
			for _, op := range rep.GetOperators() {
				n := len(op.GetSubtasks())
				if n == 0 {
					continue
				}
				withRows++
				if tc.wantAll && n != int(op.GetNewParallelism()) || !tc.wantAll && n > ChartRows {
					t.Errorf("%s: %d subtask rows at parallelism %d", op.GetName(), n, op.GetNewParallelism())
				}
			}
			if withRows == 0 || !tc.wantAll && withRows > tc.wantOperators {
				t.Errorf("%d operators with subtask rows", withRows)
			}
		})
	}
}

// TestCheckSubtaskOperators: subtask_operators gives every subtask of the named operators alone,
// the same rows include_subtasks gives them, beside the chart's rows when chart_subtasks is set.
func TestCheckSubtaskOperators(t *testing.T) {
	l, err := checkpoint.ReadLayout(bytes.NewReader(readTestdata(t, "kafka-orphan-union")))
	if err != nil {
		t.Fatal(err)
	}
	plan := &pb.RescalePlan{DefaultParallelism: 64}
	check := func(opts *pb.CheckOptions) map[string]*pb.OperatorAssignment {
		t.Helper()
		return operatorsByID(t, l, plan, opts)
	}
	all := check(&pb.CheckOptions{IncludeSubtasks: true})
	var picked string
	for id, op := range all {
		if len(op.GetSubtasks()) > ChartRows && (picked == "" || id < picked) {
			picked = id
		}
	}
	if picked == "" {
		t.Fatal("no operator with more rows than a chart")
	}
	for _, tc := range []struct {
		name  string
		opts  *pb.CheckOptions
		chart bool // other operators may have chart rows
	}{
		{"alone", &pb.CheckOptions{SubtaskOperators: []string{strings.ToUpper(picked)}}, false},
		{"with the chart", &pb.CheckOptions{ChartSubtasks: true, SubtaskOperators: []string{picked}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for id, op := range check(tc.opts) {
				switch {
				case id == picked:
					if !proto.Equal(op, all[id]) {
						t.Errorf("%s: rows differ from include_subtasks': %d subtasks, %d old", id, len(op.GetSubtasks()), len(op.GetOldSubtasks()))
					}
				case len(op.GetSubtasks()) > ChartRows || !tc.chart && len(op.GetSubtasks()) > 0:
					t.Errorf("%s: %d subtask rows, not picked", id, len(op.GetSubtasks()))
				}
			}
		})
	}
}

// operatorsByID checks plan against l and returns the report's operators by ID, failing on an
// operator that lists a subtask twice.
func operatorsByID(t *testing.T, l *checkpoint.Layout, plan *pb.RescalePlan, opts *pb.CheckOptions) map[string]*pb.OperatorAssignment {
	t.Helper()
	rep, err := New().Check(context.Background(), Request{Layout: l, Source: "test", Plan: plan, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]*pb.OperatorAssignment{}
	for _, op := range rep.GetOperators() {
		ops[op.GetOperatorId()] = op
		seen := map[int32]bool{}
		for _, sa := range op.GetSubtasks() {
			if seen[sa.GetIndex()] {
				t.Errorf("%s lists subtask %d twice (options %v)", op.GetOperatorId(), sa.GetIndex(), opts)
			}
			seen[sa.GetIndex()] = true
		}
	}
	return ops
}

// TestSubtaskOperatorsCharted: the operator a chart_subtasks report charts for want of a named one
// (the one with the most state) keeps the rows subtask_operators gave it, without the chart's
// rows added again.
func TestSubtaskOperatorsCharted(t *testing.T) {
	for _, name := range []string{"kafka-orphan-union", "max-parallelism"} {
		l, err := checkpoint.ReadLayout(bytes.NewReader(readTestdata(t, name)))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []int32{0, 2, 8} {
			plan := &pb.RescalePlan{DefaultParallelism: p}
			all := operatorsByID(t, l, plan, &pb.CheckOptions{IncludeSubtasks: true})
			for id, want := range all {
				if len(want.GetSubtasks()) == 0 {
					continue
				}
				got := operatorsByID(t, l, plan, &pb.CheckOptions{ChartSubtasks: true, SubtaskOperators: []string{id}})[id]
				if !proto.Equal(got, want) {
					t.Errorf("%s at %d: %s has %d rows, want include_subtasks' %d", name, p, id, len(got.GetSubtasks()), len(want.GetSubtasks()))
				}
			}
		}
	}
}

// TestOldSubtasksAnyRecordOrder: the old subtasks a report describes do not depend on the order
// of the subtask records in the file (oldSubtaskRows walks them by index).
func TestOldSubtasksAnyRecordOrder(t *testing.T) {
	for name, l := range testdataLayouts(t) {
		reversed := *l
		reversed.Operators = make([]checkpoint.OperatorLayout, len(l.Operators))
		copy(reversed.Operators, l.Operators)
		swapped := false
		for i := range reversed.Operators {
			op := &reversed.Operators[i]
			op.Subtasks = slices.Clone(op.Subtasks)
			slices.Reverse(op.Subtasks)
			swapped = swapped || len(op.Subtasks) > 1 && op.Subtasks[0].Index != l.Operators[i].Subtasks[0].Index
		}
		if !swapped {
			t.Fatalf("%s: no operator's records were reordered", name)
		}
		old := func(l *checkpoint.Layout) [][]*pb.OldSubtaskState {
			rep, err := New().Check(context.Background(), Request{Layout: l, Source: name, Plan: &pb.RescalePlan{DefaultParallelism: 3},
				Options: &pb.CheckOptions{IncludeSubtasks: true}})
			if err != nil {
				t.Fatal(err)
			}
			var out [][]*pb.OldSubtaskState
			for _, op := range rep.GetOperators() {
				out = append(out, op.GetOldSubtasks())
			}
			return out
		}
		want, got := old(l), old(&reversed)
		if len(got) != len(want) {
			t.Fatalf("%s: %d operators, want %d", name, len(got), len(want))
		}
		for i := range want {
			if !slices.EqualFunc(got[i], want[i], func(a, b *pb.OldSubtaskState) bool { return proto.Equal(a, b) }) {
				t.Errorf("%s: operator %d's old subtasks differ with its records reversed", name, i)
			}
		}
	}
}
