package classfile

import (
	"encoding/binary"
	"fmt"
)

// constantPool reads constant_pool_count and the entries, then checks every index they hold.
func (r *reader) constantPool() error {
	r.field = "constant_pool_count"
	n, err := r.u2()
	if err != nil {
		return err
	}
	if n == 0 {
		r.off -= 2
		return r.fail("constant_pool_count 0", n)
	}
	// Every entry takes at least 3 bytes.
	if (int(n)-1)*3 > len(r.b)-r.off {
		r.off -= 2
		return r.fail(fmt.Sprintf("constant_pool_count does not fit in the %d bytes left", len(r.b)-r.off-2), n)
	}
	r.pool = make(Pool, n)
	offs := make([]int32, n)
	for i := 1; i < int(n); i++ {
		r.field = fmt.Sprintf("constant_pool[%d]", i)
		offs[i] = int32(r.off)
		wide, err := r.constant(&r.pool[i])
		if err != nil {
			return err
		}
		if wide {
			if i+1 >= int(n) {
				return r.fail("8-byte constant in the last slot", nil)
			}
			i++ // Long and Double take two slots (JVMS §4.4.5)
		}
	}
	for i := 1; i < int(n); i++ {
		if msg := r.pool.check(uint16(i)); msg != "" {
			r.off, r.field = int(offs[i]), fmt.Sprintf("constant_pool[%d]", i)
			return r.fail(msg, nil)
		}
	}
	return nil
}

// constantSizes is the body size of each fixed-size tag; Utf8 is variable.
var constantSizes = [...]int8{
	TagInteger: 4, TagFloat: 4, TagLong: 8, TagDouble: 8, TagClass: 2, TagString: 2,
	TagFieldref: 4, TagMethodref: 4, TagInterfaceMethodref: 4, TagNameAndType: 4,
	TagMethodHandle: 3, TagMethodType: 2, TagDynamic: 4, TagInvokeDynamic: 4, TagModule: 2, TagPackage: 2,
}

// constant reads one entry; wide is true for Long and Double.
func (r *reader) constant(c *Constant) (wide bool, err error) {
	tag, err := r.u1()
	if err != nil {
		return false, err
	}
	c.Tag = tag
	if tag == TagUtf8 {
		n, err := r.u2()
		if err != nil {
			return false, err
		}
		s, err := r.bytes(int(n))
		if err != nil {
			return false, err
		}
		c.Str = decodeMUTF8(s)
		return false, nil
	}
	if int(tag) >= len(constantSizes) || constantSizes[tag] == 0 {
		r.off--
		return false, r.fail("unknown constant pool tag", tag)
	}
	b, err := r.bytes(int(constantSizes[tag]))
	if err != nil {
		return false, err
	}
	switch tag {
	case TagInteger:
		c.Int = int64(int32(binary.BigEndian.Uint32(b)))
	case TagFloat:
		c.Float = f32(binary.BigEndian.Uint32(b))
	case TagLong:
		c.Int = int64(binary.BigEndian.Uint64(b))
	case TagDouble:
		c.Float = f64(binary.BigEndian.Uint64(b))
	case TagMethodHandle:
		c.A, c.B = uint16(b[0]), binary.BigEndian.Uint16(b[1:])
	default:
		c.A = binary.BigEndian.Uint16(b)
		if len(b) == 4 {
			c.B = binary.BigEndian.Uint16(b[2:])
		}
	}
	return tag == TagLong || tag == TagDouble, nil
}

// refTags says which tags an entry's A and B indexes must point at (0: not an index).
var refTags = [...][2][]uint8{
	TagClass:              {{TagUtf8}, nil},
	TagString:             {{TagUtf8}, nil},
	TagMethodType:         {{TagUtf8}, nil},
	TagModule:             {{TagUtf8}, nil},
	TagPackage:            {{TagUtf8}, nil},
	TagFieldref:           {{TagClass}, {TagNameAndType}},
	TagMethodref:          {{TagClass}, {TagNameAndType}},
	TagInterfaceMethodref: {{TagClass}, {TagNameAndType}},
	TagNameAndType:        {{TagUtf8}, {TagUtf8}},
	TagMethodHandle:       {nil, {TagFieldref, TagMethodref, TagInterfaceMethodref}},
	TagDynamic:            {nil, {TagNameAndType}},
	TagInvokeDynamic:      {nil, {TagNameAndType}},
}

