package findings

import (
	"slices"
	"strings"

	"github.com/flinkpreflight/preflight/internal/units"
)

// namedStates is how many state names a finding's message names before it counts the rest: a
// rule that fires for every state of an operator reports once per operator and cause, and the
// full list goes to Finding.StateNames (JSON's state_names), never into prose.
const namedStates = 5

// stateGroup collects the states of one operator for which a rule fires for the same cause.
type stateGroup struct {
	key      string // the cause: what the message says besides the states and subtasks
	names    []string
	elements int64
	affected []int32 // the union of the states' affected new subtasks, ascending
}

// stateGroups gathers states by cause, in the order the causes first occur.
type stateGroups struct {
	byKey map[string]int
	list  []*stateGroup
}

// add counts state name with its elements and affected new subtasks (ascending) under the
// cause key.
func (g *stateGroups) add(key, name string, elements int64, affected []int32) {
	if g.byKey == nil {
		g.byKey = map[string]int{}
	}
	i, ok := g.byKey[key]
	if !ok {
		i = len(g.list)
		g.byKey[key] = i
		g.list = append(g.list, &stateGroup{key: key, affected: affected})
	}
	s := g.list[i]
	s.names = append(s.names, name)
	s.elements += elements
	if ok && !containsSorted(s.affected, affected) {
		s.affected = unionSorted(s.affected, affected)
	}
}

// containsSorted reports whether ascending list a holds every index of ascending list b.
func containsSorted(a, b []int32) bool {
	for _, x := range b {
		i, found := slices.BinarySearch(a, x)
		if !found {
			return false
		}
		a = a[i+1:]
	}
	return true
}

// unionSorted merges two ascending index lists without duplicates.
func unionSorted(a, b []int32) []int32 {
	out := make([]int32, 0, max(len(a), len(b)))
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || (len(a) > 0 && a[0] < b[0]):
			out, a = append(out, a[0]), a[1:]
		case len(a) == 0 || b[0] < a[0]:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, a[0]), a[1:], b[1:]
		}
	}
	return out
}

// setStates names the group's states on f: StateName alone for one state; for several,
// StateName the first in name order and StateNames all of them.
func (s *stateGroup) setStates(f *Finding) {
	if len(s.names) == 1 {
		f.StateName = s.names[0]
		return
	}
	slices.Sort(s.names)
	f.StateName = s.names[0]
	f.StateNames = s.names
}

// statesText names states for a message: "`a`", "`a` and `b`", "`a`, `b`, `c`, `d`, `e` and
// 29,995 more" (names in the order given).
func statesText(names []string) string {
	var b strings.Builder
	shown := min(len(names), namedStates)
	if len(names) == namedStates+1 {
		shown = len(names) // "and 1 more" says no more than the name would
	}
	for i, n := range names[:shown] {
		switch {
		case i == 0:
		case i == shown-1 && shown == len(names):
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		b.WriteString("`" + n + "`")
	}
	if rest := len(names) - shown; rest > 0 {
		b.WriteString(" and " + units.Thousands(int64(rest)) + " more")
	}
	return b.String()
}
