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
