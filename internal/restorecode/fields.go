package restorecode

import (
	"strconv"
	"strings"

	"github.com/flinkpreflight/preflight/internal/classfile"
)

func execField(inv *invocation, f *frame, in *classfile.Instruction) error {
	ref, ok := inv.cls.Pool.Member(in.Index)
	if !ok || ref.Desc == "" || ref.Desc[0] == '(' {
		return inv.errAt(in, "field operand is not a field reference")
	}
	size := classfile.TypeSlots(ref.Desc)
	switch in.Op {
	case classfile.Getstatic:
		return inv.pushTyped(f, in, ref.Desc, inv.a.staticField(ref.Class, ref.Name))
	case classfile.Getfield:
		vs, err := inv.pop(f, in, 1)
		if err != nil {
			return err
		}
		v := none
		if vs[0].k == kThis {
			v = inv.a.instanceField(ref.Name)
		} else if vs[0].k == kNew {
			v = inv.a.fields[objectField(vs[0], ref.Name)]
		} else if vs[0].k == kElement {
			v = value{k: kElement, st: vs[0].st} // a field of an element (Tuple2.f0)
		}
		return inv.pushTyped(f, in, ref.Desc, v)
	}
	vs, err := inv.pop(f, in, size)
	if err != nil {
		return err
	}
	v := vs[0]
	if in.Op == classfile.Putstatic {
		inv.storeField(f, in, ref.Class+"."+ref.Name, v)
		return nil
	}
	obj, err := inv.pop(f, in, 1)
	if err != nil {
		return err
	}
	if obj[0].k == kThis {
		inv.storeField(f, in, ref.Name, v)
	} else if obj[0].k == kNew && inv.a.collect == nil {
		inv.storeField(f, in, objectField(obj[0], ref.Name), v) // an object whose constructor is followed
	} else if v.k.restored() {
		inv.record(evEscape, v.st, f, in)
	}
	return nil
}

// storeField records a store into a field of the analysed object ("name") or a static field
// ("owner.name").
func (inv *invocation) storeField(f *frame, in *classfile.Instruction, key string, v value) {
	a := inv.a
	if a.collect != nil {
		if old, ok := a.collect[key]; ok && old != v {
			v = conflict
		}
		a.collect[key] = v
		return
	}
	switch {
	case v.k == kCopy:
		inv.record(evAll, v.st, f, in).filter = v.n == 1 // every element kept for later
	case v.k.restored():
		inv.record(evEscape, v.st, f, in) // read elsewhere: not followed
	}
	a.fields[key] = v
}

func (a *analysis) instanceField(name string) value {
	if v, ok := a.fields[name]; ok {
		return v
	}
	a.missed = true
	return a.classConsts(a.root.Name, true)[name]
}

func (a *analysis) staticField(owner, name string) value {
	if v, ok := a.fields[owner+"."+name]; ok {
		return v
	}
	return a.classConsts(owner, false)[name]
}

// classConsts returns the fields of owner that hold one constant: static ones from ConstantValue
// attributes and <clinit>, or (instance) the fields every constructor of the analysed class sets
// to the same constant (constructors chain into superclasses in the set).
func (a *analysis) classConsts(owner string, instance bool) map[string]value {
	key := owner
	if instance {
		key = "this:" + owner
	}
	if m, ok := a.consts[key]; ok {
		return m
	}
	m := map[string]value{}
	a.consts[key] = m
	c := a.set.load(owner)
	if c == nil {
		return m
	}
	if !instance {
		for _, fl := range c.Fields {
			if v, ok := poolConst(c.Pool, fl.ConstantValue); ok {
				m[fl.Name] = v
			}
		}
	}
	for i := range c.Methods {
		mt := &c.Methods[i]
		if (instance && mt.Name == "<init>") || (!instance && mt.Name == "<clinit>") {
			a.collectInto(m, c, mt, instance, owner)
		}
	}
	return m
}

// collectInto interprets a constructor or static initializer and merges the constant stores.
func (a *analysis) collectInto(m map[string]value, c *classfile.Class, mt *classfile.Method, instance bool, owner string) {
	sub := newAnalysis(a.set, a.root, a.jar, a.opts, a.flag, a.steps)
	sub.consts, sub.collect = a.consts, map[string]value{}
	var args []value
	if instance {
		args = []value{{k: kThis, st: -1}}
	}
	if _, err := sub.run(c, mt, args, facts{}, 1); err != nil {
		return
	}
	for k, v := range sub.collect {
		name, static := strings.CutPrefix(k, owner+".")
		if static == instance || (instance && strings.Contains(k, ".")) {
			continue
		}
		if !constLike(v) {
			v = conflict
		}
		if old, ok := m[name]; ok && old != v {
			v = conflict
		}
		m[name] = v
	}
	for k, v := range m {
		if v == conflict {
			m[k] = none
		}
	}
}

func constLike(v value) bool {
	return v.k == kConst || v.k == kInt || (v.k == kDescriptor && v.n == 1)
}

func poolConst(p classfile.Pool, i uint16) (value, bool) {
	if i == 0 || int(i) >= len(p) {
		return none, false
	}
	switch c := p[i]; c.Tag {
	case classfile.TagString:
		return value{k: kConst, st: -1, s: p[c.A].Str}, true
	case classfile.TagInteger, classfile.TagLong:
		return value{k: kInt, st: -1, n: c.Int}, true
	}
	return none, false
}

// objectField keys a field of an object created on the restore path.
func objectField(obj value, name string) string {
	return "new@" + obj.s + "@" + strconv.Itoa(int(obj.id)) + "." + name
}
