package lifecycle

import (
	"bytes"
	"fmt"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// Verify re-reads the pruned file with the codec and proves it is what the plan says: encoding
// the re-read file gives the same bytes again; with the original target operator put back it
// encodes to exactly the original file's bytes (Write reproduces the bytes Read consumed), so the
// header, master states, trailer and every untouched operator are the original's byte for byte;
// and the pruned operator is gone, or has lost exactly the named state and kept every other
// state with the same offsets. It returns the re-read file.
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
	// Put the original target operator back into the re-read file: the result must encode to
	// exactly the original's bytes, which proves that the header, master states, trailer and every
	// untouched operator (content and order) are the original's.
	restored := *got
	restored.Operators = make([]checkpoint.OperatorState, 0, len(orig.Operators))
	j := 0
	for i := range orig.Operators {
		o := &orig.Operators[i]
		isTarget := o.ID.String() == plan.OperatorID
		if isTarget {
			if !plan.WholeOperator {
				if j >= len(got.Operators) || got.Operators[j].ID != o.ID {
					return nil, fmt.Errorf("verify: pruned operator %s is missing or moved", o.ID)
				}
				if err := verifyPrunedOperator(o, &got.Operators[j], plan.Removed[0].Name); err != nil {
					return nil, err
				}
				j++
			}
			restored.Operators = append(restored.Operators, *o)
			continue
		}
		if j >= len(got.Operators) {
			return nil, fmt.Errorf("verify: untouched operator %s is missing", opLabel(o))
		}
		restored.Operators = append(restored.Operators, got.Operators[j])
		j++
	}
	if j != len(got.Operators) {
		return nil, fmt.Errorf("verify: %d operators, want %d", len(got.Operators), j)
	}
	want, err := Encode(orig)
	if err != nil {
		return nil, fmt.Errorf("verify: encoding the original: %w", err)
	}
	have, err := Encode(&restored)
	if err != nil {
		return nil, fmt.Errorf("verify: encoding the restored file: %w", err)
	}
	if !bytes.Equal(want, have) {
		return nil, fmt.Errorf("verify: %s", firstDifference(orig, &restored))
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

// firstDifference names what differs between two files whose encodings differ.
func firstDifference(a, b *checkpoint.Metadata) string {
	if a.Version != b.Version || a.CheckpointID != b.CheckpointID {
		return fmt.Sprintf("header changed: version %d→%d, checkpoint %d→%d", a.Version, b.Version, a.CheckpointID, b.CheckpointID)
	}
	if len(a.Operators) != len(b.Operators) {
		return fmt.Sprintf("%d operators, want %d", len(b.Operators), len(a.Operators))
	}
	for i := range a.Operators {
		x, errX := encodeOperator(a, &a.Operators[i])
		y, errY := encodeOperator(b, &b.Operators[i])
		if errX != nil || errY != nil || !bytes.Equal(x, y) {
			return fmt.Sprintf("untouched operator %s changed (%d → %d bytes)", opLabel(&a.Operators[i]), len(x), len(y))
		}
	}
	return "master states or the CheckpointProperties trailer changed"
}
