package lifecycle

import (
	"sort"

	"github.com/flinkpreflight/preflight/internal/checkpoint"
)

// RelativeFiles returns, sorted and without duplicates, the paths of every
// RelativeFileStateHandle (tag 6) in m: files Flink resolves against the folder of _metadata,
// which therefore must sit beside any copy of it.
func RelativeFiles(m *checkpoint.Metadata) []string {
	seen := map[string]bool{}
	var stream func(h checkpoint.StreamStateHandle)
	var keyed func(h checkpoint.KeyedStateHandle)
	stream = func(h checkpoint.StreamStateHandle) {
		switch h := h.(type) {
		case *checkpoint.RelativeFileStateHandle:
			seen[h.RelativePath] = true
		case *checkpoint.KeyGroupsStateHandle:
			stream(h.Delegate)
		}
	}
	keyed = func(h checkpoint.KeyedStateHandle) {
		switch h := h.(type) {
		case *checkpoint.KeyGroupsStateHandle:
			stream(h.Delegate)
		case *checkpoint.IncrementalKeyedStateHandle:
			stream(h.MetaData)
			for _, f := range h.SharedFiles {
				stream(f.Handle)
			}
			for _, f := range h.PrivateFiles {
				stream(f.Handle)
			}
		case *checkpoint.ChangelogStateBackendHandle:
			for _, n := range h.Materialized {
				keyed(n)
			}
			for _, n := range h.NonMaterialized {
				keyed(n)
			}
		case *checkpoint.ChangelogStateHandleStreamImpl:
			for _, s := range h.Handles {
				stream(s.Handle)
			}
		}
	}
	for i := range m.Operators {
		for _, st := range m.Operators[i].Subtasks {
			s := st.State
			if s == nil {
				continue
			}
			for _, l := range s.Legacy {
				stream(l)
			}
			for _, slot := range []checkpoint.OperatorStateSlot{s.ManagedOperatorState, s.RawOperatorState} {
				if slot.Handle != nil {
					stream(slot.Handle.Delegate)
				}
			}
			keyed(s.ManagedKeyedState)
			keyed(s.RawKeyedState)
			for _, chs := range [][]checkpoint.ChannelStateHandle{s.InputChannels, s.OutputChannels} {
				for _, c := range chs {
					stream(c.Delegate)
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
