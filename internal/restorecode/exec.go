package restorecode

import (
	"github.com/flinkpreflight/preflight/internal/classfile"
)

type execFn func(inv *invocation, f *frame, in *classfile.Instruction) error

// execTable holds the opcodes with their own transfer function; the others pop and push
// untracked slots as classfile.Opcodes says.
var execTable [256]execFn

func init() {
	set := func(fn execFn, ops ...classfile.Opcode) {
		for _, op := range ops {
			execTable[op] = fn
		}
	}
	for op := 0; op < 256; op++ {
		info := classfile.Opcodes[op]
		if info.Implicit != -2 && info.Push > 0 && info.Pop == 0 && info.Format == classfile.FmtNone && !isLoad(classfile.Opcode(op)) {
			execTable[op] = execConst
		}
	}
	set(execConst, classfile.Bipush, classfile.Sipush)
	set(execLdc, classfile.Ldc, classfile.LdcW, classfile.Ldc2W)
	for op := classfile.Iload; op <= classfile.Aload; op++ {
		set(execLoad, op)
	}
	for op := classfile.Iload0; op < classfile.Iload0+20; op++ {
		set(execLoad, op)
	}
	for op := classfile.Istore; op <= classfile.Astore; op++ {
		set(execStore, op)
	}
	for op := classfile.Istore0; op < classfile.Istore0+20; op++ {
		set(execStore, op)
	}
	set(execIinc, classfile.Iinc)
	set(execDup, classfile.Dup, classfile.DupX1, classfile.DupX2, classfile.Dup2, classfile.Dup2X1, classfile.Dup2X2, classfile.Swap)
	set(execCheckcast, classfile.Checkcast)
	set(execReturn, classfile.Areturn)
	set(execNew, classfile.New)
	set(execCond, condOps()...)
	set(execField, classfile.Getfield, classfile.Putfield, classfile.Getstatic, classfile.Putstatic)
	set(execInvoke, classfile.Invokevirtual, classfile.Invokespecial, classfile.Invokestatic, classfile.Invokeinterface)
	set(execIndy, classfile.Invokedynamic)
	set(execRet, classfile.Ret)
}

func isLoad(op classfile.Opcode) bool {
	return (op >= classfile.Iload0 && op < classfile.Iload0+20) || (op >= classfile.Istore0 && op < classfile.Istore0+20)
}

func condOps() []classfile.Opcode {
	var ops []classfile.Opcode
	for op := classfile.Ifeq; op <= classfile.IfAcmpne; op++ {
		ops = append(ops, op)
	}
	return append(ops, classfile.Ifnull, classfile.Ifnonnull)
}

func (inv *invocation) errAt(in *classfile.Instruction, msg string) error {
	return &interpError{in.Off, msg}
}

func (inv *invocation) push(f *frame, in *classfile.Instruction, vs ...value) error {
	if len(f.stack)+len(vs) > int(inv.m.Code.MaxStack) {
		return inv.errAt(in, "operand stack overflows max_stack")
	}
	f.stack = append(f.stack, vs...)
	return nil
}

// pushTyped pushes v for a value of the given descriptor type (two slots for long and double).
func (inv *invocation) pushTyped(f *frame, in *classfile.Instruction, t string, v value) error {
	switch classfile.TypeSlots(t) {
	case 0:
		return nil
	case 2:
		return inv.push(f, in, v, none)
	}
	return inv.push(f, in, v)
}

func (inv *invocation) pop(f *frame, in *classfile.Instruction, n int) ([]value, error) {
	if n > len(f.stack) {
		return nil, inv.errAt(in, "operand stack underflow")
	}
	vs := f.stack[len(f.stack)-n:]
	f.stack = f.stack[:len(f.stack)-n]
	return vs, nil
}

func (inv *invocation) exec(f *frame, in *classfile.Instruction) error {
	if fn := execTable[in.Op]; fn != nil {
		return fn(inv, f, in)
	}
	info := classfile.Opcodes[in.Op]
	if info.Pop < 0 || info.Push < 0 {
		return inv.errAt(in, "no transfer function for "+in.Op.String())
	}
	if _, err := inv.pop(f, in, int(info.Pop)); err != nil {
		return err
	}
	for i := 0; i < int(info.Push); i++ {
		if err := inv.push(f, in, none); err != nil {
			return err
		}
	}
	return nil
}

func execConst(inv *invocation, f *frame, in *classfile.Instruction) error {
	c := value{k: kInt, st: -1, n: int64(in.Const)}
	switch {
	case in.Op >= classfile.IconstM1 && in.Op < classfile.Lconst0, in.Op == classfile.Bipush, in.Op == classfile.Sipush:
		return inv.push(f, in, c)
	case in.Op >= classfile.Lconst0 && in.Op < classfile.Fconst0:
		return inv.push(f, in, c, none)
	case in.Op >= classfile.Dconst0 && in.Op < classfile.Bipush:
		return inv.push(f, in, none, none)
	}
	return inv.push(f, in, none) // aconst_null, fconst_n
}

