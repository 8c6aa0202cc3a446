package restorecode

import "github.com/flinkpreflight/preflight/internal/classfile"

// relation is "value op k" for a conditional branch; ops as in the JVM (eq ne lt ge gt le).
type relation struct {
	op int // 0 eq, 1 ne, 2 lt, 3 ge, 4 gt, 5 le
	k  int64
}

func (r relation) negate() relation { return relation{op: r.op ^ 1, k: r.k} }

// swapped turns "k op v" into "v op' k".
func (r relation) swapped() relation {
	return relation{op: [6]int{0, 1, 4, 5, 2, 3}[r.op], k: r.k}
}

// holds reports whether the relation guarantees x for every int satisfying it, given a
// predicate: used to ask "size >= 1", "size == 1", "size <= 1".
func (r relation) implies(lo, hi int64) bool {
	switch r.op {
	case 0:
		return r.k >= lo && r.k <= hi
	case 2: // < k
		return lo <= 0 && r.k-1 <= hi
	case 3: // >= k
		return r.k >= lo && hi == 1<<62
	case 4: // > k
		return r.k+1 >= lo && hi == 1<<62
	case 5: // <= k
		return lo <= 0 && r.k <= hi
	case 1: // != k
		return r.k == 0 && lo <= 1 && hi == 1<<62
	}
	return false
}

// branchFacts returns the facts on the taken and the fall-through edge of a conditional branch
// whose operands execCond kept, and records a check that throws when the count is wrong.
func (inv *invocation) branchFacts(f *frame, in *classfile.Instruction) (taken, fall facts) {
	taken, fall = f.facts, f.facts
	var v value
	var rel relation
	switch {
	case in.Op >= classfile.Ifeq && in.Op <= classfile.Ifle:
		v, rel = inv.cond[0], relation{op: int(in.Op - classfile.Ifeq)}
		if v.k == kTask {
			return inv.taskFacts(f, in, v, none)
		}
	case in.Op >= classfile.IfIcmpeq && in.Op <= classfile.IfIcmple:
		a, b := inv.cond[0], inv.cond[1]
		rel = relation{op: int(in.Op - classfile.IfIcmpeq)}
		if a.k == kTask || b.k == kTask {
			return inv.taskFacts(f, in, a, b)
		}
		switch {
		case a.k == kSize && b.k == kInt:
			v, rel.k = a, b.n
		case b.k == kSize && a.k == kInt:
			v, rel = b, relation{op: rel.op, k: a.n}.swapped()
		default:
			return taken, fall
		}
	default:
		return taken, fall
	}
	inv.enforced(f, in, v, rel)
	taken, fall = inv.factsFor(f.facts, v, rel), inv.factsFor(f.facts, v, rel.negate())
	if v.st >= 0 && v.k != kRestored {
		taken.pend = pending{set: true, st: v.st, c1: countOf(v, rel), c0: countOf(v, rel.negate())}
		fall.pend = pending{set: true, st: v.st, c1: taken.pend.c0, c0: taken.pend.c1}
	}
	return taken, fall
}

// taskFacts handles a comparison of the subtask index or the parallelism with a value read from
// the elements (the parallelism they were written at, the subtask that owned them). It marks the
// two edges, so that a count check on one of them is known to depend on the assignment across a
// rescale (TransactionOwnership's `if (parallelism >= owned) checkState(size == 1)`: only when
// not scaling down); and when the comparison itself is decisive (`checkState(subtask <
// element.maxParallelism)`) it assumes which subtask receives which element: ORDER-DEPENDENT. A
// test against anything else (`subtask == 0`) says nothing about the elements.
func (inv *invocation) taskFacts(f *frame, in *classfile.Instruction, a, b value) (taken, fall facts) {
	elem := a
	if elem.k != kElement {
		elem = b
	}
	if elem.k != kElement || elem.st < 0 {
		return f.facts, f.facts
	}
	id := int32(in.Off) * 2
	taken, fall = f.facts.with(guard{gTaskEdge, id}), f.facts.with(guard{gTaskEdge, id + 1})
	tb, nb := inv.blockAt[inv.at[in.Target]], inv.blockAt[inv.at[in.Off]]+1
	if inv.throws(tb) != inv.throws(nb) {
		inv.record(evLast, elem.st, f, in)
	}
	taken.pend = pending{set: true, st: elem.st, c1: cOrder, c0: cOrder}
	fall.pend = taken.pend
	return taken, fall
}

