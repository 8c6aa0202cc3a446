package classfile

import (
	"encoding/binary"
	"fmt"
)

// Instruction is one decoded instruction of a code array.
type Instruction struct {
	Off  int // offset of the opcode in the code array
	Len  int // encoded length, including a wide prefix
	Op   Opcode
	Wide bool // the instruction had a wide prefix
	// Index is the constant pool index (ldc, field, method, class operands) or the local variable
	// index (loads, stores, iinc, ret, and the implicit index of xload_n/xstore_n).
	Index uint16
	// Const is the constant of bipush, sipush, iconst_n and friends, the increment of iinc, the
	// array type of newarray, the dimensions of multianewarray or the count of invokeinterface.
	Const int32
	// Target is the absolute branch target of a jump.
	Target int
	Switch *Switch // tableswitch and lookupswitch
}

// Switch is the table of a tableswitch (Keys are Low, Low+1, ...) or a lookupswitch.
type Switch struct {
	Default int
	Keys    []int32
	Targets []int // absolute, one per key
}

// IsBranch reports whether the instruction has a Target.
func (in *Instruction) IsBranch() bool {
	f := Opcodes[in.Op].Format
	return f == FmtBranch || f == FmtBranch4
}

// EndsBlock reports whether control never falls through to the next instruction.
func (in *Instruction) EndsBlock() bool {
	switch in.Op {
	case Goto, GotoW, Tableswitch, Lookupswitch, Athrow, Ret,
		Ireturn, Lreturn, Freturn, Dreturn, Areturn, Return:
		return true
	}
	return false
}

// Decode decodes the instruction at off in code. Errors are *FormatError with Off the offset in
// the code array.
func Decode(code []byte, off int) (Instruction, error) {
	d := decoder{code: code, off: off}
	return d.next()
}

// DecodeAll decodes every instruction of code in order and checks that every branch and switch
// target is the start of an instruction. The result has at most len(code) entries.
func DecodeAll(code []byte) ([]Instruction, error) {
	if len(code) > MaxCodeLength {
		return nil, &FormatError{Off: 0, Field: "code", Msg: fmt.Sprintf("longer than %d bytes", MaxCodeLength), Val: len(code)}
	}
	var out []Instruction
	starts := make([]bool, len(code)+1)
	for off := 0; off < len(code); {
		in, err := Decode(code, off)
		if err != nil {
			return nil, err
		}
		starts[off] = true
		out = append(out, in)
		off += in.Len
	}
	for i := range out {
		for _, t := range targets(&out[i]) {
			if t < 0 || t >= len(code) || !starts[t] {
				return nil, &FormatError{Off: int64(out[i].Off), Field: "code", Msg: out[i].Op.String() + " target is not the start of an instruction", Val: t}
			}
		}
	}
	return out, nil
}

// targets lists the jump targets of in.
func targets(in *Instruction) []int {
	if in.Switch != nil {
		return append([]int{in.Switch.Default}, in.Switch.Targets...)
	}
	if in.IsBranch() {
		return []int{in.Target}
	}
	return nil
}

// Targets lists the jump targets of in (branch target, or switch default then cases).
func (in *Instruction) Targets() []int { return targets(in) }

type decoder struct {
	code []byte
	off  int
}

func (d *decoder) fail(at int, msg string, val any) error {
	return &FormatError{Off: int64(at), Field: "code", Msg: msg, Val: val}
}

func (d *decoder) need(at, n int) error {
	if len(d.code)-at < n {
		return d.fail(min(at, len(d.code)), fmt.Sprintf("instruction truncated: %d operand bytes needed, %d left", n, max(len(d.code)-at, 0)), nil)
	}
	return nil
}

// operandSize is the operand byte count of each fixed format.
var operandSize = [...]int{
	FmtNone: 0, FmtLocal: 1, FmtByte: 1, FmtShort: 2, FmtCP1: 1, FmtCP2: 2, FmtIinc: 2,
	FmtBranch: 2, FmtBranch4: 4, FmtInterface: 4, FmtIndy: 4, FmtAtype: 1, FmtMulti: 3,
}

func (d *decoder) next() (Instruction, error) {
	at := d.off
	if at < 0 || at >= len(d.code) {
		return Instruction{}, d.fail(at, "offset outside the code", at)
	}
	op := Opcode(d.code[at])
	info := &Opcodes[op]
	if info.Name == "" {
		return Instruction{}, d.fail(at, "invalid opcode", int(op))
	}
	in := Instruction{Off: at, Op: op}
	switch info.Format {
	case FmtWide:
		return d.wide(at)
	case FmtTable, FmtLookup:
		return d.switchInsn(at, op)
	}
	n := operandSize[info.Format]
	if err := d.need(at+1, n); err != nil {
		return in, err
	}
	in.Len = 1 + n
	b := d.code[at+1 : at+1+n]
	if info.Implicit != -2 {
		if isLocalOp(op) {
			in.Index = uint16(info.Implicit)
		} else {
			in.Const = int32(info.Implicit)
		}
	}
	return in, d.operands(&in, info.Format, b)
}

