package restorecode

import (
	"sort"
	"strings"

	"github.com/flinkpreflight/preflight/internal/classfile"
)

// evKind is what one instruction did with a state's elements.
type evKind uint8

const (
	evRead         evKind = iota + 1 // state.get(): the elements are read
	evFirst                          // one element taken (guarded says whether one was known to exist)
	evOnly                           // exactly one element required
	evOnlyOr                         // at most one element required
	evFirstOr                        // first element or a default
	evAll                            // every element read
	evLast                           // position-dependent read
	evEscape                         // the elements escape the analysis
	evHandleEscape                   // the state handle escapes to code outside the classes
	evSecond                         // hasNext() after next(): checks for no second element
	evIndex                          // get(i) with an index that is not a constant
)

// event is one observation with its place and the facts that held there.
type event struct {
	k                 evKind
	st                int32
	cls, method       string
	off, line         int
	restored, guarded bool
	iter              int32 // iterator id, for loops over it
	filter            bool  // union loop keeps only some elements
	copy              bool  // a loop that only copies or checks the elements
	index             bool  // get(k) with a constant k (the first visit of a loop's get(i))
}

type eventKey struct {
	k   evKind
	st  int32
	off int
}

// record adds an event at in for state st under the frame's facts.
func (inv *invocation) record(k evKind, st int32, f *frame, in *classfile.Instruction) *event {
	if st < 0 || inv.a.collect != nil || inv.a.silent {
		return &event{}
	}
	e := event{k: k, st: st, cls: inv.cls.Name, method: inv.m.Name, off: in.Off, line: inv.m.Code.Line(in.Off),
		restored: f.facts.restored}
	key := eventKey{k, st, in.Off}
	if i, ok := inv.eventAt[key]; ok {
		// A later visit of the same instruction sees facts that hold on more paths.
		inv.events[i] = e
		return &inv.events[i]
	}
	if inv.eventAt == nil {
		inv.eventAt = map[eventKey]int{}
	}
	inv.eventAt[key] = len(inv.events)
	inv.events = append(inv.events, e)
	return &inv.events[len(inv.events)-1]
}

// finish resolves loop membership and hands the events to the analysis. The loop scans are
// charged to the step budget: a hostile method with thousands of loops and reads ends there.
func (inv *invocation) finish() error {
	sort.Ints(inv.elemPuts)
	sort.Ints(inv.copyPuts)
	varIndex := map[int]bool{} // offsets of get(i) whose index varies
	for _, e := range inv.events {
		if e.k == evIndex {
			varIndex[e.off] = true
		}
	}
	for i := range inv.events {
		e := &inv.events[i]
		if e.k == evFirst && e.index && varIndex[e.off] {
			continue // its first pass through a loop saw i's initial constant
		}
		var filterAt []int // the loop's filter instruction, a second piece of evidence
		switch e.k {
		case evFirst:
			if e.iter != 0 {
				if t, j, ok := inv.loopOver(e.off, e.iter); ok {
					off, f := inv.loopFilter(t, j)
					e.k, e.filter, e.copy = evAll, e.filter || f, inv.copiesIn(t, j) || inv.checksIn(t, j)
					if f {
						filterAt = append(filterAt, off)
					}
					inv.loopMemory(e, t, j)
				}
			}
		case evIndex:
			if t, j, ok := inv.loopAround(e.off); ok {
				off, f := inv.loopFilter(t, j)
				e.k, e.filter, e.copy = evAll, e.filter || f, inv.checksIn(t, j)
				if f {
					filterAt = append(filterAt, off)
				}
			} else {
				e.k = evLast
			}
		case evSecond:
			if _, _, ok := inv.loopOver(e.off, e.iter); ok {
				e.k = 0
			}
		}
		if e.k != 0 {
			inv.a.events = append(inv.a.events, *e)
		}
		for _, off := range filterAt {
			if int(e.st) >= len(inv.a.states) || inv.a.states[e.st].mode != Union {
				break
			}
			fe := *e
			fe.off, fe.line = off, inv.m.Code.Line(off)
			inv.a.events = append(inv.a.events, fe)
		}
		if inv.scanErr != nil {
			return inv.scanErr
		}
	}
	return nil
}

// charge counts n steps of a loop scan; after the budget ends it remembers the error and says
// stop.
func (inv *invocation) charge(n int) bool {
	if inv.scanErr != nil {
		return false
	}
	*inv.a.steps += n
	if *inv.a.steps > inv.a.opts.MaxSteps {
		inv.scanErr = errBudget{}
		return false
	}
	return true
}