// materialise turns iconst_0/iconst_1 right after a count test into the boolean it stands for.
func (inv *invocation) materialise(f *frame, in *classfile.Instruction, p pending) (bool, error) {
	if !p.set || in.Op < classfile.IconstM1+1 || in.Op > classfile.IconstM1+2 {
		return false, nil
	}
	c := p.c1
	if in.Const == 0 {
		c = p.c0
	}
	return true, inv.push(f, in, value{k: kCheck, st: p.st, n: int64(c)})
}

// count is what a relation on a boolean or a size says about the number of elements.
type count uint8

const (
	cNothing  count = iota
	cNonEmpty       // at least one
	cExact          // exactly one
	cAtMost         // at most one
	cOrder          // a relation between an element's value and the subtask index or parallelism
)

const inf = 1 << 62

// countOf says what "v rel" tells about the elements.
func countOf(v value, rel relation) count {
	isTrue := rel.implies(1, inf)
	isFalse := rel.op == 0 && rel.k == 0 || rel.op == 5 && rel.k == 0
	switch {
	case (v.k == kHasNext || v.k == kPresent) && isTrue, v.k == kIsEmpty && isFalse:
		return cNonEmpty
	case v.k != kSize:
		return cNothing
	case rel.implies(1, 1):
		return cExact
	case rel.implies(1, inf):
		return cNonEmpty
	case rel.implies(0, 1):
		return cAtMost
	}
	return cNothing
}

// factsFor adds what "v rel" tells about the restored elements.
func (inv *invocation) factsFor(f facts, v value, rel relation) facts {
	if v.k == kRestored && rel.implies(1, inf) {
		f = f.with()
		f.restored = true
		return f
	}
	if c := countOf(v, rel); c == cNonEmpty || c == cExact {
		f = f.with(guard{gNonEmpty, v.st})
		if v.k == kHasNext && v.id != 0 {
			f = f.with(guard{gChecked, v.id})
		}
	}
	return f
}

// enforcedEvents: a check whose failing edge throws requires the count it checks.
var enforcedEvents = map[count]evKind{cExact: evOnly, cAtMost: evOnlyOr, cNonEmpty: evFirst, cOrder: evLast}

// requiredEvent is the event of a check that throws unless count c holds, given the facts at the
// check: where the elements are known not to be empty, "exactly one" can only fail on several
// (AT-MOST-ONE); on one edge of a comparison of the subtask index or parallelism with an
// element's value any count check is an assumption about how the elements are assigned to
// subtasks (ORDER-DEPENDENT).
func requiredEvent(c count, fs facts, st int32) (evKind, bool) {
	k, ok := enforcedEvents[c]
	switch {
	case !ok:
	case fs.underTask():
		k = evLast
	case c == cExact && fs.has(gNonEmpty, st):
		k = evOnlyOr
	}
	return k, ok
}

// enforced records a count check whose other edge throws at once (`if (size() != 1) throw`,
// `if (!it.hasNext()) throw`): the restore fails unless the count holds.
func (inv *invocation) enforced(f *frame, in *classfile.Instruction, v value, rel relation) {
	if v.st < 0 {
		return
	}
	tb := inv.blockAt[inv.at[in.Target]]
	nb := inv.blockAt[inv.at[in.Off]] + 1
	var survivor relation
	switch {
	case inv.throws(nb) && !inv.throws(tb):
		survivor = rel
	case inv.throws(tb) && !inv.throws(nb):
		survivor = rel.negate()
	default:
		return
	}
	if k, ok := requiredEvent(countOf(v, survivor), f.facts, v.st); ok {
		inv.record(k, v.st, f, in)
	}
}

// throws reports whether block b is a short block ending in athrow (`throw new X(...)`).
func (inv *invocation) throws(b int32) bool {
	if int(b) >= len(inv.blocks) {
		return false
	}
	blk := inv.blocks[b]
	return blk.end-blk.start <= 16 && inv.ins[blk.end-1].Op == classfile.Athrow
}
