package restorecode

import (
	"strings"

	"github.com/flinkpreflight/preflight/internal/classfile"
)

// Bootstrap methods the analysis understands.
const (
	lambdaMetafactory   = "java/lang/invoke/LambdaMetafactory"
	stringConcatFactory = "java/lang/invoke/StringConcatFactory"
)

func execIndy(inv *invocation, f *frame, in *classfile.Instruction) error {
	cls := inv.cls
	bsm, _, desc, ok := cls.Pool.Dynamic(in.Index)
	if !ok {
		return inv.errAt(in, "invokedynamic operand is not a CONSTANT_InvokeDynamic")
	}
	params, ret, ok := classfile.ParseDescriptor(desc)
	if !ok {
		return inv.errAt(in, "malformed invokedynamic descriptor "+desc)
	}
	args, err := inv.popArgs(f, in, params)
	if err != nil {
		return err
	}
	h, bargs, ok := cls.BootstrapMethod(bsm)
	if !ok {
		return inv.errAt(in, "invokedynamic names a missing bootstrap method")
	}
	v := none
	switch {
	case h.Ref.Class == lambdaMetafactory && len(bargs) >= 2:
		if impl, ok := cls.Pool.MethodHandle(bargs[1]); ok {
			inv.a.lambdas = append(inv.a.lambdas, lambda{impl: impl, captured: args})
			v = value{k: kLambda, st: -1, id: int32(len(inv.a.lambdas) - 1)}
		}
	case h.Ref.Class == stringConcatFactory && h.Ref.Name == "makeConcatWithConstants" && len(bargs) >= 1:
		if s, ok := concat(cls.Pool, bargs, args); ok {
			v = value{k: kConst, st: -1, s: s}
		}
	default:
		inv.escape(f, &call{in: in, recv: none, args: args})
	}
	return inv.pushTyped(f, in, ret, v)
}

// concat evaluates a makeConcatWithConstants recipe: \1 takes the next argument, \2 the next
// bootstrap constant; every argument must be a constant.
func concat(p classfile.Pool, bargs []uint16, args []value) (string, bool) {
	recipe, ok := p.String(bargs[0])
	if !ok {
		return "", false
	}
	var b strings.Builder
	ai, ci := 0, 1
	for _, r := range recipe {
		switch r {
		case 1:
			if ai >= len(args) {
				return "", false
			}
			s, ok := constString(args[ai])
			if !ok {
				return "", false
			}
			b.WriteString(s)
			ai++
		case 2:
			if ci >= len(bargs) {
				return "", false
			}
			v, ok := poolConst(p, bargs[ci])
			s, ok2 := constString(v)
			if !ok || !ok2 {
				return "", false
			}
			b.WriteString(s)
			ci++
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), true
}

// throughLambda handles a call that runs a lambda or method reference on the elements: the
// functional method called on the lambda itself (only.apply(state.get())), and Optional.of(it)
// followed by map/flatMap/ifPresent(lambda), with the Optional transparent around the elements.
func (inv *invocation) throughLambda(f *frame, c *call) (value, bool, error) {
	if c.recv.k == kLambda && !c.static {
		v, err := inv.callLambda(f, c, c.recv, c.args)
		return v, true, err
	}
	if c.ref.Class != "java/util/Optional" {
		return none, false, nil
	}
	arg0 := argAt(c.args, 0)
	switch {
	case c.static && (c.ref.Name == "of" || c.ref.Name == "ofNullable") && arg0.k.restored() && arg0.k != kOptional:
		return arg0, true, nil
	case c.static || !c.recv.k.restored() || c.recv.k == kOptional:
		return none, false, nil
	}
	switch c.ref.Name {
	case "map", "flatMap", "ifPresent":
		if arg0.k == kLambda {
			v, err := inv.callLambda(f, c, arg0, []value{c.recv})
			return v, true, err
		}
	case "filter", "get", "orElseThrow", "orElse", "orElseGet", "or":
		return c.recv, true, nil
	}
	return none, false, nil
}

// callLambda runs a lambda's implementation with its captured values and args: a method
// reference to a modelled library method (Iterables::getOnlyElement) takes effect at the call,
// a method in the classes is interpreted, anything else is an escape.
func (inv *invocation) callLambda(f *frame, c *call, lam value, args []value) (value, error) {
	if int(lam.id) >= len(inv.a.lambdas) {
		inv.escape(f, c)
		return none, nil
	}
	l := inv.a.lambdas[lam.id]
	all := append(append([]value{}, l.captured...), args...)
	h := l.impl.Ref
	params, _, ok := classfile.ParseDescriptor(h.Desc)
	if !ok {
		return none, nil
	}
	for _, a := range all {
		if !a.k.restored() {
			continue
		}
		if eff, ok := lookupStatic(h.Class, h.Name, len(params)); ok {
			return inv.apply(f, c, eff, a), nil
		}
	}
	cls, m := inv.a.findMethod(h.Class, h.Name, h.Desc)
	if m == nil || m.Code == nil || inv.depth >= inv.a.opts.MaxDepth {
		inv.escape(f, &call{in: c.in, ref: c.ref, recv: none, args: all})
		return none, nil
	}
	n := len(params)
	if m.Access&classfile.AccStatic == 0 {
		n++ // the receiver: captured (this::m) or the first argument (Type::m)
	}
	for len(all) < n {
		all = append(all, none)
	}
	return inv.a.run(cls, m, all[:n], f.facts, inv.depth+1)
}
