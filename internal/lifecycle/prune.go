package lifecycle

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
	"github.com/flinkpreflight/preflight/internal/units"
)

// ErrUsage marks a prune request that cannot be carried out as asked (unknown operator or
// state, ambiguous name, missing --force); callers report it as an input error.
var ErrUsage = errors.New("prune")

func usagef(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUsage}, args...)...)
}

// Selector names what to prune: an operator by hex OperatorID, uid or name, and optionally one
// named operator state (list, union or broadcast) of it; State "" removes the whole operator.
type Selector struct {
	Operator string
	State    string
}

// PruneOptions are the safety inputs of a prune.
type PruneOptions struct {
	// Force allows removals that lose live state: keyed state, or state of an operator the job
	// still has.
	Force bool
	// JobOperators lists the IDs or uids of the operators of the job that will restore the
	// result, when known; nil means unknown.
	JobOperators []string
}

// RemovedState is one named state taken out of an operator.
type RemovedState struct {
	Name     string `json:"name"`
	Mode     string `json:"mode"`               // SPLIT_DISTRIBUTE, UNION, BROADCAST, or KEYED / COORDINATOR / CHANNEL for whole-operator removal
	Subtasks int    `json:"subtasks"`           // subtasks that carried it
	Elements int64  `json:"elements,omitempty"` // offsets removed from _metadata
}

// PrunePlan says what a prune removes and why it is allowed.
type PrunePlan struct {
	OperatorID    string         `json:"operator_id"`
	OperatorName  string         `json:"operator_name,omitempty"`
	OperatorUID   string         `json:"operator_uid,omitempty"`
	Position      int            `json:"position"` // in the checkpoint, from 1, as other verbs number operators
	WholeOperator bool           `json:"whole_operator"`
	Removed       []RemovedState `json:"removed"`
	// Losses say what a running job loses; each one needed Force.
	Losses []string `json:"losses,omitempty"`
	// RelativeFiles are the files, relative to the savepoint folder, that the kept state still
	// references (they must travel with the new _metadata).
	RelativeFiles []string `json:"relative_files,omitempty"`
}

// Prune returns a copy of m without the selected state. m is not modified; operators other than
// the selected one are shared with m, unchanged. The plan says what was removed.
func Prune(m *checkpoint.Metadata, sel Selector, opts PruneOptions) (*checkpoint.Metadata, *PrunePlan, error) {
	if m == nil {
		return nil, nil, errors.New("prune: nil metadata")
	}
	if m.Version < 2 {
		return nil, nil, usagef("format version %d cannot be written (the codec writes 2 to 7)", m.Version)
	}
	idx, err := FindOperator(m.Operators, sel.Operator)
	if err != nil {
		return nil, nil, err
	}
	op := &m.Operators[idx]
	plan := &PrunePlan{OperatorID: op.ID.String(), OperatorName: op.Name, OperatorUID: op.UID, Position: idx + 1, WholeOperator: sel.State == ""}
	inJob := operatorInJob(op, opts.JobOperators)
	out := *m
	out.Operators = make([]checkpoint.OperatorState, 0, len(m.Operators))
	if sel.State == "" {
		plan.Removed = operatorContents(op)
		if len(plan.Removed) == 0 {
			plan.Removed = []RemovedState{{Name: "(no state)", Mode: "NONE"}}
		}
		for _, r := range plan.Removed {
			if r.Mode == "KEYED" {
				plan.Losses = append(plan.Losses, fmt.Sprintf("keyed state of %s (every key's value, timers, windows) of %s", units.Plural(int64(r.Subtasks), "subtask"), opLabel(op)))
			}
		}
		if inJob {
			plan.Losses = append(plan.Losses, fmt.Sprintf("%s is still in the job: it restores with no state at all", opLabel(op)))
		}
		out.Operators = append(out.Operators, m.Operators[:idx]...)
		out.Operators = append(out.Operators, m.Operators[idx+1:]...)
	} else {
		pruned, removed, err := pruneState(op, sel.State)
		if err != nil {
			return nil, nil, err
		}
		plan.Removed = []RemovedState{removed}
		if inJob {
			plan.Losses = append(plan.Losses, fmt.Sprintf("%s is still in the job: if it still registers %q (%s), it restores that state empty", opLabel(op), sel.State, removed.Mode))
		}
		out.Operators = append(out.Operators, m.Operators...)
		out.Operators[idx] = pruned
	}
	if len(plan.Losses) > 0 && !opts.Force {
		return nil, plan, usagef("refusing without --force: the job would lose %s", strings.Join(plan.Losses, "; "))
	}
	plan.RelativeFiles = RelativeFiles(&out)
	return &out, plan, nil
}

// FindOperator resolves key (hex OperatorID, uid or name, or else a prefix of the ID's hex as
// reports print it) to an operator index. A name or prefix that several operators share is an
// error listing them.
func FindOperator(ops []checkpoint.OperatorState, key string) (int, error) {
	if key == "" {
		return 0, usagef("--operator is required (an OperatorID in hex, a uid or a name)")
	}
	if id, err := checkpoint.ParseOperatorID(key); err == nil {
		for i := range ops {
			if ops[i].ID == id {
				return i, nil
			}
		}
	}
	for i := range ops {
		if ops[i].UID == key {
			return i, nil
		}
	}
	// A uid given for a file without uids (format < 5): Flink derives the ID from the uid.
	uidID := checkpoint.OperatorIDFromUID(key)
	for i := range ops {
		if ops[i].ID == uidID {
			return i, nil
		}
	}
	var byName []int
	for i := range ops {
		if ops[i].Name == key {
			byName = append(byName, i)
		}
	}
	if len(byName) == 0 && checkpoint.IsIDPrefix(key) {
		for i := range ops {
			if ops[i].ID.HasPrefix(key) {
				byName = append(byName, i)
			}
		}
	}
	switch len(byName) {
	case 1:
		return byName[0], nil
	case 0:
		var known []string
		for i := range ops {
			known = append(known, opLabel(&ops[i]))
		}
		return 0, usagef("no operator %q in the checkpoint; it has: %s", key, strings.Join(known, ", "))
	}
	var ids []string
	for _, i := range byName {
		ids = append(ids, ops[i].ID.String())
	}
	return 0, usagef("operator %q is ambiguous (%s); pass the OperatorID", key, strings.Join(ids, ", "))
}

