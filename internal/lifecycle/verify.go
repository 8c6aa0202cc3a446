package lifecycle

import (
	"bytes"
	"fmt"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// Verify re-reads the pruned file with the codec and proves it is what the plan says: the header,
// master states and trailer are the original's; every operator other than the pruned one is
// encoded byte for byte as in the original (Write reproduces the bytes Read consumed, so this
// is the original record); the pruned operator is gone, or has lost exactly the named state and
// kept every other state with the same offsets; and encoding the re-read file gives the same
// bytes again. It returns the re-read file.
func Verify(orig *checkpoint.Metadata, plan *PrunePlan, pruned []byte) (*checkpoint.Metadata, error) {
	got, err := checkpoint.ReadBytes(pruned)
	if err != nil {
		return nil, fmt.Errorf("verify: the pruned file does not decode: %w", err)
	}
	again, err := Encode(got)
	if err != nil {
		return nil, fmt.Errorf("verify: re-encoding the pruned file: %w", err)
	}
	if !bytes.Equal(again, pruned) {
		return nil, fmt.Errorf("verify: re-encoding the pruned file changes it (%d → %d bytes)", len(pruned), len(again))
	}
	if got.Version != orig.Version || got.CheckpointID != orig.CheckpointID {
		return nil, fmt.Errorf("verify: header changed: version %d→%d, checkpoint %d→%d", orig.Version, got.Version, orig.CheckpointID, got.CheckpointID)
	}
	if !bytes.Equal(got.Trailer, orig.Trailer) && !(len(orig.Trailer) == 0 && orig.Version >= 4) {
		return nil, fmt.Errorf("verify: the CheckpointProperties trailer changed")
	}
	if len(got.MasterStates) != len(orig.MasterStates) {
		return nil, fmt.Errorf("verify: %d master states, want %d", len(got.MasterStates), len(orig.MasterStates))
	}
	for i := range orig.MasterStates {
		a, b := orig.MasterStates[i], got.MasterStates[i]
		if a.Name != b.Name || a.Version != b.Version || !bytes.Equal(a.Payload, b.Payload) {
			return nil, fmt.Errorf("verify: master state %d (%q) changed", i, a.Name)
		}
	}
	want := len(orig.Operators)
	if plan.WholeOperator {
		want--
	}
	if len(got.Operators) != want {
		return nil, fmt.Errorf("verify: %d operators, want %d", len(got.Operators), want)
	}
	j := 0
	for i := range orig.Operators {
		o := &orig.Operators[i]
		isTarget := o.ID.String() == plan.OperatorID
		if isTarget && plan.WholeOperator {
			continue
		}
		g := &got.Operators[j]
		j++
		if g.ID != o.ID {
			return nil, fmt.Errorf("verify: operator %d is %s, want %s", j-1, g.ID, o.ID)
		}
		if isTarget {
			if err := verifyPrunedOperator(o, g, plan.Removed[0].Name); err != nil {
				return nil, err
			}
			continue
		}
		a, err := encodeOperator(orig, o)
		if err != nil {
			return nil, fmt.Errorf("verify: encoding original operator %s: %w", o.ID, err)
		}
		b, err := encodeOperator(got, g)
		if err != nil {
			return nil, fmt.Errorf("verify: encoding pruned operator %s: %w", g.ID, err)
		}
		if !bytes.Equal(a, b) {
			return nil, fmt.Errorf("verify: untouched operator %s changed (%d → %d bytes)", opLabel(o), len(a), len(b))
		}
	}
	for i := range got.Operators {
		if plan.WholeOperator && got.Operators[i].ID.String() == plan.OperatorID {
			return nil, fmt.Errorf("verify: removed operator %s is still present", plan.OperatorID)
		}
	}
	return got, nil
}

// verifyPrunedOperator checks that g is o without the state name and otherwise the same.
func verifyPrunedOperator(o, g *checkpoint.OperatorState, name string) error {
	if g.Name != o.Name || g.UID != o.UID || g.Parallelism != o.Parallelism || g.MaxParallelism != o.MaxParallelism ||
		g.FullyFinished != o.FullyFinished || len(g.Subtasks) != len(o.Subtasks) {
		return fmt.Errorf("verify: pruned operator %s changed beyond the removed state", o.ID)
	}
	if (o.CoordinatorState == nil) != (g.CoordinatorState == nil) ||
		(o.CoordinatorState != nil && !bytes.Equal(o.CoordinatorState.Data, g.CoordinatorState.Data)) {
		return fmt.Errorf("verify: pruned operator %s: coordinator state changed", o.ID)
	}
	for i := range o.Subtasks {
		os, gs := o.Subtasks[i], g.Subtasks[i]
		if os.Index != gs.Index || os.Finished != gs.Finished || (os.State == nil) != (gs.State == nil) {
			return fmt.Errorf("verify: pruned operator %s: subtask %d changed", o.ID, os.Index)
		}
		if os.State == nil {
			continue
		}
		if (os.State.ManagedKeyedState == nil) != (gs.State.ManagedKeyedState == nil) ||
			(os.State.RawKeyedState == nil) != (gs.State.RawKeyedState == nil) ||
			len(os.State.InputChannels) != len(gs.State.InputChannels) || len(os.State.OutputChannels) != len(gs.State.OutputChannels) {
			return fmt.Errorf("verify: pruned operator %s: subtask %d lost state other than %q", o.ID, os.Index, name)
		}
		for k, slot := range []checkpoint.OperatorStateSlot{os.State.ManagedOperatorState, os.State.RawOperatorState} {
			gslot := []checkpoint.OperatorStateSlot{gs.State.ManagedOperatorState, gs.State.RawOperatorState}[k]
			kept := map[string][]int64{}
			if gslot.Handle != nil {
				for _, e := range gslot.Handle.States {
					if e.Name == name {
						return fmt.Errorf("verify: pruned operator %s: subtask %d still has %q", o.ID, os.Index, name)
					}
					kept[e.Name] = e.Offsets
				}
			}
			if slot.Handle == nil {
				if gslot.Handle != nil {
					return fmt.Errorf("verify: pruned operator %s: subtask %d gained operator state", o.ID, os.Index)
				}
				continue
			}
			for _, e := range slot.Handle.States {
				if e.Name == name {
					continue
				}
				offs, ok := kept[e.Name]
				if !ok || len(offs) != len(e.Offsets) {
					return fmt.Errorf("verify: pruned operator %s: subtask %d: state %q changed", o.ID, os.Index, e.Name)
				}
				for x := range offs {
					if offs[x] != e.Offsets[x] {
						return fmt.Errorf("verify: pruned operator %s: subtask %d: state %q offset %d changed", o.ID, os.Index, e.Name, x)
					}
				}
				delete(kept, e.Name)
			}
			if len(kept) != 0 {
				return fmt.Errorf("verify: pruned operator %s: subtask %d gained states", o.ID, os.Index)
			}
		}
	}
	return nil
}
