package findings

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/checkpoint/checkpointtest"
	"github.com/flinkpreflight/preflight/internal/rescale"
)

// tState is a named operator state with an element count per old subtask.
type tState struct {
	name       string
	mode       checkpoint.DistributionMode
	perSubtask []int
	size       int // bytes per element (default 16)
}

// tOp is an operator of a synthetic checkpoint.
type tOp struct {
	name, uid   string
	id          string // hex; default: hash of uid
	p, maxP     int
	coord       int // coordinator state bytes
	states      []tState
	keyedKG     bool // heap keyed state over the operator's key groups, 100 bytes each
	inputChans  int  // input-channel handles per subtask (1000 bytes each)
	allFinished bool
}

func splitState(name string, per ...int) tState {
	return tState{name: name, mode: checkpoint.SplitDistribute, perSubtask: per}
}

func unionState(name string, per ...int) tState {
	return tState{name: name, mode: checkpoint.Union, perSubtask: per}
}

// layoutOf encodes a synthetic checkpoint with the codec and reads its Layout back.
func layoutOf(t *testing.T, version int32, ops ...tOp) *checkpoint.Layout {
	t.Helper()
	m := &checkpoint.Metadata{Version: version, CheckpointID: 7}
	for _, o := range ops {
		if o.maxP == 0 {
			o.maxP = 128
		}
		op := checkpoint.OperatorState{Parallelism: int32(o.p), MaxParallelism: int32(o.maxP)}
		if version >= 5 {
			op.Name, op.UID = o.name, o.uid
		}
		switch {
		case o.id != "":
			id, err := checkpoint.ParseOperatorID(o.id)
			if err != nil {
				t.Fatal(err)
			}
			op.ID = id
		default:
			op.ID = checkpoint.OperatorIDFromUID(o.uid + o.name)
		}
		if o.coord > 0 {
			op.CoordinatorState = &checkpoint.ByteStreamStateHandle{Name: op.ID.String(), Data: make([]byte, o.coord)}
		}
		if o.allFinished {
			op.FullyFinished = true
			m.Operators = append(m.Operators, op)
			continue
		}
		for i := 0; i < o.p; i++ {
			st := &checkpoint.SubtaskState{}
			if len(o.states) > 0 {
				h := &checkpoint.OperatorStateHandle{Tag: 4}
				pos := int64(100)
				for _, s := range o.states {
					size := s.size
					if size == 0 {
						size = 16
					}
					e := checkpoint.StateEntry{Name: s.name, Mode: s.mode, Offsets: []int64{}}
					for k := 0; k < s.perSubtask[i]; k++ {
						e.Offsets = append(e.Offsets, pos)
						pos += int64(size)
					}
					h.States = append(h.States, e)
				}
				if pos <= 20<<10 {
					h.Delegate = &checkpoint.ByteStreamStateHandle{Name: fmt.Sprintf("file:/sp/%s-%d", op.ID, i), Data: make([]byte, pos)}
				} else {
					h.Delegate = &checkpoint.RelativeFileStateHandle{RelativePath: fmt.Sprintf("%s-%d", op.ID, i), StateSize: pos}
				}
				st.ManagedOperatorState = checkpoint.OperatorStateSlot{Present: 1, Handle: h}
			}
			if o.keyedKG {
				r := rescale.KeyGroupRangeForSubtask(o.maxP, o.p, i)
				offs := make([]int64, r.NumKeyGroups)
				for k := range offs {
					offs[k] = int64(50 + 100*k)
				}
				st.ManagedKeyedState = &checkpoint.KeyGroupsStateHandle{Tag: 7, StartKeyGroup: int32(r.Start), NumKeyGroups: int32(r.NumKeyGroups), Offsets: offs,
					Delegate: &checkpoint.RelativeFileStateHandle{RelativePath: fmt.Sprintf("kg-%s-%d", op.ID, i), StateSize: int64(50 + 100*r.NumKeyGroups)}}
			}
			for c := 0; c < o.inputChans; c++ {
				st.InputChannels = append(st.InputChannels, checkpoint.ChannelStateHandle{SubtaskIndex: int32(i), Info1: 0, Info2: int32(c), Offsets: []int64{0}, StateSize: 1000,
					Delegate: &checkpoint.ByteStreamStateHandle{Name: fmt.Sprintf("file:/cp/ch-%d-%d", i, c), Data: make([]byte, 1000)}})
			}
			op.Subtasks = append(op.Subtasks, checkpoint.SubtaskEntry{Index: int32(i), State: st})
		}
		m.Operators = append(m.Operators, op)
	}
	return checkpointtest.Layout(t, m)
}

// check simulates the plan and applies the rules.
func check(t *testing.T, l *checkpoint.Layout, plan rescale.Plan, cat *Catalog, opts Options) Report {
	t.Helper()
	res, err := rescale.Simulate(l, plan)
	if err != nil {
		t.Fatalf("Simulate: %v", err)
	}
	return Check(l, plan, res, cat, opts)
}

func par(kv ...any) map[string]int {
	m := map[string]int{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(int)
	}
	return m
}

func byRule(r Report, id string) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.RuleID == id {
			out = append(out, f)
		}
	}
	return out
}

// soleFinding checks rule id's findings in rep. When fires is false it fails the test on any of
// them and returns false; otherwise it wants exactly one, of severity want, whose message holds
// every fragment, and returns it.
func soleFinding(t *testing.T, rep Report, id string, fires bool, want Severity, fragments ...string) (Finding, bool) {
	t.Helper()
	fs := byRule(rep, id)
	if !fires {
		if len(fs) != 0 {
			t.Fatalf("%s fired:\n%s", id, dump(rep))
		}
		return Finding{}, false
	}
	if len(fs) != 1 || fs[0].Severity != want {
		t.Fatalf("want one %s %s:\n%s", id, want, dump(rep))
	}
	for _, fr := range fragments {
		if !strings.Contains(fs[0].Message, fr) {
			t.Errorf("%s message lacks %q:\n%s", id, fr, fs[0].Message)
		}
	}
	return fs[0], true
}

func dump(r Report) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "verdict %s safe %+v\n", r.Verdict, r.Safe)
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  %s %s op=%s state=%s subtasks=%v\n    %s\n", f.RuleID, f.Severity, f.OperatorUID, f.StateName, f.AffectedSubtasks, f.Message)
	}
	return b.String()
}
