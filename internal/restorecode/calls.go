package restorecode

import (
	"strconv"
	"strings"

	"github.com/flinkpreflight/preflight/internal/classfile"
)

// call is one invoke instruction with its popped operands.
type call struct {
	in     *classfile.Instruction
	ref    classfile.MemberRef
	ret    string
	recv   value // none for static calls
	args   []value
	static bool
}

func execInvoke(inv *invocation, f *frame, in *classfile.Instruction) error {
	ref, ok := inv.cls.Pool.Member(in.Index)
	if !ok || ref.Desc == "" || ref.Desc[0] != '(' {
		return inv.errAt(in, "invoke operand is not a method reference")
	}
	params, ret, ok := classfile.ParseDescriptor(ref.Desc)
	if !ok {
		return inv.errAt(in, "malformed method descriptor "+ref.Desc)
	}
	c := &call{in: in, ref: ref, ret: ret, static: in.Op == classfile.Invokestatic, recv: none}
	args, err := inv.popArgs(f, in, params)
	if err != nil {
		return err
	}
	c.args = args
	if !c.static {
		vs, err := inv.pop(f, in, 1)
		if err != nil {
			return err
		}
		c.recv = vs[0]
	}
	v, err := inv.call(f, c)
	if err != nil {
		return err
	}
	return inv.pushTyped(f, in, ret, v)
}

// popArgs pops the arguments of a descriptor's parameters, one value per parameter.
func (inv *invocation) popArgs(f *frame, in *classfile.Instruction, params []string) ([]value, error) {
	args := make([]value, len(params))
	for i := len(params) - 1; i >= 0; i-- {
		vs, err := inv.pop(f, in, classfile.TypeSlots(params[i]))
		if err != nil {
			return nil, err
		}
		args[i] = vs[0]
	}
	return args, nil
}

func (inv *invocation) call(f *frame, c *call) (value, error) {
	name := c.ref.Name
	if c.ref.Class == inv.a.root.Name && inv.a.collect == nil {
		if inv.a.called == nil {
			inv.a.called = map[string]bool{}
		}
		inv.a.called[name+" "+c.ref.Desc] = true
	}
	if mode, ok := registration(c.ref); ok && !c.static && len(c.args) == 1 && strings.HasSuffix(c.ret, "State;") {
		return inv.registerAt(f, c, mode), nil
	}
	if name == "isRestored" && c.ref.Desc == "()Z" {
		return value{k: kRestored, st: -1}, nil
	}
	if taskNames[name] && c.ref.Desc == "()I" {
		return value{k: kTask, st: -1}, nil
	}
	if v, ok := stateNames(c); ok {
		return v, nil
	}
	if checkNames[name] && len(c.args) > 0 && c.args[0].k == kCheck {
		chk := c.args[0]
		if k, ok := requiredEvent(count(chk.n), f.facts, chk.st); ok {
			inv.record(k, chk.st, f, c.in)
		}
		if cnt := count(chk.n); cnt == cExact || cnt == cNonEmpty {
			f.facts = f.facts.with(guard{gNonEmpty, chk.st}) // past the check, an element exists
		}
		return none, nil
	}
	if passThrough[name] && len(c.args) > 0 && c.static {
		return c.args[0], nil
	}
	if isLogger(c.ref.Class) {
		return none, nil // a logger formats its arguments (toString), whatever their number
	}
	if name == "<init>" && c.recv.k == kNew && c.ref.Class == c.recv.s {
		return none, inv.construct(f, c)
	}
	if inv.copyAll(f, c) {
		return none, nil
	}
	if v, done, err := inv.throughLambda(f, c); done {
		return v, err
	}
	if v, done := inv.onReceiver(f, c); done {
		return v, nil
	}
	for _, a := range c.args {
		if a.k.restored() {
			if eff, ok := lookupStatic(c.ref.Class, name, len(c.args)); ok {
				return inv.apply(f, c, eff, a), nil
			}
		}
	}
	if v, done := inv.onArguments(f, c); done {
		return v, nil
	}
	if bodies, complete := inv.a.enumBodies(c); !complete {
		inv.escape(f, c) // a constant's body is not among the classes: what it does is unknown
		return none, nil
	} else if len(bodies) > 0 && inv.depth < inv.a.opts.MaxDepth {
		return inv.runEach(f, c, bodies)
	}
	if cls, m := inv.target(c); m != nil && m.Code != nil && inv.depth < inv.a.opts.MaxDepth {
		args := c.args
		if !c.static {
			args = append([]value{inv.receiver(c, cls)}, c.args...)
		}
		return inv.a.run(cls, m, args, f.facts, inv.depth+1)
	}
	if impls := inv.a.implementations(c); len(impls) > 0 && inv.depth < inv.a.opts.MaxDepth {
		// An interface or abstract method: run each implementation the analysed class names
		// (SinkWriterOperator's writerStateHandler is a Stateful… or Stateless…StateHandler).
		return inv.runEach(f, c, impls)
	}
	inv.escape(f, c)
	return none, nil
}