func (d *decoder) operands(in *Instruction, f Format, b []byte) error {
	switch f {
	case FmtLocal, FmtCP1:
		in.Index = uint16(b[0])
	case FmtByte, FmtAtype:
		in.Const = int32(int8(b[0]))
		if f == FmtAtype {
			in.Const = int32(b[0])
			if b[0] < 4 || b[0] > 11 {
				return d.fail(in.Off+1, "newarray type must be 4 to 11", b[0])
			}
		}
	case FmtShort:
		in.Const = int32(int16(binary.BigEndian.Uint16(b)))
	case FmtCP2, FmtIndy:
		in.Index = binary.BigEndian.Uint16(b)
	case FmtInterface, FmtMulti:
		in.Index = binary.BigEndian.Uint16(b)
		in.Const = int32(b[2])
	case FmtIinc:
		in.Index, in.Const = uint16(b[0]), int32(int8(b[1]))
	case FmtBranch:
		in.Target = in.Off + int(int16(binary.BigEndian.Uint16(b)))
	case FmtBranch4:
		in.Target = in.Off + int(int32(binary.BigEndian.Uint32(b)))
	}
	return nil
}

// isLocalOp reports whether an opcode's implicit operand is a local index (xload_n, xstore_n).
func isLocalOp(op Opcode) bool { return (op >= Iload0 && op <= 45) || (op >= Istore0 && op <= 78) }

// wide decodes a wide-prefixed load, store, ret or iinc (JVMS §6.5.wide).
func (d *decoder) wide(at int) (Instruction, error) {
	if err := d.need(at+1, 3); err != nil {
		return Instruction{}, err
	}
	op := Opcode(d.code[at+1])
	in := Instruction{Off: at, Op: op, Wide: true, Index: binary.BigEndian.Uint16(d.code[at+2:])}
	switch {
	case op == Iinc:
		if err := d.need(at+1, 5); err != nil {
			return Instruction{}, err
		}
		in.Const = int32(int16(binary.BigEndian.Uint16(d.code[at+4:])))
		in.Len = 6
	case (op >= Iload && op <= Aload) || (op >= Istore && op <= Astore) || op == Ret:
		in.Len = 4
	default:
		return Instruction{}, d.fail(at+1, "wide cannot modify this opcode", op.String())
	}
	return in, nil
}

// switchInsn decodes tableswitch and lookupswitch: 0-3 padding bytes up to a multiple of four
// from the start of the code, then signed 4-byte default, bounds or pairs and offsets.
func (d *decoder) switchInsn(at int, op Opcode) (Instruction, error) {
	p := (at + 4) &^ 3
	if err := d.need(p, 8); err != nil {
		return Instruction{}, err
	}
	s4 := func(i int) int32 { return int32(binary.BigEndian.Uint32(d.code[i:])) }
	sw := &Switch{Default: at + int(s4(p))}
	var n int64
	if op == Tableswitch {
		if err := d.need(p, 12); err != nil {
			return Instruction{}, err
		}
		low, high := s4(p+4), s4(p+8)
		if low > high {
			return Instruction{}, d.fail(p+4, "tableswitch low above high", fmt.Sprintf("%d>%d", low, high))
		}
		n = int64(high) - int64(low) + 1
		p += 12
		if n*4 > int64(len(d.code)-p) {
			return Instruction{}, d.fail(p-8, "tableswitch jump table longer than the code", n)
		}
		for k := int64(0); k < n; k++ {
			sw.Keys = append(sw.Keys, low+int32(k))
			sw.Targets = append(sw.Targets, at+int(s4(p+int(k)*4)))
		}
		p += int(n) * 4
	} else {
		n = int64(s4(p + 4))
		p += 8
		if n < 0 || n*8 > int64(len(d.code)-p) {
			return Instruction{}, d.fail(p-4, "lookupswitch npairs outside the code", n)
		}
		for k := 0; k < int(n); k++ {
			key := s4(p + k*8)
			if k > 0 && key <= sw.Keys[k-1] {
				return Instruction{}, d.fail(p+k*8, "lookupswitch keys not sorted", key)
			}
			sw.Keys = append(sw.Keys, key)
			sw.Targets = append(sw.Targets, at+int(s4(p+k*8+4)))
		}
		p += int(n) * 8
	}
	return Instruction{Off: at, Op: op, Len: p - at, Switch: sw}, nil
}