func opLabel(op *checkpoint.OperatorState) string {
	switch {
	case op.Name != "" && op.UID != "":
		return fmt.Sprintf("%q (uid %s, %s)", op.Name, op.UID, op.ID)
	case op.Name != "":
		return fmt.Sprintf("%q (%s)", op.Name, op.ID)
	case op.UID != "":
		return fmt.Sprintf("uid %s (%s)", op.UID, op.ID)
	}
	return op.ID.String()
}

func operatorInJob(op *checkpoint.OperatorState, job []string) bool {
	for _, k := range job {
		if k == op.ID.String() || (op.UID != "" && k == op.UID) || checkpoint.OperatorIDFromUID(k) == op.ID {
			return true
		}
	}
	return false
}

// pruneState copies op without the named operator state in both operator-state slots of every
// subtask. A handle left without states is dropped (the slot becomes empty), as Flink writes a
// subtask without operator state.
func pruneState(op *checkpoint.OperatorState, name string) (checkpoint.OperatorState, RemovedState, error) {
	out := *op
	out.Subtasks = make([]checkpoint.SubtaskEntry, len(op.Subtasks))
	removed := RemovedState{Name: name}
	modes := map[checkpoint.DistributionMode]bool{}
	names := map[string]bool{}
	for i, st := range op.Subtasks {
		out.Subtasks[i] = st
		if st.State == nil {
			continue
		}
		s := *st.State
		found := false
		for _, slot := range []*checkpoint.OperatorStateSlot{&s.ManagedOperatorState, &s.RawOperatorState} {
			if slot.Handle == nil {
				continue
			}
			h := *slot.Handle
			h.States = nil
			for _, e := range slot.Handle.States {
				names[e.Name] = true
				if e.Name == name {
					found = true
					modes[e.Mode] = true
					removed.Elements += int64(len(e.Offsets))
					continue
				}
				h.States = append(h.States, e)
			}
			if len(h.States) == len(slot.Handle.States) {
				continue
			}
			if len(h.States) == 0 {
				*slot = checkpoint.OperatorStateSlot{}
			} else {
				slot.Handle = &h
			}
		}
		if found {
			removed.Subtasks++
			out.Subtasks[i].State = &s
		}
	}
	if removed.Subtasks == 0 {
		var known []string
		for n := range names {
			known = append(known, fmt.Sprintf("%q", n))
		}
		sort.Strings(known)
		if len(known) == 0 {
			return out, removed, usagef("operator %s has no named operator state (keyed state is not named in _metadata: prune the whole operator instead)", opLabel(op))
		}
		return out, removed, usagef("operator %s has no operator state %q; it has %s", opLabel(op), name, strings.Join(known, ", "))
	}
	var ms []string
	for m := range modes {
		ms = append(ms, m.String())
	}
	sort.Strings(ms)
	removed.Mode = strings.Join(ms, "+")
	return out, removed, nil
}

// operatorContents lists the kinds of state a whole operator carries.
func operatorContents(op *checkpoint.OperatorState) []RemovedState {
	type agg struct {
		r   RemovedState
		ord int
	}
	byName := map[string]*agg{}
	add := func(name, mode string, elements int64) {
		a := byName[name+"\x00"+mode]
		if a == nil {
			a = &agg{r: RemovedState{Name: name, Mode: mode}, ord: len(byName)}
			byName[name+"\x00"+mode] = a
		}
		a.r.Subtasks++
		a.r.Elements += elements
	}
	if op.CoordinatorState != nil {
		add("(coordinator state)", "COORDINATOR", 0)
	}
	for _, st := range op.Subtasks {
		s := st.State
		if s == nil {
			continue
		}
		for _, slot := range []checkpoint.OperatorStateSlot{s.ManagedOperatorState, s.RawOperatorState} {
			if slot.Handle != nil {
				for _, e := range slot.Handle.States {
					add(e.Name, e.Mode.String(), int64(len(e.Offsets)))
				}
			}
		}
		if s.ManagedKeyedState != nil || s.RawKeyedState != nil {
			add("(keyed state)", "KEYED", 0)
		}
		if len(s.InputChannels)+len(s.OutputChannels) > 0 {
			add("(in-flight channel data)", "CHANNEL", 0)
		}
	}
	out := make([]RemovedState, 0, len(byName))
	for _, a := range byName {
		out = append(out, a.r)
	}
	sort.Slice(out, func(i, j int) bool {
		return byName[out[i].Name+"\x00"+out[i].Mode].ord < byName[out[j].Name+"\x00"+out[j].Mode].ord
	})
	return out
}

// Encode writes m with the codec's writer.
func Encode(m *checkpoint.Metadata) ([]byte, error) {
	var b bytes.Buffer
	if err := checkpoint.Write(&b, m); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// encodeOperator is the encoding of one operator record, framed as a file with just that
// operator, so two operators' records compare byte for byte.
func encodeOperator(m *checkpoint.Metadata, op *checkpoint.OperatorState) ([]byte, error) {
	single := checkpoint.Metadata{Version: m.Version, CheckpointID: m.CheckpointID, Operators: []checkpoint.OperatorState{*op}}
	return Encode(&single)
}
