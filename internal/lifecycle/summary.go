package lifecycle

import (
	"sort"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// Kinds of state a diff or trend reports.
const (
	KindOperator    = "operator"    // a named list, union or broadcast state
	KindKeyed       = "keyed"       // all keyed state of the operator
	KindCoordinator = "coordinator" // the operator coordinator's state
	KindChannel     = "channel"     // in-flight data of unaligned checkpoints
)

// stateSummary is one state of one operator, totalled over its subtasks.
type stateSummary struct {
	Name     string
	Kind     string
	Mode     string
	Subtasks int
	Elements int64
	Bytes    int64
}

// operatorSummary is one operator of a Layout, reduced to what diff and trend compare.
type operatorSummary struct {
	ID             string
	Name, UID      string
	Parallelism    int
	MaxParallelism int
	KeyGroups      int // key groups covered by keyed state handles
	States         []stateSummary
}

// summarize reduces a Layout's operator to per-state totals; memory is proportional to the
// operator's states, not its elements.
func summarize(op *checkpoint.OperatorLayout) operatorSummary {
	s := operatorSummary{ID: op.ID.String(), Name: op.Name, UID: op.UID, Parallelism: op.Parallelism, MaxParallelism: op.MaxParallelism}
	byKey := map[string]int{}
	add := func(name, kind, mode string, elements, bytes int64) {
		k := kind + "\x00" + name
		i, ok := byKey[k]
		if !ok {
			i = len(s.States)
			byKey[k] = i
			s.States = append(s.States, stateSummary{Name: name, Kind: kind, Mode: mode})
		}
		st := &s.States[i]
		if st.Mode != mode && mode != "" {
			st.Mode = "MIXED"
		}
		st.Subtasks++
		st.Elements += elements
		st.Bytes += bytes
	}
	if op.CoordinatorState != nil {
		add("(coordinator)", KindCoordinator, "", 0, op.CoordinatorState.Size)
	}
	var ranges []checkpoint.KeyGroupRange
	for i := range op.Subtasks {
		st := &op.Subtasks[i]
		for e := range st.OperatorStates() {
			add(e.Name, KindOperator, e.Mode.String(), e.Elements, e.Bytes)
		}
		var keyedBytes int64
		keyed := false
		for h := range st.KeyedStateHandles() {
			keyed = true
			keyedBytes += h.StateSize
			ranges = append(ranges, h.KeyGroups)
		}
		if keyed {
			add("(keyed)", KindKeyed, "", 0, keyedBytes)
		}
		var chBytes, chCount int64
		for _, c := range append(append([]checkpoint.ChannelStateLayout(nil), st.InputChannels()...), st.OutputChannels()...) {
			chBytes += c.Size
			chCount++
		}
		if chCount > 0 {
			add("(in-flight data)", KindChannel, "", chCount, chBytes)
		}
	}
	s.KeyGroups = coveredKeyGroups(ranges)
	return s
}

// coveredKeyGroups counts the key groups in the union of the ranges.
func coveredKeyGroups(rs []checkpoint.KeyGroupRange) int {
	sort.Slice(rs, func(i, j int) bool { return rs[i].Start < rs[j].Start })
	n, end := 0, -1<<31
	for _, r := range rs {
		if r.NumKeyGroups <= 0 {
			continue
		}
		last := r.End()
		if r.Start > end {
			n += r.NumKeyGroups
		} else if last > end {
			n += last - end
		}
		if last > end {
			end = last
		}
	}
	return n
}