// runEach runs every method a virtual call may reach and joins their results; the events of all
// of them label the state, so the worst wins.
func (inv *invocation) runEach(f *frame, c *call, impls []impl) (value, error) {
	ret := none
	for _, im := range impls {
		v, err := inv.a.run(im.cls, im.m, append([]value{inv.receiver(c, im.cls)}, c.args...), f.facts, inv.depth+1)
		if err != nil {
			return none, err
		}
		ret = join(ret, v)
	}
	return ret, nil
}

// maxEnumBodies bounds the constant bodies followed for one call on an enum.
const maxEnumBodies = 64

// enumBodies returns the methods a virtual call on an enum type may run: the constant is chosen
// at run time, and the only classes that can override the enum's methods are its constants'
// bodies (an enum is implicitly final unless a constant has a body, and only its own constants
// may extend it), compiled as anonymous inner classes of the enum whose superclass is the enum
// and listed in its InnerClasses attribute. The result holds the enum's own method when it is
// concrete and every body that declares the method; nil when the owner is not an enum in the
// classes, the call is not virtual, or none of the bodies declares it (then the call is handled
// as before: the enum's concrete method, or an escape for an abstract one). complete is false
// when an anonymous class the enum lists is not among the classes (or has no readable class
// file): a constant's body may be missing, and the call is an escape.
func (a *analysis) enumBodies(c *call) (bodies []impl, complete bool) {
	if c.static || c.in.Op == classfile.Invokespecial || c.recv.k == kThis {
		return nil, true
	}
	e := a.set.load(c.ref.Class)
	if e == nil || e.Access&classfile.AccEnum == 0 || e.Super != "java/lang/Enum" {
		return nil, true
	}
	var out []impl
	if m := e.Method(c.ref.Name, c.ref.Desc); m != nil && m.Code != nil && m.Access&classfile.AccAbstract == 0 {
		out = append(out, impl{e, m})
	}
	seen := 0
	for _, ic := range e.InnerClasses {
		if ic.Inner == e.Name || ic.Outer != "" || ic.Name != "" {
			continue // a constant's body is anonymous: neither an outer class nor a simple name
		}
		b := a.set.load(ic.Inner)
		if b == nil || seen == maxEnumBodies {
			return nil, false
		}
		if b.Super != e.Name {
			continue // another anonymous class of the enum's code
		}
		seen++
		if m := b.Method(c.ref.Name, c.ref.Desc); m != nil && m.Code != nil && m.Access&classfile.AccAbstract == 0 {
			out = append(out, impl{b, m})
		}
	}
	if len(out) == 1 && out[0].cls == e {
		return nil, true // no body overrides it: the enum's method, as target resolves it
	}
	return out, true
}