func execLdc(inv *invocation, f *frame, in *classfile.Instruction) error {
	p := inv.cls.Pool
	if int(in.Index) >= len(p) || in.Index == 0 {
		return inv.errAt(in, "ldc index outside the constant pool")
	}
	c := p[in.Index]
	v := none
	switch c.Tag {
	case classfile.TagString:
		v = value{k: kConst, st: -1, s: p[c.A].Str}
	case classfile.TagInteger, classfile.TagLong:
		v = value{k: kInt, st: -1, n: c.Int}
	}
	if in.Op == classfile.Ldc2W {
		return inv.push(f, in, v, none)
	}
	return inv.push(f, in, v)
}

// localOf returns the local index and slot count of a load or store.
func localOf(in *classfile.Instruction) (int, int) {
	info := classfile.Opcodes[in.Op]
	size := int(info.Push) + int(info.Pop)
	return int(in.Index), size
}

func execLoad(inv *invocation, f *frame, in *classfile.Instruction) error {
	idx, size := localOf(in)
	if idx+size > len(f.locals) {
		return inv.errAt(in, "load outside max_locals")
	}
	if size == 2 {
		return inv.push(f, in, f.locals[idx], none)
	}
	return inv.push(f, in, f.locals[idx])
}

func execStore(inv *invocation, f *frame, in *classfile.Instruction) error {
	idx, size := localOf(in)
	if idx+size > len(f.locals) {
		return inv.errAt(in, "store outside max_locals")
	}
	vs, err := inv.pop(f, in, size)
	if err != nil {
		return err
	}
	f.locals[idx] = vs[0]
	if size == 2 {
		f.locals[idx+1] = none
	}
	return nil
}

func execIinc(inv *invocation, f *frame, in *classfile.Instruction) error {
	if int(in.Index) >= len(f.locals) {
		return inv.errAt(in, "iinc outside max_locals")
	}
	v := f.locals[in.Index]
	if v.k == kInt {
		v.n += int64(in.Const)
	} else {
		v = none
	}
	f.locals[in.Index] = v
	return nil
}

// dupShapes gives, per dup-family opcode, how many slots it takes and the order it pushes them
// back (indexes into the taken slots, top last).
var dupShapes = map[classfile.Opcode]struct {
	take int
	put  []int
}{
	classfile.Dup:    {1, []int{0, 0}},
	classfile.DupX1:  {2, []int{1, 0, 1}},
	classfile.DupX2:  {3, []int{2, 0, 1, 2}},
	classfile.Dup2:   {2, []int{0, 1, 0, 1}},
	classfile.Dup2X1: {3, []int{1, 2, 0, 1, 2}},
	classfile.Dup2X2: {4, []int{2, 3, 0, 1, 2, 3}},
	classfile.Swap:   {2, []int{1, 0}},
}

func execDup(inv *invocation, f *frame, in *classfile.Instruction) error {
	sh := dupShapes[in.Op]
	vs, err := inv.pop(f, in, sh.take)
	if err != nil {
		return err
	}
	taken := append([]value(nil), vs...)
	for _, i := range sh.put {
		if err := inv.push(f, in, taken[i]); err != nil {
			return err
		}
	}
	return nil
}

func execCheckcast(inv *invocation, f *frame, in *classfile.Instruction) error {
	if len(f.stack) == 0 {
		return inv.errAt(in, "operand stack underflow")
	}
	return nil
}

func execReturn(inv *invocation, f *frame, in *classfile.Instruction) error {
	vs, err := inv.pop(f, in, 1)
	if err != nil {
		return err
	}
	inv.ret = join(inv.ret, vs[0])
	return nil
}

func execNew(inv *invocation, f *frame, in *classfile.Instruction) error {
	return inv.push(f, in, value{k: kNew, st: -1, id: int32(in.Off), s: inv.cls.Pool.ClassName(in.Index)})
}

func execRet(inv *invocation, f *frame, in *classfile.Instruction) error {
	return inv.errAt(in, "ret (jsr subroutines) is not analysed")
}

// execCond pops a conditional branch's operands and keeps them for branchFacts.
func execCond(inv *invocation, f *frame, in *classfile.Instruction) error {
	n := int(classfile.Opcodes[in.Op].Pop)
	vs, err := inv.pop(f, in, n)
	if err != nil {
		return err
	}
	inv.cond = [2]value{vs[0], none}
	if n == 2 {
		inv.cond[1] = vs[1]
	}
	return nil
}
