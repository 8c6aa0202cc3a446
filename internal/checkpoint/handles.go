package checkpoint

import "iter"

// OperatorStateHandles yields the subtask's operator-state handles that are present: the managed
// one, then the raw one (the order Flink writes them).
func (s *SubtaskLayout) OperatorStateHandles() iter.Seq[*OperatorStateHandleLayout] {
	return func(yield func(*OperatorStateHandleLayout) bool) {
		if h := s.ManagedOperatorState; h != nil && !yield(h) {
			return
		}
		if h := s.RawOperatorState; h != nil {
			yield(h)
		}
	}
}

// OperatorStates yields every named operator state of the subtask: the managed handle's, then
// the raw handle's, each in file order.
func (s *SubtaskLayout) OperatorStates() iter.Seq[*StateEntryLayout] {
	return func(yield func(*StateEntryLayout) bool) {
		for h := range s.OperatorStateHandles() {
			for i := range h.States {
				if !yield(&h.States[i]) {
					return
				}
			}
		}
	}
}

// KeyedStateHandles yields the subtask's keyed-state handles that are present: the managed one,
// then the raw one.
func (s *SubtaskLayout) KeyedStateHandles() iter.Seq[*KeyedStateHandleLayout] {
	return func(yield func(*KeyedStateHandleLayout) bool) {
		if h := s.ManagedKeyedState; h != nil && !yield(h) {
			return
		}
		if h := s.RawKeyedState; h != nil {
			yield(h)
		}
	}
}