// stateNames models OperatorStateStore.getRegisteredStateNames() (and the broadcast one), a
// Set<String>, and its contains(): asked for a state descriptor instead of its name, the answer
// is false (a descriptor never equals a String), so the code behind that test never runs
// (FlinkKafkaProducer's migration of next-transactional-id-hint).
func stateNames(c *call) (value, bool) {
	switch {
	case (c.ref.Name == "getRegisteredStateNames" || c.ref.Name == "getRegisteredBroadcastStateNames") &&
		c.ref.Desc == "()Ljava/util/Set;":
		return value{k: kNames, st: -1}, true
	case c.recv.k == kNames && c.ref.Name == "contains" && argAt(c.args, 0).k == kDescriptor:
		return value{k: kFalse, st: -1}, true
	}
	return none, false
}

// receiver is the object a followed instance call runs on: the tracked receiver, or for one the
// analysis does not know (a helper held in a field) a fresh object, so that the helper's own
// fields (a state handle it keeps for later) are tracked under it.
func (inv *invocation) receiver(c *call, cls *classfile.Class) value {
	if c.recv.k != kNone || c.in.Op == classfile.Invokespecial {
		return c.recv
	}
	return value{k: kNew, st: -1, s: cls.Name, id: -inv.a.serial - 1}
}

type impl struct {
	cls *classfile.Class
	m   *classfile.Method
}

// maxImpls bounds the implementations followed for one interface call.
const maxImpls = 4

// implementations finds, among the classes the analysed class's constant pool names, those in
// the classes that are subtypes of an interface or abstract call's owner and implement it.
func (a *analysis) implementations(c *call) []impl {
	if c.static || c.in.Op == classfile.Invokespecial || c.recv.k == kThis || a.set.load(c.ref.Class) == nil {
		return nil // the analysed object's own abstract hooks are its subclasses' business
	}
	var out []impl
	seen := map[string]bool{}
	try := func(name string) {
		if name == "" || name == c.ref.Class || seen[name] || len(out) == maxImpls || !a.subtype(name, c.ref.Class) {
			return
		}
		seen[name] = true
		if cls, m := a.findMethod(name, c.ref.Name, c.ref.Desc); m != nil && m.Code != nil && m.Access&classfile.AccAbstract == 0 {
			out = append(out, impl{cls, m})
		}
	}
	for i, k := range a.root.Pool {
		if k.Tag == classfile.TagClass {
			try(a.root.Pool.ClassName(uint16(i)))
		}
	}
	if len(out) == 0 {
		// A helper injected from outside (Paimon's CommittableStateManager): the candidates
		// that implement it, since it registers or restores state itself.
		for _, cand := range a.set.candidates {
			try(cand.Name)
		}
	}
	if len(out) == 0 && carriesRestored(c) {
		// Nothing names an implementation: every one the inputs hold (the closed world of
		// a job jar, which bundles its connectors), the worst label winning.
		out = a.closedWorld(c)
	}
	return out
}

// carriesRestored reports whether a call's receiver or arguments hold the restored elements or
// a state handle: only then does it matter which implementation runs.
func carriesRestored(c *call) bool {
	for _, v := range append([]value{c.recv}, c.args...) {
		if v.k.restored() || v.k == kState {
			return true
		}
	}
	return false
}

// subtype reports whether class name extends or implements super within the classes (a few
// levels deep).
func (a *analysis) subtype(name, super string) bool {
	for i := 0; i < 8 && name != ""; i++ {
		c := a.set.load(name)
		if c == nil {
			return false
		}
		for _, in := range c.Interfaces {
			if in == super {
				return true
			}
		}
		if c.Super == super {
			return true
		}
		name = c.Super
	}
	return false
}

// onReceiver handles calls on a tracked receiver.
func (inv *invocation) onReceiver(f *frame, c *call) (value, bool) {
	r := c.recv
	switch r.k {
	case kElement:
		return value{k: kElement, st: r.st}, true
	case kBuilder:
		return builderCall(c), true
	case kConst:
		if c.ref.Name == "toString" || c.ref.Name == "intern" {
			return r, true
		}
		if c.ref.Name == "concat" && c.args[0].k == kConst {
			return value{k: kConst, st: -1, s: r.s + c.args[0].s}, true
		}
		return none, true
	}
	table := receiverMethods(r.k)
	if table == nil {
		return none, false
	}
	eff, ok := table[c.ref.Name]
	if !ok {
		if r.k.restored() {
			inv.record(evEscape, r.st, f, c.in)
		}
		return none, true
	}
	if r.k == kState && c.ref.Name == "get" && len(c.args) == 1 {
		eff = eKeyed
	}
	return inv.apply(f, c, eff, r), true
}

