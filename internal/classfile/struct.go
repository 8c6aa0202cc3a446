// Package classfile reads Java class files (JVMS chapter 4) from bytes: the constant pool, fields,
// methods, the attributes a bytecode analysis needs (Code with its exception table and
// LineNumberTable, BootstrapMethods, InnerClasses, NestHost/NestMembers, ConstantValue), and
// decodes the instructions of a Code attribute. It owns the format and nothing else: it does not
// load, link or verify classes, and it does not open jars.
//
// Limits. Every count is checked against the bytes left before anything is allocated, so a class
// file of n bytes never makes the reader allocate much more than O(n). The format's own limits
// apply: at most 65535 constant-pool slots, fields, methods, interfaces and attributes per owner
// (u2 counts), code of at most 65535 bytes per method (JVMS §4.7.3: code_length < 65536), and
// class file versions up to major 69 (Java 25); newer versions are refused with a *FormatError
// naming the version, because their constant pool or attributes may hold what this reader does
// not know.
//
// internal/jarindex keeps its own streaming constant-pool scan: it reads partially inflated jar
// entries through an io.Reader, must stop right after the constant pool and reuses its buffers
// across thousands of classes; this package wants the whole class in memory and builds a full
// model.
package classfile

// Magic starts every class file.
const Magic = 0xCAFEBABE

// MaxMajor is the newest class file major version the reader accepts (69 = Java 25).
const MaxMajor = 69

// MaxCodeLength is the JVM's limit on a method's code array (JVMS §4.7.3).
const MaxCodeLength = 65535

// Constant pool tags (JVMS §4.4).
const (
	TagUtf8               = 1
	TagInteger            = 3
	TagFloat              = 4
	TagLong               = 5
	TagDouble             = 6
	TagClass              = 7
	TagString             = 8
	TagFieldref           = 9
	TagMethodref          = 10
	TagInterfaceMethodref = 11
	TagNameAndType        = 12
	TagMethodHandle       = 15
	TagMethodType         = 16
	TagDynamic            = 17
	TagInvokeDynamic      = 18
	TagModule             = 19
	TagPackage            = 20
)

// Access flags (JVMS tables 4.1-B, 4.5-A, 4.6-A); the meaning of a bit depends on the owner.
const (
	AccPublic       = 0x0001
	AccPrivate      = 0x0002
	AccProtected    = 0x0004
	AccStatic       = 0x0008
	AccFinal        = 0x0010
	AccSuper        = 0x0020 // class
	AccSynchronized = 0x0020 // method
	AccVolatile     = 0x0040 // field
	AccBridge       = 0x0040 // method
	AccVarargs      = 0x0080 // method
	AccNative       = 0x0100
	AccInterface    = 0x0200
	AccAbstract     = 0x0400
	AccStrict       = 0x0800
	AccSynthetic    = 0x1000
	AccAnnotation   = 0x2000
	AccEnum         = 0x4000
	AccModule       = 0x8000
)

// Method handle reference kinds (JVMS §5.4.3.5).
const (
	RefGetField         = 1
	RefGetStatic        = 2
	RefPutField         = 3
	RefPutStatic        = 4
	RefInvokeVirtual    = 5
	RefInvokeStatic     = 6
	RefInvokeSpecial    = 7
	RefNewInvokeSpecial = 8
	RefInvokeInterface  = 9
)

// Constant is one constant-pool entry. Which fields are set depends on Tag:
//
//	Utf8                      Str
//	Integer, Long             Int
//	Float, Double             Float
//	Class, String, MethodType, Module, Package   A = index of the Utf8
//	Fieldref, Methodref, InterfaceMethodref      A = class index, B = NameAndType index
//	NameAndType               A = name index, B = descriptor index
//	MethodHandle              A = reference kind, B = reference index
//	Dynamic, InvokeDynamic    A = bootstrap method attribute index, B = NameAndType index
//
// The slot after a Long or Double, and slot 0, have Tag 0.
type Constant struct {
	Tag   uint8
	A, B  uint16
	Int   int64
	Float float64
	Str   string
}

// Pool is the constant pool, indexed as in the class file (slot 0 unused). The reader checks that
// every index an entry holds points at an entry of the right tag, so the accessors need only check
// the index they are given.
type Pool []Constant

// MemberRef is a resolved Fieldref, Methodref or InterfaceMethodref: the owner's internal name
// ("java/util/List"), the member's name and its descriptor.
type MemberRef struct {
	Class, Name, Desc string
	Interface         bool // InterfaceMethodref
}

// MethodHandle is a resolved CONSTANT_MethodHandle.
type MethodHandle struct {
	Kind uint8
	Ref  MemberRef
}

// Class is a parsed class file.
type Class struct {
	Minor, Major uint16
	Pool         Pool
	Access       uint16
	Name         string   // internal name, "org/example/MyOperator"
	Super        string   // "" for java/lang/Object and module-info
	Interfaces   []string // internal names
	Fields       []Field
	Methods      []Method
	Bootstrap    []BootstrapMethod
	InnerClasses []InnerClass
	NestHost     string
	NestMembers  []string
	SourceFile   string
}

// Field is a field_info.
type Field struct {
	Access     uint16
	Name, Desc string
	// ConstantValue is the pool index of the ConstantValue attribute's constant, 0 if none.
	ConstantValue uint16
}

// Method is a method_info.
type Method struct {
	Access     uint16
	Name, Desc string
	Code       *Code // nil for abstract and native methods
}

// Code is a Code attribute.
type Code struct {
	MaxStack, MaxLocals uint16
	// Off is the byte offset of the code array in the class file, for errors.
	Off        int64
	Bytes      []byte // the code array; aliases the class file's bytes
	Exceptions []ExceptionHandler
	Lines      []LineNumber // from all LineNumberTable attributes, in file order
}

// ExceptionHandler is one exception_table entry: [Start, End) is covered, Handler receives,
// CatchType is the pool index of the caught class (0 = any, finally).
type ExceptionHandler struct {
	Start, End, Handler, CatchType uint16
}

// LineNumber maps the instructions from StartPC up to the next entry to a source line.
type LineNumber struct {
	StartPC, Line uint16
}

// BootstrapMethod is one entry of the BootstrapMethods attribute: a MethodHandle pool index and
// the pool indexes of its static arguments.
type BootstrapMethod struct {
	Ref  uint16
	Args []uint16
}

// InnerClass is one InnerClasses entry; Outer and Name are "" when the entry has none.
type InnerClass struct {
	Inner, Outer, Name string
	Access             uint16
}
