package classfile

// Opcode is a JVM instruction opcode (JVMS chapter 6).
type Opcode uint8

// Format is the shape of an instruction's operands.
type Format uint8

const (
	FmtNone      Format = iota // no operands
	FmtLocal                   // u1 local variable index (u2 after wide)
	FmtByte                    // s1 constant (bipush)
	FmtShort                   // s2 constant (sipush)
	FmtCP1                     // u1 constant pool index (ldc)
	FmtCP2                     // u2 constant pool index
	FmtIinc                    // u1 local, s1 increment (u2, s2 after wide)
	FmtBranch                  // s2 branch offset
	FmtBranch4                 // s4 branch offset (goto_w, jsr_w)
	FmtInterface               // u2 index, u1 count, u1 zero (invokeinterface)
	FmtIndy                    // u2 index, u2 zero (invokedynamic)
	FmtAtype                   // u1 array type (newarray)
	FmtMulti                   // u2 index, u1 dimensions (multianewarray)
	FmtTable                   // tableswitch
	FmtLookup                  // lookupswitch
	FmtWide                    // wide prefix
)

// Varies marks a stack effect that depends on the operand (a field or method descriptor, the
// dimensions of multianewarray).
const Varies = -1

// OpInfo is what the decoder and an interpreter know about an opcode. Pop and Push count operand
// stack slots (long and double take two); Implicit is the local index of xload_n/xstore_n or the
// constant of iconst_n/lconst_n/fconst_n/dconst_n, -2 when the opcode has none.
type OpInfo struct {
	Name      string
	Format    Format
	Pop, Push int8
	Implicit  int8
}

// Valid reports whether the opcode may appear in a class file.
func (o Opcode) Valid() bool { return Opcodes[o].Name != "" }

func (o Opcode) String() string {
	if n := Opcodes[o].Name; n != "" {
		return n
	}
	return "invalid"
}

// Opcodes is the instruction table, indexed by opcode. Entries with an empty Name are not JVM
// instructions (breakpoint and impdep1/2 are reserved and never valid in a class file).
var Opcodes = [256]OpInfo{}

type opRow struct {
	op        Opcode
	name      string
	f         Format
	pop, push int8
}

func init() {
	for i := range Opcodes {
		Opcodes[i].Implicit = -2
	}
	for _, r := range opRows {
		Opcodes[r.op] = OpInfo{Name: r.name, Format: r.f, Pop: r.pop, Push: r.push, Implicit: -2}
	}
	implicit := func(first Opcode, names []string, f Format, pop, push int8, base int8) {
		for i, n := range names {
			Opcodes[first+Opcode(i)] = OpInfo{Name: n, Format: f, Pop: pop, Push: push, Implicit: base + int8(i)}
		}
	}
	implicit(IconstM1, []string{"iconst_m1", "iconst_0", "iconst_1", "iconst_2", "iconst_3", "iconst_4", "iconst_5"}, FmtNone, 0, 1, -1)
	implicit(Lconst0, []string{"lconst_0", "lconst_1"}, FmtNone, 0, 2, 0)
	implicit(Fconst0, []string{"fconst_0", "fconst_1", "fconst_2"}, FmtNone, 0, 1, 0)
	implicit(Dconst0, []string{"dconst_0", "dconst_1"}, FmtNone, 0, 2, 0)
	for _, t := range []struct {
		prefix    string
		size      int8
		load, sto Opcode
	}{{"i", 1, Iload0, Istore0}, {"l", 2, Lload0, Lstore0}, {"f", 1, Fload0, Fstore0}, {"d", 2, Dload0, Dstore0}, {"a", 1, Aload0, Astore0}} {
		n := func(s string) []string { return []string{s + "_0", s + "_1", s + "_2", s + "_3"} }
		implicit(t.load, n(t.prefix+"load"), FmtNone, 0, t.size, 0)
		implicit(t.sto, n(t.prefix+"store"), FmtNone, t.size, 0, 0)
	}
}