// check returns what is wrong with entry i's references, "" if nothing.
func (p Pool) check(i uint16) string {
	c := &p[i]
	if int(c.Tag) >= len(refTags) {
		return ""
	}
	want := refTags[c.Tag]
	for k, idx := range [2]uint16{c.A, c.B} {
		if want[k] == nil {
			continue
		}
		if !p.hasAny(idx, want[k]) {
			return fmt.Sprintf("index %d does not point at a constant of tag %v", idx, want[k])
		}
	}
	if c.Tag == TagMethodHandle {
		if c.A < RefGetField || c.A > RefInvokeInterface {
			return fmt.Sprintf("reference_kind %d is not 1 to 9", c.A)
		}
		ref := p[c.B].Tag
		if (c.A <= RefPutStatic) != (ref == TagFieldref) {
			return fmt.Sprintf("reference_kind %d does not fit a constant of tag %d", c.A, ref)
		}
	}
	return ""
}

func (p Pool) has(i uint16, tag uint8) bool { return int(i) < len(p) && i > 0 && p[i].Tag == tag }

func (p Pool) hasAny(i uint16, tags []uint8) bool {
	for _, t := range tags {
		if p.has(i, t) {
			return true
		}
	}
	return false
}

// Utf8 returns the string of a CONSTANT_Utf8, ok false when i is not one.
func (p Pool) Utf8(i uint16) (string, bool) {
	if !p.has(i, TagUtf8) {
		return "", false
	}
	return p[i].Str, true
}

// ClassName returns the internal name of a CONSTANT_Class ("java/util/List", or an array
// descriptor "[Ljava/lang/String;"), "" when i is not one.
func (p Pool) ClassName(i uint16) string {
	if !p.has(i, TagClass) {
		return ""
	}
	return p[p[i].A].Str
}

// String returns the value of a CONSTANT_String.
func (p Pool) String(i uint16) (string, bool) {
	if !p.has(i, TagString) {
		return "", false
	}
	return p[p[i].A].Str, true
}

// NameAndType returns the name and descriptor of a CONSTANT_NameAndType.
func (p Pool) NameAndType(i uint16) (name, desc string, ok bool) {
	if !p.has(i, TagNameAndType) {
		return "", "", false
	}
	return p[p[i].A].Str, p[p[i].B].Str, true
}

// Member resolves a Fieldref, Methodref or InterfaceMethodref.
func (p Pool) Member(i uint16) (MemberRef, bool) {
	if int(i) >= len(p) || i == 0 {
		return MemberRef{}, false
	}
	c := p[i]
	if c.Tag != TagFieldref && c.Tag != TagMethodref && c.Tag != TagInterfaceMethodref {
		return MemberRef{}, false
	}
	name, desc, _ := p.NameAndType(c.B)
	return MemberRef{Class: p.ClassName(c.A), Name: name, Desc: desc, Interface: c.Tag == TagInterfaceMethodref}, true
}

// MethodHandle resolves a CONSTANT_MethodHandle.
func (p Pool) MethodHandle(i uint16) (MethodHandle, bool) {
	if !p.has(i, TagMethodHandle) {
		return MethodHandle{}, false
	}
	ref, ok := p.Member(p[i].B)
	return MethodHandle{Kind: uint8(p[i].A), Ref: ref}, ok
}

// Dynamic resolves a CONSTANT_InvokeDynamic or CONSTANT_Dynamic: the bootstrap method index and
// the call site's name and descriptor.
func (p Pool) Dynamic(i uint16) (bootstrap uint16, name, desc string, ok bool) {
	if int(i) >= len(p) || i == 0 || (p[i].Tag != TagInvokeDynamic && p[i].Tag != TagDynamic) {
		return 0, "", "", false
	}
	name, desc, _ = p.NameAndType(p[i].B)
	return p[i].A, name, desc, true
}