func builderCall(c *call) value {
	r := c.recv
	switch c.ref.Name {
	case "append":
		if s, ok := constString(c.args[0]); ok && len(c.args) == 1 {
			return value{k: kBuilder, st: -1, s: r.s + s}
		}
	case "toString":
		return value{k: kConst, st: -1, s: r.s}
	}
	return none
}

func constString(v value) (string, bool) {
	switch v.k {
	case kConst:
		return v.s, true
	case kInt:
		return strconv.FormatInt(v.n, 10), true
	}
	return "", false
}

// copyAll handles addAll of the elements into a new local list (list.addAll(copy),
// Iterables.addAll(list, it), Iterators.addAll): the list becomes a copy of them.
func (inv *invocation) copyAll(f *frame, c *call) bool {
	if c.ref.Name != "addAll" {
		return false
	}
	dst, src := c.recv, argAt(c.args, 0)
	if c.static {
		dst, src = argAt(c.args, 0), argAt(c.args, 1)
	}
	if dst.k != kList || !src.k.restored() || src.k == kOptional {
		return false
	}
	e := inv.record(evAll, src.st, f, c.in)
	e.filter, e.copy = src.n == 1, true
	f.replace(dst, value{k: kCopy, st: src.st, n: src.n, s: dst.s})
	return true
}

// onArguments handles calls on an untracked receiver that take the elements or one element.
func (inv *invocation) onArguments(f *frame, c *call) (value, bool) {
	name := c.ref.Name
	if c.recv.k == kList && name == "add" && argAt(c.args, 0).k == kElement {
		f.replace(c.recv, value{k: kCopy, st: c.args[0].st, s: c.recv.s})
		inv.copyPuts = append(inv.copyPuts, c.in.Off)
		return none, true
	}
	for _, a := range c.args {
		switch {
		case (name == "addAll" || name == "putAll") && a.k.restored():
			inv.record(evAll, a.st, f, c.in).filter = a.n == 1
			return none, true
		case a.k == kElement && mapPutNames[name]:
			inv.elemPuts = append(inv.elemPuts, c.in.Off)
		case a.k == kElement && (strings.HasPrefix(c.ref.Class, "java/") || strings.HasPrefix(c.ref.Class, "scala/")):
			return none, true // an element handed to the JDK: a value, not the collection
		}
	}
	return none, false
}

// target resolves the method a call runs when it is inside the classes and may be followed:
// static and private methods, constructors and super calls, methods called on the analysed
// object (resolved from the class being analysed), final methods.
func (inv *invocation) target(c *call) (*classfile.Class, *classfile.Method) {
	a := inv.a
	switch {
	case c.static || c.in.Op == classfile.Invokespecial:
		return a.findMethod(c.ref.Class, c.ref.Name, c.ref.Desc)
	case c.recv.k == kThis:
		return a.findMethod(a.root.Name, c.ref.Name, c.ref.Desc)
	}
	// Otherwise the method the declared type has in the classes: a subclass may override it,
	// but restore code hands its state to helpers it owns (Buckets, FileWriter, a trigger).
	cls, m := a.findMethod(c.ref.Class, c.ref.Name, c.ref.Desc)
	if m != nil && m.Access&classfile.AccAbstract == 0 {
		return cls, m
	}
	return nil, nil
}