// Opcodes the analysis refers to by name.
const (
	Nop             Opcode = 0
	AconstNull      Opcode = 1
	IconstM1        Opcode = 2
	Lconst0         Opcode = 9
	Fconst0         Opcode = 11
	Dconst0         Opcode = 14
	Bipush          Opcode = 16
	Sipush          Opcode = 17
	Ldc             Opcode = 18
	LdcW            Opcode = 19
	Ldc2W           Opcode = 20
	Iload           Opcode = 21
	Lload           Opcode = 22
	Fload           Opcode = 23
	Dload           Opcode = 24
	Aload           Opcode = 25
	Iload0          Opcode = 26
	Lload0          Opcode = 30
	Fload0          Opcode = 34
	Dload0          Opcode = 38
	Aload0          Opcode = 42
	Istore          Opcode = 54
	Lstore          Opcode = 55
	Fstore          Opcode = 56
	Dstore          Opcode = 57
	Astore          Opcode = 58
	Istore0         Opcode = 59
	Lstore0         Opcode = 63
	Fstore0         Opcode = 67
	Dstore0         Opcode = 71
	Astore0         Opcode = 75
	Pop             Opcode = 87
	Pop2            Opcode = 88
	Dup             Opcode = 89
	DupX1           Opcode = 90
	DupX2           Opcode = 91
	Dup2            Opcode = 92
	Dup2X1          Opcode = 93
	Dup2X2          Opcode = 94
	Swap            Opcode = 95
	Irem            Opcode = 112
	Lrem            Opcode = 113
	Iinc            Opcode = 132
	Lcmp            Opcode = 148
	Ifeq            Opcode = 153
	Ifne            Opcode = 154
	Iflt            Opcode = 155
	Ifge            Opcode = 156
	Ifgt            Opcode = 157
	Ifle            Opcode = 158
	IfIcmpeq        Opcode = 159
	IfIcmpne        Opcode = 160
	IfIcmplt        Opcode = 161
	IfIcmpge        Opcode = 162
	IfIcmpgt        Opcode = 163
	IfIcmple        Opcode = 164
	IfAcmpeq        Opcode = 165
	IfAcmpne        Opcode = 166
	Goto            Opcode = 167
	Jsr             Opcode = 168
	Ret             Opcode = 169
	Tableswitch     Opcode = 170
	Lookupswitch    Opcode = 171
	Ireturn         Opcode = 172
	Lreturn         Opcode = 173
	Freturn         Opcode = 174
	Dreturn         Opcode = 175
	Areturn         Opcode = 176
	Return          Opcode = 177
	Getstatic       Opcode = 178
	Putstatic       Opcode = 179
	Getfield        Opcode = 180
	Putfield        Opcode = 181
	Invokevirtual   Opcode = 182
	Invokespecial   Opcode = 183
	Invokestatic    Opcode = 184
	Invokeinterface Opcode = 185
	Invokedynamic   Opcode = 186
	New             Opcode = 187
	Newarray        Opcode = 188
	Anewarray       Opcode = 189
	Athrow          Opcode = 191
	Checkcast       Opcode = 192
	Instanceof      Opcode = 193
	Wide            Opcode = 196
	Multianewarray  Opcode = 197
	Ifnull          Opcode = 198
	Ifnonnull       Opcode = 199
	GotoW           Opcode = 200
	JsrW            Opcode = 201
)

