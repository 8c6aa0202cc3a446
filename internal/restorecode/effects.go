package restorecode

import "github.com/flinkpreflight/preflight/internal/classfile"

// apply performs a modelled call's effect on subj, the tracked value it works on.
func (inv *invocation) apply(f *frame, c *call, eff effect, subj value) value {
	st, in := subj.st, c.in
	nonEmpty := f.facts.has(gNonEmpty, st)
	switch eff {
	case eNone:
		if subj.k == kCopy && c.ref.Name == "add" {
			if argAt(c.args, 0).k == kElement {
				inv.copyPuts = append(inv.copyPuts, in.Off) // the local list's later iterations
			}
			f.facts = f.facts.with(guard{gNonEmpty, st}) // `if (copy.isEmpty()) copy.add(default)`
		}
		return none
	case eIterable:
		inv.record(evRead, st, f, in)
		return value{k: kIterable, st: st}
	case eIterator:
		return value{k: kIterator, st: st, id: inv.newID(in.Off), n: subj.n}
	case eHasNext:
		return inv.hasNextCall(f, in, subj)
	case eNext:
		e := inv.record(evFirst, st, f, in)
		e.guarded, e.iter, e.filter = f.facts.has(gChecked, subj.id) || nonEmpty, subj.id, subj.n == 1
		f.facts = f.facts.with(guard{gNexted, subj.id})
		return value{k: kElement, st: st}
	case eGetIndex:
		return inv.indexCall(f, c, subj)
	case eSize:
		if subj.k == kCopy && subj.s == uncounted {
			return none // a set's size is the number of distinct values, not of elements
		}
		return value{k: kSize, st: st}
	case eIsEmpty:
		return value{k: kIsEmpty, st: st}
	case eNonEmpty, ePresent:
		return value{k: kPresent, st: st}
	case eStream:
		return value{k: kStream, st: st, n: subj.n}
	case eFilter:
		return value{k: subj.k, st: st, n: 1, id: subj.id}
	case eSame:
		k := subj.k
		if k == kOptional || k == kState {
			k = kIterable
		}
		return value{k: k, st: st, n: subj.n, id: subj.id}
	case eFindFirst:
		return value{k: kOptional, st: st}
	case eCopy:
		return value{k: kCopy, st: st, n: subj.n}
	case eDedup:
		return value{k: kCopy, st: st, n: subj.n, s: uncounted}
	case eAll, eKeyed:
		e := inv.record(evAll, st, f, in)
		e.filter = subj.n == 1 || inv.lambdaFilters(c.args)
		if list, ok := inv.addsTo(c); ok { // forEach(list::add): a copy
			e.copy = true
			f.replace(list, value{k: kCopy, st: st, n: subj.n, s: list.s})
		}
		return none
	}
	inv.recordTake(f, in, eff, st, nonEmpty)
	return value{k: kElement, st: st}
}

// takeEvents maps the effects that take elements to their event.
var takeEvents = map[effect]evKind{
	eOptGet: evFirst, eFirst: evFirst, eOptSafe: evFirstOr, eFirstOr: evFirstOr,
	eOnly: evOnly, eOnlyOr: evOnlyOr, eLast: evLast,
}

func (inv *invocation) recordTake(f *frame, in *classfile.Instruction, eff effect, st int32, nonEmpty bool) {
	k, ok := takeEvents[eff]
	if !ok {
		return
	}
	if k == evOnly && nonEmpty {
		k = evOnlyOr // the elements are known not to be empty: only several fail
	}
	inv.record(k, st, f, in).guarded = nonEmpty
}

func (inv *invocation) hasNextCall(f *frame, in *classfile.Instruction, it value) value {
	if it.k == kIterator {
		inv.hasNext[it.id] = append(inv.hasNext[it.id], in.Off)
		if f.facts.has(gNexted, it.id) {
			inv.record(evSecond, it.st, f, in).iter = it.id
		}
	}
	return value{k: kHasNext, st: it.st, id: it.id}
}

// indexCall is get(i) on the elements: get(0) takes the first, get(i) in a loop reads all.
func (inv *invocation) indexCall(f *frame, c *call, subj value) value {
	idx := argAt(c.args, 0)
	if subj.k != kIterable && subj.k != kCopy && len(c.args) > 1 {
		idx = c.args[1] // Iterables.get(it, i), elementAt(it, i)
	}
	switch {
	case idx.k == kInt:
		e := inv.record(evFirst, subj.st, f, c.in)
		e.guarded, e.index = idx.n == 0 && f.facts.has(gNonEmpty, subj.st), true
	default:
		inv.record(evIndex, subj.st, f, c.in).filter = subj.n == 1
	}
	return value{k: kElement, st: subj.st}
}

// newID names an iterator by its creation site in this invocation.
func (inv *invocation) newID(off int) int32 {
	return (inv.serial%30000+1)<<16 | int32(off&0xFFFF)
}

// lambdaFilters reports whether a lambda passed to forEach keeps only some elements.
func (inv *invocation) lambdaFilters(args []value) bool {
	for _, a := range args {
		if a.k != kLambda || int(a.id) >= len(inv.a.lambdas) {
			continue
		}
		h := inv.a.lambdas[a.id].impl
		cls, m := inv.a.findMethod(h.Ref.Class, h.Ref.Name, h.Ref.Desc)
		if m == nil || m.Code == nil {
			continue
		}
		if !inv.charge(len(m.Code.Bytes)) {
			return false
		}
		body, err := newInvocation(inv.a, cls, m, inv.depth+1, 0)
		if err != nil {
			continue
		}
		for _, in := range body.ins {
			if in.Op == classfile.Invokeinterface || in.Op == classfile.Invokevirtual {
				if ref, ok := cls.Pool.Member(in.Index); ok && mapPutNames[ref.Name] {
					return true
				}
			}
		}
		if len(body.ins) > 0 && filtered(body.rangeFilter(0, body.ins[len(body.ins)-1].Off)) {
			return true
		}
	}
	return false
}

func filtered(_ int, ok bool) bool { return ok }

// addsTo reports a forEach whose argument is a method reference to add on a new local list
// (values::add), and returns that list.
func (inv *invocation) addsTo(c *call) (value, bool) {
	lam := argAt(c.args, 0)
	if c.ref.Name != "forEach" || lam.k != kLambda || int(lam.id) >= len(inv.a.lambdas) {
		return none, false
	}
	l := inv.a.lambdas[lam.id]
	if l.impl.Ref.Name != "add" || len(l.captured) != 1 || l.captured[0].k != kList {
		return none, false
	}
	return l.captured[0], true
}
