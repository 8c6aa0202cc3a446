package restorecode

import (
	"sort"

	"github.com/flinkpreflight/preflight/internal/classfile"
)

// rule decides a label from a state's events: the first rule that matches any event wins, so the
// order is from the assumption that fails on the fewest element counts to the safest.
type rule struct {
	label string
	match func(e *event, mode string) bool
}

var rules = []rule{
	{OneUnguarded, func(e *event, _ string) bool { return e.k == evFirst && !e.guarded }},
	{ExactlyOne, func(e *event, _ string) bool { return e.k == evOnly }},
	{AtMostOne, func(e *event, _ string) bool { return e.k == evOnlyOr || e.k == evSecond }},
	{FirstOnly, func(e *event, _ string) bool { return e.k == evFirst || e.k == evFirstOr }},
	{Unknown, func(e *event, _ string) bool { return e.k == evEscape }},
	{OrderDependent, func(e *event, _ string) bool { return e.k == evLast }},
	{UnionFilter, func(e *event, mode string) bool { return e.k == evAll && mode == Union && e.filter }},
	{MergeAll, func(e *event, _ string) bool { return e.k == evAll }},
	{Unknown, func(e *event, _ string) bool { return e.k == evHandleEscape }},
}

// maxEvidence caps the places listed per state.
const maxEvidence = 5

// label turns the analysis's states and events into report states.
func (a *analysis) label() []State {
	out := make([]State, 0, len(a.states))
	for i, s := range a.states {
		reg := a.evidence(&s.reg)
		name, note := s.name, s.note
		if !s.constant {
			name, note = NameNotConstant, "not constant: "+note
		}
		st := State{Name: name, NameNote: note, Mode: s.mode, Assumption: NotRead, Evidence: []Evidence{},
			Registered: &reg}
		var evs []*event
		for j := range a.events {
			if a.events[j].st == int32(i) {
				evs = append(evs, &a.events[j])
			}
		}
		for _, r := range rules {
			if r.label == FirstOnly && readsAll(evs) {
				continue // the first element is taken apart, then the rest is read too
			}
			var hit []*event
			for _, e := range evs {
				if r.match(e, s.mode) {
					hit = append(hit, e)
				}
			}
			if len(hit) == 0 {
				continue
			}
			st.Assumption, st.RestoredOnly = r.label, true
			for _, e := range hit {
				st.RestoredOnly = st.RestoredOnly && e.restored
			}
			st.Evidence = a.evidenceList(hit)
			break
		}
		out = append(out, st)
	}
	return out
}

func (a *analysis) evidence(e *event) Evidence {
	ev := Evidence{Method: e.method, Line: e.line, Offset: e.off}
	if e.cls != a.root.Name {
		ev.Class = classfile.BinaryName(e.cls)
	}
	return ev
}

func (a *analysis) evidenceList(hit []*event) []Evidence {
	sort.SliceStable(hit, func(i, j int) bool {
		if hit[i].cls != hit[j].cls {
			return hit[i].cls == a.root.Name
		}
		if hit[i].method != hit[j].method {
			return hit[i].method < hit[j].method
		}
		return hit[i].off < hit[j].off
	})
	var out []Evidence
	for _, e := range hit {
		ev := a.evidence(e)
		if len(out) > 0 && out[len(out)-1] == ev {
			continue
		}
		if len(out) == maxEvidence {
			break
		}
		out = append(out, ev)
	}
	return out
}

// readsAll: some loop consumes every element (not only copies them into a local list).
func readsAll(evs []*event) bool {
	for _, e := range evs {
		if e.k == evAll && !e.copy {
			return true
		}
	}
	return false
}
