package checkpoint

import "iter"

// OperatorStateHandles yields the subtask's operator-state handles that are present: the managed
// one, then the raw one (the order Flink writes them).
func (s *SubtaskLayout) OperatorStateHandles() iter.Seq[*OperatorStateHandleLayout] {
	return present(s.ManagedOperatorState, s.RawOperatorState)
}

// OperatorStates yields every named operator state of the subtask: the managed handle's, then
// the raw handle's, each in file order.
func (s *SubtaskLayout) OperatorStates() iter.Seq[*StateEntryLayout] {
	return func(yield func(*StateEntryLayout) bool) {
		for e := range s.OperatorStatesRaw() {
			if !yield(e) {
				return
			}
		}
	}
}

// OperatorStatesRaw is OperatorStates with, for each state, whether it is raw operator state.
func (s *SubtaskLayout) OperatorStatesRaw() iter.Seq2[*StateEntryLayout, bool] {
	return func(yield func(*StateEntryLayout, bool) bool) {
		for k, h := range [2]*OperatorStateHandleLayout{s.ManagedOperatorState, s.RawOperatorState} {
			if h == nil {
				continue
			}
			for i := range h.States {
				if !yield(&h.States[i], k == 1) {
					return
				}
			}
		}
	}
}

// KeyedStateHandles yields the subtask's keyed-state handles that are present: the managed one,
// then the raw one.
func (s *SubtaskLayout) KeyedStateHandles() iter.Seq[*KeyedStateHandleLayout] {
	return present(s.ManagedKeyedState, s.RawKeyedState)
}

// present yields managed then raw, skipping nil.
func present[T any](managed, raw *T) iter.Seq[*T] {
	return func(yield func(*T) bool) {
		if managed != nil && !yield(managed) {
			return
		}
		if raw != nil {
			yield(raw)
		}
	}
}
