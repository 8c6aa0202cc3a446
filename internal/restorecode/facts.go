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
// whose operands execCond kept.
func (inv *invocation) branchFacts(f *frame, in *classfile.Instruction) (taken, fall facts) {
	taken, fall = f.facts, f.facts
	var v value
	var rel relation
	switch {
	case in.Op >= classfile.Ifeq && in.Op <= classfile.Ifle:
		v, rel = inv.cond[0], relation{op: int(in.Op - classfile.Ifeq)}
	case in.Op >= classfile.IfIcmpeq && in.Op <= classfile.IfIcmple:
		a, b := inv.cond[0], inv.cond[1]
		rel = relation{op: int(in.Op - classfile.IfIcmpeq)}
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
	return inv.factsFor(f.facts, v, rel), inv.factsFor(f.facts, v, rel.negate())
}

// factsFor adds what "v rel" tells about the restored elements.
func (inv *invocation) factsFor(f facts, v value, rel relation) facts {
	const inf = 1 << 62
	isTrue := rel.implies(1, inf) && !rel.implies(0, 0)
	isFalse := rel.op == 0 && rel.k == 0 || rel.op == 5 && rel.k == 0
	switch v.k {
	case kRestored:
		if isTrue {
			f = f.with()
			f.restored = true
		}
	case kHasNext, kPresent:
		if isTrue {
			f = f.with(guard{gNonEmpty, v.st})
			if v.id != 0 {
				f = f.with(guard{gChecked, v.id})
			}
		}
	case kIsEmpty:
		if isFalse {
			f = f.with(guard{gNonEmpty, v.st})
		}
	case kSize:
		if rel.implies(1, inf) {
			f = f.with(guard{gNonEmpty, v.st})
		}
		if rel.implies(1, 1) {
			f = f.with(guard{gExact, v.st})
		}
		if rel.implies(0, 1) {
			f = f.with(guard{gAtMost, v.st})
		}
	}
	return f
}