var opRows = []opRow{
	{0, "nop", FmtNone, 0, 0}, {1, "aconst_null", FmtNone, 0, 1},
	{16, "bipush", FmtByte, 0, 1}, {17, "sipush", FmtShort, 0, 1},
	{18, "ldc", FmtCP1, 0, 1}, {19, "ldc_w", FmtCP2, 0, 1}, {20, "ldc2_w", FmtCP2, 0, 2},
	{21, "iload", FmtLocal, 0, 1}, {22, "lload", FmtLocal, 0, 2}, {23, "fload", FmtLocal, 0, 1},
	{24, "dload", FmtLocal, 0, 2}, {25, "aload", FmtLocal, 0, 1},
	{46, "iaload", FmtNone, 2, 1}, {47, "laload", FmtNone, 2, 2}, {48, "faload", FmtNone, 2, 1},
	{49, "daload", FmtNone, 2, 2}, {50, "aaload", FmtNone, 2, 1}, {51, "baload", FmtNone, 2, 1},
	{52, "caload", FmtNone, 2, 1}, {53, "saload", FmtNone, 2, 1},
	{54, "istore", FmtLocal, 1, 0}, {55, "lstore", FmtLocal, 2, 0}, {56, "fstore", FmtLocal, 1, 0},
	{57, "dstore", FmtLocal, 2, 0}, {58, "astore", FmtLocal, 1, 0},
	{79, "iastore", FmtNone, 3, 0}, {80, "lastore", FmtNone, 4, 0}, {81, "fastore", FmtNone, 3, 0},
	{82, "dastore", FmtNone, 4, 0}, {83, "aastore", FmtNone, 3, 0}, {84, "bastore", FmtNone, 3, 0},
	{85, "castore", FmtNone, 3, 0}, {86, "sastore", FmtNone, 3, 0},
	{87, "pop", FmtNone, 1, 0}, {88, "pop2", FmtNone, 2, 0}, {89, "dup", FmtNone, 1, 2},
	{90, "dup_x1", FmtNone, 2, 3}, {91, "dup_x2", FmtNone, 3, 4}, {92, "dup2", FmtNone, 2, 4},
	{93, "dup2_x1", FmtNone, 3, 5}, {94, "dup2_x2", FmtNone, 4, 6}, {95, "swap", FmtNone, 2, 2},
	{96, "iadd", FmtNone, 2, 1}, {97, "ladd", FmtNone, 4, 2}, {98, "fadd", FmtNone, 2, 1}, {99, "dadd", FmtNone, 4, 2},
	{100, "isub", FmtNone, 2, 1}, {101, "lsub", FmtNone, 4, 2}, {102, "fsub", FmtNone, 2, 1}, {103, "dsub", FmtNone, 4, 2},
	{104, "imul", FmtNone, 2, 1}, {105, "lmul", FmtNone, 4, 2}, {106, "fmul", FmtNone, 2, 1}, {107, "dmul", FmtNone, 4, 2},
	{108, "idiv", FmtNone, 2, 1}, {109, "ldiv", FmtNone, 4, 2}, {110, "fdiv", FmtNone, 2, 1}, {111, "ddiv", FmtNone, 4, 2},
	{112, "irem", FmtNone, 2, 1}, {113, "lrem", FmtNone, 4, 2}, {114, "frem", FmtNone, 2, 1}, {115, "drem", FmtNone, 4, 2},
	{116, "ineg", FmtNone, 1, 1}, {117, "lneg", FmtNone, 2, 2}, {118, "fneg", FmtNone, 1, 1}, {119, "dneg", FmtNone, 2, 2},
	{120, "ishl", FmtNone, 2, 1}, {121, "lshl", FmtNone, 3, 2}, {122, "ishr", FmtNone, 2, 1}, {123, "lshr", FmtNone, 3, 2},
	{124, "iushr", FmtNone, 2, 1}, {125, "lushr", FmtNone, 3, 2},
	{126, "iand", FmtNone, 2, 1}, {127, "land", FmtNone, 4, 2}, {128, "ior", FmtNone, 2, 1}, {129, "lor", FmtNone, 4, 2},
	{130, "ixor", FmtNone, 2, 1}, {131, "lxor", FmtNone, 4, 2},
	{132, "iinc", FmtIinc, 0, 0},
	{133, "i2l", FmtNone, 1, 2}, {134, "i2f", FmtNone, 1, 1}, {135, "i2d", FmtNone, 1, 2},
	{136, "l2i", FmtNone, 2, 1}, {137, "l2f", FmtNone, 2, 1}, {138, "l2d", FmtNone, 2, 2},
	{139, "f2i", FmtNone, 1, 1}, {140, "f2l", FmtNone, 1, 2}, {141, "f2d", FmtNone, 1, 2},
	{142, "d2i", FmtNone, 2, 1}, {143, "d2l", FmtNone, 2, 2}, {144, "d2f", FmtNone, 2, 1},
	{145, "i2b", FmtNone, 1, 1}, {146, "i2c", FmtNone, 1, 1}, {147, "i2s", FmtNone, 1, 1},
	{148, "lcmp", FmtNone, 4, 1}, {149, "fcmpl", FmtNone, 2, 1}, {150, "fcmpg", FmtNone, 2, 1},
	{151, "dcmpl", FmtNone, 4, 1}, {152, "dcmpg", FmtNone, 4, 1},
	{153, "ifeq", FmtBranch, 1, 0}, {154, "ifne", FmtBranch, 1, 0}, {155, "iflt", FmtBranch, 1, 0},
	{156, "ifge", FmtBranch, 1, 0}, {157, "ifgt", FmtBranch, 1, 0}, {158, "ifle", FmtBranch, 1, 0},
	{159, "if_icmpeq", FmtBranch, 2, 0}, {160, "if_icmpne", FmtBranch, 2, 0}, {161, "if_icmplt", FmtBranch, 2, 0},
	{162, "if_icmpge", FmtBranch, 2, 0}, {163, "if_icmpgt", FmtBranch, 2, 0}, {164, "if_icmple", FmtBranch, 2, 0},
	{165, "if_acmpeq", FmtBranch, 2, 0}, {166, "if_acmpne", FmtBranch, 2, 0},
	{167, "goto", FmtBranch, 0, 0}, {168, "jsr", FmtBranch, 0, 1}, {169, "ret", FmtLocal, 0, 0},
	{170, "tableswitch", FmtTable, 1, 0}, {171, "lookupswitch", FmtLookup, 1, 0},
	{172, "ireturn", FmtNone, 1, 0}, {173, "lreturn", FmtNone, 2, 0}, {174, "freturn", FmtNone, 1, 0},
	{175, "dreturn", FmtNone, 2, 0}, {176, "areturn", FmtNone, 1, 0}, {177, "return", FmtNone, 0, 0},
	{178, "getstatic", FmtCP2, Varies, Varies}, {179, "putstatic", FmtCP2, Varies, Varies},
	{180, "getfield", FmtCP2, Varies, Varies}, {181, "putfield", FmtCP2, Varies, Varies},
	{182, "invokevirtual", FmtCP2, Varies, Varies}, {183, "invokespecial", FmtCP2, Varies, Varies},
	{184, "invokestatic", FmtCP2, Varies, Varies}, {185, "invokeinterface", FmtInterface, Varies, Varies},
	{186, "invokedynamic", FmtIndy, Varies, Varies},
	{187, "new", FmtCP2, 0, 1}, {188, "newarray", FmtAtype, 1, 1}, {189, "anewarray", FmtCP2, 1, 1},
	{190, "arraylength", FmtNone, 1, 1}, {191, "athrow", FmtNone, 1, 0},
	{192, "checkcast", FmtCP2, 1, 1}, {193, "instanceof", FmtCP2, 1, 1},
	{194, "monitorenter", FmtNone, 1, 0}, {195, "monitorexit", FmtNone, 1, 0},
	{196, "wide", FmtWide, 0, 0}, {197, "multianewarray", FmtMulti, Varies, 1},
	{198, "ifnull", FmtBranch, 1, 0}, {199, "ifnonnull", FmtBranch, 1, 0},
	{200, "goto_w", FmtBranch4, 0, 0}, {201, "jsr_w", FmtBranch4, 0, 1},
}
