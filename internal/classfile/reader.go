package classfile

import (
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"
)

// Parse reads a class file held in b. The returned Class aliases b (code arrays); b must not
// change while the Class is used.
func Parse(b []byte) (*Class, error) {
	r := &reader{b: b}
	c, err := r.class()
	if err != nil {
		return nil, err
	}
	return c, nil
}

// reader walks the class file; every read checks the bytes left.
type reader struct {
	b     []byte
	off   int
	field string
	pool  Pool
}

func (r *reader) fail(msg string, val any) error {
	return &FormatError{Off: int64(r.off), Field: r.field, Msg: msg, Val: val}
}

func (r *reader) need(n int) error {
	if n < 0 || len(r.b)-r.off < n {
		return r.fail(fmt.Sprintf("truncated: %d bytes needed, %d left", n, len(r.b)-r.off), nil)
	}
	return nil
}

func (r *reader) u1() (uint8, error) {
	if err := r.need(1); err != nil {
		return 0, err
	}
	v := r.b[r.off]
	r.off++
	return v, nil
}

func (r *reader) u2() (uint16, error) {
	if err := r.need(2); err != nil {
		return 0, err
	}
	v := binary.BigEndian.Uint16(r.b[r.off:])
	r.off += 2
	return v, nil
}

func (r *reader) u4() (uint32, error) {
	if err := r.need(4); err != nil {
		return 0, err
	}
	v := binary.BigEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v, nil
}

func (r *reader) bytes(n int) ([]byte, error) {
	if err := r.need(n); err != nil {
		return nil, err
	}
	v := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return v, nil
}

// count reads a u2 count of items of at least minSize bytes each and checks that they fit.
func (r *reader) count(minSize int) (int, error) {
	n, err := r.u2()
	if err != nil {
		return 0, err
	}
	if int(n)*minSize > len(r.b)-r.off {
		r.off -= 2
		return 0, r.fail(fmt.Sprintf("count does not fit in the %d bytes left", len(r.b)-r.off-2), n)
	}
	return int(n), nil
}

func (r *reader) class() (*Class, error) {
	c := &Class{}
	r.field = "magic"
	m, err := r.u4()
	if err != nil {
		return nil, err
	}
	if m != Magic {
		r.off = 0
		return nil, r.fail("not a class file", fmt.Sprintf("0x%08X", m))
	}
	r.field = "minor_version"
	if c.Minor, err = r.u2(); err != nil {
		return nil, err
	}
	r.field = "major_version"
	if c.Major, err = r.u2(); err != nil {
		return nil, err
	}
	if c.Major < 45 || c.Major > MaxMajor {
		r.off -= 2
		return nil, r.fail(fmt.Sprintf("unsupported class file version (this reader knows 45 to %d, Java 1.1 to %d)", MaxMajor, MaxMajor-44), c.Major)
	}
	if err := r.constantPool(); err != nil {
		return nil, err
	}
	c.Pool = r.pool
	if err := r.header(c); err != nil {
		return nil, err
	}
	if c.Fields, err = members(r, "fields", fieldAttributes, func(f *Field) (*uint16, *string, *string) { return &f.Access, &f.Name, &f.Desc }); err != nil {
		return nil, err
	}
	if c.Methods, err = members(r, "methods", methodAttributes, func(m *Method) (*uint16, *string, *string) { return &m.Access, &m.Name, &m.Desc }); err != nil {
		return nil, err
	}
	r.field = "attributes"
	if err := r.attributes(classAttributes, c); err != nil {
		return nil, err
	}
	if r.off != len(r.b) {
		r.field = ""
		return nil, r.fail("trailing bytes after the class file", len(r.b)-r.off)
	}
	return c, nil
}

func (r *reader) header(c *Class) error {
	var err error
	r.field = "access_flags"
	if c.Access, err = r.u2(); err != nil {
		return err
	}
	r.field = "this_class"
	if c.Name, err = r.classRef(false); err != nil {
		return err
	}
	r.field = "super_class"
	if c.Super, err = r.classRef(true); err != nil {
		return err
	}
	r.field = "interfaces_count"
	n, err := r.count(2)
	if err != nil {
		return err
	}
	c.Interfaces = make([]string, n)
	for i := range c.Interfaces {
		r.field = fmt.Sprintf("interfaces[%d]", i)
		if c.Interfaces[i], err = r.classRef(false); err != nil {
			return err
		}
	}
	return nil
}

// classRef reads a u2 index of a CONSTANT_Class and returns its name; 0 gives "" when optional.
func (r *reader) classRef(optional bool) (string, error) {
	i, err := r.u2()
	if err != nil {
		return "", err
	}
	if i == 0 && optional {
		return "", nil
	}
	if !r.pool.has(i, TagClass) {
		r.off -= 2
		return "", r.fail("not the index of a CONSTANT_Class", i)
	}
	return r.pool.ClassName(i), nil
}