// escape records what a call to code outside the analysis receives.
func (inv *invocation) escape(f *frame, c *call) {
	for _, a := range append([]value{c.recv}, c.args...) {
		switch {
		case a.k.restored():
			inv.record(evEscape, a.st, f, c.in)
		case a.k == kState:
			inv.record(evHandleEscape, a.st, f, c.in)
		case a.k == kLambda && int(a.id) < len(inv.a.lambdas):
			for _, v := range inv.a.lambdas[a.id].captured {
				if v.k.restored() {
					inv.record(evEscape, v.st, f, c.in)
				}
			}
		}
	}
}

// construct runs a constructor on a `new` object and replaces it in the frame by what it became.
// Constructors of classes in the set are followed (a commit trigger that registers and restores
// its state in its constructor, created from the operator's initializeState).
func (inv *invocation) construct(f *frame, c *call) error {
	cls := c.recv.s
	res := none
	arg0 := argAt(c.args, 0)
	switch {
	case strings.HasSuffix(cls, "StateDescriptor"):
		if arg0.k == kConst {
			res = value{k: kDescriptor, st: -1, n: 1, s: arg0.s}
		} else {
			res = value{k: kDescriptor, st: -1, s: inv.where(c.in) + ": the descriptor's name is not a constant"}
		}
	case cls == "java/lang/StringBuilder" || cls == "java/lang/StringBuffer":
		if len(c.args) == 0 {
			res = value{k: kBuilder, st: -1}
		} else if arg0.k == kConst {
			res = value{k: kBuilder, st: -1, s: arg0.s}
		}
	case strings.HasSuffix(cls, "/SimpleVersionedListState") && arg0.k == kState:
		res = arg0 // Flink's wrapper that (de)serializes each element: the same list
	case isCopyConstructor(cls) && (arg0.k == kIterable || arg0.k == kCopy):
		res = value{k: kCopy, st: arg0.st, s: setCount(cls)}
	case isCopyConstructor(cls) && (len(c.args) == 0 || arg0.k == kInt || arg0.k == kNone):
		res = value{k: kList, st: -1, id: c.recv.id, s: setCount(cls)}
	default:
		cc, m := inv.a.findMethod(cls, "<init>", c.ref.Desc)
		if m == nil || m.Code == nil || cc.Name != cls || inv.depth >= inv.a.opts.MaxDepth {
			inv.escape(f, &call{in: c.in, ref: c.ref, recv: none, args: c.args})
			break
		}
		// The object keeps its identity: its fields are tracked under it (objectField).
		_, err := inv.a.run(cc, m, append([]value{c.recv}, c.args...), f.facts, inv.depth+1)
		return err
	}
	f.replace(c.recv, res)
	return nil
}

// setCount marks a set's copy as uncounted: equal elements collapse.
func setCount(cls string) string {
	if strings.HasSuffix(cls, "Set") {
		return uncounted
	}
	return ""
}

func isCopyConstructor(cls string) bool {
	for _, c := range copyConstructors {
		if c == cls {
			return true
		}
	}
	return false
}

// where names an instruction for notes: "org.example.Op.initializeState offset 12 (line 40)".
func (inv *invocation) where(in *classfile.Instruction) string {
	s := classfile.BinaryName(inv.cls.Name) + "." + inv.m.Name + " offset " + strconv.Itoa(in.Off)
	if l := inv.m.Code.Line(in.Off); l > 0 {
		s += " (line " + strconv.Itoa(l) + ")"
	}
	return s
}

// registerAt records a registration call and returns the state handle.
func (inv *invocation) registerAt(f *frame, c *call, mode string) value {
	d := c.args[0]
	name, note, constant := "", "", false
	switch {
	case d.k == kDescriptor && d.n == 1, d.k == kConst:
		name, constant = d.s, true
	case d.k == kDescriptor:
		note = d.s
	default:
		note = inv.where(c.in) + ": the state descriptor is not known (parameter, field or call result)"
	}
	at := event{cls: inv.cls.Name, method: inv.m.Name, off: c.in.Off, line: inv.m.Code.Line(c.in.Off), restored: f.facts.restored}
	st := inv.a.register(name, note, mode, constant, at)
	return value{k: kState, st: st}
}