// loopOver finds a back edge whose loop holds off and a hasNext() of the same iterator.
func (inv *invocation) loopOver(off int, iter int32) (int, int, bool) {
	if !inv.charge(len(inv.back)) {
		return 0, 0, false
	}
	for _, be := range inv.back {
		if be[0] > off || off > be[1] {
			continue
		}
		if !inv.charge(len(inv.hasNext[iter])) {
			return 0, 0, false
		}
		for _, h := range inv.hasNext[iter] {
			if be[0] <= h && h <= be[1] {
				return be[0], be[1], true
			}
		}
	}
	return 0, 0, false
}

func (inv *invocation) loopAround(off int) (int, int, bool) {
	if !inv.charge(len(inv.back)) {
		return 0, 0, false
	}
	for _, be := range inv.back {
		if be[0] <= off && off <= be[1] {
			return be[0], be[1], true
		}
	}
	return 0, 0, false
}

// loopFilter finds the first instruction in the loop [t, j] that shows it keeps only some
// elements: a remainder (index % parallelism), a membership test or subtask index, or an element
// put into a map (kept for a later per-subtask pick). The fixtures' convention names that
// instruction as UNION-FILTER's evidence.
func (inv *invocation) loopFilter(t, j int) (int, bool) {
	off, ok := firstIn(inv.elemPuts, t, j)
	if f, fok := inv.rangeFilter(t, j); fok && (!ok || f < off) {
		off, ok = f, true
	}
	return off, ok
}

// rangeFilter finds the first filter instruction in [t, j] with a prefix sum over the
// instructions (a binary search for where the count first rises).
func (inv *invocation) rangeFilter(t, j int) (int, bool) {
	if inv.filterSum == nil {
		inv.filterSum = make([]int32, len(inv.ins)+1)
		for i, in := range inv.ins {
			inv.filterSum[i+1] = inv.filterSum[i]
			if inv.isFilter(&in) {
				inv.filterSum[i+1]++
			}
		}
	}
	lo := sort.Search(len(inv.ins), func(i int) bool { return inv.ins[i].Off >= t })
	hi := sort.Search(len(inv.ins), func(i int) bool { return inv.ins[i].Off > j })
	if inv.filterSum[hi] == inv.filterSum[lo] {
		return 0, false
	}
	k := lo + sort.Search(hi-lo, func(i int) bool { return inv.filterSum[lo+i+1] > inv.filterSum[lo] })
	return inv.ins[k].Off, true
}

func (inv *invocation) isFilter(in *classfile.Instruction) bool {
	switch in.Op {
	case classfile.Irem, classfile.Lrem:
		return true
	case classfile.Invokevirtual, classfile.Invokeinterface, classfile.Invokestatic:
		ref, ok := inv.cls.Pool.Member(in.Index)
		return ok && (filterNames[ref.Name] || strings.Contains(ref.Name, "Subtask")) // isKeyOwnedByCurrentSubtask
	}
	return false
}

// anyIn reports whether a sorted offset list holds one in [t, j].
func anyIn(offs []int, t, j int) bool {
	_, ok := firstIn(offs, t, j)
	return ok
}

// firstIn returns the first offset of a sorted list in [t, j].
func firstIn(offs []int, t, j int) (int, bool) {
	i := sort.SearchInts(offs, t)
	if i < len(offs) && offs[i] <= j {
		return offs[i], true
	}
	return 0, false
}

// checksIn reports whether the loop [t, j] calls Preconditions.checkState/checkArgument: a loop
// that validates the elements (all equal, as Paimon's StateUtils.getSingleValueFromState) does
// not consume them, so a first element taken apart stays FIRST-ONLY.
func (inv *invocation) checksIn(t, j int) bool {
	lo := sort.Search(len(inv.ins), func(i int) bool { return inv.ins[i].Off >= t })
	if !inv.charge(1) {
		return false
	}
	for i := lo; i < len(inv.ins) && inv.ins[i].Off <= j; i++ {
		if inv.ins[i].Op == classfile.Invokestatic {
			if ref, ok := inv.cls.Pool.Member(inv.ins[i].Index); ok && checkNames[ref.Name] {
				return true
			}
		}
		if !inv.charge(1) {
			return false
		}
	}
	return false
}

// copiesIn reports whether the loop [t, j] adds elements to a local list.
func (inv *invocation) copiesIn(t, j int) bool { return anyIn(inv.copyPuts, t, j) }
