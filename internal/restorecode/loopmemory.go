package restorecode

import (
	"sort"

	"github.com/flinkpreflight/preflight/internal/classfile"
)

// A loop over the restored elements can remember in a variable (a field of the analysed object
// or a local) that an earlier iteration saw an element: the loop tests the variable for null
// before it sets it, and the edge where it is set already throws (`checkState(id == null); id =
// e`, Iceberg's EqualityConvertPlanner; `if (offset == null) offset = …; else throw`, flink-cdc's
// DebeziumSourceFunction). It reads every element, but a second one throws: AT-MOST-ONE. A null
// test of the element itself (the for-each variable is stored before the test) is not one. A
// loop that only overwrites a field with each element (the last one wins) stays MERGE-ALL, as
// the catalog counts TwoPhaseCommitSinkFunction's loop.

// loopMemory appends the event of the loop [t, j] over a state's elements that remembers an
// earlier element.
func (inv *invocation) loopMemory(e *event, t, j int) {
	if off, ok := inv.seenBefore(t, j); ok {
		me := *e
		me.k, me.off, me.line, me.copy, me.filter = evOnlyOr, off, inv.m.Code.Line(off), false, false
		inv.a.events = append(inv.a.events, me)
	}
}

// seenBefore finds in [t, j] a null test of a variable that the loop sets after the test and
// not before it, whose "already set" edge is decisive.
func (inv *invocation) seenBefore(t, j int) (int, bool) {
	lo, hi := inv.insRange(t, j)
	if !inv.charge(hi - lo) {
		return 0, false
	}
	for i := lo + 1; i < hi; i++ {
		in := &inv.ins[i]
		if in.Op != classfile.Ifnull && in.Op != classfile.Ifnonnull {
			continue
		}
		load := &inv.ins[i-1]
		if !isVarLoad(load) {
			continue
		}
		if !inv.charge(hi - lo) { // storedIn scans the loop again: charged per null test
			return 0, false
		}
		if !inv.storedIn(load, lo, i-1, hi) || !inv.setEdgeDecisive(i, hi) {
			continue
		}
		return in.Off, true
	}
	return 0, false
}

// insRange returns the instruction indexes [lo, hi) of the offsets [t, j] (binary searches).
func (inv *invocation) insRange(t, j int) (int, int) {
	lo := sort.Search(len(inv.ins), func(i int) bool { return inv.ins[i].Off >= t })
	hi := sort.Search(len(inv.ins), func(i int) bool { return inv.ins[i].Off > j })
	return lo, hi
}

func isVarLoad(in *classfile.Instruction) bool {
	return in.Op == classfile.Getfield || in.Op == classfile.Aload || in.Op >= classfile.Aload0 && in.Op <= classfile.Aload0+3
}

func isVarStore(in *classfile.Instruction) bool {
	return in.Op == classfile.Astore || in.Op >= classfile.Astore0 && in.Op <= classfile.Astore0+3
}

// storedIn reports whether the variable load reads is stored after it in (at, hi) and not in
// [lo, at).
func (inv *invocation) storedIn(load *classfile.Instruction, lo, at, hi int) bool {
	same := func(in *classfile.Instruction) bool {
		if load.Op == classfile.Getfield {
			return in.Op == classfile.Putfield && in.Index == load.Index
		}
		return isVarStore(in) && in.Index == load.Index
	}
	for i := lo; i < at; i++ {
		if same(&inv.ins[i]) {
			return false
		}
	}
	for i := at + 1; i < hi; i++ {
		if same(&inv.ins[i]) {
			return true
		}
	}
	return false
}

// setEdgeDecisive reports whether the null test at instruction i fails the restore when the
// variable is already set: that edge is a short block ending in athrow, or the test is turned
// into a boolean (iconst) that the next static call, a Preconditions check, requires.
func (inv *invocation) setEdgeDecisive(i, hi int) bool {
	in := &inv.ins[i]
	setBlock := inv.blockAt[inv.at[in.Target]] // ifnonnull: taken when set
	if in.Op == classfile.Ifnull {
		setBlock = inv.blockAt[i] + 1 // ifnull: falls through when set
	}
	if inv.throws(setBlock) {
		return true
	}
	if i+1 >= hi || inv.ins[i+1].Op < classfile.IconstM1+1 || inv.ins[i+1].Op > classfile.IconstM1+2 {
		return false
	}
	for k := i + 2; k < hi && k < i+12; k++ {
		if inv.ins[k].Op == classfile.Invokestatic {
			ref, ok := inv.cls.Pool.Member(inv.ins[k].Index)
			return ok && checkNames[ref.Name]
		}
	}
	return false
}
