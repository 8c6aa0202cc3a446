package restorecode

import (
	"cmp"
	"math"
	"slices"
)

// kind is what the analysis knows about one operand stack slot or local variable.
type kind uint8

const (
	kNone       kind = iota // bottom: nothing tracked (any other value, or an unset slot)
	kConflict               // top: different tracked values meet
	kThis                   // the analysed object
	kConst                  // a String constant (s)
	kInt                    // an int or long constant (n)
	kNew                    // an object from `new` not yet initialised (s = class, id = site)
	kBuilder                // a StringBuilder holding the constant s
	kDescriptor             // a state descriptor; s = name when n == 1, else where it came from
	kState                  // a registered state handle
	kIterable               // the restored elements (ListState.get(), a restoreState list)
	kCopy                   // a list holding all restored elements
	kIterator               // an iterator over them (id = creation site)
	kHasNext                // boolean: the iterator id (or, id 0, the collection) has an element
	kIsEmpty                // boolean: the collection is empty
	kSize                   // int: the number of restored elements
	kElement                // one restored element, or a value read from one
	kStream                 // a stream over the elements; n = 1 once filtered
	kOptional               // findFirst() and friends
	kPresent                // boolean: the optional holds an element
	kRestored               // boolean: context.isRestored()
	kLambda                 // a lambda or method reference (id = index in the lambda table)
	kList                   // a new, empty local collection (id = allocation site)
	kCheck                  // boolean: true iff the count n (a count constant) holds for the elements
	kTask                   // int: this subtask's index or the parallelism
	kNames                  // the Set<String> of registered state names (getRegisteredStateNames())
	kFalse                  // boolean: false on every path (a state-name set asked for a descriptor)
)

// uncounted marks (in s) a kCopy whose size is not the number of elements: a set of them or of
// values read from them (Collectors.toSet(), Sets.newHashSet), or any stream collect().
const uncounted = "uncounted"

// restored reports whether the kind carries restored elements (what may escape).
func (k kind) restored() bool {
	switch k {
	case kIterable, kCopy, kIterator, kStream, kOptional:
		return true
	}
	return false
}

// value is one abstract value; st is the index of the state it derives from (-1 for none).
type value struct {
	k  kind
	st int32
	id int32
	n  int64
	s  string
}

var (
	none     = value{st: -1}
	conflict = value{k: kConflict, st: -1}
)

func join(a, b value) value {
	switch {
	case a == b:
		return a
	case a.k == kFalse || b.k == kFalse:
		return conflict // false only where every path says so: a branch on it is pruned
	case a.k == kNone:
		return b
	case b.k == kNone:
		return a
	case a.k == kList && b.k == kCopy:
		return b // a local list that received the elements on one path
	case b.k == kList && a.k == kCopy:
		return a
	}
	return conflict
}

// guard kinds: facts that hold on every path to an instruction.
type gkind uint8

const (
	gNonEmpty gkind = iota + 1 // the state's elements are known not to be empty
	gChecked                   // iterator id's hasNext() returned true
	gNexted                    // iterator id's next() was called
	gTaskEdge                  // on one edge of a test of the subtask index or parallelism against an element's value (id: 2×offset + edge)
)

type guard struct {
	k  gkind
	id int32 // state index or iterator id
}

// facts hold on every path to a point: isRestored() was true, and the guards.
type facts struct {
	restored bool
	guards   []guard // sorted, no duplicates
	// pend is set on the edges of a count test, for javac's materialised booleans
	// (`size() <= 1` passed to checkArgument: iconst_1 on one edge, iconst_0 on the other).
	pend pending
}

// pending says what the next iconst_1 (c1) or iconst_0 (c0) means for state st.
type pending struct {
	set    bool
	st     int32
	c0, c1 count
}

func (f facts) has(k gkind, id int32) bool {
	_, ok := slices.BinarySearchFunc(f.guards, guard{k, id}, cmpGuard)
	return ok
}

func cmpGuard(a, b guard) int {
	if a.k != b.k {
		return int(a.k) - int(b.k)
	}
	return cmp.Compare(a.id, b.id)
}

func (f facts) with(gs ...guard) facts {
	out := facts{restored: f.restored, guards: slices.Clone(f.guards), pend: f.pend}
	for _, g := range gs {
		if i, ok := slices.BinarySearchFunc(out.guards, g, cmpGuard); !ok {
			out.guards = slices.Insert(out.guards, i, g)
		}
	}
	return out
}

// underTask reports whether the point is reached only on one edge of a test of the subtask index
// or the parallelism (the edges' guards differ, so they vanish where the paths meet again).
func (f facts) underTask() bool {
	i, _ := slices.BinarySearchFunc(f.guards, guard{gTaskEdge, math.MinInt32}, cmpGuard)
	return i < len(f.guards) && f.guards[i].k == gTaskEdge
}

// meet keeps what holds on both paths.
func (f facts) meet(o facts) facts {
	out := facts{restored: f.restored && o.restored}
	if f.pend == o.pend {
		out.pend = f.pend
	}
	for _, g := range f.guards {
		if o.has(g.k, g.id) {
			out.guards = append(out.guards, g)
		}
	}
	return out
}

func (f facts) equal(o facts) bool {
	return f.restored == o.restored && f.pend == o.pend && slices.Equal(f.guards, o.guards)
}

// frame is the abstract state before an instruction. Long and double take two slots, the
// second holding none, as in the JVM.
type frame struct {
	locals []value
	stack  []value
	facts  facts
}

func (f *frame) clone() *frame {
	return &frame{locals: slices.Clone(f.locals), stack: slices.Clone(f.stack), facts: f.facts}
}

// merge joins o into f and reports whether f changed; ok is false when the stack heights differ.
func (f *frame) merge(o *frame) (changed, ok bool) {
	if len(f.stack) != len(o.stack) || len(f.locals) != len(o.locals) {
		return false, false
	}
	for i := range f.locals {
		if j := join(f.locals[i], o.locals[i]); j != f.locals[i] {
			f.locals[i], changed = j, true
		}
	}
	for i := range f.stack {
		if j := join(f.stack[i], o.stack[i]); j != f.stack[i] {
			f.stack[i], changed = j, true
		}
	}
	if m := f.facts.meet(o.facts); !m.equal(f.facts) {
		f.facts, changed = m, true
	}
	return changed, true
}

// replace substitutes every occurrence of old in the frame (an object changing its abstract
// value in place: a constructor ran, a list received all elements).
func (f *frame) replace(old, nu value) {
	for i := range f.locals {
		if f.locals[i] == old {
			f.locals[i] = nu
		}
	}
	for i := range f.stack {
		if f.stack[i] == old {
			f.stack[i] = nu
		}
	}
}