// utf8Ref reads a u2 index of a CONSTANT_Utf8 and returns the string.
func (r *reader) utf8Ref() (string, error) {
	i, err := r.u2()
	if err != nil {
		return "", err
	}
	if !r.pool.has(i, TagUtf8) {
		r.off -= 2
		return "", r.fail("not the index of a CONSTANT_Utf8", i)
	}
	return r.pool[i].Str, nil
}

// members reads the fields or methods table (what) of a class: each member's access flags, name,
// descriptor and attributes (the known ones parsed); head gives the member's fields to fill.
func members[T any](r *reader, what string, known map[string]attrParser, head func(*T) (access *uint16, name, desc *string)) ([]T, error) {
	r.field = what + "_count"
	n, err := r.count(8)
	if err != nil {
		return nil, err
	}
	out := make([]T, n)
	for i := range out {
		access, name, desc := head(&out[i])
		r.field = fmt.Sprintf("%s[%d]", what, i)
		if *access, err = r.u2(); err != nil {
			return nil, err
		}
		if *name, err = r.utf8Ref(); err != nil {
			return nil, err
		}
		if *desc, err = r.utf8Ref(); err != nil {
			return nil, err
		}
		r.field = fmt.Sprintf("%s[%d].attributes", what, i)
		if err := r.attributes(known, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// attrParser reads one known attribute's body (r.b limited to it) into owner.
type attrParser func(r *reader, owner any) error

var (
	classAttributes = map[string]attrParser{
		"BootstrapMethods": (*reader).bootstrapMethods,
		"InnerClasses":     (*reader).innerClasses,
		"NestHost":         (*reader).nestHost,
		"NestMembers":      (*reader).nestMembers,
		"SourceFile":       (*reader).sourceFile,
	}
	fieldAttributes  = map[string]attrParser{"ConstantValue": (*reader).constantValue}
	methodAttributes = map[string]attrParser{"Code": (*reader).code}
	codeAttributes   = map[string]attrParser{"LineNumberTable": (*reader).lineNumbers}
)

// attributes reads an attributes_count and the attributes; those named in known are parsed into
// owner, the others skipped. A known attribute must be consumed exactly.
func (r *reader) attributes(known map[string]attrParser, owner any) error {
	base := r.field
	n, err := r.count(6)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		r.field = fmt.Sprintf("%s[%d]", base, i)
		name, err := r.utf8Ref()
		if err != nil {
			return err
		}
		size, err := r.u4()
		if err != nil {
			return err
		}
		if int64(size) > int64(len(r.b)-r.off) {
			r.off -= 4
			return r.fail(fmt.Sprintf("attribute %q longer than the %d bytes left", name, len(r.b)-r.off-4), size)
		}
		end := r.off + int(size)
		parse, ok := known[name]
		if !ok {
			r.off = end
			continue
		}
		r.field = base + "." + name
		sub := &reader{b: r.b[:end], off: r.off, field: r.field, pool: r.pool}
		if err := parse(sub, owner); err != nil {
			return err
		}
		if sub.off != end {
			return sub.fail(fmt.Sprintf("attribute %s has %d bytes after its contents", name, end-sub.off), nil)
		}
		r.off = end
	}
	return nil
}

func (r *reader) constantValue(owner any) error {
	f := owner.(*Field)
	i, err := r.u2()
	if err != nil {
		return err
	}
	if int(i) >= len(r.pool) || !loadable(r.pool[i].Tag) || r.pool[i].Tag == TagClass {
		r.off -= 2
		return r.fail("not the index of a constant value", i)
	}
	f.ConstantValue = i
	return nil
}

func (r *reader) code(owner any) error {
	m := owner.(*Method)
	c := &Code{}
	var err error
	if c.MaxStack, err = r.u2(); err != nil {
		return err
	}
	if c.MaxLocals, err = r.u2(); err != nil {
		return err
	}
	n, err := r.u4()
	if err != nil {
		return err
	}
	if n == 0 || n > MaxCodeLength {
		r.off -= 4
		return r.fail(fmt.Sprintf("code_length must be 1 to %d", MaxCodeLength), n)
	}
	c.Off = int64(r.off)
	if c.Bytes, err = r.bytes(int(n)); err != nil {
		return err
	}
	field := r.field
	r.field = field + ".exception_table"
	k, err := r.count(8)
	if err != nil {
		return err
	}
	c.Exceptions = make([]ExceptionHandler, k)
	for i := range c.Exceptions {
		if err := r.handler(&c.Exceptions[i], len(c.Bytes)); err != nil {
			return err
		}
	}
	r.field = field + ".attributes"
	if err := r.attributes(codeAttributes, c); err != nil {
		return err
	}
	m.Code = c
	return nil
}

func (r *reader) handler(h *ExceptionHandler, codeLen int) error {
	var v [4]uint16
	for j := range v {
		var err error
		if v[j], err = r.u2(); err != nil {
			return err
		}
	}
	h.Start, h.End, h.Handler, h.CatchType = v[0], v[1], v[2], v[3]
	switch {
	case h.Start >= h.End || int(h.End) > codeLen:
		r.off -= 8
		return r.fail("exception range outside the code", fmt.Sprintf("[%d,%d)", h.Start, h.End))
	case int(h.Handler) >= codeLen:
		r.off -= 4
		return r.fail("handler_pc outside the code", h.Handler)
	case h.CatchType != 0 && !r.pool.has(h.CatchType, TagClass):
		r.off -= 2
		return r.fail("catch_type is not a CONSTANT_Class", h.CatchType)
	}
	return nil
}

func (r *reader) lineNumbers(owner any) error {
	c := owner.(*Code)
	n, err := r.count(4)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		pc, _ := r.u2()
		line, _ := r.u2()
		if int(pc) >= len(c.Bytes) {
			r.off -= 4
			return r.fail("start_pc outside the code", pc)
		}
		c.Lines = append(c.Lines, LineNumber{StartPC: pc, Line: line})
	}
	return nil
}

func (r *reader) bootstrapMethods(owner any) error {
	c := owner.(*Class)
	n, err := r.count(4)
	if err != nil {
		return err
	}
	c.Bootstrap = make([]BootstrapMethod, n)
	for i := range c.Bootstrap {
		bm := &c.Bootstrap[i]
		if bm.Ref, err = r.u2(); err != nil {
			return err
		}
		if !r.pool.has(bm.Ref, TagMethodHandle) {
			r.off -= 2
			return r.fail(fmt.Sprintf("bootstrap_methods[%d]: not a CONSTANT_MethodHandle", i), bm.Ref)
		}
		k, err := r.count(2)
		if err != nil {
			return err
		}
		bm.Args = make([]uint16, k)
		for j := range bm.Args {
			a, _ := r.u2()
			if int(a) >= len(r.pool) || !loadable(r.pool[a].Tag) {
				r.off -= 2
				return r.fail(fmt.Sprintf("bootstrap_methods[%d].arguments[%d]: not a loadable constant", i, j), a)
			}
			bm.Args[j] = a
		}
	}
	return nil
}

func (r *reader) innerClasses(owner any) error {
	c := owner.(*Class)
	n, err := r.count(8)
	if err != nil {
		return err
	}
	c.InnerClasses = make([]InnerClass, n)
	for i := range c.InnerClasses {
		ic := &c.InnerClasses[i]
		if ic.Inner, err = r.classRef(false); err != nil {
			return err
		}
		if ic.Outer, err = r.classRef(true); err != nil {
			return err
		}
		ni, _ := r.u2()
		if ni != 0 {
			if !r.pool.has(ni, TagUtf8) {
				r.off -= 2
				return r.fail("inner_name_index is not a CONSTANT_Utf8", ni)
			}
			ic.Name = r.pool[ni].Str
		}
		ic.Access, _ = r.u2()
	}
	return nil
}

func (r *reader) nestHost(owner any) error {
	var err error
	owner.(*Class).NestHost, err = r.classRef(false)
	return err
}

func (r *reader) nestMembers(owner any) error {
	c := owner.(*Class)
	n, err := r.count(2)
	if err != nil {
		return err
	}
	c.NestMembers = make([]string, n)
	for i := range c.NestMembers {
		if c.NestMembers[i], err = r.classRef(false); err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) sourceFile(owner any) error {
	var err error
	owner.(*Class).SourceFile, err = r.utf8Ref()
	return err
}

// loadable reports whether tag is a constant ldc or a bootstrap argument may name (JVMS §4.4).
func loadable(tag uint8) bool {
	switch tag {
	case TagInteger, TagFloat, TagLong, TagDouble, TagClass, TagString, TagMethodHandle, TagMethodType, TagDynamic:
		return true
	}
	return false
}

// decodeMUTF8 turns modified UTF-8 (C0 80 for NUL, surrogates encoded one by one) into a Go string.
// Invalid sequences are kept byte for byte: names are compared, not displayed.
func decodeMUTF8(b []byte) string {
	plain := true
	for _, c := range b {
		if c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		switch {
		case b[i] == 0xC0 && i+1 < len(b) && b[i+1] == 0x80:
			out = append(out, 0)
			i += 2
		case b[i] == 0xED && i+5 < len(b) && b[i+1]&0xF0 == 0xA0 && b[i+3] == 0xED && b[i+4]&0xF0 == 0xB0:
			hi := rune(b[i+1]&0x0F)<<6 | rune(b[i+2]&0x3F)
			lo := rune(b[i+4]&0x0F)<<6 | rune(b[i+5]&0x3F)
			out = utf8.AppendRune(out, 0x10000+hi<<10|lo)
			i += 6
		default:
			out = append(out, b[i])
			i++
		}
	}
	return string(out)
}

// float32/64 from the raw bits of CONSTANT_Float and CONSTANT_Double.
func f32(bits uint32) float64 { return float64(math.Float32frombits(bits)) }
func f64(bits uint64) float64 { return math.Float64frombits(bits) }
